"""The HTTP API: blobs in and out, jobs submitted to the target's RQ queue, results long-polled.

Errors always answer {"error": {"kind", "message"}} with a 4xx/5xx status a client can act on.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import time
import uuid
from typing import Optional

import numpy as np
import redis
import redis.asyncio as aioredis
from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool
from rq import Queue, Worker
from rq.serializers import JSONSerializer

from ..compiler.bundle import KernelBundle, validate
from ..compiler.errors import BundleRejected
from ..compiler.frontend import param_names
from ..compiler.pipeline import TARGETS
from . import store as keys
from .models import ErrorResponse, Health, JobRequest, JobResult, MissingBlobs, MissingBlobsRequest
from .settings import Settings
from .store import TERMINAL, JobStore, merge_record
from .workers.job import JOB_FUNCTION

DIGEST = r"^[0-9a-f]{64}$"
# RQ's own alarm fires only after our watchdog (workers/job.py) had its chance.
RQ_TIMEOUT_MARGIN_S = 30
ERRORS = {400: {"model": ErrorResponse}, 404: {"model": ErrorResponse}, 409: {"model": ErrorResponse},
          413: {"model": ErrorResponse},
          422: {"model": ErrorResponse}, 503: {"model": ErrorResponse}}


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, **details):
        super().__init__(message)
        self.status, self.kind, self.message, self.details = status, kind, message, details


def _error(status: int, kind: str, message: str, **details) -> JSONResponse:
    return JSONResponse({"error": {"kind": kind, "message": message, **details}}, status_code=status)


def create_app(settings: Optional[Settings] = None) -> FastAPI:
    settings = settings or Settings.from_env()
    sync_redis = redis.Redis.from_url(settings.redis_url)
    async_redis = aioredis.Redis.from_url(settings.redis_url)
    jobs = JobStore(sync_redis, settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        await async_redis.aclose()
        sync_redis.close()

    app = FastAPI(title="ascrun", version="0.1.0", responses=ERRORS, lifespan=lifespan,
                  description="Compile and run pyasc kernels on a shared pool of Ascend, simulator and CPU workers.")

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError):
        return _error(exc.status, exc.kind, exc.message, **exc.details)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:10])
        return _error(422, "bad_request", f"invalid request: {problems}")

    @app.exception_handler(redis.RedisError)
    @app.exception_handler(aioredis.RedisError)
    async def redis_down(_: Request, exc: Exception):
        return _error(503, "unavailable", f"the service's Redis is unreachable ({exc.__class__.__name__}); "
                                          "try again shortly")

    @app.middleware("http")
    async def cap_json_requests(request: Request, call_next):
        length = request.headers.get("content-length")
        if request.method == "POST" and length and length.isdigit() and int(length) > settings.max_request_bytes:
            return _error(413, "limit", f"request body of {length} bytes exceeds the {settings.max_request_bytes}"
                                        "-byte limit for JSON requests")
        return await call_next(request)

    def workers_for(target: str) -> int:
        queue = Queue(keys.queue_name(target), connection=sync_redis, serializer=JSONSerializer)
        return Worker.count(connection=sync_redis, queue=queue)

    @app.get("/v1/health", response_model=Health, tags=["service"])
    def health():
        sync_redis.ping()
        return {"status": "ok", "redis": "ok", "workers": {t: workers_for(t) for t in TARGETS}}

    @app.get("/v1/targets", tags=["service"])
    def targets():
        return {"targets": [{"name": t, "workers": workers_for(t)} for t in TARGETS]}

    @app.post("/v1/blobs/missing", response_model=MissingBlobs, tags=["blobs"])
    def missing_blobs(body: MissingBlobsRequest):
        with sync_redis.pipeline() as pipe:
            for digest in body.digests:
                pipe.exists(keys.blob_key(digest))
            present = pipe.execute()
        return {"missing": [d for d, ok in zip(body.digests, present) if not ok]}

    @app.put("/v1/blobs/{digest}", status_code=201, tags=["blobs"])
    async def put_blob(request: Request, digest: str = Path(pattern=DIGEST)):
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > settings.max_blob_bytes:
            raise ApiError(413, "limit", f"blob of {length} bytes exceeds the {settings.max_blob_bytes}-byte limit")
        hasher, chunks, size = hashlib.sha256(), [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > settings.max_blob_bytes:
                raise ApiError(413, "limit", f"blob exceeds the {settings.max_blob_bytes}-byte limit")
            hasher.update(chunk)
            chunks.append(chunk)
        if hasher.hexdigest() != digest:
            raise ApiError(400, "bad_request", f"blob body hashes to {hasher.hexdigest()}, not {digest}: "
                                               "corrupted upload")
        await async_redis.set(keys.blob_key(digest), b"".join(chunks), ex=settings.blob_ttl_s)
        return {"blob": digest, "bytes": size}

    @app.get("/v1/blobs/{digest}", tags=["blobs"], response_class=Response,
             responses={200: {"content": {"application/octet-stream": {}}}})
    def get_blob(digest: str = Path(pattern=DIGEST)):
        data = jobs.get_blob(digest)
        if data is None:
            raise ApiError(404, "not_found", f"no blob {digest} (never uploaded, or expired)")
        return Response(content=data, media_type="application/octet-stream")

    @app.post("/v1/jobs", status_code=202, response_model=JobResult, tags=["jobs"])
    async def submit_job(body: JobRequest, wait: float = Query(0, ge=0, le=settings.max_wait_s, description=(
            "seconds to wait for the job to end before answering (the answer is 202 either way)"))):
        """Queue a launch. Tensor blobs must be uploaded first; if some are not, the answer is 409
        with their digests in error.missing."""
        record = await run_in_threadpool(enqueue_job, body)
        return await wait_for_end(record["id"], wait) if wait > 0 else record

    def enqueue_job(body: JobRequest) -> dict:
        try:
            bundle = KernelBundle.from_json(body.bundle.model_dump())
            validate(bundle)
        except BundleRejected as e:
            raise ApiError(422, "bundle_rejected", str(e)) from None
        names = param_names(bundle)
        if len(body.args) != len(names):
            raise ApiError(400, "bad_request", f"kernel '{bundle.entry}' takes {len(names)} arguments "
                                               f"({', '.join(names)}), got {len(body.args)}")
        check_tensor_args(body, names)
        timeout = body.timeout or settings.job_timeout_s
        if timeout > settings.max_job_timeout_s:
            raise ApiError(400, "bad_request", f"timeout {timeout:g} s exceeds the limit of "
                                               f"{settings.max_job_timeout_s} s")
        if workers_for(body.target) == 0:
            raise ApiError(503, "unavailable", f"no worker serves target '{body.target}' right now")
        job_id = uuid.uuid4().hex
        record = {"id": job_id, "status": "queued", "target": body.target, "core_num": body.core_num,
                  "kernel": bundle.entry, "created_at": time.time()}
        spec = {"bundle": bundle.to_json(), "core_num": body.core_num, "target": body.target,
                "args": [a.model_dump() for a in body.args], "options": body.options, "timeout": timeout}
        jobs.create(job_id, record, spec)
        queue = Queue(keys.queue_name(body.target), connection=sync_redis, serializer=JSONSerializer)
        queue.enqueue(JOB_FUNCTION, job_id, job_id=job_id, job_timeout=int(math.ceil(timeout)) + RQ_TIMEOUT_MARGIN_S,
                      result_ttl=settings.result_ttl_s, failure_ttl=settings.result_ttl_s)
        return record

    def check_tensor_args(body: JobRequest, names):
        tensors = [(n, a) for n, a in zip(names, body.args) if a.kind == "tensor"]
        with sync_redis.pipeline() as pipe:
            for _, arg in tensors:
                pipe.strlen(keys.blob_key(arg.blob))
            sizes = pipe.execute()
        missing = sorted({arg.blob for (_, arg), size in zip(tensors, sizes) if size == 0})
        if missing:
            raise ApiError(409, "missing_blobs", f"{len(missing)} tensor blob(s) are not on the server: upload "
                                                 "them, then submit again", missing=missing)
        for (name, arg), size in zip(tensors, sizes):
            expected = int(np.prod(arg.shape, dtype=np.int64)) * np.dtype(arg.dtype).itemsize
            if any(d < 0 for d in arg.shape) or expected != size:
                raise ApiError(400, "bad_request", f"tensor '{name}': {arg.dtype}{arg.shape} needs {expected} bytes "
                                                   f"but its blob has {size}")

    async def read_job(job_id: str) -> dict:
        record = merge_record(*await async_redis.mget(keys.job_key(job_id), keys.final_key(job_id)))
        if record is None:
            raise ApiError(404, "not_found", f"no job {job_id} (unknown, or its result expired)")
        return record

    @app.get("/v1/jobs/{job_id}", response_model=JobResult, tags=["jobs"])
    async def get_job(job_id: str, wait: float = Query(0, ge=0, le=settings.max_wait_s,
                                                       description="seconds to wait for a terminal state")):
        return await wait_for_end(job_id, wait)

    async def wait_for_end(job_id: str, wait: float) -> dict:
        """The job's record once it is terminal, or as it is after `wait` seconds (no busy polling:
        the worker publishes on the job's channel when it ends)."""
        record = await read_job(job_id)
        if wait <= 0 or record["status"] in TERMINAL:
            return record
        deadline = asyncio.get_running_loop().time() + wait
        async with async_redis.pubsub() as pubsub:
            await pubsub.subscribe(keys.done_channel(job_id))
            record = await read_job(job_id)  # it may have ended before we subscribed
            while record["status"] not in TERMINAL:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=remaining)
                if message is not None:
                    record = await read_job(job_id)
        return record

    def job_file(job_id: str, field: str) -> str:
        if jobs.get(job_id) is None:
            raise ApiError(404, "not_found", f"no job {job_id} (unknown, or its result expired)")
        entry = jobs.frontend_entry(job_id)
        if entry is None:
            raise ApiError(404, "not_found", f"job {job_id} has no generated {field} (it failed before codegen, "
                                               "or has not run yet)")
        return entry[field]

    @app.get("/v1/jobs/{job_id}/source", response_class=PlainTextResponse, tags=["jobs"])
    def job_source(job_id: str):
        """The Ascend C that pyasc generated for this job."""
        return job_file(job_id, "source")

    @app.get("/v1/jobs/{job_id}/ir", response_class=PlainTextResponse, tags=["jobs"])
    def job_ir(job_id: str):
        """The ASC-IR after pyasc's pass pipeline."""
        return job_file(job_id, "ir")

    return app

"""The HTTP API: blobs in and out, jobs submitted to the target's RQ queue, results long-polled.

Errors always answer {"error": {"kind", "message"}} with a status a client can act on: 400/422
bad input, 401 no valid token, 404 unknown (or another tenant's), 409 blobs to upload first,
413/429 a limit (the message names it), 503 Redis or workers unavailable.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import time
import uuid
from typing import Optional

import numpy as np
import redis
import redis.asyncio as aioredis
from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from rq import Queue
from rq.serializers import JSONSerializer
from starlette.concurrency import run_in_threadpool

from ..compiler.bundle import KernelBundle, validate
from ..compiler.errors import BundleRejected
from ..compiler.frontend import param_names
from ..compiler.pipeline import TARGETS
from . import store as keys
from .models import ErrorResponse, Health, JobList, JobRequest, JobResult, MissingBlobs, MissingBlobsRequest
from .settings import Settings
from .store import TERMINAL, JobStore, merge_record
from .tenants import Tenant, Tenants
from .workers.job import JOB_FUNCTION

DIGEST = r"^[0-9a-f]{64}$"
# RQ's own alarm fires only after our watchdog (workers/job.py) had its chance.
RQ_TIMEOUT_MARGIN_S = 30
REAP_INTERVAL_S = 1.0
ERRORS = {status: {"model": ErrorResponse} for status in (400, 401, 404, 409, 413, 422, 429, 503)}
log = logging.getLogger("ascrun.server")


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, **details):
        super().__init__(message)
        self.status, self.kind, self.message, self.details = status, kind, message, details


def _error(status: int, kind: str, message: str, **details) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"kind": kind, "message": message, **details}}, status_code=status,
                        headers=headers)


def create_app(settings: Optional[Settings] = None, tenants: Optional[Tenants] = None) -> FastAPI:
    settings = settings or Settings.from_env()
    tenants = tenants or Tenants.from_env()
    sync_redis = redis.Redis.from_url(settings.redis_url)
    async_redis = aioredis.Redis.from_url(settings.redis_url)
    jobs = JobStore(sync_redis, settings)

    async def reaper():
        """End jobs whose work horse died without a word (SIGKILLed worker, Redis outage)."""
        while True:
            await asyncio.sleep(REAP_INTERVAL_S)
            try:
                for job_id in await run_in_threadpool(jobs.reap):
                    log.warning("job %s lost its worker; marked failed", job_id)
            except redis.RedisError:
                pass  # Redis is down: the requests say so; try again next round

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        task = asyncio.create_task(reaper())
        yield
        task.cancel()
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
            return _error(413, "limit", f"request body of {length} bytes exceeds the service's "
                                        f"{settings.max_request_bytes}-byte limit (max_request_bytes)")
        return await call_next(request)

    def tenant(request: Request, authorization: Optional[str] = Header(None, include_in_schema=False)) -> Tenant:
        found = tenants.authenticate(authorization)
        if found is None:
            raise ApiError(401, "unauthorized", "a valid bearer token is required (Authorization: Bearer <token>)")
        length = request.headers.get("content-length")
        if request.method == "POST" and length and length.isdigit() and int(length) > found.limits.max_request_bytes:
            raise ApiError(413, "limit", f"request body of {length} bytes exceeds your "
                                         f"{found.limits.max_request_bytes}-byte limit (max_request_bytes)")
        return found

    def workers_for(target: str) -> int:
        return keys.live_workers(sync_redis, target)

    def own_job(job_id: str, who: Tenant) -> dict:
        record = jobs.get(job_id)
        if record is None or record.get("tenant") != who.name:
            raise ApiError(404, "not_found", f"no job {job_id} (unknown, or its result expired)")
        return record

    @app.get("/v1/health", response_model=Health, tags=["service"])
    def health():
        sync_redis.ping()
        return {"status": "ok", "redis": "ok", "workers": {t: workers_for(t) for t in TARGETS},
                "open_mode": tenants.open_mode}

    @app.get("/v1/targets", tags=["service"])
    def targets(who: Tenant = Depends(tenant)):
        return {"targets": [{"name": t, "workers": workers_for(t)} for t in TARGETS]}

    @app.post("/v1/blobs/missing", response_model=MissingBlobs, tags=["blobs"])
    def missing_blobs(body: MissingBlobsRequest, who: Tenant = Depends(tenant)):
        with sync_redis.pipeline() as pipe:
            for digest in body.digests:
                pipe.exists(keys.blob_key(who.name, digest))
            present = pipe.execute()
        return {"missing": [d for d, ok in zip(body.digests, present) if not ok]}

    @app.put("/v1/blobs/{digest}", status_code=201, tags=["blobs"])
    async def put_blob(request: Request, digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant)):
        cap = who.limits.max_blob_bytes
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > cap:
            raise ApiError(413, "limit", f"blob of {length} bytes exceeds the {cap}-byte limit (max_blob_bytes)")
        hasher, chunks, size = hashlib.sha256(), [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise ApiError(413, "limit", f"blob exceeds the {cap}-byte limit (max_blob_bytes)")
            hasher.update(chunk)
            chunks.append(chunk)
        if hasher.hexdigest() != digest:
            raise ApiError(400, "bad_request", f"blob body hashes to {hasher.hexdigest()}, not {digest}: "
                                               "corrupted upload")
        await async_redis.set(keys.blob_key(who.name, digest), b"".join(chunks), ex=settings.blob_ttl_s)
        return {"blob": digest, "bytes": size}

    @app.get("/v1/blobs/{digest}", tags=["blobs"], response_class=Response,
             responses={200: {"content": {"application/octet-stream": {}}}})
    def get_blob(digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant)):
        data = jobs.get_blob(who.name, digest)
        if data is None:
            raise ApiError(404, "not_found", f"no blob {digest} (never uploaded, or expired)")
        return Response(content=data, media_type="application/octet-stream")

    @app.get("/v1/jobs", response_model=JobList, tags=["jobs"])
    def list_jobs(limit: int = Query(20, ge=1, le=500), who: Tenant = Depends(tenant)):
        """Your most recent jobs, newest first (without their logs: GET /v1/jobs/{id} has them)."""
        return {"jobs": [dict(job, log=None) for job in jobs.recent(who.name, limit)]}

    @app.post("/v1/jobs", status_code=202, response_model=JobResult, tags=["jobs"])
    async def submit_job(body: JobRequest, wait: float = Query(0, ge=0, le=settings.max_wait_s, description=(
            "seconds to wait for the job to end before answering (the answer is 202 either way)")),
                         idempotency_key: Optional[str] = Header(None, max_length=128, description=(
                             "a retried submission with the same key returns the first one's job")),
                         who: Tenant = Depends(tenant)):
        """Queue a launch. Tensor blobs must be uploaded first; if some are not, the answer is 409
        with their digests in error.missing."""
        record = await run_in_threadpool(enqueue_job, body, who, idempotency_key)
        return await wait_for_end(record["id"], wait, who) if wait > 0 else record

    def enqueue_job(body: JobRequest, who: Tenant, idempotency_key: Optional[str]) -> dict:
        limits = who.limits
        bundle_json = body.bundle.model_dump()
        bundle_bytes = len(json.dumps(bundle_json))
        if bundle_bytes > limits.max_bundle_bytes:
            raise ApiError(413, "limit", f"kernel bundle of {bundle_bytes} bytes exceeds the "
                                         f"{limits.max_bundle_bytes}-byte limit (max_bundle_bytes)")
        if body.core_num > limits.max_core_num:
            raise ApiError(413, "limit", f"core_num {body.core_num} exceeds the limit of {limits.max_core_num} "
                                         "(max_core_num)")
        try:
            bundle = KernelBundle.from_json(bundle_json)
            validate(bundle)
        except BundleRejected as e:
            raise ApiError(422, "bundle_rejected", str(e)) from None
        names = param_names(bundle)
        if len(body.args) != len(names):
            raise ApiError(400, "bad_request", f"kernel '{bundle.entry}' takes {len(names)} arguments "
                                               f"({', '.join(names)}), got {len(body.args)}")
        in_flight = check_tensor_args(body, names, who)
        timeout = body.timeout or settings.job_timeout_s
        if timeout > settings.max_job_timeout_s:
            raise ApiError(400, "bad_request", f"timeout {timeout:g} s exceeds the limit of "
                                               f"{settings.max_job_timeout_s} s")
        if workers_for(body.target) == 0:
            raise ApiError(503, "unavailable", f"no worker serves target '{body.target}' right now")
        job_id = uuid.uuid4().hex
        if idempotency_key:
            earlier = claim_idempotency_key(who, idempotency_key, job_id, body)
            if earlier is not None:
                return earlier
        check_quotas(who, in_flight)
        record = {"id": job_id, "status": "queued", "tenant": who.name, "target": body.target,
                  "core_num": body.core_num, "kernel": bundle.entry, "bounds": body.bounds, "created_at": time.time()}
        spec = {"tenant": who.name, "bundle": bundle.to_json(), "core_num": body.core_num, "target": body.target,
                "args": [a.model_dump() for a in body.args], "options": body.options, "timeout": timeout,
                "bounds": body.bounds}
        jobs.create(record, spec, in_flight)
        queue = Queue(keys.queue_name(body.target, who.name), connection=sync_redis, serializer=JSONSerializer)
        sync_redis.sadd(keys.queues_key(body.target), queue.name)
        queue.enqueue(JOB_FUNCTION, job_id, job_id=job_id, job_timeout=int(math.ceil(timeout)) + RQ_TIMEOUT_MARGIN_S,
                      result_ttl=settings.result_ttl_s, failure_ttl=settings.result_ttl_s)
        return record

    def claim_idempotency_key(who: Tenant, key: str, job_id: str, body: JobRequest) -> Optional[dict]:
        """None if this submission is the first with `key`; else the job the first one created."""
        digest = hashlib.sha256(body.model_dump_json().encode()).hexdigest()
        name = keys.idempotency_key(who.name, key)
        if sync_redis.set(name, f"{job_id} {digest}", nx=True, ex=settings.result_ttl_s):
            return None
        earlier_id, earlier_digest = sync_redis.get(name).decode().split()
        if earlier_digest != digest:
            raise ApiError(422, "bad_request", "this Idempotency-Key was used for a different submission")
        for _ in range(100):  # the first submission may still be creating its job
            record = jobs.get(earlier_id)
            if record is not None:
                return record
            time.sleep(0.01)
        raise ApiError(503, "unavailable", "the first submission with this Idempotency-Key did not complete")

    def check_quotas(who: Tenant, in_flight: int) -> None:
        limits = who.limits
        minute = int(time.time() // 60)
        rate_key = keys.tenant_key(who.name, f"rate:{minute}")
        with sync_redis.pipeline() as pipe:
            pipe.incr(rate_key)
            pipe.expire(rate_key, 120)
            pipe.hvals(keys.tenant_key(who.name, "active"))
            launches, _, active = pipe.execute()
        if launches > limits.launches_per_minute:
            raise ApiError(429, "limit", f"more than {limits.launches_per_minute} launches this minute "
                                         "(launches_per_minute)")
        if len(active) >= limits.max_active_jobs:
            raise ApiError(429, "limit", f"you have {len(active)} jobs queued or running, the limit is "
                                         f"{limits.max_active_jobs} (max_active_jobs)")
        if sum(int(b) for b in active) + in_flight > limits.max_bytes_in_flight:
            raise ApiError(429, "limit", f"tensor bytes of your queued and running jobs would exceed "
                                         f"{limits.max_bytes_in_flight} (max_bytes_in_flight)")

    def check_tensor_args(body: JobRequest, names, who: Tenant) -> int:
        """Total tensor bytes; every blob present and of the size its dtype and shape say."""
        tensors = [(n, a) for n, a in zip(names, body.args) if a.kind == "tensor"]
        with sync_redis.pipeline() as pipe:
            for _, arg in tensors:
                pipe.strlen(keys.blob_key(who.name, arg.blob))
            sizes = pipe.execute()
        missing = sorted({arg.blob for (_, arg), size in zip(tensors, sizes) if size == 0})
        if missing:
            raise ApiError(409, "missing_blobs", f"{len(missing)} tensor blob(s) are not on the server: upload "
                                                 "them, then submit again", missing=missing)
        for (name, arg), size in zip(tensors, sizes):
            if any(d < 0 for d in arg.shape):
                raise ApiError(400, "bad_request", f"tensor '{name}': shape {arg.shape} has a negative dimension")
            expected = math.prod(arg.shape) * np.dtype(arg.dtype).itemsize
            if expected != size:
                raise ApiError(400, "bad_request", f"tensor '{name}': {arg.dtype}{arg.shape} needs {expected} bytes "
                                                   f"but its blob has {size}")
        return sum(sizes)

    async def read_job(job_id: str, who: Tenant) -> dict:
        record = merge_record(*await async_redis.mget(keys.job_key(job_id), keys.final_key(job_id)))
        if record is None or record.get("tenant") != who.name:
            raise ApiError(404, "not_found", f"no job {job_id} (unknown, or its result expired)")
        return record

    @app.get("/v1/jobs/{job_id}", response_model=JobResult, tags=["jobs"])
    async def get_job(job_id: str, wait: float = Query(0, ge=0, le=settings.max_wait_s,
                                                       description="seconds to wait for a terminal state"),
                      who: Tenant = Depends(tenant)):
        return await wait_for_end(job_id, wait, who)

    async def wait_for_end(job_id: str, wait: float, who: Tenant) -> dict:
        """The job's record once it is terminal, or as it is after `wait` seconds (no busy polling:
        the worker publishes on the job's channel when it ends)."""
        record = await read_job(job_id, who)
        if wait <= 0 or record["status"] in TERMINAL:
            return record
        deadline = asyncio.get_running_loop().time() + wait
        async with async_redis.pubsub() as pubsub:
            await pubsub.subscribe(keys.done_channel(job_id))
            record = await read_job(job_id, who)  # it may have ended before we subscribed
            while record["status"] not in TERMINAL:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=remaining)
                if message is not None:
                    record = await read_job(job_id, who)
        return record

    def job_file(job_id: str, field: str, who: Tenant) -> str:
        own_job(job_id, who)
        entry = jobs.frontend_entry(job_id)
        if entry is None:
            raise ApiError(404, "not_found", f"job {job_id} has no generated {field} (it failed before codegen, "
                                               "or has not run yet)")
        return entry[field]

    @app.get("/v1/jobs/{job_id}/source", response_class=PlainTextResponse, tags=["jobs"])
    def job_source(job_id: str, who: Tenant = Depends(tenant)):
        """The Ascend C that pyasc generated for this job."""
        return job_file(job_id, "source", who)

    @app.get("/v1/jobs/{job_id}/ir", response_class=PlainTextResponse, tags=["jobs"])
    def job_ir(job_id: str, who: Tenant = Depends(tenant)):
        """The ASC-IR after pyasc's pass pipeline."""
        return job_file(job_id, "ir", who)

    return app

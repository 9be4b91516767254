"""The HTTP API: blobs in and out, jobs submitted to the target's RQ queue, results long-polled.

Errors always answer {"error": {"kind", "message"}} with a status a client can act on: 400/422
bad input, 401 no valid token, 404 unknown (or another tenant's), 409 blobs to upload first,
413/429 a limit (the message names it), 503 Redis or workers unavailable, 507 Redis is full.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
import uuid
from typing import Optional

import redis
import redis.asyncio as aioredis
from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from ..compiler.bundle import KernelBundle, validate
from ..compiler.errors import BundleRejected
from ..compiler import structs
from ..compiler.errors import KernelError
from ..compiler.frontend import constexpr_params, param_names
from ..compiler import targets as target_registry
from ..compiler.pipeline import TARGETS
from . import store as keys
from .ended import EndedJobs
from .metrics import inline_received
from .metrics_http import mount_metrics
from .models import (ErrorResponse, Health, JobList, JobRequest, JobResult, MissingBlobs, MissingBlobsRequest,
                     Targets)
from .settings import Settings
from .store import TERMINAL, JobStore, merge_record
from .tenants import Tenant, Tenants

DIGEST = r"^[0-9a-f]{64}$"
REAP_INTERVAL_S = 1.0
SERVED_FOR_S = 1.0
ERRORS = {status: {"model": ErrorResponse} for status in (400, 401, 404, 409, 413, 422, 429, 503, 507)}
HTTP_KINDS = {401: "unauthorized", 404: "not_found", 413: "limit"}  # the rest of 4xx: bad_request
log = logging.getLogger("ascrun.server")


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, **details):
        super().__init__(message)
        self.status, self.kind, self.message, self.details = status, kind, message, details


def _error(status: int, kind: str, message: str, **details) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"kind": kind, "message": message, **details}}, status_code=status,
                        headers=headers)


class RequestCap:
    """413 for a POST whose Content-Length is over the service's cap, before anything reads it. A
    plain ASGI middleware: @app.middleware's BaseHTTPMiddleware cost about a third of the API
    server's CPU per launch (bench/load.py)."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            length = dict(scope["headers"]).get(b"content-length", b"")
            if length.isdigit() and int(length) > self.max_bytes:
                response = _error(413, "limit", f"request body of {int(length)} bytes exceeds the service's "
                                                f"{self.max_bytes}-byte limit (max_request_bytes)")
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


def create_app(settings: Optional[Settings] = None, tenants: Optional[Tenants] = None) -> FastAPI:
    settings = settings or Settings.from_env()
    tenants = tenants or Tenants.from_env()
    sync_redis = redis.Redis.from_url(settings.redis_url)
    async_redis = aioredis.Redis.from_url(settings.redis_url)
    jobs = JobStore(sync_redis, settings)
    ended = EndedJobs(async_redis)

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
        tasks = [asyncio.create_task(reaper()), asyncio.create_task(ended.listen())]
        yield
        for task in tasks:
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

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException):
        """Starlette's own refusals (a body that is not JSON, an unknown route) in our shape."""
        detail = exc.detail if isinstance(exc.detail, str) else "invalid request"
        if exc.status_code == 400:
            detail = "the body is not valid JSON (or not UTF-8, or nested or sized beyond what the parser takes)"
        return _error(exc.status_code, HTTP_KINDS.get(exc.status_code, "bad_request" if exc.status_code < 500
                                                      else "unavailable"), detail)

    @app.exception_handler(redis.exceptions.OutOfMemoryError)
    async def redis_full(_: Request, exc: Exception):
        return _error(507, "limit", "the service's Redis is full (maxmemory reached); nothing was stored: try "
                                    "again once jobs have ended or blobs expired")

    @app.exception_handler(redis.RedisError)
    @app.exception_handler(aioredis.RedisError)
    async def redis_down(_: Request, exc: Exception):
        return _error(503, "unavailable", f"the service's Redis is unreachable ({exc.__class__.__name__}); "
                                          "try again shortly")

    app.add_middleware(RequestCap, max_bytes=settings.max_request_bytes)
    mount_metrics(app, settings, tenants)

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

    served_until: dict = {}  # (target, soc) -> until when a live worker is taken as given

    def served(target: str, soc: Optional[str]) -> bool:
        """Whether a live worker serves `target` (and `soc`). A yes holds for SERVED_FOR_S: a round
        trip fewer per launch; a job that comes to a pool whose last worker died just then waits."""
        if served_until.get((target, soc), 0.0) > time.monotonic():
            return True
        if keys.live_workers(sync_redis, target, soc) == 0:
            return False
        served_until[(target, soc)] = time.monotonic() + SERVED_FOR_S
        return True

    def unserved(target: str, soc: Optional[str]) -> ApiError:
        """503 at once: a job nobody serves never waits in a queue nobody reads."""
        if soc is None:
            return ApiError(503, "unavailable", f"no worker serves target '{target}' right now")
        socs = sorted({s for said in keys.live_capabilities(sync_redis, target).values() for s in said.get("socs", [])})
        return ApiError(503, "unavailable", f"no worker serves SOC '{soc}' on target '{target}' right now; served: "
                                            f"{', '.join(socs) if socs else 'none'}", served=socs)

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

    @app.get("/v1/targets", response_model=Targets, tags=["service"])
    def targets(who: Tenant = Depends(tenant)):
        """The live pool: each target's workers, by SOC, with what they said they can do, and its queue."""
        answer = []
        for name in TARGETS:
            live = keys.live_capabilities(sync_redis, name)
            depth, oldest = keys.queue_depth(sync_redis, name)
            socs: dict = {}
            for said in live.values():
                for soc in said.get("socs", []):
                    socs[soc] = socs.get(soc, 0) + 1
            answer.append({"name": name, "description": target_registry.REGISTRY[name].description,
                           "workers": len(live), "socs": socs, "queued": depth, "oldest_queued_s": oldest,
                           "live": [dict(said, name=worker) for worker, said in sorted(live.items())]})
        return {"targets": answer}

    @app.post("/v1/blobs/missing", response_model=MissingBlobs, tags=["blobs"])
    def missing_blobs(body: MissingBlobsRequest, who: Tenant = Depends(tenant)):
        sizes = keys.blob_sizes(sync_redis, who.name, body.digests)
        return {"missing": [d for d, size in zip(body.digests, sizes) if size is None]}

    commit_blob = async_redis.register_script(keys.COMMIT_BLOB)

    async def stored_bytes(who: Tenant, digest: str) -> int:
        """The tenant's stored blob bytes but blob `digest`'s, once expired blobs are released."""
        blob_keys, args = keys.commit_blob_args(who.name, digest, "", 0, settings.blob_ttl_s, -1, dry=True)
        return (await commit_blob(keys=blob_keys, args=args))[1]

    def over_stored(who: Tenant, stored: int, size: int) -> ApiError:
        cap = who.limits.max_stored_bytes
        return ApiError(429, "limit", f"storing this blob of {size} bytes would take your stored blobs from "
                                      f"{stored} to {stored + size} bytes, over {cap} (max_stored_bytes); "
                                      "they are released as they expire (ASCRUN_BLOB_TTL)")

    @app.put("/v1/blobs/{digest}", status_code=201, tags=["blobs"])
    async def put_blob(request: Request, digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant)):
        """Upload a tensor's bytes (the body), named by their sha256. Refused before it is read if it
        is larger than max_blob_bytes or would take your stored bytes past max_stored_bytes."""
        cap = who.limits.max_blob_bytes
        length = request.headers.get("content-length")
        if length and length.isdigit():
            if int(length) > cap:
                raise ApiError(413, "limit", f"blob of {length} bytes exceeds the {cap}-byte limit (max_blob_bytes)")
            stored = await stored_bytes(who, digest)
            if stored + int(length) > who.limits.max_stored_bytes:
                raise over_stored(who, stored, int(length))
        # Chunks go to Redis as they arrive: the server holds at most one chunk of the upload.
        upload_id, hasher, buffer, parts, size = uuid.uuid4().hex, hashlib.sha256(), bytearray(), 0, 0

        async def flush(final: bool):
            nonlocal parts
            while len(buffer) >= keys.BLOB_CHUNK_BYTES or (final and buffer):
                await async_redis.set(keys.upload_key(upload_id, parts), bytes(buffer[:keys.BLOB_CHUNK_BYTES]),
                                      ex=settings.blob_ttl_s)
                del buffer[:keys.BLOB_CHUNK_BYTES]
                parts += 1

        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise ApiError(413, "limit", f"blob exceeds the {cap}-byte limit (max_blob_bytes)")
                hasher.update(chunk)
                buffer += chunk
                await flush(final=False)
            await flush(final=True)
            if hasher.hexdigest() != digest:
                raise ApiError(400, "bad_request", f"blob body hashes to {hasher.hexdigest()}, not {digest}: "
                                                   "corrupted upload")
            blob_keys, args = keys.commit_blob_args(who.name, digest, upload_id, size, settings.blob_ttl_s,
                                                    who.limits.max_stored_bytes)
            stored_ok, stored = await commit_blob(keys=blob_keys, args=args)
        except BaseException:
            with contextlib.suppress(redis.RedisError, aioredis.RedisError):
                if parts:
                    await async_redis.delete(*(keys.upload_key(upload_id, i) for i in range(parts)))
            raise
        if not stored_ok:
            raise over_stored(who, stored, size)
        return {"blob": digest, "bytes": size}

    @app.get("/v1/blobs/{digest}", tags=["blobs"], response_class=Response,
             responses={200: {"content": {"application/octet-stream": {}}}})
    async def get_blob(digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant)):
        size = await async_redis.get(keys.blob_key(who.name, digest))
        if size is None:
            raise ApiError(404, "not_found", f"no blob {digest} (never uploaded, or expired)")

        async def chunks():  # one chunk in memory at a time
            for index in range(keys.blob_chunks(int(size))):
                chunk = await async_redis.get(keys.blob_chunk_key(who.name, digest, index))
                if chunk is None:  # expired under us: the short body tells the client
                    return
                yield chunk

        return StreamingResponse(chunks(), media_type="application/octet-stream",
                                 headers={"Content-Length": str(int(size))})

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
        """Queue a launch. Tensors up to INLINE_BYTES may travel inline (`data`); bigger ones must be
        uploaded first; if some are not, the answer is 409 with their digests in error.missing."""
        job_id = uuid.uuid4().hex
        with ended.watch(job_id) as waiter:  # before the job exists: its end cannot be missed
            # Off the event loop: checking a bundle (its structs, its source) costs CPU.
            record = await run_in_threadpool(enqueue_job, body, who, idempotency_key, job_id)
            if wait > 0 and record["id"] == job_id:
                return job_response(await follow(waiter, record, wait, lambda: read_job(job_id, who)), 202)
        return job_response(await wait_for_end(record["id"], wait, who) if wait > 0 else record, 202)  # an earlier job

    def enqueue_job(body: JobRequest, who: Tenant, idempotency_key: Optional[str], job_id: str) -> dict:
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
            names = param_names(bundle)
            constexprs = set(constexpr_params(bundle))
        except BundleRejected as e:
            raise ApiError(422, "bundle_rejected", str(e)) from None
        if len(body.args) != len(names):
            raise ApiError(400, "bad_request", f"kernel '{bundle.entry}' takes {len(names)} arguments "
                                               f"({', '.join(names)}), got {len(body.args)}")
        check_struct_args(body)
        for name, arg in zip(names, body.args):
            if arg.kind == "scalar" and arg.dtype == "str" and name not in constexprs:
                raise ApiError(422, "bad_request", f"argument '{name}' is a string: only a ConstExpr parameter "
                                                   "takes one")
        in_flight = check_tensor_args(body, names, who)
        timeout = body.timeout or settings.job_timeout_s
        if timeout > settings.max_job_timeout_s:
            raise ApiError(400, "bad_request", f"timeout {timeout:g} s exceeds the limit of "
                                               f"{settings.max_job_timeout_s} s")
        if not served(body.target, body.soc):
            raise unserved(body.target, body.soc)
        record = {"id": job_id, "status": "queued", "tenant": who.name, "target": body.target, "soc": body.soc,
                  "core_num": body.core_num, "kernel": bundle.entry, "bounds": body.bounds, "created_at": time.time()}
        args, inputs = [], {}
        for arg in body.args:  # an inline tensor's bytes go apart, raw: no base64 in and out of JSON again
            args.append(arg.model_dump(exclude_none=True, exclude={"data"}))
            if arg.kind == "tensor" and arg.raw is not None:
                args[-1]["input"] = str(len(inputs))
                inputs[args[-1]["input"]] = arg.raw
        spec = {"tenant": who.name, "bundle": bundle.to_json(), "core_num": body.core_num, "target": body.target,
                "args": args, "options": body.options, "timeout": timeout, "bounds": body.bounds}
        idempotency = None
        if idempotency_key:
            idempotency = (keys.idempotency_key(who.name, idempotency_key),
                           hashlib.sha256(body.model_dump_json().encode()).hexdigest())
        while True:
            verdict, value = jobs.admit(record, spec, inputs, in_flight, who.limits, idempotency)
            if verdict == "earlier":
                found = jobs.get(value)
                if found is not None:  # else it expired just now: this submission makes a new job
                    return found
                continue
            if verdict != "admitted":
                raise refusal(verdict, value, who.limits)
            # RQ's job and the queue's name in one transaction; if this server dies before it, the
            # reaper fails the stored job (store.reap_unqueued)
            with sync_redis.pipeline() as pipe:
                keys.enqueue(sync_redis, pipe, record, timeout, settings.result_ttl_s)
                inline_received(pipe, inputs)
                pipe.execute()
            return record

    def refusal(verdict: str, value: Optional[str], limits) -> ApiError:
        if verdict == "mismatch":
            return ApiError(422, "bad_request", "this Idempotency-Key was used for a different submission")
        if verdict == "rate":
            return ApiError(429, "limit", f"more than {limits.launches_per_minute} launches this minute "
                                          "(launches_per_minute)")
        if verdict == "active":
            return ApiError(429, "limit", f"you have {value} jobs queued or running, the limit is "
                                          f"{limits.max_active_jobs} (max_active_jobs)")
        return ApiError(429, "limit", f"tensor bytes of your queued and running jobs would exceed "
                                      f"{limits.max_bytes_in_flight} (max_bytes_in_flight)")

    def check_struct_args(body: JobRequest) -> None:
        """Each struct argument names a struct of the bundle and gives each field a value of its
        dtype (the worker would otherwise pack a wrapped or truncated value)."""
        struct_args = [(i, a) for i, a in enumerate(body.args) if a.kind == "struct"]
        if not struct_args and not body.bundle.structs:
            return
        try:
            defs = structs.definitions_from_json({n: d.model_dump() for n, d in body.bundle.structs.items()})
        except BundleRejected as e:
            raise ApiError(422, "bundle_rejected", str(e)) from None
        for i, arg in struct_args:
            if arg.dtype not in defs:
                raise ApiError(422, "bad_request", f"argument {i} is a struct {arg.dtype}, which the bundle "
                                                   "does not define")
            try:
                structs.check_value(defs, arg.dtype, arg.value)
            except KernelError as e:
                raise ApiError(422, "bad_request", f"argument {i}: {e}") from None

    def check_tensor_args(body: JobRequest, names, who: Tenant) -> int:
        """Total tensor bytes; every blob present and of the size its dtype and shape say (inline
        data was checked by the model)."""
        uploaded = [(n, a) for n, a in zip(names, body.args) if a.kind == "tensor" and a.blob is not None]
        sizes = keys.blob_sizes(sync_redis, who.name, [a.blob for _, a in uploaded])
        missing = sorted({arg.blob for (_, arg), size in zip(uploaded, sizes) if size is None})
        if missing:
            raise ApiError(409, "missing_blobs", f"{len(missing)} tensor blob(s) are not on the server: upload "
                                                 "them, then submit again", missing=missing)
        for (name, arg), size in zip(uploaded, sizes):
            if arg.nbytes != size:
                raise ApiError(400, "bad_request", f"tensor '{name}': {arg.dtype}{arg.shape} needs {arg.nbytes} "
                                                   f"bytes but its blob has {size}")
        for name, arg in zip(names, body.args):  # sent as nothing, but the worker holds it as a blob's bytes
            if arg.kind == "tensor" and arg.zeros and arg.nbytes > who.limits.max_blob_bytes:
                raise ApiError(413, "limit", f"tensor '{name}' of {arg.nbytes} bytes (zeros) exceeds the "
                                             f"{who.limits.max_blob_bytes}-byte limit (max_blob_bytes)")
        return sum(a.nbytes for a in body.args if a.kind == "tensor")

    async def read_job(job_id: str, who: Tenant) -> dict:
        record = merge_record(*await async_redis.mget(keys.job_key(job_id), keys.final_key(job_id)))
        if record is None or record.get("tenant") != who.name:
            raise ApiError(404, "not_found", f"no job {job_id} (unknown, or its result expired)")
        if record["status"] == "queued" and "target" in record:
            queue, rq_id = keys.waiting_in(record)
            async with async_redis.pipeline(transaction=False) as pipe:
                position, depth = await pipe.lpos(queue, rq_id).llen(queue).execute()
            if position is not None:  # else a worker is taking it just now
                record.update(queue_position=position + 1, queue_depth=depth)
        return record

    @app.get("/v1/jobs/{job_id}", response_model=JobResult, tags=["jobs"])
    async def get_job(job_id: str, wait: float = Query(0, ge=0, le=settings.max_wait_s,
                                                       description="seconds to wait for a terminal state"),
                      who: Tenant = Depends(tenant)):
        return job_response(await wait_for_end(job_id, wait, who))

    def job_response(record: dict, status: int = 200) -> Response:
        """The record as JobResult, serialized by pydantic in one step: a finished job's inline
        outputs make it tens of KiB, which FastAPI's validate-then-json.dumps path costs twice."""
        return Response(JobResult.model_validate(record).model_dump_json(), status, media_type="application/json")

    async def wait_for_end(job_id: str, wait: float, who: Tenant) -> dict:
        """The job's record once it is terminal, or as it is after `wait` seconds (no polling: its
        terminal record is published when it ends, and `ended` hands it over)."""
        if wait <= 0:
            return await read_job(job_id, who)
        with ended.watch(job_id) as waiter:
            return await follow(waiter, await read_job(job_id, who), wait, lambda: read_job(job_id, who))

    async def follow(waiter, record: dict, wait: float, read) -> dict:
        """`record` as it is once terminal, or after `wait` seconds; `read()` reads it anew."""
        deadline = asyncio.get_running_loop().time() + wait
        while record["status"] not in TERMINAL:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0 or not await waiter.wait(remaining):
                break
            record = waiter.take() or await read()
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

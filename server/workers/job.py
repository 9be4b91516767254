"""The RQ job: one launch through the compiler pipeline, brokered by the worker process itself.

fetch inputs -> frontend (memo in Redis; jailed zygote on a miss) -> build (artifact in Redis;
fresh build jail on a miss) -> run (the tenant's run jail) -> outputs. No tenant code runs in
this process: it holds Redis, computes the cache keys and stores what the jails answer.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import threading
import time
from typing import Any, Dict, List

import numpy as np
import redis
from rq import get_current_job

from ...compiler import jail, pipeline
from ...compiler.bundle import KernelBundle
from ...compiler.cache import MemoryCache
from ...compiler.errors import KernelError
from ...compiler.frontend import ArgSpec, param_names
from ..settings import Settings
from ..store import HEARTBEAT_S, INLINE_BYTES, JobStore, RedisCache

RUN_JAILS = 4  # tenants whose run jail stays warm in one worker
LOCAL_CACHE_BYTES = 256 << 20  # a worker's in-memory share of the compile caches


class JailedTarget:
    """The target's stages in jails; one per worker process, its jails reused across jobs."""

    def __init__(self, name: str, settings: Settings):
        memory = settings.worker_memory_bytes or (64 << 30)
        limits = {"memory": memory, "files": settings.worker_max_files, "cpu": settings.max_job_timeout_s + 30}
        target = pipeline.get_target(name)
        if not target.jailed:  # a worker runs no tenant code outside a jail
            raise KernelError(f"the worker's jails do not wrap target '{name}' yet: it runs only through "
                              "run_local and `ascrun worker --self-test`", kind="unavailable")
        self.name = name
        self.frontend = jail.JailedFrontend(limits)
        self.toolchain = jail.JailedToolchain(target.toolchain, limits)
        self.runner = jail.JailedRunners(limits, RUN_JAILS)

    def for_job(self, tenant: str, deadline: jail.Deadline) -> "JailedTarget":
        self.frontend.deadline = self.toolchain.deadline = self.runner.deadline = deadline
        self.runner.for_tenant(tenant)
        return self

    def close(self) -> None:
        self.frontend.close()
        self.runner.close()


@functools.lru_cache(maxsize=None)
def jailed_target(name: str) -> JailedTarget:
    return JailedTarget(name, Settings.from_env())  # the name checked, the toolchain found (get_target)


@functools.lru_cache(maxsize=None)
def _store(connection: redis.Redis) -> JobStore:
    return JobStore(connection, Settings.from_env())


@functools.lru_cache(maxsize=None)
def _caches(connection: redis.Redis, ttl_s: int) -> MemoryCache:
    """The pipeline's caches: this worker's recent entries in memory, over the pool's in Redis."""
    return MemoryCache(RedisCache(connection, ttl_s), LOCAL_CACHE_BYTES)


def _inputs(store: JobStore, tenant: str, bundle: KernelBundle, args: List[Dict[str, Any]]):
    specs: List[ArgSpec] = []
    values: Dict[str, Any] = {}
    for name, arg in zip(param_names(bundle), args):
        if arg["kind"] == "tensor":
            if "data" in arg:
                data = bytearray(base64.b64decode(arg["data"]))
            else:
                data = store.get_blob(tenant, arg["blob"])
                if data is None:
                    raise KernelError(f"input blob of '{name}' ({arg['blob'][:12]}...) expired before the job ran: "
                                      "submit again", kind="bad_request")
            array = np.frombuffer(data, dtype=arg["dtype"]).reshape(arg["shape"])  # writable: the kernel's buffer
            specs.append(ArgSpec("tensor", array.dtype.name))
            values[name] = array
        else:  # a scalar, or a struct's field values (checked against the bundle by the API)
            specs.append(ArgSpec(arg["kind"], arg["dtype"], arg["value"]))
            values[name] = arg["value"]
    return specs, values


def _output(store: JobStore, tenant: str, array: np.ndarray) -> Dict[str, Any]:
    data = memoryview(np.ascontiguousarray(array)).cast("B")  # no copy of a 1 GiB output
    described = {"dtype": array.dtype.name, "shape": list(array.shape)}
    if len(data) <= INLINE_BYTES:
        return {"data": base64.b64encode(data).decode(), **described}
    digest = hashlib.sha256(data).hexdigest()
    store.put_blob(tenant, digest, data)
    return {"blob": digest, **described}


def _start_heartbeat(store: JobStore, job_id: str) -> threading.Event:
    """Say the job is alive while it runs (the API's reaper fails jobs of a worker that died);
    set the returned event when the job is done. JobStore.start said it first."""
    done = threading.Event()

    def beat():
        while not done.wait(HEARTBEAT_S):
            try:
                store.heartbeat(job_id)
            except redis.RedisError:
                pass  # Redis is away: the job's own calls fail; beat again when it is back

    threading.Thread(target=beat, name="ascrun-job-heartbeat", daemon=True).start()
    return done


def run_job(job_id: str) -> str:
    """Entry point named in the queue (JOB_FUNCTION); returns the job's final status."""
    rq_job = get_current_job()
    store = _store(rq_job.connection)
    settings = store.settings
    record, spec = store.start(job_id, worker=rq_job.worker_name)
    if record.get("status") != "started":
        return "superseded"  # already ended (the reaper failed it, or it was cancelled): run nothing
    if spec is None:
        store.fail(job_id, "bad_request", "the job's launch spec expired before a worker took it", record)
        return "failed"
    timeout_s = float(spec.get("timeout") or settings.job_timeout_s)
    deadline = jail.Deadline(timeout_s)  # the jails are killed when it passes
    done = _start_heartbeat(store, job_id)
    tenant = spec["tenant"]
    timings = {"queue": max(0.0, record["started_at"] - record.get("created_at", record["started_at"]))}
    frontend: List[str] = []  # the frontend cache key once known: where the job's Ascend C and IR are

    def fail(kind: str, message: str, **report) -> bool:
        return store.fail(job_id, kind, message, record, frontend[0] if frontend else None, **report)

    start = time.perf_counter()
    try:
        bundle = KernelBundle.from_json(spec["bundle"])
        specs, values = _inputs(store, tenant, bundle, spec["args"])
        target = jailed_target(spec["target"]).for_job(tenant, deadline)
        cache = _caches(store.connection, settings.artifact_ttl_s)
        built = pipeline.build(bundle, specs, target, frontend_cache=cache, artifact_cache=cache,
                               options=spec.get("options") or {}, on_frontend=frontend.append)
        ran = pipeline.run(built, target, int(spec["core_num"]), values, bounds=spec.get("bounds", "fault"))
        outputs = {name: _output(store, tenant, values[name]) for name in ran.written}
        timings.update(built.timings, run=ran.seconds, **ran.timings, total=time.perf_counter() - start)
        won = store.finish(job_id, {"status": "finished", "outputs": outputs, "timings": timings,
                                    "cache": built.cache, "ir_hash": built.frontend.ir_hash, "log": ran.log,
                                    "warnings": ran.warnings, "error": None}, record, frontend[0])
    except KernelError as e:
        won = fail(e.kind, str(e), log=e.log, warnings=e.warnings)
    except Exception as e:  # a bug of ours, not the kernel's: say so rather than hide it
        won = fail("runtime_error", f"internal error in the worker: {e.__class__.__name__}: {e}")
    finally:
        done.set()
    return "done" if won else "superseded"

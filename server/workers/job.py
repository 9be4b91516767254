"""The RQ job: one launch through the compiler pipeline, run inside RQ's forked work horse.

fetch input blobs -> frontend (memo in Redis) -> build (artifact in Redis) -> run -> output blobs.
"""
from __future__ import annotations

import base64
import hashlib
import os
import signal
import threading
import time
from typing import Any, Dict, List

import numpy as np
import redis
from rq import get_current_job

from ...compiler import pipeline
from ...compiler.bundle import KernelBundle
from ...compiler.errors import KernelError
from ...compiler.frontend import ArgSpec, param_names
from ..settings import Settings
from ..store import HEARTBEAT_S, INLINE_BYTES, JobStore, RedisCache
from . import sandbox


def _inputs(store: JobStore, tenant: str, bundle: KernelBundle, args: List[Dict[str, Any]]):
    specs: List[ArgSpec] = []
    values: Dict[str, Any] = {}
    for name, arg in zip(param_names(bundle), args):
        if arg["kind"] == "tensor":
            data = base64.b64decode(arg["data"]) if "data" in arg else store.get_blob(tenant, arg["blob"])
            if data is None:
                raise KernelError(f"input blob of '{name}' ({arg['blob'][:12]}...) expired before the job ran: "
                                  "submit again", kind="bad_request")
            array = np.frombuffer(bytearray(data), dtype=arg["dtype"]).reshape(arg["shape"])
            specs.append(ArgSpec("tensor", array.dtype.name))
            values[name] = array
        else:  # a scalar, or a struct's field values (checked against the bundle by the API)
            specs.append(ArgSpec(arg["kind"], arg["dtype"], arg["value"]))
            values[name] = arg["value"]
    return specs, values


def _start_watchdog(store: JobStore, job_id: str, timeout_s: float) -> threading.Event:
    """Heartbeat while the job runs, and end the work horse if it overruns. A kernel spinning in
    native code never returns to the interpreter, so RQ's alarm-based timeout could not stop it.
    Set the returned event when the job is done."""
    done = threading.Event()
    deadline = time.monotonic() + timeout_s

    def watch():
        while not done.wait(HEARTBEAT_S):
            if time.monotonic() > deadline:
                store.fail(job_id, "timeout", f"the job ran longer than its {timeout_s:g} s timeout and was stopped")
                os.kill(os.getpid(), signal.SIGKILL)
            store.heartbeat(job_id)

    threading.Thread(target=watch, name="ascrun-watchdog", daemon=True).start()
    return done


def run_job(job_id: str) -> str:
    """Entry point named in the queue (JOB_FUNCTION); returns the job's final status."""
    settings = Settings.from_env()
    rq_job = get_current_job()
    store = JobStore(rq_job.connection, settings)
    record = store.mark_started(job_id, worker=rq_job.worker_name)
    spec = store.spec(job_id)
    if spec is None:
        store.fail(job_id, "bad_request", "the job's launch spec expired before a worker took it")
        return "failed"
    timeout_s = float(spec.get("timeout") or settings.job_timeout_s)
    sandbox.die_with_parent()
    # The watchdog talks to Redis on a connection of its own, opened now: no new sockets later.
    watchdog_store = JobStore(redis.Redis(connection_pool=redis.ConnectionPool(
        **rq_job.connection.connection_pool.connection_kwargs)), settings)
    watchdog_store.heartbeat(job_id)
    done = _start_watchdog(watchdog_store, job_id, timeout_s)
    sandbox.limit_resources(int(timeout_s) + 30, settings.worker_max_files, settings.worker_memory_bytes)
    tenant = spec["tenant"]
    timings = {"queue": max(0.0, record["started_at"] - record.get("created_at", record["started_at"]))}
    start = time.perf_counter()
    try:
        bundle = KernelBundle.from_json(spec["bundle"])
        specs, values = _inputs(store, tenant, bundle, spec["args"])
        target = pipeline.get_target(spec["target"])
        cache = RedisCache(store.connection, settings.artifact_ttl_s)
        built = pipeline.build(bundle, specs, target, frontend_cache=cache, artifact_cache=cache,
                               options=spec.get("options") or {},
                               on_frontend=lambda key: store.put_frontend_key(job_id, key))
        sandbox.forbid_processes_and_sockets()  # the compiler has run; the kernel needs neither
        ran = pipeline.run(built, target, int(spec["core_num"]), values, bounds=spec.get("bounds", "fault"))
        outputs = {}
        for name in ran.written:
            data = values[name].tobytes()
            outputs[name] = {"dtype": values[name].dtype.name, "shape": list(values[name].shape)}
            if len(data) <= INLINE_BYTES:
                outputs[name]["data"] = base64.b64encode(data).decode()
            else:
                outputs[name]["blob"] = hashlib.sha256(data).hexdigest()
                store.put_blob(tenant, outputs[name]["blob"], data)
        timings.update(built.timings, run=ran.seconds, total=time.perf_counter() - start)
        won = store.finish(job_id, {"status": "finished", "outputs": outputs, "timings": timings,
                                    "cache": built.cache, "ir_hash": built.frontend.ir_hash, "log": ran.log,
                                    "warnings": ran.warnings, "error": None})
    except KernelError as e:
        won = store.fail(job_id, e.kind, str(e), log=e.log, warnings=e.warnings)
    except MemoryError:
        won = store.fail(job_id, "limit", f"the job needed more than the worker's "
                                          f"{settings.worker_memory_bytes >> 20} MiB of memory")
    except Exception as e:  # a bug of ours, not the kernel's: say so rather than hide it
        won = store.fail(job_id, "runtime_error", f"internal error in the worker: {e.__class__.__name__}: {e}")
    finally:
        done.set()
    return "done" if won else "superseded"

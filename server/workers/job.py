"""The RQ job: one launch through the compiler pipeline, run inside RQ's forked work horse.

fetch input blobs -> frontend (memo in Redis) -> build (artifact in Redis) -> run -> output blobs.
"""
from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from typing import Any, Dict, List

import numpy as np
from rq import get_current_job

from ...compiler import pipeline
from ...compiler.bundle import KernelBundle
from ...compiler.errors import KernelError
from ...compiler.frontend import ArgSpec, param_names
from ..settings import Settings
from ..store import JobStore, RedisCache

JOB_FUNCTION = "ascrun.server.workers.job.run_job"


def _inputs(store: JobStore, bundle: KernelBundle, args: List[Dict[str, Any]]):
    specs: List[ArgSpec] = []
    values: Dict[str, Any] = {}
    for name, arg in zip(param_names(bundle), args):
        if arg["kind"] == "tensor":
            data = store.get_blob(arg["blob"])
            if data is None:
                raise KernelError(f"input blob of '{name}' ({arg['blob'][:12]}...) expired before the job ran: "
                                  "submit again", kind="bad_request")
            array = np.frombuffer(bytearray(data), dtype=arg["dtype"]).reshape(arg["shape"])
            specs.append(ArgSpec("tensor", array.dtype.name))
            values[name] = array
        else:
            specs.append(ArgSpec("scalar", arg["dtype"], arg["value"]))
            values[name] = arg["value"]
    return specs, values


def _arm_watchdog(store: JobStore, job_id: str, timeout_s: float) -> threading.Timer:
    """End the work horse when the job overruns. A kernel spinning in native code never returns to
    the interpreter, so RQ's own alarm-based timeout could not interrupt it."""

    def expire():
        store.fail(job_id, "timeout", f"the job ran longer than its {timeout_s:g} s timeout and was stopped")
        os.kill(os.getpid(), signal.SIGKILL)

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    return timer


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
    timer = _arm_watchdog(store, job_id, float(spec.get("timeout") or settings.job_timeout_s))
    timings = {"queue": max(0.0, record["started_at"] - record.get("created_at", record["started_at"]))}
    start = time.perf_counter()
    try:
        bundle = KernelBundle.from_json(spec["bundle"])
        specs, values = _inputs(store, bundle, spec["args"])
        target = pipeline.get_target(spec["target"])
        cache = RedisCache(store.connection, settings.artifact_ttl_s)
        built = pipeline.build(bundle, specs, target, frontend_cache=cache, artifact_cache=cache,
                               options=spec.get("options") or {},
                               on_frontend=lambda key: store.put_frontend_key(job_id, key))
        ran = pipeline.run(built, target, int(spec["core_num"]), values)
        outputs = {}
        for name in ran.written:
            data = values[name].tobytes()
            digest = hashlib.sha256(data).hexdigest()
            store.put_blob(digest, data)
            outputs[name] = {"blob": digest, "dtype": values[name].dtype.name, "shape": list(values[name].shape)}
        timings.update(built.timings, run=ran.seconds, total=time.perf_counter() - start)
        won = store.finish(job_id, {"status": "finished", "outputs": outputs, "timings": timings,
                                    "cache": built.cache, "ir_hash": built.frontend.ir_hash, "error": None})
    except KernelError as e:
        won = store.fail(job_id, e.kind, str(e))
    except Exception as e:  # a bug of ours, not the kernel's: say so rather than hide it
        won = store.fail(job_id, "runtime_error", f"internal error in the worker: {e.__class__.__name__}: {e}")
    finally:
        timer.cancel()
    return "done" if won else "superseded"

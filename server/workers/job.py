"""The RQ job: one launch through the compiler pipeline, brokered by the worker process itself.

fetch inputs -> frontend (memo in Redis; jailed zygote on a miss) -> build (artifact in Redis;
fresh build jail on a miss) -> run (the tenant's run jail) -> outputs. No tenant code runs in
this process: it holds Redis, computes the cache keys and stores what the jails answer. Tensors
stream between Redis and the run jail (tensors.py): this process never holds one whole, and its
own memory is bounded (ASCRUN_BROKER_MEMORY_BYTES, worker.py): a job past it fails with `limit`.
"""
from __future__ import annotations

import errno
import functools
import threading
import time
import zlib
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import redis

from ...compiler import benchmark, pipeline, targets
from ...compiler.bundle import KernelBundle
from ...compiler.cache import MemoryCache
from ...compiler.errors import KernelError, Kind
from ...compiler.frontend import ArgSpec, param_names
from ...compiler.sandbox.frontend import JailedFrontend
from ...compiler.sandbox.jail import Deadline
from ...job_status import JobStatus
from ...launch_checks import storage_dtype
from ...compiler.settings import ServiceSettings
from ..store import connect, rq_adapter
from ..store.blobs import BlobStore
from ..store.cache import RedisCache
from ..store.jobs import JobStore
from ..store.pool import PoolView
from ..store.queues import STAGES
from . import tensors as sources
from .cited import cited_functions
from .tensors import JobTensor

REDIS_FULL = ("the service's Redis is full (maxmemory reached): what this job had to store was refused; "
              "submit again later")
FULL_RETRIES_S = (0.1, 0.2, 0.4, 0.8)  # a refused write's buffer is freed within Redis's 0.1 s cron
LOCAL_CACHE_BYTES = 256 << 20  # a worker's in-memory share of the compile caches
BENCHMARK_SHARE = 0.8  # of the job's time left at the run: a benchmark's budget at most (outputs still go out)


class JailedTarget:
    """The target's stages in jails; one per worker process, its jails reused across jobs. A
    worker serving only the run stage starts no frontend and builds nothing."""

    def __init__(self, name: str, settings: ServiceSettings, stages: Sequence[str] = STAGES, socs: Sequence[str] = ()):
        limits = {"memory": settings.worker_memory_bytes, "files": settings.worker_max_files,  # memory 0: unlimited
                  "cpu": settings.max_job_timeout_s + 30}
        # a worker runs no tenant code outside a jail
        self.target = targets.jailed(name, limits, runs="run" in stages, socs=socs)
        self.name = name
        self.stages = tuple(stages)
        # what its heartbeat tells of its jails: the stages it runs in them and their limits
        # (memory in bytes, 0: unlimited; files; cpu seconds)
        self.jails = {"stages": ["frontend", "build"] * ("build" in stages) + ["run"] * ("run" in stages), **limits}
        self.frontend = JailedFrontend(limits)
        self.toolchain = self.target.toolchain
        self.runner = self.target.runner

    def start(self) -> None:
        """Warm what the stages served need before the first job: pyasc in its zygote, and what
        the toolchain prepares once."""
        if "build" in self.stages:
            self.frontend.start()
            self.toolchain.warm()

    def for_job(self, tenant: str, deadline: Deadline) -> "JailedTarget":
        self.frontend.deadline = self.toolchain.deadline = deadline
        self.frontend.for_tenant(tenant)
        if self.runner is not None:  # None: a build-only CANN worker's (no device)
            self.runner.deadline = deadline
            self.runner.for_tenant(tenant)
        return self

    def close(self) -> None:
        self.frontend.close()
        if self.runner is not None:
            self.runner.close()


SERVING: Dict[str, JailedTarget] = {}  # target name -> its stages, in this worker process
SETTINGS = ServiceSettings()  # this worker process's (serve_targets: the one worker.serve read)


def serve_targets(names: Sequence[str], settings: ServiceSettings, stages: Sequence[str],
                  socs: Sequence[str] = ()) -> List[JailedTarget]:
    """The targets this worker process serves, with the stages it serves of each (fails now, not
    per job, if a toolchain is missing)."""
    global SETTINGS
    SETTINGS = settings
    for name in names:
        SERVING[name] = JailedTarget(name, settings, stages, socs)
    return [SERVING[name] for name in names]


@functools.lru_cache(maxsize=None)
def _store(connection: redis.Redis) -> JobStore:
    return JobStore(connection, SETTINGS)


@functools.lru_cache(maxsize=None)
def _blobs(connection: redis.Redis) -> BlobStore:
    return BlobStore(connection, SETTINGS)


@functools.lru_cache(maxsize=None)
def _pool(connection: redis.Redis) -> PoolView:
    return PoolView(connection, SETTINGS)


@functools.lru_cache(maxsize=None)
def _caches(ttl_s: int) -> MemoryCache:
    """The pipeline's caches: this worker's recent entries in memory, over the pool's in the cache Redis."""
    return MemoryCache(RedisCache(connect.cache(SETTINGS), ttl_s), LOCAL_CACHE_BYTES)


def _arg_specs(bundle: KernelBundle, args: List[Dict[str, Any]]) -> List[ArgSpec]:
    """What the frontend specializes on: each argument's kind and dtype (a numpy name: the API took
    no other), and the value of scalars and structs (checked against the bundle by the API)."""
    return [ArgSpec("tensor", arg["dtype"]) if arg["kind"] == "tensor"
            else ArgSpec(arg["kind"], arg["dtype"], arg["value"]) for arg in args]


def _values(connection: redis.Redis, blobs: BlobStore, bundle: KernelBundle,
            spec: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, JobTensor]]:
    """The launch's arguments by parameter name, and its tensors among them: JobTensors, each read
    from its source as it is sent (an anonymous blob's zeros are never held at all)."""
    tenant, values, tensors = spec["tenant"], {}, {}
    uploaded = [arg["blob"] for arg in spec["args"] if arg["kind"] == "tensor" and "blob" in arg]
    sizes = dict(zip(uploaded, blobs.sizes(tenant, uploaded)))
    for name, arg in zip(param_names(bundle), spec["args"]):
        if arg["kind"] != "tensor":
            values[name] = arg["value"]
            continue
        nbytes = int(np.prod(arg["shape"], dtype=np.int64)) * storage_dtype(arg["dtype"]).itemsize
        if arg.get("zeros"):
            pieces = sources.zeros(nbytes)
        elif "input" in arg:  # inline in the submission
            data = spec["inputs"].get(arg["input"])
            if data is None:
                raise sources.expired(name)
            pieces = sources.inline(data)
        else:
            if sizes[arg["blob"]] != nbytes:
                raise sources.expired(name)
            pieces = sources.blob(connection, tenant, arg["blob"], nbytes, name)
        tensors[name] = values[name] = JobTensor(name, arg["dtype"], arg["shape"], pieces, connection, SETTINGS)
    return values, tensors


def _start_heartbeat(store: JobStore, job_id: str) -> threading.Event:
    """Say the job is alive while it runs (the API's reaper fails jobs of a worker that died);
    set the returned event when the job is done. JobStore.start said it first."""
    done = threading.Event()

    def beat():
        while not done.wait(store.settings.job_heartbeat_s):
            try:
                store.heartbeat(job_id)
            except redis.RedisError:
                pass  # Redis is away: the job's own calls fail; beat again when it is back

    threading.Thread(target=beat, name="ascrun-job-heartbeat", daemon=True).start()
    return done


def kept_log(log: str, spec: Dict[str, Any]) -> str:
    """What the record keeps of the kernel's log: the tenant's max_log_bytes of it (UTF-8), then a
    line saying how much was left out."""
    cap = spec.get("max_log_bytes")  # an older API's spec has none
    data = log.encode()
    if cap is None or len(data) <= cap:
        return log
    return (data[:cap].decode(errors="ignore")
            + f"\n[ascrun: {len(data) - cap} more bytes of log dropped: the record keeps {cap} (max_log_bytes)]\n")


def kept_trace(trace: Optional[str], spec: Dict[str, Any]) -> Tuple[Optional[bytes], List[str]]:
    """What the job keeps of its modeled timeline: the trace zlib-compressed (about tenfold), unless
    that passes the tenant's max_trace_bytes; then none, and a warning line saying so."""
    if not trace:
        return None, []
    kept = zlib.compress(trace.encode())
    cap = spec.get("max_trace_bytes")  # an older API's spec has none
    if cap is None or len(kept) <= cap:
        return kept, []
    return None, [f"ascrun: the trace was not kept: {len(kept)} bytes compressed, over {cap} (max_trace_bytes)"]


def run_job(job_id: str, stage: Optional[str] = None) -> Optional[JobStatus]:
    """Entry point named in the queue (JOB_FUNCTION): the job as submitted, or (`stage`) handed on
    by a worker that serves only the other stage. Returns the job's state after this run (RQ keeps
    it as its job's result): terminal, or queued once handed on; None if another outcome won (the
    reaper failed it, or it was cancelled)."""
    connection, worker = rq_adapter.current_job()
    store = _store(connection)
    settings = store.settings
    try:
        record, spec = store.start(job_id, worker=worker)
    except redis.ResponseError as e:
        if not connect.out_of_memory(e):
            raise
        return _fail_when_full(lambda kind, message: store.fail(job_id, kind, message))
    if record.get("status") != JobStatus.STARTED:
        return None  # already ended: run nothing
    if spec is None:
        return store.fail(job_id, Kind.BAD_REQUEST, "the job's launch spec expired before a worker took it", record)
    timeout_s = spec["timeout"]
    stages: Dict[str, Dict[str, Any]] = record.setdefault("stages", {})  # stage -> its worker and seconds
    deadline = Deadline(timeout_s - sum(s["seconds"] for s in stages.values()))  # the jails die when it passes
    done = _start_heartbeat(store, job_id)
    tenant = spec["tenant"]
    timings = record.setdefault("timings", {})  # an earlier stage's, if the job was handed on
    timings["queue"] = timings.get("queue", 0.0) + max(
        0.0, record["started_at"] - record.get("queued_at", record["created_at"]))
    frontend: List[str] = []  # the frontend cache key once known: where the job's Ascend C and IR are
    tensors: Dict[str, JobTensor] = {}  # its outputs: deleted from Redis unless the job finishes

    def fail(kind: str, message: str, **report) -> Optional[JobStatus]:
        for tensor in tensors.values():  # first: once the job has ended, none of its outputs is left
            tensor.discard()
        return store.fail(job_id, kind, message, record, frontend[0] if frontend else None, **report)

    served = SERVING[spec["target"]]
    start = time.perf_counter()
    bundle = None  # until it is read: an error before cites none of its functions
    try:
        bundle = KernelBundle.from_json(spec["bundle"])
        specs = _arg_specs(bundle, spec["args"])
        options = spec["options"]
        caches = spec.get("caches", tenant)  # an older API's spec has none: the tenant's own
        target = served.for_job(tenant, deadline)
        cache = _caches(settings.artifact_ttl_s)
        if "build" in served.stages:
            built = pipeline.build(bundle, specs, target, frontend_cache=cache, artifact_cache=cache,
                                   options=options, on_frontend=frontend.append, caches=caches, soc=record.get("soc"))
            stages["build"] = {"worker": worker, "seconds": time.perf_counter() - start}
        else:
            frontend.append(pipeline.frontend_key(bundle, specs, options, caches, record.get("soc")))
            built = pipeline.from_caches(bundle, specs, target.toolchain.id, cache, cache, options, caches,
                                         record.get("soc"))
            if built is None:
                return _hand_to_build(store, _pool(connection), record, stage, target.toolchain.id, timeout_s, fail)
        for name, seconds in built.timings.items():
            timings.setdefault(name, seconds)  # a build worker's, if it built for us
        if "run" not in served.stages:
            record.update(cache=built.cache, toolchain=target.toolchain.id)
            store.hand_off(job_id, record, "run", timeout_s)
            return JobStatus.QUEUED
        start = time.perf_counter()
        values, tensors = _values(connection, _blobs(connection), bundle, spec)
        if not target.runner.streams_tensors:  # it takes arrays (CANN's device process)
            values.update({name: tensor.array() for name, tensor in tensors.items()})
        launch = functools.partial(pipeline.run, built, target, spec["core_num"], values, bounds=spec["bounds"],
                                   hazards=spec.get("hazards", "warn"),  # an older API's spec has none
                                   model=spec.get("model", True))
        measured = None
        if spec.get("benchmark") is None:
            ran = launch()
        else:  # repeats in this job, the artifact loaded once; the budget within what is left of the timeout
            # (streamed tensors are sent from their sources at each launch: no arrays to restore)
            measured = benchmark.measure(launch, {n: v for n, v in values.items() if isinstance(v, np.ndarray)},
                                         benchmark.Policy.from_json(spec["benchmark"]),
                                         budget_cap=BENCHMARK_SHARE * deadline.left())
            ran = measured.last
            _check_repeat(ran, tensors, len(measured.samples))
        for name in ran.written:
            if isinstance(values[name], np.ndarray):
                tensors[name].received(values[name])
        outputs = {name: tensors[name].commit(tenant) for name in ran.written}
        stages["run"] = {"worker": worker, "seconds": time.perf_counter() - start}
        timings.update(run=ran.seconds, **ran.timings, total=sum(s["seconds"] for s in stages.values()))
        trace, trace_warnings = kept_trace(ran.trace, spec)
        ended = store.finish(job_id, JobStatus.FINISHED, {
            "outputs": outputs, "timings": timings, "cache": dict(built.cache, **record.get("cache", {})),
            "ir_hash": built.frontend.ir_hash, "log": kept_log(ran.log, spec),
            "warnings": ran.warnings + trace_warnings, "error": None,
            "model": ran.model, **({"benchmark": measured.to_json()} if measured else {})},
            record, frontend[0], trace=trace)
    except KernelError as e:
        python = cited_functions(bundle, e.kind, str(e)) if bundle else []
        ended = fail(e.kind, str(e), log=kept_log(e.log, spec), warnings=e.warnings, python=python)
    except redis.RedisError as e:
        ended = _redis_failed(e, fail)
    except Exception as e:
        if isinstance(e, MemoryError) or getattr(e, "errno", None) == errno.ENOMEM:  # an allocation or a mapping
            ended = fail(Kind.LIMIT, f"the job needed more memory than the worker's limit of "
                                     f"{settings.broker_memory_bytes} bytes (ASCRUN_BROKER_MEMORY_BYTES)")
        else:  # a bug of ours, not the kernel's: say so rather than hide it
            ended = fail(Kind.RUNTIME_ERROR, f"internal error in the worker: {e.__class__.__name__}: {e}")
    finally:
        done.set()
        for tensor in tensors.values():  # if even the failure could not be recorded (a committed output stays)
            tensor.discard()
    return ended


def _check_repeat(ran, tensors: Dict[str, JobTensor], repeats: int) -> None:
    """A benchmark's last repeat wrote what its first run wrote, bit for bit (the first run's
    outputs are the job's; a repeat's are only hashed)."""
    for name in ran.written:
        if tensors[name].repeat_differs():
            raise KernelError(f"benchmark: output '{name}' of the last repeat (#{repeats}) differs from the first "
                              "run's: the kernel is nondeterministic or races", kind="runtime_error",
                              log=ran.log, warnings=ran.warnings)


def _redis_failed(error: redis.RedisError, fail: Callable[..., Optional[JobStatus]]) -> Optional[JobStatus]:
    """End the job whose own Redis command failed. Should Redis still be away, the error goes up
    to the worker's loop, which waits for Redis, and the reaper ends the job."""
    if connect.out_of_memory(error):
        return _fail_when_full(fail)
    if isinstance(error, (redis.ConnectionError, redis.TimeoutError)):
        return fail(Kind.UNAVAILABLE, f"the worker lost the service's Redis while running this job ({error}): "
                                      "submit again")
    return fail(Kind.RUNTIME_ERROR, f"internal error in the worker: {error.__class__.__name__}: {error}")


def _fail_when_full(fail: Callable[..., Optional[JobStatus]]) -> Optional[JobStatus]:
    """Fail the job as `limit`, the state Redis being full: its small failure record may be refused
    too for a moment after a big write was (a few tries); if Redis stays full, the error goes up to
    the worker's loop, which waits for room, and the reaper ends the job then."""
    for delay in FULL_RETRIES_S:
        try:
            return fail(Kind.LIMIT, REDIS_FULL)
        except redis.ResponseError as e:
            if not connect.out_of_memory(e):
                raise
            time.sleep(delay)
    return fail(Kind.LIMIT, REDIS_FULL)


def _hand_to_build(store: JobStore, pool: PoolView, record: Dict[str, Any], stage: Optional[str], toolchain_id: str,
                   timeout_s: float, fail: Callable[..., Optional[JobStatus]]) -> Optional[JobStatus]:
    """A run-only worker without the job's artifact: a build worker makes it, once."""
    target, soc = record["target"], record.get("soc")
    if stage == "run":  # a build worker made it for us, and it is not there
        return fail(Kind.UNAVAILABLE, f"the artifact a build worker made for this job is not in the cache this run "
                                      f"worker reads: the build's toolchain ({record.get('toolchain', '?')[:12]}) "
                                      f"differs from this worker's ({toolchain_id[:12]}), or the cache evicted it: "
                                      "submit again")
    if pool.live_workers(target, soc, "build") == 0:
        return fail(Kind.UNAVAILABLE, f"this kernel is not built yet, and no worker builds for target '{target}'"
                                      + (f" SOC '{soc}'" if soc else "") + " right now")
    store.hand_off(record["id"], record, "build", timeout_s)
    return JobStatus.QUEUED

"""Redis layout of the service: blobs, job records and results, the shared compile caches. All
of the service's Redis access goes through this module, blob_store.py (the blobs' side) and
metrics.py (the pool's metrics).

Keys (all under "ascrun:"):
  blob:<tenant>:<sha256>   a blob's size in bytes, TTL blob_ttl_s; each tenant sees only its own
  chunk:<tenant>:<sha256>:<i>  its bytes, blob_store.BLOB_CHUNK_BYTES a key (Redis strings stop at 512 MB)
  upload:<id>:<i>          the chunks of an upload under way (renamed to chunk:... once complete)
  tenant:<t>:blobs         sorted set blob digest -> expiry time, and tenant:<t>:blob-bytes (hash
                           digest -> size) and tenant:<t>:stored (their sum): what max_stored_bytes caps
  job:<id>                 JSON record of a job that is queued or started
  spec:<id>                JSON launch spec (tenant, bundle, args, core_num, target, bounds, hazards,
                           timeout)
  inputs:<id>              hash: the bytes of the job's inline tensors (an arg's "input" names its
                           field), sent as base64 but kept raw; TTL blob_ttl_s, as an uploaded blob's
  final:<id>               JSON terminal record; written once (SET NX), so the first outcome wins
  files:<id>               the frontend-<key> holding the job's generated Ascend C and ASC-IR
  trace:<id>               a finished cpu job's modeled timeline as a Perfetto trace (JSON text, up to
                           a few MiB, zlib-compressed about tenfold: apart from the record); written
                           with final:<id>, as long-lived
  alive:<id>               the running job's heartbeat (short TTL, refreshed by its work horse)
  queued                   sorted set job id -> creation time, until a worker starts the job
  started                  set of job ids that are started and not yet ended (for the reaper)
  tenant:<t>:jobs          sorted set of the tenant's job ids by creation time
  tenant:<t>:active        hash job id -> tensor bytes of the tenant's queued + running jobs
  tenant:<t>:rate:<minute> launches in that minute
  idem:<t>:<key>           "<job id> <request digest>" of a submission's Idempotency-Key
  queues:<stage>:<target>:<soc>  set of the queue names of the stage (build, run), target and SOC
                           ("any": jobs naming none), one per tenant that ever had a job there;
                           queue-socs:<target> their SOCs
  workers:<stage>:<target>[:<soc>]  sorted set worker name -> time of its last heartbeat (live:
                           within settings.worker_ttl_s), of the workers serving that stage
  worker:<name>            what a live worker serves: target -> capabilities (socs, cores, versions)
  frontend-<key>, artifact-<key>   the pipeline caches, shared by every worker
  metrics                  hash: the pool's counters and histograms (metrics.py), kept until Redis is emptied
Channel done:<id> carries a job's terminal record when it reaches it.
"""
from __future__ import annotations

import json
import math
import time
import zlib
from datetime import timezone
from typing import Any, Dict, List, Optional, Tuple

import redis
import redis.asyncio as aioredis
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job
from rq.queue import Queue
from rq.serializers import JSONSerializer
from rq.utils import utcparse

from ..job_status import TERMINAL, JobStatus
from . import metrics
from .settings import Settings

PREFIX = "ascrun:"
# The pool's liveness (how often jobs and workers beat, how long until one is lost) is in Settings
# (job_heartbeat_s, job_heartbeat_ttl_s, unqueued_grace_s, worker_beat_s, worker_ttl_s).
# Tensors up to this size travel inline (base64) in the submission and in the result: a cached
# launch is then one request. In a spec, such a tensor argument has "input" (its field in
# inputs:<id>) instead of "blob"; in a result, an output has "data" instead of "blob".
INLINE_BYTES = 64 << 10
JOB_FUNCTION = "ascrun.server.workers.job.run_job"  # what the API enqueues (a name: the API imports no worker code)
RQ_TIMEOUT_MARGIN_S = 30  # RQ's own job timeout, past the job's (the job's deadline kills its jails first)
# A job goes to a run queue. A worker serving only the run stage hands a job whose artifact is
# not cached to a build queue; a worker serving only build hands the job it built back to a run
# queue. The artifact cache is the hand-off.
STAGES = ("build", "run")


def job_key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


def spec_key(job_id: str) -> str:
    return f"{PREFIX}spec:{job_id}"


def inputs_key(job_id: str) -> str:
    return f"{PREFIX}inputs:{job_id}"


def final_key(job_id: str) -> str:
    return f"{PREFIX}final:{job_id}"


def files_key(job_id: str) -> str:
    return f"{PREFIX}files:{job_id}"


def trace_key(job_id: str) -> str:
    return f"{PREFIX}trace:{job_id}"


def alive_key(job_id: str) -> str:
    return f"{PREFIX}alive:{job_id}"


def done_channel(job_id: str) -> str:
    return f"{PREFIX}done:{job_id}"


def tenant_key(tenant: str, what: str) -> str:
    return f"{PREFIX}tenant:{tenant}:{what}"


def idempotency_key(tenant: str, key: str) -> str:
    return f"{PREFIX}idem:{tenant}:{key}"


STARTED = f"{PREFIX}started"
QUEUED = f"{PREFIX}queued"

ANY_SOC = "any"  # the queues of jobs that name no SOC: every worker of the target serves them


def queue_name(target: str, tenant: str, soc: Optional[str] = None, stage: str = "run") -> str:
    """One RQ queue per stage, target, SOC and tenant: a worker dequeues round-robin across
    tenants, so one tenant's burst never delays another's job, and only from the SOCs it serves."""
    return f"ascrun-{stage}-{target}-{soc or ANY_SOC}-{tenant}"


def queues_key(target: str, soc: Optional[str] = None, stage: str = "run") -> str:
    """The set of the queue names of `stage`, `target` and `soc`: the API (and a worker handing a
    job on) adds a tenant's on its first job there, workers read it every settings.queue_refresh_s."""
    return f"{PREFIX}queues:{stage}:{target}:{soc or ANY_SOC}"


def queue_socs_key(target: str) -> str:
    """The SOCs (ANY_SOC included) that `target` has queues for."""
    return f"{PREFIX}queue-socs:{target}"


def workers_key(target: str, soc: Optional[str] = None, stage: str = "run") -> str:
    return f"{PREFIX}workers:{stage}:{target}" + (f":{soc}" if soc else "")


def enqueue(connection: redis.Redis, pipe: redis.client.Pipeline, record: Dict[str, Any], timeout_s: float,
            ttl_s: int, stage: str = "run", rq_id: Optional[str] = None) -> None:
    """Put the job in its queue for `stage`, within `pipe` (a MULTI the caller executes), and say
    that queue exists. `rq_id`: the RQ job's id, when it is not the job's (a job handed on)."""
    job_id, target, soc = record["id"], record["target"], record.get("soc")
    queue = Queue(queue_name(target, record["tenant"], soc, stage), connection=connection, serializer=JSONSerializer)
    queue.enqueue_call(JOB_FUNCTION, args=(job_id,) if rq_id is None else (job_id, stage), job_id=rq_id or job_id,
                       timeout=int(math.ceil(timeout_s)) + RQ_TIMEOUT_MARGIN_S, result_ttl=ttl_s, failure_ttl=ttl_s,
                       pipeline=pipe)  # first: RQ starts the MULTI
    pipe.sadd(queues_key(target, soc, stage), queue.name)
    pipe.sadd(queue_socs_key(target), soc or ANY_SOC)


def capabilities_key(name: str) -> str:
    return f"{PREFIX}worker:{name}"


def _worker_keys(served: Dict[str, Dict[str, Any]]) -> List[str]:
    """The liveness sets a worker serving `served` (target -> capabilities) belongs to."""
    return [workers_key(target, soc, stage) for target, capabilities in served.items()
            for stage in capabilities.get("stages", STAGES) for soc in [None, *capabilities.get("socs", [])]]


def worker_beat(connection: redis.Redis, served: Dict[str, Dict[str, Any]], name: str, *, ttl_s: float) -> None:
    """A worker's heartbeat (every settings.worker_beat_s): it is live for each target it serves, for
    each stage and SOC of those; what it can do (target -> capabilities, "socs" and "stages" among
    them) lives as long (`ttl_s`: settings.worker_ttl_s)."""
    now = time.time()
    with connection.pipeline() as pipe:
        for key in _worker_keys(served):
            pipe.zadd(key, {name: now})
        pipe.set(capabilities_key(name), json.dumps(served), ex=int(math.ceil(ttl_s)))
        pipe.execute()


def worker_gone(connection: redis.Redis, served: Dict[str, Dict[str, Any]], name: str) -> None:
    with connection.pipeline() as pipe:
        for key in _worker_keys(served):
            pipe.zrem(key, name)
        pipe.delete(capabilities_key(name))
        pipe.execute()


def live_on_host(connection: redis.Redis, host: str) -> List[str]:
    """The live workers started on `host` (their names are ascrun-<host>-<pid>): a container's health check."""
    pattern = capabilities_key(f"ascrun-{host}-*")
    return sorted(k.decode()[len(capabilities_key("")):] for k in connection.scan_iter(match=pattern, count=1000))


def live_workers(connection: redis.Redis, target: str, soc: Optional[str] = None, stage: str = "run", *,
                 ttl_s: float) -> int:
    """Workers of `target` (and `soc`) serving `stage` that beat within `ttl_s` (settings.worker_ttl_s:
    a killed worker drops out by itself)."""
    return connection.zcount(workers_key(target, soc, stage), time.time() - ttl_s, "+inf")


def live_capabilities(connection: redis.Redis, target: str, *, ttl_s: float) -> Dict[str, Dict[str, Any]]:
    """Worker name -> what it said it can do for `target`, for its live workers of any stage (that
    beat within `ttl_s`)."""
    since = time.time() - ttl_s
    names = sorted({n.decode() for stage in STAGES
                    for n in connection.zrangebyscore(workers_key(target, stage=stage), since, "+inf")})
    said = connection.mget([capabilities_key(n) for n in names]) if names else []
    return {name: json.loads(raw).get(target, {}) for name, raw in zip(names, said) if raw is not None}


def queue_depth(connection: redis.Redis, target: str) -> Tuple[int, Optional[float]]:
    """Jobs waiting in `target`'s queues, and how long the oldest of those at their heads has waited (s)."""
    socs = [s.decode() for s in connection.smembers(queue_socs_key(target))]
    names = sorted(connection.sunion([queues_key(target, soc, stage) for soc in socs for stage in STAGES])) \
        if socs else []
    with connection.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.llen(Queue.redis_queue_namespace_prefix + name.decode())
            pipe.lindex(Queue.redis_queue_namespace_prefix + name.decode(), 0)
        answers = pipe.execute()
    depth = sum(answers[0::2])
    heads = [h.decode() for h in answers[1::2] if h is not None]
    records = connection.mget([job_key(h) for h in heads]) if heads else []
    created = [json.loads(r)["created_at"] for r in records if r is not None]
    return depth, (time.time() - min(created)) if created else None


def waiting_in(record: Dict[str, Any]) -> Tuple[str, str]:
    """(RQ list, RQ job id) of a queued job: its tenant's queue for its target, SOC and stage."""
    name = queue_name(record["target"], record["tenant"], record.get("soc"), record.get("stage", "run"))
    return Queue.redis_queue_namespace_prefix + name, record.get("rq_job", record["id"])


def merge_record(record: Optional[bytes], final: Optional[bytes]) -> Optional[Dict[str, Any]]:
    """A job's current state: its terminal record once there is one, else its live record."""
    if final is not None:
        return json.loads(final)
    if record is not None:
        return json.loads(record)
    return None


class RedisCache:
    """The pipeline's Cache protocol over Redis; SET is atomic, so racing writers never corrupt an entry."""

    def __init__(self, connection: redis.Redis, ttl_s: int):
        self.connection = connection
        self.ttl_s = ttl_s

    def get(self, key: str) -> Optional[bytes]:
        return self.connection.get(PREFIX + key)

    def put(self, key: str, value: bytes) -> None:
        self.connection.set(PREFIX + key, value, ex=self.ttl_s)


# The terminal record and the release of what the job held, in one step: a Redis killed between
# them would otherwise leave a finished job holding its tenant's active slot.
FINISH_LUA = """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[7], ARGV[4], 'EX', ARGV[2]) end
if ARGV[5] ~= '' then redis.call('SET', KEYS[8], ARGV[5], 'EX', ARGV[2]) end
redis.call('HDEL', KEYS[2], ARGV[3])
redis.call('SREM', KEYS[3], ARGV[3])
redis.call('ZREM', KEYS[4], ARGV[3])
redis.call('DEL', KEYS[5])
redis.call('PUBLISH', KEYS[6], ARGV[1])
return 1
"""


ADMIT_LUA = """
if ARGV[10] ~= '' then
  local earlier = redis.call('GET', KEYS[3])
  if earlier then
    local id, digest = string.match(earlier, '^(%S+) (%S+)$')
    if digest ~= ARGV[11] then return {'mismatch'} end
    local found = redis.call('GET', ARGV[13] .. id) or redis.call('GET', ARGV[12] .. id)
    if found then return {'earlier', found} end
  end
end
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[3]) then return {'rate'} end
local active = redis.call('HVALS', KEYS[2])
if #active >= tonumber(ARGV[4]) then return {'active', tostring(#active)} end
local bytes = tonumber(ARGV[2])
for _, b in ipairs(active) do bytes = bytes + tonumber(b) end
if bytes > tonumber(ARGV[5]) then return {'bytes'} end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], 120)
redis.call('SET', KEYS[4], ARGV[6], 'EX', ARGV[8])
redis.call('SET', KEYS[5], ARGV[7], 'EX', ARGV[8])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[6], ARGV[9], ARGV[1])
redis.call('ZADD', KEYS[7], ARGV[9], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[7], 0, ARGV[9] - ARGV[8])
if ARGV[10] ~= '' then redis.call('SET', KEYS[3], ARGV[10], 'EX', ARGV[8]) end
if #ARGV > 14 then
  redis.call('HSET', KEYS[8], unpack(ARGV, 15))
  redis.call('EXPIRE', KEYS[8], ARGV[14])
end
return {'admitted'}
"""


class JobStore:
    """Synchronous access for workers and the server's blocking routes."""

    def __init__(self, connection: redis.Redis, settings: Settings):
        self.connection = connection
        self.settings = settings
        self._finish = connection.register_script(FINISH_LUA)
        self._unserved_since: Dict[Tuple, float] = {}  # queue (target, soc, stage) -> since when no live worker
        self._popped_since: Dict[str, float] = {}  # RQ job id -> since when it is RQ-queued but in no list
        self._admit = connection.register_script(ADMIT_LUA)

    def admit(self, record: Dict[str, Any], spec: Dict[str, Any], inputs: Dict[str, bytes], in_flight_bytes: int,
              limits: Any, idempotency: Optional[Tuple[str, str]] = None) -> Tuple[str, Any]:
        """Check the tenant's quotas and, atomically with that, store the job (record, spec, active
        slot): no job is ever stored over a quota. One script, no WATCH: a busy tenant's concurrent
        submissions never retry. Then enqueue it; a job stored but never enqueued (the server died
        in between) is failed by reap_unqueued. `idempotency`: (the request's Idempotency-Key, its
        digest); the script answers a key already used with that job's record, read in the same
        step (a job that has expired since is no answer: this submission makes a new one).
        Returns ("admitted", None), ("earlier", its record), ("mismatch", None) for a key used by
        another submission, or the limit hit: ("rate" | "bytes", None), ("active", count)."""
        job_id, tenant, ttl = record["id"], record["tenant"], self.settings.result_ttl_s
        key, digest = idempotency or ("", "")
        keys = [tenant_key(tenant, f"rate:{int(time.time() // 60)}"), tenant_key(tenant, "active"),
                idempotency_key(tenant, key) if key else tenant_key(tenant, "no-idempotency-key"), spec_key(job_id),
                job_key(job_id), QUEUED, tenant_key(tenant, "jobs"), inputs_key(job_id)]
        args = [job_id, in_flight_bytes, limits.launches_per_minute, limits.max_active_jobs,
                limits.max_bytes_in_flight, json.dumps(spec), json.dumps(record), ttl, record["created_at"],
                f"{job_id} {digest}" if key else "", digest, job_key(""), final_key(""),
                self.settings.blob_ttl_s, *[x for field in inputs.items() for x in field]]
        verdict, *value = self._admit(keys=keys, args=args)
        verdict = verdict.decode()
        if verdict == "earlier":
            return verdict, json.loads(value[0])
        if verdict == "admitted":
            # RQ's job and the queue's name in one transaction
            with self.connection.pipeline() as pipe:
                enqueue(self.connection, pipe, record, spec["timeout"], ttl)
                metrics.inline_received(pipe, inputs)
                pipe.execute()
        return verdict, value[0].decode() if value else None

    def get(self, job_id: str) -> Optional[Dict[str, Any]]:
        record, final = self.connection.mget(job_key(job_id), final_key(job_id))
        return merge_record(record, final)

    def recent(self, tenant: str, limit: int) -> List[Dict[str, Any]]:
        ids = [i.decode() for i in self.connection.zrevrange(tenant_key(tenant, "jobs"), 0, limit - 1)]
        records = (self.get(i) for i in ids)
        return [r for r in records if r is not None]

    def start(self, job_id: str, worker: Optional[str]) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]]]:
        """Mark the job started (its heartbeat begins) and return its record and launch spec (with
        its inline tensors' bytes by field under "inputs", those that have not expired); a job
        that already ended (reaped or cancelled while queued) comes back as it is, unchanged. Two
        round trips: this is on every launch's path."""
        with self.connection.pipeline(transaction=False) as pipe:
            pipe.mget(job_key(job_id), final_key(job_id))
            pipe.get(spec_key(job_id))
            pipe.hgetall(inputs_key(job_id))
            (raw, final), raw_spec, inputs = pipe.execute()
        record = merge_record(raw, final) or {"id": job_id}
        if record.get("status") in TERMINAL:
            return record, None
        record.update(status=JobStatus.STARTED.value, started_at=time.time(), worker=worker)
        with self.connection.pipeline() as pipe:
            pipe.set(alive_key(job_id), 1, ex=self.settings.job_heartbeat_ttl_s)
            pipe.sadd(STARTED, job_id)
            pipe.zrem(QUEUED, job_id)
            pipe.set(job_key(job_id), json.dumps(record), ex=self.settings.result_ttl_s)
            pipe.execute()
        if raw_spec is None:
            return record, None
        return record, dict(json.loads(raw_spec), inputs={k.decode(): v for k, v in inputs.items()})

    def hand_off(self, job_id: str, record: Dict[str, Any], stage: str, timeout_s: float) -> None:
        """Queue the started job again, for a worker serving `stage` (store.STAGES), with what the
        stages so far did in its record; in one transaction, so a job is never both started and
        queued, nor lost between them."""
        rq_id = f"{job_id}-{stage}"
        record.update(status=JobStatus.QUEUED.value, stage=stage, rq_job=rq_id, queued_at=time.time())
        with self.connection.pipeline() as pipe:
            enqueue(self.connection, pipe, record, timeout_s, self.settings.result_ttl_s, stage, rq_id)
            pipe.set(job_key(job_id), json.dumps(record), ex=self.settings.result_ttl_s)
            pipe.zadd(QUEUED, {job_id: record["queued_at"]})
            pipe.srem(STARTED, job_id)
            pipe.delete(alive_key(job_id))
            pipe.execute()

    def heartbeat(self, job_id: str) -> None:
        self.connection.set(alive_key(job_id), 1, ex=self.settings.job_heartbeat_ttl_s)

    def finish(self, job_id: str, changes: Dict[str, Any], record: Optional[Dict[str, Any]] = None,
               frontend_key: Optional[str] = None, trace: Optional[str] = None) -> bool:
        """Record the job's outcome unless it already has one; tell waiters. True if this call won.
        `record`: the job's record as its worker holds it (saves reading it); `frontend_key`: the
        frontend cache entry of its Ascend C and IR, stored with the outcome (files:<id>); `trace`:
        its modeled timeline (trace:<id>), likewise stored only if this call won."""
        record = dict(record or self.get(job_id) or {"id": job_id})
        if record.get("status") in TERMINAL:
            return False
        record.update(changes, ended_at=time.time())
        active = tenant_key(record.get("tenant", ""), "active")  # no tenant: a hash that never exists
        won = self._finish(keys=[final_key(job_id), active, STARTED, QUEUED, alive_key(job_id), done_channel(job_id),
                                 files_key(job_id), trace_key(job_id)],
                           args=[json.dumps(record), self.settings.result_ttl_s, job_id, frontend_key or "",
                                 zlib.compress(trace.encode()) if trace else ""])
        if won:
            metrics.job_ended(self.connection, record)
        return bool(won)

    def fail(self, job_id: str, kind: str, message: str, record: Optional[Dict[str, Any]] = None,
             frontend_key: Optional[str] = None, **report: Any) -> bool:
        """End the job as failed (timed out); `report` adds the kernel's log and warnings, if it ran."""
        status = JobStatus.TIMED_OUT if kind == "timeout" else JobStatus.FAILED
        return self.finish(job_id, {"status": status.value, "error": {"kind": kind, "message": message}, **report},
                           record, frontend_key)

    def reap(self) -> List[str]:
        """Fail every started job whose work horse stopped beating (its worker was killed, or
        Redis lost the connection under it). Returns the ids it ended."""
        ended = []
        for raw in self.connection.smembers(STARTED):
            job_id = raw.decode()
            if self.connection.exists(alive_key(job_id)):
                continue
            record = self.get(job_id)
            if record is None or record.get("status") in TERMINAL:
                self.connection.srem(STARTED, job_id)
            elif self.fail(job_id, "runtime_error", "the worker running this job stopped (no heartbeat for "
                                                    f"{self.settings.job_heartbeat_ttl_s} s; it was killed or lost "
                                                    "Redis): submit again"):
                ended.append(job_id)
        return ended + self.reap_unqueued()

    def reap_unqueued(self) -> List[str]:
        """Fail every job queued for settings.unqueued_grace_s whose RQ job is gone, ended, or was taken by a
        worker that never marked it started (Redis lost it, or its worker died between dequeue and
        start); and every job waiting in a queue that no live worker has read for
        settings.unserved_grace_s (the last worker of its target, SOC or stage is gone). Returns their ids."""
        ended, live = [], {}
        popped, self._popped_since = self._popped_since, {}  # kept below for the jobs still popped
        for raw in self.connection.zrangebyscore(QUEUED, 0, time.time() - self.settings.unqueued_grace_s):
            job_id = raw.decode()
            record = self.get(job_id) or {}
            rq_id = record.get("rq_job", job_id)  # a job handed on has an RQ job per stage
            if rq_id in popped:
                self._popped_since[rq_id] = popped[rq_id]
            status, started_at, origin = self.connection.hmget(Job.key_for(rq_id), "status", "started_at", "origin")
            if status == b"queued" and origin is not None and self._lost_after_dequeue(rq_id, origin.decode()):
                pass  # failed below
            elif status is not None and status.decode() in ("queued", "deferred", "scheduled"):
                unserved = self._unserved(record, live)
                if unserved is not None and self.fail(job_id, "unavailable", unserved):
                    ended.append(job_id)
                continue
            if status == b"started" and started_at is not None and time.time() - utcparse(
                    started_at.decode()).replace(tzinfo=timezone.utc).timestamp() < self.settings.unqueued_grace_s:
                continue  # a worker just took it and is about to mark it started
            self.connection.zrem(QUEUED, job_id)
            if self.fail(job_id, "unavailable", "the job was lost before a worker started it (the service's "
                                                "Redis lost it, or its worker died): submit again"):
                ended.append(job_id)
        return ended

    def _unserved(self, record: Dict[str, Any], live: Dict[Tuple, int]) -> Optional[str]:
        """Why the queued job will not run, if no live worker has served its queue (target, SOC,
        stage) for unserved_grace_s; else None. `live`: this round's answers, by queue."""
        if "target" not in record:
            return None
        queue = (record["target"], record.get("soc"), record.get("stage", "run"))
        if queue not in live:
            live[queue] = live_workers(self.connection, *queue, ttl_s=self.settings.worker_ttl_s)
        now = time.time()
        if live[queue]:
            self._unserved_since.pop(queue, None)
            return None
        waited = now - self._unserved_since.setdefault(queue, now)
        if waited < self.settings.unserved_grace_s:
            return None
        target, soc, stage = queue
        return (f"no worker has served the {stage} stage of target '{target}'" + (f" for SOC '{soc}'" if soc else "")
                + f" for {self.settings.unserved_grace_s} s: the job was failed rather than left queued; submit again "
                "once such a worker is back")

    def _lost_after_dequeue(self, rq_id: str, queue: str) -> bool:
        """Whether a worker took the job off its queue and died before starting it (still queued
        in RQ settings.unqueued_grace_s later). RQ moves a job it takes from a single queue to an
        intermediate list, and pops one it takes from several (BLPOP) outright: a job in neither
        list was popped. One in the intermediate list is taken out of it, so that RQ never hands it
        to another worker after we failed it. A tenant's queue holds at most its max_active_jobs,
        so the LPOS are short."""
        intermediate = IntermediateQueue(Queue.redis_queue_namespace_prefix + queue, self.connection)
        if self.connection.lpos(intermediate.key, rq_id) is not None:
            self._popped_since.pop(rq_id, None)
            intermediate.set_first_seen(rq_id)
            first_seen = intermediate.get_first_seen(rq_id)
            if first_seen is None or time.time() - first_seen.timestamp() < self.settings.unqueued_grace_s:
                return False
            return bool(self.connection.lrem(intermediate.key, 0, rq_id))
        if self.connection.lpos(Queue.redis_queue_namespace_prefix + queue, rq_id) is not None:
            self._popped_since.pop(rq_id, None)
            return False  # waiting its turn
        popped = self._popped_since.setdefault(rq_id, time.time())
        return time.time() - popped >= self.settings.unqueued_grace_s

    def trace(self, job_id: str) -> Optional[bytes]:
        """The job's trace (JSON text), if it has one that has not expired."""
        stored = self.connection.get(trace_key(job_id))
        return None if stored is None else zlib.decompress(stored)

    def frontend_entry(self, job_id: str) -> Optional[Dict[str, Any]]:
        key = self.connection.get(files_key(job_id))
        entry = None if key is None else RedisCache(self.connection, 0).get(key.decode())
        return None if entry is None else json.loads(entry)


class PoolView:
    """What the API tells of the pool: the live workers of each target and SOC, its queues."""

    def __init__(self, connection: redis.Redis, settings: Settings):
        self.connection = connection
        self.worker_ttl_s = settings.worker_ttl_s

    def ping(self) -> None:
        self.connection.ping()

    def live_workers(self, target: str, soc: Optional[str] = None) -> int:
        return live_workers(self.connection, target, soc, ttl_s=self.worker_ttl_s)

    def live_capabilities(self, target: str) -> Dict[str, Dict[str, Any]]:
        return live_capabilities(self.connection, target, ttl_s=self.worker_ttl_s)

    def queue_depth(self, target: str) -> Tuple[int, Optional[float]]:
        return queue_depth(self.connection, target)

    def queues(self, target: str) -> Dict[Tuple[str, str], Tuple[int, Optional[float]]]:
        """(SOC, stage) -> jobs waiting in the target's queues of that SOC and stage (every tenant's),
        and how long the oldest of those at their heads has waited (s; None: no job waits)."""
        socs = sorted(s.decode() for s in self.connection.smembers(queue_socs_key(target)))
        places = [(soc, stage) for soc in socs for stage in STAGES]
        with self.connection.pipeline(transaction=False) as pipe:
            for soc, stage in places:
                pipe.smembers(queues_key(target, soc, stage))
            names = pipe.execute()
        lists = [(place, f"{Queue.redis_queue_namespace_prefix}{name.decode()}")
                 for place, found in zip(places, names) for name in found]
        with self.connection.pipeline(transaction=False) as pipe:
            for _, key in lists:
                pipe.llen(key)
                pipe.lindex(key, 0)
            answers = pipe.execute()
        depth: Dict[Tuple[str, str], int] = {}
        heads: Dict[Tuple[str, str], List[str]] = {}
        for (place, _), length, head in zip(lists, answers[0::2], answers[1::2]):
            depth[place] = depth.get(place, 0) + length
            if head is not None:  # an RQ job id: the job's, or <job id>-<stage> once handed on (hand_off)
                heads.setdefault(place, []).append(head.decode().split("-")[0])
        now = time.time()
        answer = {}
        for place, count in depth.items():
            keys = [job_key(h) for h in heads.get(place, [])]
            records = [json.loads(r) for r in (self.connection.mget(keys) if keys else []) if r]
            since = [r.get("queued_at", r.get("created_at", now)) for r in records]
            answer[place] = (count, now - min(since) if since else None)
        return answer


class JobReader:
    """The API's async reads of a job (its long polls stay off the thread pool)."""

    def __init__(self, connection: aioredis.Redis):
        self.connection = connection

    async def get(self, job_id: str) -> Optional[Dict[str, Any]]:
        """The job's record; a queued one with its place in its tenant's queue and that queue's length."""
        record = merge_record(*await self.connection.mget(job_key(job_id), final_key(job_id)))
        if record is not None and record["status"] == JobStatus.QUEUED and "target" in record:
            queue, rq_id = waiting_in(record)
            async with self.connection.pipeline(transaction=False) as pipe:
                position, depth = await pipe.lpos(queue, rq_id).llen(queue).execute()
            if position is not None:  # else a worker is taking it just now
                record.update(queue_position=position + 1, queue_depth=depth)
        return record

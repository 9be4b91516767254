"""Jobs in Redis (key layout: keys.py): admission (quotas, record, spec and queue in one step),
the record's moves along job_status.TRANSITIONS (start, hand_off, finish and fail), each written
with the job's summary (summary.py) that lists read, the running job's heartbeat, a finished job's
trace and generated files. JobStore is the workers' and the API's
blocking side, JobReader the API's async reads."""
from __future__ import annotations

import json
import time
import zlib
from typing import Any, Dict, List, Optional, Tuple

import redis
import redis.asyncio as aioredis

from ...compiler.errors import Kind
from ...job_status import TERMINAL, JobStatus, may_move
from ..metrics import recorder
from ...compiler.settings import ServiceSettings
from .account import ACCOUNT_LUA, account_keys
from .cache import RedisCache
from .keys import (QUEUED, STARTED, alive_key, done_channel, files_key, final_key, idempotency_key, inputs_key,
                   job_key, spec_key, summary_key, tenant_key, trace_key)
from .queues import enqueue, waiting_in
from .share import SHARES, share_value
from .summary import summarize

# How often a running job says it is alive and how long until it is lost: settings.job_heartbeat_s, _ttl_s.
# Tensors up to this size travel inline (base64) in the submission and in the result: a cached
# launch is then one request. In a spec, such a tensor argument has "input" (its field in
# inputs:<id>) instead of "blob"; in a result, an output has "data" instead of "blob".
INLINE_BYTES = 64 << 10


def merge_record(record: Optional[bytes], final: Optional[bytes]) -> Optional[Dict[str, Any]]:
    """A job's current state: its terminal record once there is one, else its live record."""
    if final is not None:
        return json.loads(final)
    if record is not None:
        return json.loads(record)
    return None


def _move(record: Dict[str, Any], new: JobStatus, **changes: Any) -> None:
    """Put the job's `record` in state `new`, with `changes`: only along job_status.TRANSITIONS
    from the state it is in (a record that says none, lost with its job's data, is taken as queued:
    no worker ran it). Any other move is a bug of ours, refused."""
    old = record.get("status") or JobStatus.QUEUED
    if not may_move(old, new):
        raise ValueError(f"job {record.get('id')}: {old} -> {new} is not a move of job_status.TRANSITIONS")
    record.update(changes, status=new.value)


# The terminal record and the release of what the job held (its active slot, with the bytes its
# outputs had reserved; its live record, spec and inline inputs), in one step: a Redis killed
# between them would otherwise leave a finished job holding its tenant's active slot. What the
# ended job keeps for result_ttl_s (its terminal record, summary, trace and frontend key) is
# charged to its tenant's stored bytes in the same step, as the account's member job:<id> with
# that expiry (account.py); a job whose tenant is unknown (its record was lost) is charged to none.
# What the job adds to the metrics goes with it, packed (recorder.job_delta).
FINISH_LUA = ACCOUNT_LUA + recorder.FOLD_LUA + """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[7], ARGV[4], 'EX', ARGV[2]) end
if ARGV[5] ~= '' then redis.call('SET', KEYS[8], ARGV[5], 'EX', ARGV[2]) end
redis.call('SET', KEYS[9], ARGV[6], 'EX', ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[3])
redis.call('SREM', KEYS[3], ARGV[3])
redis.call('ZREM', KEYS[4], ARGV[3])
redis.call('DEL', KEYS[5], KEYS[10], KEYS[11], KEYS[12])
if ARGV[8] == '1' then
  local now, member = tonumber(ARGV[7]), 'job:' .. ARGV[3]
  release_expired(KEYS[13], KEYS[14], KEYS[15], now)
  local kept = #ARGV[1] + #ARGV[4] + #ARGV[5] + #ARGV[6]
  redis.call('ZADD', KEYS[13], now + tonumber(ARGV[2]), member)
  redis.call('HSET', KEYS[14], member, kept)
  redis.call('INCRBY', KEYS[15], kept)
end
if redis.call('RPUSH', KEYS[17], ARGV[9]) >= tonumber(ARGV[10]) then fold_metrics(KEYS[17], KEYS[16]) end
redis.call('PUBLISH', KEYS[6], ARGV[1])
return 1
"""


ADMIT_LUA = ACCOUNT_LUA + """
if ARGV[9] ~= '' then
  local earlier = redis.call('GET', KEYS[2])
  if earlier then
    local id, digest = string.match(earlier, '^(%S+) (%S+)$')
    if digest ~= ARGV[10] then return {'mismatch'} end
    local found = redis.call('GET', ARGV[12] .. id) or redis.call('GET', ARGV[11] .. id)
    if found then return {'earlier', found} end
  end
end
local active = redis.call('HVALS', KEYS[1])
if #active >= tonumber(ARGV[3]) then return {'active', tostring(#active)} end
local bytes = tonumber(ARGV[2])
for _, b in ipairs(active) do bytes = bytes + tonumber(b) end
if bytes > tonumber(ARGV[4]) then return {'bytes'} end
-- every tensor of a job may come back as an output, stored as the tenant's: its bytes are reserved
-- against the tenant's stored bytes from admission to the job's end, with its blobs and its ended
-- jobs' records (those expired released first)
release_expired(KEYS[10], KEYS[11], KEYS[8], tonumber(ARGV[8]))
local stored = tonumber(redis.call('GET', KEYS[8]) or '0')
if stored + bytes > tonumber(ARGV[14]) then return {'stored', tostring(stored + bytes - tonumber(ARGV[2]))} end
redis.call('SET', KEYS[3], ARGV[5], 'EX', ARGV[7])
redis.call('SET', KEYS[4], ARGV[6], 'EX', ARGV[7])
redis.call('SET', KEYS[9], ARGV[15], 'EX', ARGV[7])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[8], ARGV[1])
redis.call('ZADD', KEYS[6], ARGV[8], ARGV[1])
-- the tenant's job ids by creation time, and the same ids in lexical order (job_ids.py finds a
-- short id's job there): the expired leave both
local expired = redis.call('ZRANGEBYSCORE', KEYS[6], 0, ARGV[8] - ARGV[7])
for i = 1, #expired, 1000 do redis.call('ZREM', KEYS[12], unpack(expired, i, math.min(i + 999, #expired))) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[6], 0, ARGV[8] - ARGV[7]) end
redis.call('ZADD', KEYS[12], 0, ARGV[1])
if ARGV[9] ~= '' then redis.call('SET', KEYS[2], ARGV[9], 'EX', ARGV[7]) end
if #ARGV > 15 then
  redis.call('HSET', KEYS[7], unpack(ARGV, 16))
  redis.call('EXPIRE', KEYS[7], ARGV[13])
end
return {'admitted'}
"""


class JobStore:
    """Synchronous access for workers and the server's blocking routes."""

    def __init__(self, connection: redis.Redis, settings: ServiceSettings, cache: Optional[redis.Redis] = None):
        self.connection = connection
        self.settings = settings
        self.cache = RedisCache(cache or connection, 0)  # the cache Redis (connect.py): a job's generated files
        self._finish = connection.register_script(FINISH_LUA)
        self._admit = connection.register_script(ADMIT_LUA)

    def admit(self, record: Dict[str, Any], spec: Dict[str, Any], inputs: Dict[str, bytes], in_flight_bytes: int,
              limits: Any, idempotency: Optional[Tuple[str, str]] = None) -> Tuple[str, Any]:
        """Check the tenant's quotas and, atomically with that, store the job (record, spec, active
        slot): no job is ever stored over a quota. One script, no WATCH: a busy tenant's concurrent
        submissions never retry. Then enqueue it; a job stored but never enqueued (the server died
        in between) is failed by the reaper. `idempotency`: (the request's Idempotency-Key, its
        digest); the script answers a key already used with that job's record, read in the same
        step (a job that has expired since is no answer: this submission makes a new one).
        Returns ("admitted", None), ("earlier", its record), ("mismatch", None) for a key used by
        another submission, or the limit hit: ("bytes", None), ("active", count), ("stored", the
        tenant's stored and reserved bytes). The rate was charged as the request arrived (server/edge.py)."""
        job_id, tenant, ttl = record["id"], record["tenant"], self.settings.result_ttl_s
        key, digest = idempotency or ("", "")
        keys = [tenant_key(tenant, "active"),
                idempotency_key(tenant, key) if key else tenant_key(tenant, "no-idempotency-key"), spec_key(job_id),
                job_key(job_id), QUEUED, tenant_key(tenant, "jobs"), inputs_key(job_id), tenant_key(tenant, "stored"),
                summary_key(job_id), *account_keys(tenant)[:2], tenant_key(tenant, "job-ids")]
        args = [job_id, in_flight_bytes, limits.max_active_jobs,
                limits.max_bytes_in_flight, json.dumps(spec), json.dumps(record), ttl, record["created_at"],
                f"{job_id} {digest}" if key else "", digest, job_key(""), final_key(""),
                self.settings.blob_ttl_s, limits.max_stored_bytes, summarize(record),
                *[x for field in inputs.items() for x in field]]
        verdict, *value = self._admit(keys=keys, args=args)
        verdict = verdict.decode()
        if verdict == "earlier":
            return verdict, json.loads(value[0])
        if verdict == "admitted":
            # RQ's job and the queue's name in one transaction
            with self.connection.pipeline() as pipe:
                enqueue(self.connection, pipe, record, spec["timeout"], ttl)
                pipe.hset(SHARES, tenant, share_value(limits.max_running_jobs, limits.worker_seconds_per_minute))
                recorder.inline_received(pipe, record["tenant"], inputs)
                pipe.execute()
        return verdict, value[0].decode() if value else None

    def get(self, job_id: str) -> Optional[Dict[str, Any]]:
        record, final = self.connection.mget(job_key(job_id), final_key(job_id))
        return merge_record(record, final)

    def start(self, job_id: str, worker: Optional[str]) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]]]:
        """Mark the job started (its heartbeat begins) and return its record and launch spec (with
        its inline tensors' bytes by field under "inputs", those that have not expired); a job
        that already ended (reaped or cancelled while queued) comes back as it is, unchanged. Two
        round trips: this is on every launch's path."""
        with self.connection.pipeline(transaction=False) as pipe:
            pipe.mget(job_key(job_id), final_key(job_id), spec_key(job_id))
            pipe.hgetall(inputs_key(job_id))
            (raw, final, raw_spec), inputs = pipe.execute()
        record = merge_record(raw, final) or {"id": job_id}
        if record.get("status") in TERMINAL:
            return record, None
        _move(record, JobStatus.STARTED, started_at=time.time(), worker=worker)
        with self.connection.pipeline() as pipe:
            pipe.set(alive_key(job_id), 1, ex=self.settings.job_heartbeat_ttl_s)
            pipe.sadd(STARTED, job_id)
            pipe.zrem(QUEUED, job_id)
            pipe.set(job_key(job_id), json.dumps(record), ex=self.settings.result_ttl_s)
            pipe.set(summary_key(job_id), summarize(record), ex=self.settings.result_ttl_s)
            pipe.execute()
        if raw_spec is None:
            return record, None
        return record, dict(json.loads(raw_spec), inputs={k.decode(): v for k, v in inputs.items()})

    def hand_off(self, job_id: str, record: Dict[str, Any], stage: str, timeout_s: float) -> None:
        """Queue the started job again, for a worker serving `stage` (queues.STAGES), with what the
        stages so far did in its record; in one transaction, so a job is never both started and
        queued, nor lost between them."""
        rq_id = f"{job_id}-{stage}"
        _move(record, JobStatus.QUEUED, stage=stage, rq_job=rq_id, queued_at=time.time())
        with self.connection.pipeline() as pipe:
            enqueue(self.connection, pipe, record, timeout_s, self.settings.result_ttl_s, stage, rq_id)
            pipe.set(job_key(job_id), json.dumps(record), ex=self.settings.result_ttl_s)
            pipe.set(summary_key(job_id), summarize(record), ex=self.settings.result_ttl_s)
            pipe.zadd(QUEUED, {job_id: record["queued_at"]})
            pipe.srem(STARTED, job_id)
            pipe.delete(alive_key(job_id))
            pipe.execute()

    def heartbeat(self, job_id: str) -> None:
        self.connection.set(alive_key(job_id), 1, ex=self.settings.job_heartbeat_ttl_s)

    def finish(self, job_id: str, status: JobStatus, changes: Dict[str, Any],
               record: Optional[Dict[str, Any]] = None, frontend_key: Optional[str] = None,
               trace: Optional[bytes] = None) -> Optional[JobStatus]:
        """End the job in terminal state `status`, with `changes` (its outcome), unless it already
        has one; tell waiters. Returns `status` if this call won, else None. `record`: the job's
        record as its worker holds it (saves reading it); `frontend_key`: the frontend cache entry
        of its Ascend C and IR, stored with the outcome (files:<id>); `trace`: its modeled timeline,
        zlib-compressed (trace:<id>), likewise stored only if this call won. What stays is charged
        to the job's tenant (FINISH_LUA)."""
        record = dict(record or self.get(job_id) or {"id": job_id})
        if record.get("status") in TERMINAL:
            return None
        ended_at = time.time()
        _move(record, status, **changes, ended_at=ended_at)
        tenant = record.get("tenant", "")  # none: keys that never exist, and nobody charged
        won = self._finish(keys=[final_key(job_id), tenant_key(tenant, "active"), STARTED, QUEUED, alive_key(job_id),
                                 done_channel(job_id), files_key(job_id), trace_key(job_id), summary_key(job_id),
                                 spec_key(job_id), inputs_key(job_id), job_key(job_id), *account_keys(tenant),
                                 recorder.METRICS, recorder.PENDING],
                           args=[json.dumps(record), self.settings.result_ttl_s, job_id, frontend_key or "",
                                 trace or "", summarize(record), ended_at, int(bool(tenant)),
                                 recorder.job_delta(record), recorder.FOLD_AT])
        return status if won else None

    def fail(self, job_id: str, kind: str, message: str, record: Optional[Dict[str, Any]] = None,
             frontend_key: Optional[str] = None, python: Optional[List[Dict[str, Any]]] = None,
             **report: Any) -> Optional[JobStatus]:
        """End the job as failed (timed out: `kind` timeout); `python`: the kernel's functions the
        message cites (workers/cited.py), kept in the error; `report` adds the kernel's log and
        warnings, if it ran. Returns the job's new state if this call ended it, else None."""
        status = JobStatus.TIMED_OUT if kind == Kind.TIMEOUT else JobStatus.FAILED
        error = {"kind": str(kind), "message": message, **({"python": python} if python else {})}
        return self.finish(job_id, status, {"error": error, **report}, record, frontend_key)

    def trace(self, job_id: str) -> Optional[bytes]:
        """The job's trace (JSON text), if it has one that has not expired (and was kept: max_trace_bytes)."""
        stored = self.connection.get(trace_key(job_id))
        return None if stored is None else zlib.decompress(stored)

    def frontend_entry(self, job_id: str) -> Optional[Dict[str, Any]]:
        key = self.connection.get(files_key(job_id))
        entry = None if key is None else self.cache.get(key.decode())
        return None if entry is None else json.loads(entry)


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

    async def summaries(self, tenant: str, limit: int) -> List[Dict[str, Any]]:
        """The summaries of the tenant's `limit` most recent jobs, newest first (one that expired is
        left out), the queued ones with their place in their queue: at most `limit` summaries and
        (for the queued, which its max_active_jobs bounds) two small numbers each are read."""
        ids = await self.connection.zrevrange(tenant_key(tenant, "jobs"), 0, limit - 1)
        found = await self.connection.mget([summary_key(i.decode()) for i in ids]) if ids else []
        # a job ended after its record was lost has a summary without its tenant, kernel...: left out
        summaries = [summary for summary in map(json.loads, filter(None, found)) if "tenant" in summary]
        # the tenant as the caller names it: a summary's may be clipped, a queue's name is not
        queued = [(s, waiting_in(dict(s, tenant=tenant))) for s in summaries if s["status"] == JobStatus.QUEUED]
        if queued:
            async with self.connection.pipeline(transaction=False) as pipe:
                for _, (queue, rq_id) in queued:
                    pipe.lpos(queue, rq_id).llen(queue)
                places = await pipe.execute()
            for (summary, _), position, depth in zip(queued, places[::2], places[1::2]):
                if position is not None:  # else a worker is taking it just now
                    summary.update(queue_position=position + 1, queue_depth=depth)
        return summaries

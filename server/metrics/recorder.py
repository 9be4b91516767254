"""The pool's metrics, kept in Redis: what any process of the pool (a worker on another host, the
API's reaper) adds is what every API server's /metrics shows. scrape.py turns them into
Prometheus text at scrape time, with the queue depths and live workers read from the store then.

One hash, ascrun:metrics (store/keys.py's METRICS), field JSON [series, label values...] -> a
count or a sum. A histogram is a count per bucket (not cumulative: one increment per observation),
and its sum. Recording never fails what it records: a Redis error drops the sample,
not the job. The store records each job's end here (store/jobs.py), so this module imports
nothing of the store but its keys.

A job's end is a dozen increments: on the launch path they go as one packed delta (job_delta), which
the job's finish script pushes on ascrun:metrics-pending; FOLD_LUA adds the pending deltas into
the hash, summed per field, whenever a reader reads it (recorded) or FOLD_AT deltas wait.
"""
from __future__ import annotations

import bisect
import json
import math
from typing import Any, Dict, List, Tuple

import numpy as np
import redis
import redis.asyncio as aioredis

from ...launch_checks import storage_dtype
from ..store.keys import ANY_SOC, METRICS
# seconds: a cached launch's stages are milliseconds, a cold build tens of seconds
STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
                 300.0, math.inf)
JOB_STAGES = ("queue", "frontend", "build", "run")  # of a job's timings; upload and download are the API's
CACHED_STAGES = ("frontend", "build")
LABELS = {  # series -> its label names; the tenant first: a tenant's scrape shows its own series only
    "jobs": ("tenant", "target", "soc", "status", "error_kind"),
    "cache": ("tenant", "target", "stage", "result"),
    "stage_seconds": ("tenant", "target", "stage"),
    "bytes": ("tenant", "direction", "kind"),
    "worker_seconds": ("tenant", "target"),
    "refusals": ("tenant", "reason"),
    "jails_failed": ("stage", "when"),  # the pool's, no tenant's: the operator's only
}
NO_SOC = ANY_SOC  # a job naming no SOC; its queue, which every worker serves


def _field(series: str, *values: Any) -> str:
    return json.dumps([series, *(str(v) for v in values)])


def _count(pipe, series: str, labels: Tuple, amount: float = 1) -> None:
    if isinstance(amount, int):
        pipe.hincrby(METRICS, _field(series, *labels), amount)
    else:
        pipe.hincrbyfloat(METRICS, _field(series, *labels), amount)


def _observe(pipe, series: str, labels: Tuple, seconds: float) -> None:
    _count(pipe, f"{series}:bucket", (*labels, bisect.bisect_left(STAGE_BUCKETS, seconds)))
    _count(pipe, f"{series}:sum", labels, float(seconds))


def _output_bytes(output: Dict[str, Any]) -> int:
    return int(np.prod(output["shape"], dtype=np.int64)) * storage_dtype(output["dtype"]).itemsize


class _Delta:
    """Increments packed for FOLD_LUA, in the order they were made: [field, amount, "i" or "f"]
    (an amount as redis-py would send it to HINCRBY or HINCRBYFLOAT)."""

    def __init__(self):
        self.increments: List[List[str]] = []

    def hincrby(self, _key: str, field: str, amount: int) -> None:
        self.increments.append([field, str(amount), "i"])

    def hincrbyfloat(self, _key: str, field: str, amount: float) -> None:
        self.increments.append([field, repr(amount), "f"])


def job_delta(record: Dict[str, Any]) -> str:
    """What a job reaching its terminal record (store.jobs.JobStore.finish, once per job) adds: its
    outcome, the time of each stage it went through, its cache hits and misses, its inline outputs'
    bytes. Packed for FOLD_LUA: the finish script pushes it on PENDING."""
    tenant, target, soc = record.get("tenant", ""), record.get("target", "unknown"), record.get("soc") or NO_SOC
    error = record.get("error") or {}
    delta = _Delta()
    _count(delta, "jobs", (tenant, target, soc, record["status"], error.get("kind", "none")))
    for stage, seconds in (record.get("timings") or {}).items():
        if stage in JOB_STAGES:
            _observe(delta, "stage_seconds", (tenant, target, stage), seconds)
    for stage, result in (record.get("cache") or {}).items():
        if stage in CACHED_STAGES:
            _count(delta, "cache", (tenant, target, stage, result))
    inline = sum(_output_bytes(o) for o in (record.get("outputs") or {}).values() if "data" in o)
    if inline:
        _count(delta, "bytes", (tenant, "out", "inline"), inline)
    return json.dumps(delta.increments)


PENDING = f"{METRICS}-pending"  # list of job_delta()s not yet added to METRICS
FOLD_AT = 100  # a finish script folds the pending deltas once this many wait (no reader read them)
# fold_metrics(pending, metrics): each field's increments summed, one HINCRBY or HINCRBYFLOAT a
# field; a float field incremented once gets its amount as sent (as a lone HINCRBYFLOAT would).
FOLD_LUA = """
local function fold_metrics(pending, metrics)
  local deltas = redis.call('LRANGE', pending, 0, -1)
  if #deltas == 0 then return end
  redis.call('DEL', pending)
  local sums, sent, floats, order = {}, {}, {}, {}
  for _, delta in ipairs(deltas) do
    for _, inc in ipairs(cjson.decode(delta)) do
      local field = inc[1]
      if sums[field] == nil then table.insert(order, field) sums[field] = 0 sent[field] = inc[2]
      else sent[field] = nil end
      sums[field] = sums[field] + tonumber(inc[2])
      floats[field] = inc[3] == 'f'
    end
  end
  for _, field in ipairs(order) do
    if floats[field] then
      redis.call('HINCRBYFLOAT', metrics, field, sent[field] or string.format('%.17g', sums[field]))
    else
      redis.call('HINCRBY', metrics, field, string.format('%d', sums[field]))
    end
  end
end
"""
READ_LUA = FOLD_LUA + """
fold_metrics(KEYS[2], KEYS[1])
return redis.call('HGETALL', KEYS[1])
"""


def worker_time(pipe: redis.client.Pipeline, tenant: str, target: str, seconds: float) -> None:
    """A worker spent `seconds` on one of `tenant`'s jobs: counted within `pipe`, the release of
    its share (store/share.py)."""
    _count(pipe, "worker_seconds", (tenant, target), float(seconds))


def jail_failed(connection: redis.Redis, stage: str, when: str) -> None:
    """A worker's jail for `stage` died: `when` "start" (before it was ready: the host's jails are
    broken) or "crash" (while it served a job: often the job's own doing). sandbox.jail.failure_hook."""
    try:
        connection.hincrby(METRICS, _field("jails_failed", stage, when), 1)
    except redis.RedisError:
        pass


def inline_received(pipe: redis.client.Pipeline, tenant: str, inputs: Dict[str, bytes]) -> None:
    """A submission's inline tensors were accepted: counted within `pipe`, the job's enqueueing."""
    received = sum(len(data) for data in inputs.values())
    if received:
        _count(pipe, "bytes", (tenant, "in", "inline"), received)


async def blob_moved(connection: aioredis.Redis, tenant: str, stage: str, seconds: float, size: int) -> None:
    """A blob of `tenant`'s went through the API: `stage` "upload" (in) or "download" (out)."""
    try:
        async with connection.pipeline(transaction=False) as pipe:
            _observe(pipe, "stage_seconds", (tenant, "", stage), seconds)  # of no target
            _count(pipe, "bytes", (tenant, "in" if stage == "upload" else "out", "blob"), size)
            await pipe.execute()
    except redis.RedisError:  # redis.asyncio raises the same classes
        pass


async def refused(connection: aioredis.Redis, tenant: str, reason: str) -> None:
    """The API refused a request of `tenant` (authenticated: a tenant of the tenants file) for
    `reason` (a limit's name, or the refusal's kind: a bounded set)."""
    try:
        async with connection.pipeline(transaction=False) as pipe:
            _count(pipe, "refusals", (tenant, reason))
            await pipe.execute()
    except redis.RedisError:
        pass


def recorded(connection: redis.Redis) -> Dict[str, List[Tuple[Tuple[str, ...], float]]]:
    """Every recorded series -> [(label values, value)]."""
    series: Dict[str, List[Tuple[Tuple[str, ...], float]]] = {}
    found = connection.register_script(READ_LUA)(keys=[METRICS, PENDING])
    for field, value in zip(found[0::2], found[1::2]):
        name, *labels = json.loads(field)
        series.setdefault(name, []).append((tuple(labels), float(value)))
    return series

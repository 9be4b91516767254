"""The pool's liveness: each worker's heartbeat says, for every target it serves, the stages and
SOCs it serves and what it can do; a worker silent settings.worker_ttl_s is gone. PoolView is what
the API tells of the pool."""
from __future__ import annotations

import json
import math
import time
from typing import Any, Dict, List, Optional, Tuple

import redis

from ...compiler.settings import ServiceSettings
from .keys import capabilities_key, workers_key
from .queues import STAGES, depths, queue_depth


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


def live_workers_said(connection: redis.Redis, targets: List[str], *, ttl_s: float) -> List[Dict[str, Any]]:
    """Every live worker (beat within `ttl_s`), by name: its last heartbeat (epoch seconds) and what
    it said it serves (target -> capabilities: stages, SOCs, jails...)."""
    since = time.time() - ttl_s
    beats: Dict[str, float] = {}
    for target in targets:
        for stage in STAGES:
            for raw, beat in connection.zrangebyscore(workers_key(target, stage=stage), since, "+inf",
                                                      withscores=True):
                beats[raw.decode()] = max(beat, beats.get(raw.decode(), 0.0))
    names = sorted(beats)
    said = connection.mget([capabilities_key(n) for n in names]) if names else []
    return [{"name": name, "last_beat": beats[name], "serves": json.loads(raw)}
            for name, raw in zip(names, said) if raw is not None]


class PoolView:
    """What the API (and a run worker looking for a build worker) tells of the pool: the live
    workers of each target, SOC and stage, its queues."""

    def __init__(self, connection: redis.Redis, settings: ServiceSettings):
        self.connection = connection
        self.worker_ttl_s = settings.worker_ttl_s

    def ping(self) -> None:
        self.connection.ping()

    def live_workers(self, target: str, soc: Optional[str] = None, stage: str = "run") -> int:
        return live_workers(self.connection, target, soc, stage, ttl_s=self.worker_ttl_s)

    def live_capabilities(self, target: str) -> Dict[str, Dict[str, Any]]:
        return live_capabilities(self.connection, target, ttl_s=self.worker_ttl_s)

    def workers(self, targets: List[str]) -> List[Dict[str, Any]]:
        return live_workers_said(self.connection, targets, ttl_s=self.worker_ttl_s)

    def queue_depth(self, target: str, tenant: Optional[str] = None) -> Tuple[int, Optional[float]]:
        return queue_depth(self.connection, target, tenant)

    def queues(self, target: str, tenant: Optional[str] = None) -> Dict[Tuple[str, str], Tuple[int, Optional[float]]]:
        """(SOC, stage) -> jobs waiting in the target's queues of that SOC and stage (every tenant's,
        or `tenant`'s only), and how long the oldest of those at their heads has waited (s; None: none)."""
        return depths(self.connection, target, tenant)

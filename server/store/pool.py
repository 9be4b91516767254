"""The pool's liveness: each worker's heartbeat says, for every target it serves, the stages and
SOCs it serves and what it can do; a worker silent WORKER_TTL_S is gone. PoolView is what the API
tells of the pool."""
from __future__ import annotations

import json
import math
import time
from typing import Any, Dict, List, Optional, Tuple

import redis

from .keys import capabilities_key, workers_key
from .queues import STAGES, depths, queue_depth

WORKER_BEAT_S = 1.0  # how often a worker says it is alive
WORKER_TTL_S = 5.0  # a worker silent this long is gone


def _worker_keys(served: Dict[str, Dict[str, Any]]) -> List[str]:
    """The liveness sets a worker serving `served` (target -> capabilities) belongs to."""
    return [workers_key(target, soc, stage) for target, capabilities in served.items()
            for stage in capabilities.get("stages", STAGES) for soc in [None, *capabilities.get("socs", [])]]


def worker_beat(connection: redis.Redis, served: Dict[str, Dict[str, Any]], name: str) -> None:
    """A worker's heartbeat (every WORKER_BEAT_S): it is live for each target it serves, for each
    stage and SOC of those; what it can do (target -> capabilities, "socs" and "stages" among them)
    lives as long."""
    now = time.time()
    with connection.pipeline() as pipe:
        for key in _worker_keys(served):
            pipe.zadd(key, {name: now})
        pipe.set(capabilities_key(name), json.dumps(served), ex=int(math.ceil(WORKER_TTL_S)))
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


def live_workers(connection: redis.Redis, target: str, soc: Optional[str] = None, stage: str = "run") -> int:
    """Workers of `target` (and `soc`) serving `stage` that beat within WORKER_TTL_S (a killed
    worker drops out by itself)."""
    return connection.zcount(workers_key(target, soc, stage), time.time() - WORKER_TTL_S, "+inf")


def live_capabilities(connection: redis.Redis, target: str) -> Dict[str, Dict[str, Any]]:
    """Worker name -> what it said it can do for `target`, for its live workers of any stage."""
    since = time.time() - WORKER_TTL_S
    names = sorted({n.decode() for stage in STAGES
                    for n in connection.zrangebyscore(workers_key(target, stage=stage), since, "+inf")})
    said = connection.mget([capabilities_key(n) for n in names]) if names else []
    return {name: json.loads(raw).get(target, {}) for name, raw in zip(names, said) if raw is not None}


class PoolView:
    """What the API (and a run worker looking for a build worker) tells of the pool: the live
    workers of each target, SOC and stage, its queues."""

    def __init__(self, connection: redis.Redis):
        self.connection = connection

    def ping(self) -> None:
        self.connection.ping()

    def live_workers(self, target: str, soc: Optional[str] = None, stage: str = "run") -> int:
        return live_workers(self.connection, target, soc, stage)

    def live_capabilities(self, target: str) -> Dict[str, Dict[str, Any]]:
        return live_capabilities(self.connection, target)

    def queue_depth(self, target: str) -> Tuple[int, Optional[float]]:
        return queue_depth(self.connection, target)

    def queues(self, target: str) -> Dict[Tuple[str, str], Tuple[int, Optional[float]]]:
        """(SOC, stage) -> jobs waiting in the target's queues of that SOC and stage (every tenant's),
        and how long the oldest of those at their heads has waited (s; None: no job waits)."""
        return depths(self.connection, target)

"""What /metrics shows of the pool, read from Redis at each scrape: the series every process
recorded (metrics.py), the queues' depths and oldest jobs, the live workers."""
from __future__ import annotations

import json
import time
from typing import Dict, Iterator, List, Optional, Tuple

import redis
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString
from rq.queue import Queue

from ..compiler.pipeline import TARGETS
from . import metrics, store

COUNTERS = {  # recorded series -> (metric name, help)
    "jobs": ("ascrun_jobs", "Jobs ended, by target, SOC, status and error kind"),
    "cache": ("ascrun_cache_lookups", "Compile cache lookups of the jobs ended, by target, stage and result"),
    "bytes": ("ascrun_tensor_bytes", "Tensor bytes into and out of the service, by direction and kind (blob, inline)"),
}


class PoolCollector(Collector):
    def __init__(self, connection: redis.Redis):
        self.connection = connection

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ascrun_metrics_redis_up", "Whether this scrape could read the pool's metrics from Redis")
        try:
            families = list(self._pool())
        except redis.RedisError:
            families = []
        up.add_metric([], 1 if families else 0)
        yield up
        yield from families

    def _pool(self) -> Iterator[Metric]:
        recorded = metrics.recorded(self.connection)
        for series, (name, doc) in COUNTERS.items():
            family = CounterMetricFamily(name, doc, labels=metrics.LABELS[series])
            for labels, value in sorted(recorded.get(series, [])):
                family.add_metric(labels, value)
            yield family
        yield _histogram(recorded, "stage_seconds", "ascrun_stage_seconds",
                         "Seconds of each stage: a job's queue, frontend, build and run; a blob's upload and download")
        depth = GaugeMetricFamily("ascrun_queue_depth", "Jobs waiting, by target, SOC and stage queue",
                                  labels=("target", "soc", "stage"))
        oldest = GaugeMetricFamily("ascrun_queue_oldest_age_seconds", "How long the oldest waiting job has "
                                   "waited (0: none waits)", labels=("target", "soc", "stage"))
        workers = GaugeMetricFamily("ascrun_workers_live", "Live workers, by target, SOC and role (build, run)",
                                    labels=("target", "soc", "role"))
        for target in TARGETS:
            for (soc, stage), (count, age) in sorted(queues(self.connection, target).items()):
                depth.add_metric((target, soc, stage), count)
                oldest.add_metric((target, soc, stage), age or 0.0)
            for (soc, role), count in sorted(live_workers(self.connection, target).items()):
                workers.add_metric((target, soc, role), count)
        yield from (depth, oldest, workers)


def _histogram(recorded: Dict[str, List], series: str, name: str, doc: str) -> HistogramMetricFamily:
    """The recorded per-bucket counts, made cumulative as Prometheus wants them."""
    family = HistogramMetricFamily(name, doc, labels=metrics.LABELS[series])
    sums = dict(recorded.get(f"{series}:sum", []))
    per_bucket: Dict[Tuple[str, ...], List[float]] = {}
    for (*labels, index), count in recorded.get(f"{series}:bucket", []):
        per_bucket.setdefault(tuple(labels), [0.0] * len(metrics.STAGE_BUCKETS))[int(index)] += count
    for labels, counts in sorted(per_bucket.items()):
        cumulative, buckets = 0.0, []
        for bound, count in zip(metrics.STAGE_BUCKETS, counts):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))
        family.add_metric(labels, buckets, sums.get(labels, 0.0))
    return family


def queues(connection: redis.Redis, target: str) -> Dict[Tuple[str, str], Tuple[int, Optional[float]]]:
    """(SOC, stage) -> jobs waiting in the target's queues of that SOC and stage (every tenant's),
    and how long the oldest of those at their heads has waited (s; None: no job waits)."""
    socs = sorted(s.decode() for s in connection.smembers(store.queue_socs_key(target)))
    places = [(soc, stage) for soc in socs for stage in store.STAGES]
    with connection.pipeline(transaction=False) as pipe:
        for soc, stage in places:
            pipe.smembers(store.queues_key(target, soc, stage))
        names = pipe.execute()
    lists = [(place, f"{Queue.redis_queue_namespace_prefix}{name.decode()}")
             for place, found in zip(places, names) for name in found]
    with connection.pipeline(transaction=False) as pipe:
        for _, key in lists:
            pipe.llen(key)
            pipe.lindex(key, 0)
        answers = pipe.execute()
    depth: Dict[Tuple[str, str], int] = {}
    heads: Dict[Tuple[str, str], List[str]] = {}
    for (place, _), length, head in zip(lists, answers[0::2], answers[1::2]):
        depth[place] = depth.get(place, 0) + length
        if head is not None:  # an RQ job id: the job's, or <job id>-<stage> once handed on (store.hand_off)
            heads.setdefault(place, []).append(head.decode().split("-")[0])
    now = time.time()
    answer = {}
    for place, count in depth.items():
        keys = [store.job_key(h) for h in heads.get(place, [])]
        records = [json.loads(r) for r in (connection.mget(keys) if keys else []) if r]
        since = [r.get("queued_at", r.get("created_at", now)) for r in records]
        answer[place] = (count, now - min(since) if since else None)
    return answer


def live_workers(connection: redis.Redis, target: str) -> Dict[Tuple[str, str], int]:
    """(SOC, stage) -> the target's live workers serving that stage and SOC (NO_SOC: a worker that
    names none); a worker serving several SOCs counts under each."""
    counts: Dict[Tuple[str, str], int] = {}
    for said in store.live_capabilities(connection, target).values():
        for stage in said.get("stages", store.STAGES):
            for soc in said.get("socs") or [metrics.NO_SOC]:
                counts[(soc, stage)] = counts.get((soc, stage), 0) + 1
    return counts

"""What /metrics shows of the pool, read at each scrape: the series every process recorded
(recorder.py), and through the store the queues' depths and oldest jobs and the live workers."""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

import redis
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from ...compiler.targets import NAMES as TARGETS
from ...compiler.settings import ServiceSettings
from ..store.pool import PoolView
from ..store.queues import STAGES
from . import recorder

COUNTERS = {  # recorded series -> (metric name, help)
    "jobs": ("ascrun_jobs", "Jobs ended, by target, SOC, status and error kind"),
    "cache": ("ascrun_cache_lookups", "Compile cache lookups of the jobs ended, by target, stage and result"),
    "bytes": ("ascrun_tensor_bytes", "Tensor bytes into and out of the service, by direction and kind (blob, inline)"),
    "worker_seconds": ("ascrun_worker_seconds", "Worker time spent on jobs, by tenant and target (a tenant's share: "
                       "max_running_jobs, worker_seconds_per_minute)"),
    "refusals": ("ascrun_refusals", "Requests of a tenant the API refused past its edge, by reason (a limit's name, "
                 "else the error's kind)"),
    "jails_failed": ("ascrun_jails_failed", "Worker jails that died, by stage and when: start (before it was ready) "
                     "or crash (while serving a job)"),
}
OPERATOR_SERIES = {"jails_failed"}  # no tenant label: the pool's, shown to the operator only


class PoolCollector(Collector):
    """prometheus-client calls collect() at each scrape: nothing of the pool is kept in the API.
    `tenant`: that tenant's view, its own series and queues only; None: the operator's, the pool's."""

    def __init__(self, connection: redis.Redis, settings: ServiceSettings, tenant: Optional[str] = None):
        self.connection, self.tenant = connection, tenant
        self.pool = PoolView(connection, settings)

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ascrun_metrics_redis_up",
                               "Whether this scrape could read the pool's metrics from Redis")
        try:
            families = list(self._pool())
        except redis.RedisError:
            families = []
        up.add_metric([], 1 if families else 0)
        yield up
        yield from families

    def _pool(self) -> Iterator[Metric]:
        recorded = {series: [(labels, value) for labels, value in found if self.tenant in (None, labels[0])]
                    for series, found in recorder.recorded(self.connection).items()}  # the tenant label first
        for series, (name, doc) in COUNTERS.items():
            if series in OPERATOR_SERIES and self.tenant is not None:
                continue
            family = CounterMetricFamily(name, doc, labels=recorder.LABELS[series])
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
            for (soc, stage), (count, age) in sorted(self.pool.queues(target, self.tenant).items()):
                depth.add_metric((target, soc, stage), count)
                oldest.add_metric((target, soc, stage), age or 0.0)
            for (soc, role), count in sorted(live_workers(self.pool, target).items()):
                workers.add_metric((target, soc, role), count)
        yield from (depth, oldest)
        if self.tenant is None:  # the pool's workers and its Redis are the operator's figures
            yield workers
            yield from self._redis_memory()

    def _redis_memory(self) -> Iterator[Metric]:
        """The state Redis's memory (noeviction: once full it refuses new work, 507)."""
        memory = self.connection.info("memory")
        yield GaugeMetricFamily("ascrun_redis_used_memory_bytes", "Memory the pool's state Redis uses",
                                value=memory["used_memory"])
        yield GaugeMetricFamily("ascrun_redis_maxmemory_bytes", "The state Redis's maxmemory (0: no limit)",
                                value=memory["maxmemory"])


def _histogram(recorded: Dict[str, List], series: str, name: str, doc: str) -> HistogramMetricFamily:
    """The recorded per-bucket counts, made cumulative as Prometheus wants them."""
    family = HistogramMetricFamily(name, doc, labels=recorder.LABELS[series])
    sums = dict(recorded.get(f"{series}:sum", []))
    per_bucket: Dict[Tuple[str, ...], List[float]] = {}
    for (*labels, index), count in recorded.get(f"{series}:bucket", []):
        per_bucket.setdefault(tuple(labels), [0.0] * len(recorder.STAGE_BUCKETS))[int(index)] += count
    for labels, counts in sorted(per_bucket.items()):
        cumulative, buckets = 0.0, []
        for bound, count in zip(recorder.STAGE_BUCKETS, counts):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))
        family.add_metric(labels, buckets, sums.get(labels, 0.0))
    return family


def live_workers(pool: PoolView, target: str) -> Dict[Tuple[str, str], int]:
    """(SOC, stage) -> the target's live workers serving that stage and SOC (NO_SOC: jobs naming
    none, which every worker serves); a worker serving several SOCs counts under each (a cpu worker
    serves every SOC it models by default)."""
    counts: Dict[Tuple[str, str], int] = {}
    for said in pool.live_capabilities(target).values():
        for stage in said.get("stages", STAGES):
            for soc in [recorder.NO_SOC, *said.get("socs", [])]:
                counts[(soc, stage)] = counts.get((soc, stage), 0) + 1
    return counts

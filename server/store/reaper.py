"""The reaper: every accepted job reaches a terminal state, even when what should have ended it
died. The API server runs it every second (app.py): it fails a started job whose work horse
stopped beating, a queued job whose RQ job was lost or taken by a worker that died before
starting it, and a queued job no live worker serves any more."""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

from ...compiler.errors import Kind
from ...job_status import TERMINAL
from . import rq_adapter
from .jobs import JobStore
from .keys import QUEUED, STARTED, alive_key
from .pool import live_workers


class Reaper:
    """One per API server; it remembers, between rounds, since when each queue has had no live
    worker and since when each RQ job has been in no list."""

    def __init__(self, jobs: JobStore):
        self.jobs = jobs
        self.connection = jobs.connection
        self.settings = jobs.settings
        self._unserved_since: Dict[Tuple, float] = {}  # queue (target, soc, stage) -> since when no live worker
        self._popped_since: Dict[str, float] = {}  # RQ job id -> since when it is RQ-queued but in no list

    def reap(self) -> List[str]:
        """Fail every started job whose work horse stopped beating (its worker was killed, or
        Redis lost the connection under it). Returns the ids it ended."""
        ended = []
        for raw in self.connection.smembers(STARTED):
            job_id = raw.decode()
            if self.connection.exists(alive_key(job_id)):
                continue
            record = self.jobs.get(job_id)
            if record is None or record.get("status") in TERMINAL:
                self.connection.srem(STARTED, job_id)
            elif self.jobs.fail(job_id, Kind.RUNTIME_ERROR,
                                f"the worker running this job stopped (no heartbeat for "
                                f"{self.settings.job_heartbeat_ttl_s} s; it was killed or lost Redis): submit again"):
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
            record = self.jobs.get(job_id) or {}
            rq_id = record.get("rq_job", job_id)  # a job handed on has an RQ job per stage
            if rq_id in popped:
                self._popped_since[rq_id] = popped[rq_id]
            rq_state = rq_adapter.job_state(self.connection, rq_id)
            if rq_state.status == "queued" and rq_state.origin is not None \
                    and self._lost_after_dequeue(rq_id, rq_state.origin):
                pass  # failed below
            elif rq_state.status in rq_adapter.WAITING:
                unserved = self._unserved(record, live)
                if unserved is not None and self.jobs.fail(job_id, Kind.UNAVAILABLE, unserved):
                    ended.append(job_id)
                continue
            if rq_state.status == "started" and rq_state.started_at is not None and \
                    time.time() - rq_state.started_at < self.settings.unqueued_grace_s:
                continue  # a worker just took it and is about to mark it started
            self.connection.zrem(QUEUED, job_id)
            if self.jobs.fail(job_id, Kind.UNAVAILABLE, "the job was lost before a worker started it (the "
                                                        "service's Redis lost it, or its worker died): submit again"):
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
        taken = rq_adapter.Taken(self.connection, queue)
        if taken.holds(rq_id):
            self._popped_since.pop(rq_id, None)
            first_seen = taken.seen_since(rq_id)
            if first_seen is None or time.time() - first_seen < self.settings.unqueued_grace_s:
                return False
            return taken.take_out(rq_id)
        if self.connection.lpos(rq_adapter.queue_key(queue), rq_id) is not None:
            self._popped_since.pop(rq_id, None)
            return False  # waiting its turn
        popped = self._popped_since.setdefault(rq_id, time.time())
        return time.time() - popped >= self.settings.unqueued_grace_s

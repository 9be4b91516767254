"""The job queues (RQ's, through rq_adapter.py): their names, putting a job in one, the queues a
worker serves, and how deep they are."""
from __future__ import annotations

import json
import math
import time
from typing import Any, Dict, List, NamedTuple, Optional, Set, Tuple

import redis

from . import rq_adapter
from .keys import ANY_SOC, job_key, queue_socs_key, queues_key

JOB_FUNCTION = "ascrun.server.workers.job.run_job"  # what the API enqueues (a name: the API imports no worker code)
RQ_TIMEOUT_MARGIN_S = 30  # RQ's own job timeout, past the job's (the job's deadline kills its jails first)
# A job goes to a run queue. A worker serving only the run stage hands a job whose artifact is
# not cached to a build queue; a worker serving only build hands the job it built back to a run
# queue. The artifact cache is the hand-off.
STAGES = ("build", "run")


def queue_name(target: str, tenant: str, soc: Optional[str] = None, stage: str = "run") -> str:
    """One RQ queue per stage, target, SOC and tenant: a worker dequeues round-robin across
    tenants, so one tenant's burst never delays another's job, and only from the SOCs it serves."""
    return f"ascrun-{stage}-{target}-{soc or ANY_SOC}-{tenant}"


class QueuePlace(NamedTuple):
    stage: str
    target: str
    soc: str
    tenant: str


def place_of(name: str, served: Dict[str, Dict[str, Any]]) -> Optional[QueuePlace]:
    """Whose jobs queue `name` holds, and for what, if it is one of the queues `served` reads (see
    served_queues): tenant names and SOC labels may hold dashes, so the longest served prefix wins."""
    places = [QueuePlace(stage, target, soc or ANY_SOC, "") for target, capabilities in served.items()
              for soc in [None, *capabilities.get("socs", [])] for stage in capabilities.get("stages", STAGES)]
    found = [(queue_name(p.target, "", p.soc, p.stage), p) for p in places]
    prefix, place = max(((n, p) for n, p in found if name.startswith(n)), key=lambda f: len(f[0]), default=("", None))
    return None if place is None else place._replace(tenant=name[len(prefix):])


def enqueue(connection: redis.Redis, pipe: redis.client.Pipeline, record: Dict[str, Any], timeout_s: float,
            ttl_s: int, stage: str = "run", rq_id: Optional[str] = None) -> None:
    """Put the job in its queue for `stage`, within `pipe` (a MULTI the caller executes), and say
    that queue exists. `rq_id`: the RQ job's id, when it is not the job's (a job handed on)."""
    job_id, target, soc = record["id"], record["target"], record.get("soc")
    name = queue_name(target, record["tenant"], soc, stage)
    # first: RQ starts the MULTI
    rq_adapter.enqueue(connection, pipe, name, JOB_FUNCTION, (job_id,) if rq_id is None else (job_id, stage),
                       rq_id or job_id, int(math.ceil(timeout_s)) + RQ_TIMEOUT_MARGIN_S, ttl_s)
    pipe.sadd(queues_key(target, soc, stage), name)
    pipe.sadd(queue_socs_key(target), soc or ANY_SOC)


def served_queues(connection: redis.Redis, served: Dict[str, Dict[str, Any]]) -> Set[str]:
    """The queues of jobs for the targets and stages `served` (target -> capabilities, "socs" and
    "stages" among them), naming no SOC or one of the SOCs served."""
    keys = [queues_key(target, soc, stage) for target, capabilities in served.items()
            for soc in [None, *capabilities.get("socs", [])] for stage in capabilities.get("stages", STAGES)]
    return {n.decode() for n in connection.sunion(keys)}


def waiting_in(record: Dict[str, Any]) -> Tuple[str, str]:
    """(RQ list, RQ job id) of a queued job: its tenant's queue for its target, SOC and stage."""
    name = queue_name(record["target"], record["tenant"], record.get("soc"), record.get("stage", "run"))
    return rq_adapter.queue_key(name), record.get("rq_job", record["id"])


def queue_depth(connection: redis.Redis, target: str, tenant: Optional[str] = None) -> Tuple[int, Optional[float]]:
    """Jobs waiting in `target`'s queues (`tenant`'s only, if given), and how long the oldest of
    those at their heads has waited (s)."""
    found = depths(connection, target, tenant).values()
    ages = [age for _, age in found if age is not None]
    return sum(count for count, _ in found), max(ages) if ages else None


def depths(connection: redis.Redis, target: str,
           tenant: Optional[str] = None) -> Dict[Tuple[str, str], Tuple[int, Optional[float]]]:
    """(SOC, stage) -> jobs waiting in the target's queues of that SOC and stage (every tenant's, or
    `tenant`'s only), and how long the oldest of those at their heads has waited (s; None: no job
    waits)."""
    socs = sorted(s.decode() for s in connection.smembers(queue_socs_key(target)))
    places = [(soc, stage) for soc in socs for stage in STAGES]
    with connection.pipeline(transaction=False) as pipe:
        for soc, stage in places:
            pipe.smembers(queues_key(target, soc, stage))
        names = pipe.execute()
    lists = [(place, rq_adapter.queue_key(name.decode())) for place, found in zip(places, names) for name in found
             if tenant is None or name.decode() == queue_name(target, tenant, place[0], place[1])]
    with connection.pipeline(transaction=False) as pipe:
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
        records = [json.loads(r) for r in (connection.mget(keys) if keys else []) if r]
        since = [r.get("queued_at", r.get("created_at", now)) for r in records]
        answer[place] = (count, now - min(since) if since else None)
    return answer

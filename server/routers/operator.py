"""What an operator's token (a tenant marked "operator": true in the tenants file; open mode's one
tenant) sees of the whole pool beyond /metrics: every live worker, what it runs now, and each
tenant's figures, for the tenants of the tenants file only (GET /v1/jobs?every_tenant=true lists
their jobs). Any other token gets 403."""
from __future__ import annotations

import json
from collections import Counter
from typing import Dict, List

from fastapi import APIRouter, Depends

from ...compiler.errors import Kind
from ...compiler.targets import NAMES as TARGETS
from ..deps import Service, service, tenant
from ..errors import ApiError
from ..metrics import recorder
from ..models import PoolOverview
from ..store.keys import STARTED, summary_key, tenant_key
from ..tenants import Tenant

router = APIRouter(tags=["service"])


async def operator(who: Tenant = Depends(tenant)) -> Tenant:
    """The caller, if it is an operator; else 403."""
    if not who.operator:
        raise ApiError(Kind.UNAUTHORIZED, f"tenant {who.name!r} is not an operator: only a tenant marked "
                                          '"operator": true in the tenants file sees the whole pool', 403)
    return who


def running_jobs(svc: Service) -> Dict[str, List[str]]:
    """Worker name -> the ids of the jobs it runs now (the started ones' summaries say their worker)."""
    ids = sorted(member.decode() for member in svc.pool.connection.smembers(STARTED))
    summaries = svc.pool.connection.mget([summary_key(i) for i in ids]) if ids else []
    running: Dict[str, List[str]] = {}
    for job_id, raw in zip(ids, summaries):
        worker = json.loads(raw).get("worker") if raw else None
        if worker:
            running.setdefault(worker, []).append(job_id)
    return running


@router.get("/v1/pool", response_model=PoolOverview)
def pool(_: Tenant = Depends(operator), svc: Service = Depends(service)):
    """Every live worker (its last heartbeat, the targets it serves with their stages, SOCs and jails,
    the jobs it runs now) and every tenant of the tenants file (its ended jobs by status, its jobs
    queued or running, its refused requests by reason)."""
    running = running_jobs(svc)
    workers = [dict(worker, running=running.get(worker["name"], [])) for worker in svc.pool.workers(list(TARGETS))]
    names = svc.tenants.names()
    recorded = recorder.recorded(svc.pool.connection)
    ended = {name: Counter() for name in names}
    for (who, _target, _soc, status, _kind), count in recorded.get("jobs", []):
        if who in ended:
            ended[who][status] += int(count)
    refusals = {name: Counter() for name in names}
    for (who, reason), count in recorded.get("refusals", []):
        if who in refusals:
            refusals[who][reason] += int(count)
    with svc.pool.connection.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hlen(tenant_key(name, "active"))
        active = pipe.execute()
    tenants = [{"name": name, "jobs": dict(ended[name]), "active": count, "refusals": dict(refusals[name])}
               for name, count in zip(names, active)]
    return {"workers": workers, "tenants": tenants}

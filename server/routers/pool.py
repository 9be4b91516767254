"""The service and its pool: health, and each target's live workers and queues."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...compiler import targets as target_registry
from ...compiler.targets import NAMES as TARGETS
from ..deps import Service, service, tenant
from ..models import Caller, Health, Targets
from ..tenants import Tenant

router = APIRouter(tags=["service"])


@router.get("/v1/health", response_model=Health)
def health(svc: Service = Depends(service)):
    svc.pool.ping()
    return {"status": "ok", "redis": "ok", "workers": {t: svc.pool.live_workers(t) for t in TARGETS},
            "open_mode": svc.tenants.open_mode}


@router.get("/v1/targets", response_model=Targets)
def targets(who: Tenant = Depends(tenant), svc: Service = Depends(service)):
    """The live pool: each target's workers, by SOC, with what they said they can do, and its queue
    (a tenant's own jobs; every tenant's for an operator)."""
    answer = []
    for name in TARGETS:
        live = svc.pool.live_capabilities(name)
        depth, oldest = svc.pool.queue_depth(name, None if who.operator else who.name)
        socs: dict = {}
        for said in live.values():
            for soc in said.get("socs", []):
                socs[soc] = socs.get(soc, 0) + 1
        answer.append({"name": name, "description": target_registry.REGISTRY[name].description,
                       "workers": len(live), "socs": socs, "queued": depth, "oldest_queued_s": oldest,
                       "live": [dict(said, name=worker) for worker, said in sorted(live.items())]})
    return {"targets": answer}


@router.get("/v1/me", response_model=Caller)
def me(who: Tenant = Depends(tenant)):
    """The tenant the caller's token names, and whether it is an operator (`"operator": true` in the
    tenants file; open mode's one tenant is): what the dashboard says in its header."""
    return {"tenant": who.name, "operator": who.operator}

"""/metrics in Prometheus text, behind the API's bearer tokens like every other route: an operator's
token (or open mode's) gets the pool's figures, every tenant's series, its workers and this API
server's HTTP series; a tenant's gets its own series and queues only."""
from __future__ import annotations

from typing import Callable

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.registry import Collector

from ..deps import tenant
from ..tenants import Tenant


def router(registry: CollectorRegistry, tenant_view: Callable[[str], Collector]) -> APIRouter:
    """`registry`: the operator's; `tenant_view(name)`: the collector of one tenant's figures."""
    metrics = APIRouter()

    @metrics.get("/metrics", include_in_schema=False)
    def scrape(who: Tenant = Depends(tenant)):
        if not who.operator:
            registry_of_tenant = CollectorRegistry()
            registry_of_tenant.register(tenant_view(who.name))
            return Response(generate_latest(registry_of_tenant), media_type=CONTENT_TYPE_LATEST)
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return metrics

"""/metrics in Prometheus text, behind the API's bearer tokens like every other route (any
tenant's: what it shows is the pool's, naming no tenant)."""
from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from ..deps import tenant


def router(registry: CollectorRegistry) -> APIRouter:
    metrics = APIRouter()

    @metrics.get("/metrics", include_in_schema=False, dependencies=[Depends(tenant)])
    def scrape():
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return metrics

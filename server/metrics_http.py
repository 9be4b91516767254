"""/metrics: the pool's metrics (metrics_scrape.py) and this API server's HTTP latency by route,
in Prometheus text; behind the API's bearer tokens, or on a port of its own (metrics_port)."""
from __future__ import annotations

import re
import time
from typing import Optional

import redis
import redis.asyncio as aioredis
from fastapi import APIRouter, FastAPI, Header
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, start_http_server
from prometheus_fastapi_instrumentator import Instrumentator
from prometheus_fastapi_instrumentator import metrics as http_metrics

from . import metrics
from .metrics_scrape import PoolCollector
from .settings import Settings
from .tenants import Tenants

BLOB_PATH = re.compile(r"^/v1/blobs/[0-9a-f]{64}$")
# seconds: a cached launch's requests take milliseconds, a long poll up to max_wait_s
HTTP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, float("inf"))


class BlobTransfers:
    """Times each blob upload (PUT) and download (GET) that succeeds and counts its bytes, from
    the ASGI messages, as the client's upload and download stages see them from this side."""

    def __init__(self, app, connection: aioredis.Redis):
        self.app, self.connection = app, connection

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("PUT", "GET") or not BLOB_PATH.match(scope["path"]):
            return await self.app(scope, receive, send)
        upload = scope["method"] == "PUT"
        start, moved, status = time.perf_counter(), 0, 0

        async def counted_receive():
            nonlocal moved
            message = await receive()
            if upload and message["type"] == "http.request":
                moved += len(message.get("body", b""))
            return message

        async def counted_send(message):
            nonlocal moved, status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif not upload and message["type"] == "http.response.body":
                moved += len(message.get("body", b""))
            await send(message)

        await self.app(scope, counted_receive, counted_send)
        if status == (201 if upload else 200):
            await metrics.blob_moved(self.connection, "upload" if upload else "download",
                                     time.perf_counter() - start, moved)


def _router(registry: CollectorRegistry, tenants: Tenants) -> APIRouter:
    router = APIRouter()

    @router.get("/metrics", include_in_schema=False)
    def scrape(authorization: Optional[str] = Header(None)):
        if tenants.authenticate(authorization) is None:  # any tenant's token: the pool's totals name no tenant
            return JSONResponse({"error": {"kind": "unauthorized", "message": "a valid bearer token is required "
                                           "(Authorization: Bearer <token>)"}}, 401,
                                headers={"WWW-Authenticate": "Bearer"})
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router


def mount_metrics(app: FastAPI, settings: Settings, tenants: Tenants) -> None:
    """Instrument `app` and serve /metrics: on the API's port behind its tokens, or (metrics_port)
    on a port of its own without them, for an operator who keeps that port private."""
    registry = CollectorRegistry()
    registry.register(PoolCollector(redis.Redis.from_url(settings.redis_url)))
    instrumentator = Instrumentator(registry=registry, excluded_handlers=["/metrics"], should_group_status_codes=False)
    instrumentator.add(http_metrics.latency(metric_namespace="ascrun", buckets=HTTP_BUCKETS, registry=registry))
    instrumentator.add(http_metrics.requests(metric_namespace="ascrun", registry=registry))
    instrumentator.instrument(app)
    app.add_middleware(BlobTransfers, connection=aioredis.Redis.from_url(settings.redis_url))
    if settings.metrics_port:
        start_http_server(settings.metrics_port, settings.metrics_host, registry)
    else:
        app.include_router(_router(registry, tenants))

"""Where /metrics is served and what this API server adds to it: its HTTP latency by route, and
the blob transfers it sees; the pool's metrics come from scrape.py."""
from __future__ import annotations

import re
import time

import redis
import redis.asyncio as aioredis
from fastapi import FastAPI
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_fastapi_instrumentator import Instrumentator
from prometheus_fastapi_instrumentator import metrics as http_metrics

from ..routers import metrics as metrics_router
from ...compiler.settings import ServiceSettings
from . import recorder
from .scrape import PoolCollector

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
        if status == (201 if upload else 200):  # so the caller's token was valid: the blob is its tenant's
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1") or None
            who = scope["app"].state.service.tenants.authenticate(authorization)
            await recorder.blob_moved(self.connection, who.name, "upload" if upload else "download",
                                     time.perf_counter() - start, moved)


def mount_metrics(app: FastAPI, settings: ServiceSettings, sync_redis: redis.Redis,
                  async_redis: aioredis.Redis) -> None:
    """Instrument `app` and serve /metrics: on the API's port behind its tokens, or (metrics_port)
    on a port of its own without them, for an operator who keeps that port private."""
    registry = CollectorRegistry()
    registry.register(PoolCollector(sync_redis, settings))
    instrumentator = Instrumentator(registry=registry, excluded_handlers=["/metrics"], should_group_status_codes=False)
    instrumentator.add(http_metrics.latency(metric_namespace="ascrun", buckets=HTTP_BUCKETS, registry=registry))
    instrumentator.add(http_metrics.requests(metric_namespace="ascrun", registry=registry))
    instrumentator.instrument(app)
    app.add_middleware(BlobTransfers, connection=async_redis)
    if settings.metrics_port:  # a port only the operator's Prometheus reaches: the pool's figures
        start_http_server(settings.metrics_port, settings.metrics_host, registry)
    else:
        app.include_router(metrics_router.router(registry, lambda tenant: PoolCollector(sync_redis, settings, tenant)))

"""The HTTP API: create_app builds the service's parts once and assembles the routers by
resource (routers/: pool, blobs, jobs), which reach those parts through deps.py, and the
dashboard page, which reads them. Errors always answer {"error": {"kind", "message"}} (errors.py)."""
from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
from typing import Optional

import redis
from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from .admission import Admission
from .deps import Service
from .edge import Edge, TokenBuckets
from .errors import RESPONSES, handle_errors
from .metrics.http import mount_metrics
from .routers import blobs, jobs, operator, pool
from .routers.dashboard import router as dashboard_router
from ..compiler.settings import ServiceSettings
from .store import connect
from .store.blobs import AsyncBlobStore, BlobStore
from .store.ended import EndedJobs
from .store.jobs import JobReader, JobStore
from .store.pool import PoolView
from .store.reaper import Reaper
from .tenants import Tenants

REAP_INTERVAL_S = 1.0
GIL_SWITCH_S = 0.0005
log = logging.getLogger("ascrun.server")


async def reap(reaper: Reaper) -> None:
    """End jobs whose work horse died without a word (SIGKILLed worker, Redis outage)."""
    while True:
        await asyncio.sleep(REAP_INTERVAL_S)
        try:
            for job_id in await run_in_threadpool(reaper.reap):
                log.warning("job %s lost its worker; marked failed", job_id)
        except redis.RedisError:
            pass  # Redis is down: the requests say so; try again next round


def create_app(settings: Optional[ServiceSettings] = None, tenants: Optional[Tenants] = None) -> FastAPI:
    settings = settings or ServiceSettings.from_env()
    tenants = tenants or Tenants.from_settings(settings)
    sync_redis, async_redis = connect.state(settings), connect.state_async(settings)
    cache_redis, listener = connect.cache(settings), connect.state_async(settings, listening=True)
    job_store, blob_store = JobStore(sync_redis, settings, cache_redis), BlobStore(sync_redis, settings)
    pool_view = PoolView(sync_redis, settings)
    service = Service(settings=settings, tenants=tenants, jobs=job_store,
                      job_reader=JobReader(async_redis), blobs=blob_store,
                      async_blobs=AsyncBlobStore(async_redis, settings), pool=pool_view,
                      ended=EndedJobs(listener), admission=Admission(job_store, blob_store, pool_view, settings),
                      requests=TokenBuckets(max_keys=max(1, tenants.count)))

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        tasks = [asyncio.create_task(reap(Reaper(job_store))), asyncio.create_task(service.ended.listen())]
        # what the API made to start (modules, the app, its models) leaves the collector's view: a
        # full collection stops the event loop for every tenant, and scanning all of that took 150 ms
        gc.freeze()
        # a thread (a submission's Redis calls, a big bundle's measuring) that waits for the GIL
        # while the event loop holds it waited up to the 5 ms default at each hand-over, several a
        # request: under the soak's flood, a large part of an honest launch's admission
        sys.setswitchinterval(GIL_SWITCH_S)
        yield
        for task in tasks:
            task.cancel()
        service.admission.checks.close()
        await async_redis.aclose()
        await listener.aclose()
        sync_redis.close()
        cache_redis.close()

    app = FastAPI(title="ascrun", version="0.1.0", responses=RESPONSES, lifespan=lifespan,
                  description="Compile and run pyasc kernels on a shared pool of Ascend, simulator and CPU workers.")
    app.state.service = service
    handle_errors(app)
    app.add_middleware(Edge, tenants=tenants, settings=settings, connection=async_redis,
                       tenant_requests=service.requests)
    app.include_router(pool.router)
    app.include_router(operator.router)
    app.include_router(dashboard_router)
    app.include_router(blobs.router)
    app.include_router(jobs.router(settings))
    mount_metrics(app, settings, sync_redis, async_redis)
    return app

"""What the routers share, as FastAPI dependencies: the service's parts (built once by
create_app, kept on app.state) and the caller's tenant."""
from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from ..compiler.errors import Kind
from .admission import Admission
from .edge import TokenBuckets
from .errors import ApiError
from ..compiler.settings import ServiceSettings
from .store.blobs import AsyncBlobStore, BlobStore
from .store.ended import EndedJobs
from .store.jobs import JobReader, JobStore
from .store.pool import PoolView
from .tenants import Tenant, Tenants


@dataclass(frozen=True)
class Service:
    settings: ServiceSettings
    tenants: Tenants
    jobs: JobStore  # blocking: routes FastAPI runs in its thread pool
    job_reader: JobReader  # async: the long polls
    blobs: BlobStore
    async_blobs: AsyncBlobStore  # streamed uploads and downloads
    pool: PoolView
    ended: EndedJobs
    admission: Admission
    requests: TokenBuckets  # each tenant's requests_per_second: the edge takes one a request, a list more


# The dependencies are coroutines though they never wait: FastAPI runs a plain function in its
# thread pool, two thread hops a request, whose threads then hold the GIL from the event loop.
async def service(request: Request) -> Service:
    return request.app.state.service


async def tenant(request: Request) -> Tenant:
    """The caller, found by the edge (edge.py) from its bearer token before the body was read."""
    found = getattr(request.state, "tenant", None)
    if found is None:  # a public path's route asked who calls: none without a valid token
        raise ApiError(Kind.UNAUTHORIZED, "a valid bearer token is required (Authorization: Bearer <token>)")
    return found

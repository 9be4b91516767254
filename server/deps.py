"""What the routers share, as FastAPI dependencies: the service's parts (built once by
create_app, kept on app.state) and the caller's tenant."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from fastapi import Header, Request

from ..compiler.errors import Kind
from .admission import Admission
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


def service(request: Request) -> Service:
    return request.app.state.service


def tenant(request: Request, authorization: Optional[str] = Header(None, include_in_schema=False)) -> Tenant:
    """The caller, by its bearer token (401 without a valid one); a POST body over its
    max_request_bytes is refused (413) before it is read."""
    found = service(request).tenants.authenticate(authorization)
    if found is None:
        raise ApiError(Kind.UNAUTHORIZED, "a valid bearer token is required (Authorization: Bearer <token>)")
    length = request.headers.get("content-length")
    if request.method == "POST" and length and length.isdigit() and int(length) > found.limits.max_request_bytes:
        raise ApiError(Kind.LIMIT, f"request body of {length} bytes exceeds your "
                                   f"{found.limits.max_request_bytes}-byte limit (max_request_bytes)", status=413)
    return found

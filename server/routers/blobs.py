"""Blobs: a tensor's bytes, uploaded before the job that names them, and a job's large outputs."""
from __future__ import annotations

import hashlib

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response, StreamingResponse

from ...compiler.errors import Kind
from ..deps import Service, service, tenant
from ..errors import ApiError
from ..models import MissingBlobs, MissingBlobsRequest
from ..tenants import Tenant

DIGEST = r"^[0-9a-f]{64}$"

router = APIRouter(tags=["blobs"])


@router.post("/v1/blobs/missing", response_model=MissingBlobs)
def missing_blobs(body: MissingBlobsRequest, who: Tenant = Depends(tenant), svc: Service = Depends(service)):
    sizes = svc.blobs.sizes(who.name, body.digests)
    return {"missing": [d for d, size in zip(body.digests, sizes) if size is None]}


def _over_stored(who: Tenant, stored: int, size: int) -> ApiError:
    cap = who.limits.max_stored_bytes
    return ApiError(Kind.LIMIT, f"storing this blob of {size} bytes would take your stored blobs (with the bytes "
                                f"your queued and running jobs reserve for their outputs) from {stored} to "
                                f"{stored + size} bytes, over {cap} (max_stored_bytes); blobs are released as they "
                                "expire (ASCRUN_BLOB_TTL), reservations when their jobs end")


@router.put("/v1/blobs/{digest}", status_code=201)
async def put_blob(request: Request, digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant),
                   svc: Service = Depends(service)):
    """Upload a tensor's bytes (the body), named by their sha256. Refused before it is read if it
    is larger than max_blob_bytes or would take your stored bytes past max_stored_bytes."""
    cap = who.limits.max_blob_bytes
    length = request.headers.get("content-length")
    if length and length.isdigit():
        if int(length) > cap:
            raise ApiError(Kind.LIMIT, f"blob of {length} bytes exceeds the {cap}-byte limit (max_blob_bytes)",
                           status=413)
        stored = await svc.async_blobs.stored_bytes(who.name, digest)
        if stored + int(length) > who.limits.max_stored_bytes:
            raise _over_stored(who, stored, int(length))
    upload, hasher, size = svc.async_blobs.upload(), hashlib.sha256(), 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise ApiError(Kind.LIMIT, f"blob exceeds the {cap}-byte limit (max_blob_bytes)", status=413)
            hasher.update(chunk)
            await upload.add(chunk)
        if hasher.hexdigest() != digest:
            raise ApiError(Kind.BAD_REQUEST, f"blob body hashes to {hasher.hexdigest()}, not {digest}: "
                                             "corrupted upload", status=400)
        stored_ok, stored = await upload.commit(who.name, digest, size, who.limits.max_stored_bytes)
    except BaseException:
        await upload.discard()
        raise
    if not stored_ok:
        raise _over_stored(who, stored, size)
    return {"blob": digest, "bytes": size}


@router.get("/v1/blobs/{digest}", response_class=Response,
            responses={200: {"content": {"application/octet-stream": {}}}})
async def get_blob(digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant),
                   svc: Service = Depends(service)):
    size = await svc.async_blobs.size(who.name, digest)
    if size is None:
        raise ApiError(Kind.NOT_FOUND, f"no blob {digest} (never uploaded, or expired)")
    return StreamingResponse(svc.async_blobs.chunks(who.name, digest, size), media_type="application/octet-stream",
                             headers={"Content-Length": str(size)})

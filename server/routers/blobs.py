"""Blobs: a tensor's bytes, uploaded before the job that names them, and a job's large outputs."""
from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import AsyncIterator, Callable

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response, StreamingResponse
from starlette.requests import ClientDisconnect

from ...compiler.errors import Kind
from ..deps import Service, service, tenant
from ..errors import ApiError, error_response
from ..models import MissingBlobs, MissingBlobsRequest
from ..store.blobs import ReservationLost
from ..tenants import Tenant

DIGEST = r"^[0-9a-f]{64}$"
RETRY_AFTER_S = 1  # what a transfer refused for its tenant's others under way is told to wait

router = APIRouter(tags=["blobs"])
log = logging.getLogger("ascrun.server")


@router.post("/v1/blobs/missing", response_model=MissingBlobs)
def missing_blobs(body: MissingBlobsRequest, who: Tenant = Depends(tenant), svc: Service = Depends(service)):
    sizes = svc.blobs.sizes(who.name, body.digests)
    return {"missing": [d for d, size in zip(body.digests, sizes) if size is None]}


def _over_stored(who: Tenant, stored: int, size: int) -> ApiError:
    cap = who.limits.max_stored_bytes
    return ApiError(Kind.LIMIT, f"storing this blob of {size} bytes would take your stored blobs (with your uploads "
                                f"under way, your ended jobs' records and the bytes your queued and running jobs "
                                f"reserve for their outputs) from {stored} to {stored + size} bytes, over {cap} "
                                "(max_stored_bytes); blobs and records are released as they expire (ASCRUN_BLOB_TTL, "
                                "ASCRUN_RESULT_TTL), reservations when their jobs end")


def _busy(message: str) -> Response:
    """A tenant's transfers at their most: 429, and when to try again (the client does, by itself)."""
    busy = error_response(Kind.LIMIT, message, status=429)
    busy.headers["Retry-After"] = str(RETRY_AFTER_S)
    return busy


class UploadStalled(Exception):
    pass


async def _body(request: Request, stall_s: float) -> AsyncIterator[bytes]:
    """The request's body as it arrives; UploadStalled if no byte comes for `stall_s` seconds."""
    while True:
        try:
            message = await asyncio.wait_for(request.receive(), stall_s)
        except asyncio.TimeoutError:
            raise UploadStalled() from None
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message.get("body"):
            yield message["body"]
        if not message.get("more_body", False):
            return


@router.put("/v1/blobs/{digest}", status_code=201)
async def put_blob(request: Request, digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant),
                   svc: Service = Depends(service)):
    """Upload a tensor's bytes (the body, with its Content-Length), named by their sha256. Its size
    is reserved against max_stored_bytes before a byte is stored; refused before it is read if it is
    larger than max_blob_bytes, would take your stored bytes past max_stored_bytes, or you have
    max_concurrent_uploads under way. Closed if no byte comes for ASCRUN_UPLOAD_STALL seconds."""
    cap, length = who.limits.max_blob_bytes, request.headers.get("content-length", "")
    if not length.isdigit() or "transfer-encoding" in request.headers:
        raise ApiError(Kind.BAD_REQUEST, "a blob upload must declare its size in Content-Length (a chunked body is "
                                         "not taken): it is reserved against max_stored_bytes before any byte is "
                                         "stored", status=411)
    size = int(length)
    if size > cap:
        raise ApiError(Kind.LIMIT, f"blob of {size} bytes exceeds the {cap}-byte limit (max_blob_bytes)", status=413)
    upload = svc.async_blobs.upload(who.name, digest, size)
    verdict, stored = await upload.reserve(who.limits)
    if verdict == "uploads":
        return _busy(f"you have {stored} blob uploads under way, the most at once (max_concurrent_uploads); upload "
                     "this one when one of them ends")
    if verdict == "stored":
        raise _over_stored(who, stored, size)
    hasher, received = hashlib.sha256(), 0
    try:
        async for piece in _body(request, svc.settings.upload_stall_s):
            received += len(piece)
            if received > size:
                raise ApiError(Kind.BAD_REQUEST, f"the body is longer than its Content-Length ({size})", status=400)
            hasher.update(piece)
            await upload.add(piece)
        if received != size:
            raise ApiError(Kind.BAD_REQUEST, f"the body is shorter ({received}) than its Content-Length ({size})",
                           status=400)
        if hasher.hexdigest() != digest:
            raise ApiError(Kind.BAD_REQUEST, f"blob body hashes to {hasher.hexdigest()}, not {digest}: "
                                             "corrupted upload", status=400)
        stored_ok, stored = await upload.commit(who.limits.max_stored_bytes)
    except UploadStalled:
        stalled = error_response(Kind.TIMEOUT, f"no byte of this upload came for {svc.settings.upload_stall_s:g} s "
                                               "(ASCRUN_UPLOAD_STALL): it is closed, and what it stored freed",
                                 status=408)
        stalled.headers["Connection"] = "close"  # the rest of the body is not read
        return stalled
    except ReservationLost:
        raise ApiError(Kind.UNAVAILABLE, "this upload's reservation expired before it ended (the service was too "
                                         "slow to renew it): upload it again", status=503) from None
    finally:
        await upload.end()
    if not stored_ok:
        raise _over_stored(who, stored, size)
    return {"blob": digest, "bytes": size}


class ReaderStalled(Exception):
    pass


class Download(StreamingResponse):
    """A blob's pieces to its reader, under the download's lease (released when it ends, however it
    ends); a reader that takes no piece for `stall_s` seconds is left: the server closes the
    connection of a response the app did not complete."""

    def __init__(self, pieces: AsyncIterator[bytes], size: int, lease, stall_s: float, end: Callable):
        super().__init__(pieces, media_type="application/octet-stream", headers={"Content-Length": str(size)})
        self.lease, self.stall_s, self.end = lease, stall_s, end

    async def __call__(self, scope, receive, send):
        async def send_or_stall(message):
            try:
                await asyncio.wait_for(send(message), self.stall_s)
            except asyncio.TimeoutError:
                raise ReaderStalled() from None

        try:
            await super().__call__(scope, receive, send_or_stall)
        except ReaderStalled:
            log.warning("a blob download took no piece for %g s (ASCRUN_DOWNLOAD_STALL): closed", self.stall_s)
        finally:
            await self.end(self.lease)


@router.get("/v1/blobs/{digest}", response_class=Response,
            responses={200: {"content": {"application/octet-stream": {}}}})
async def get_blob(digest: str = Path(pattern=DIGEST), who: Tenant = Depends(tenant),
                   svc: Service = Depends(service)):
    """A blob's bytes, unless you have max_concurrent_downloads under way; a reader that takes
    nothing for ASCRUN_DOWNLOAD_STALL seconds is closed."""
    opened = await svc.async_blobs.open_download(who.name, digest, who.limits)
    if opened.lease is None and not opened.live:
        raise ApiError(Kind.NOT_FOUND, f"no blob {digest} (never uploaded, or expired)")
    if opened.lease is None:
        return _busy(f"you have {opened.live} blob downloads under way, the most at once "
                     "(max_concurrent_downloads); download this one when one of them ends")
    return Download(svc.async_blobs.pieces(who.name, digest, opened), opened.size, opened.lease,
                    svc.settings.download_stall_s, svc.async_blobs.end_download)

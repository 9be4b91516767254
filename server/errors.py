"""The API's errors: always {"error": {"kind", "message"}} with a status a client can act on, the
kind's in ascrun.compiler.errors.KINDS unless a refusal says a more exact one: 400/422 bad input,
401 no valid token, 404 unknown (or another tenant's), 409 blobs to upload first, 413/429 a limit
(a size cap, a rate or quota; the message names it), 503 Redis or workers unavailable, 507 Redis is full."""
from __future__ import annotations

from typing import Dict, Optional

import redis
import redis.asyncio as aioredis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ..compiler.errors import KINDS, Kind
from .metrics import recorder
from .models import ErrorResponse
from .tenants import LIMIT_NAMES

RESPONSES = {status: {"model": ErrorResponse} for status in (400, 401, 404, 409, 413, 422, 429, 503, 507)}
# Starlette's own refusals have only a status: these kinds are told by theirs, and 413 is a size
# limit; the rest of 4xx is bad_request, 5xx unavailable.
HTTP_KINDS = {**{KINDS[kind].status: kind for kind in (Kind.UNAUTHORIZED, Kind.NOT_FOUND)}, 413: Kind.LIMIT}


class ApiError(Exception):
    def __init__(self, kind: Kind, message: str, status: Optional[int] = None,
                 headers: Optional[Dict[str, str]] = None, **details):
        super().__init__(message)
        self.kind, self.message, self.status, self.details = kind, message, status, details
        self.headers = headers or {}


def error_response(kind: Kind, message: str, status: Optional[int] = None, **details) -> JSONResponse:
    """The refusal of `kind`, with the kind's status (KINDS) unless `status` says a more exact one."""
    status = KINDS[kind].status if status is None else status
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"kind": str(kind), "message": message, **details}}, status_code=status,
                        headers=headers)


NOT_REFUSALS = (Kind.NOT_FOUND, Kind.MISSING_BLOBS)  # a lookup's answer; the step that asks for uploads first


async def count_refusal(request: Request, kind: Kind, message: str) -> None:
    """A tenant's request refused by a route (the edge's rate refusals are not counted: a flood would
    cost a Redis write each), by reason: the limit its message names, else its kind."""
    who = getattr(request.state, "tenant", None)
    if who is None or kind in NOT_REFUSALS or KINDS[kind].status >= 500:
        return
    reason = next((name for name in LIMIT_NAMES if name in message), str(kind))
    await recorder.refused(request.app.state.service.job_reader.connection, who.name, reason)


def handle_errors(app: FastAPI) -> None:
    """Every refusal in the one shape: ours, FastAPI's validation, Starlette's, Redis's."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError):
        await count_refusal(request, exc.kind, exc.message)
        response = error_response(exc.kind, exc.message, exc.status, **exc.details)
        response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:10])
        await count_refusal(request, Kind.BAD_REQUEST, "")
        return error_response(Kind.BAD_REQUEST, f"invalid request: {problems}")

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException):
        """Starlette's own refusals (a body that is not JSON, an unknown route) in our shape."""
        detail = exc.detail if isinstance(exc.detail, str) else "invalid request"
        if exc.status_code == 400:
            detail = "the body is not valid JSON (or not UTF-8, or nested or sized beyond what the parser takes)"
        kind = HTTP_KINDS.get(exc.status_code, Kind.BAD_REQUEST if exc.status_code < 500 else Kind.UNAVAILABLE)
        return error_response(kind, detail, exc.status_code)

    @app.exception_handler(redis.RedisError)
    @app.exception_handler(aioredis.RedisError)
    async def redis_error(_: Request, exc: Exception):
        return redis_error_response(exc)


def redis_error_response(exc: Exception) -> JSONResponse:
    """Redis full (507) or unreachable (503)."""
    if isinstance(exc, redis.exceptions.OutOfMemoryError):
        return error_response(Kind.LIMIT, "the service's Redis is full (maxmemory reached); nothing was stored: "
                                          "try again once jobs have ended or blobs expired", status=507)
    return error_response(Kind.UNAVAILABLE, f"the service's Redis is unreachable "
                                            f"({exc.__class__.__name__}); try again shortly")

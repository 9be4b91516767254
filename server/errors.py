"""The API's errors: always {"error": {"kind", "message"}} with a status a client can act on:
400/422 bad input, 401 no valid token, 404 unknown (or another tenant's), 409 blobs to upload
first, 413/429 a limit (the message names it), 503 Redis or workers unavailable, 507 Redis is full."""
from __future__ import annotations

import redis
import redis.asyncio as aioredis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from .models import ErrorResponse

RESPONSES = {status: {"model": ErrorResponse} for status in (400, 401, 404, 409, 413, 422, 429, 503, 507)}
HTTP_KINDS = {401: "unauthorized", 404: "not_found", 413: "limit"}  # the rest of 4xx: bad_request


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, **details):
        super().__init__(message)
        self.status, self.kind, self.message, self.details = status, kind, message, details


def error_response(status: int, kind: str, message: str, **details) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"kind": kind, "message": message, **details}}, status_code=status,
                        headers=headers)


def handle_errors(app: FastAPI) -> None:
    """Every refusal in the one shape: ours, FastAPI's validation, Starlette's, Redis's."""

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError):
        return error_response(exc.status, exc.kind, exc.message, **exc.details)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:10])
        return error_response(422, "bad_request", f"invalid request: {problems}")

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException):
        """Starlette's own refusals (a body that is not JSON, an unknown route) in our shape."""
        detail = exc.detail if isinstance(exc.detail, str) else "invalid request"
        if exc.status_code == 400:
            detail = "the body is not valid JSON (or not UTF-8, or nested or sized beyond what the parser takes)"
        return error_response(exc.status_code, HTTP_KINDS.get(exc.status_code, "bad_request" if exc.status_code < 500
                                                              else "unavailable"), detail)

    @app.exception_handler(redis.exceptions.OutOfMemoryError)
    async def redis_full(_: Request, exc: Exception):
        return error_response(507, "limit", "the service's Redis is full (maxmemory reached); nothing was stored: "
                                            "try again once jobs have ended or blobs expired")

    @app.exception_handler(redis.RedisError)
    @app.exception_handler(aioredis.RedisError)
    async def redis_down(_: Request, exc: Exception):
        return error_response(503, "unavailable", f"the service's Redis is unreachable "
                                                  f"({exc.__class__.__name__}); try again shortly")

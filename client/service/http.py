"""What Client and AsyncClient share of the I/O (core.py has the rest, without I/O): the
connection settings, the retry policy, the KernelError a connection failure becomes, and the
streams that send a blob's bytes.

Every call the clients make is idempotent (submissions carry an Idempotency-Key), so a connection
failure or a 502/503/504 is retried with exponential backoff; a timeout is not (the service may
still be working on it).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, Iterator, Optional

import httpx
import tenacity

from ..compiler.errors import KernelError
from .core import Request

DEFAULT_URL = "http://127.0.0.1:8000"
RETRY_STATUSES = (502, 503, 504)
UPLOAD_CHUNK = 1 << 20


def service_url(url: Optional[str]) -> str:
    """`url`, else $ASCRUN_URL, else the local default; without a trailing slash."""
    return (url or os.environ.get("ASCRUN_URL") or DEFAULT_URL).rstrip("/")


def pool_options(url: str, token: Optional[str], timeout: float) -> Dict[str, Any]:
    """httpx.Client / AsyncClient arguments: `timeout` bounds each request unless it says otherwise."""
    return dict(base_url=url, headers={"Authorization": f"Bearer {token}"} if token else {},
                timeout=httpx.Timeout(timeout, connect=10.0))


def request_options(request: Request) -> Dict[str, Any]:
    """httpx's request arguments for `request`, but its body: each shell streams that its own way."""
    return dict(params=request.params, json=request.json, headers=request.headers,
                timeout=httpx.USE_CLIENT_DEFAULT if request.timeout is None else request.timeout)


def retry_policy(retries: int) -> Dict[str, Any]:
    """Arguments for tenacity.Retrying / AsyncRetrying: up to `retries` more tries, 0.2 s doubling to
    5 s apart; the last response (or connection error) is what the caller then sees."""
    return dict(
        stop=tenacity.stop_after_attempt(retries + 1),
        wait=tenacity.wait_exponential(multiplier=0.2, max=5.0),
        retry=(tenacity.retry_if_exception(lambda e: isinstance(e, httpx.TransportError)
                                           and not isinstance(e, httpx.TimeoutException))
               | tenacity.retry_if_result(lambda r: r.status_code in RETRY_STATUSES)),
        retry_error_callback=lambda state: state.outcome.result(),
    )


def transport_error(url: str, request: Request, error: httpx.TransportError) -> KernelError:
    if isinstance(error, httpx.TimeoutException):
        return KernelError(f"the ascrun service at {url} did not answer {request.method} {request.path} in time",
                           kind="timeout")
    return KernelError(f"cannot reach the ascrun service at {url}: {error.__class__.__name__}: {error}",
                       kind="unavailable")


class Upload:
    """One blob's bytes in 1 MiB chunks, reporting the bytes sent so far; a retry starts again at 0.
    (httpcore sends one bytes object by slicing off what went out: quadratic for a 1 GiB blob.)"""

    def __init__(self, data: bytes, on_progress: Optional[Callable[[int], None]] = None):
        self.data, self.on_progress = memoryview(data), on_progress or (lambda sent: None)

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self.data), UPLOAD_CHUNK):
            chunk = self.data[start:start + UPLOAD_CHUNK]
            yield bytes(chunk)
            self.on_progress(start + len(chunk))


class AsyncUpload:
    """Chunks for httpx.AsyncClient, which takes async iterables only."""

    def __init__(self, chunks: Iterable[bytes]):
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


def body_stream(request: Request) -> Optional[Iterable[bytes]]:
    """The request's body as the shells send it: a blob's bytes in chunks, chunks as they come."""
    if isinstance(request.content, bytes):
        return Upload(request.content, request.on_progress)
    return request.content

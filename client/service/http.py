"""What Client and AsyncClient share of the I/O (core.py has the rest, without I/O): the
connection settings, the retry policy, the ServiceUnreachable a connection failure becomes, the
streams that send a blob's bytes, and the loops that run core.py's exchanges (requests one after
the other, or each batch at once).

Every call the clients make is idempotent (submissions carry an Idempotency-Key), so a connection
failure or a 502/503/504 is retried with exponential backoff, and so is a 429 that says when to
come back (Retry-After: a blob transfer over its tenant's most at once); a timeout is not (the
service may still be working on it).
"""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Dict, Iterable, Iterator, Optional

import httpx
import tenacity

from ..compiler.errors import Kind, ServiceUnreachable
from ..compiler.settings import ClientSettings
from .core import Exchange, Request, ServiceApi, T

# and a 429 that says when to come back (Retry-After): a blob transfer over its tenant's most at once
RETRY_STATUSES = (502, 503, 504)
UPLOAD_CHUNK = 1 << 20


def service_url(url: Optional[str]) -> str:
    """`url`, else $ASCRUN_URL, else the local default; without a trailing slash."""
    return (url or ClientSettings.from_env().url).rstrip("/")


def pool_options(url: str, token: Optional[str], timeout: float) -> Dict[str, Any]:
    """httpx.Client / AsyncClient arguments: `timeout` bounds each request unless it says otherwise."""
    return dict(base_url=url, headers={"Authorization": f"Bearer {token}"} if token else {},
                timeout=httpx.Timeout(timeout, connect=10.0))


def request_options(request: Request) -> Dict[str, Any]:
    """httpx's request arguments for `request`, but its body: each shell streams that its own way."""
    return dict(params=request.params, json=request.json, headers=request.headers,
                timeout=httpx.USE_CLIENT_DEFAULT if request.timeout is None else request.timeout)


def may_pass_on_retry(response: httpx.Response) -> bool:
    """A 502/503/504, unless the service says no retry changes it (`"retryable": false` in its
    error: no worker serves the job's target or SOC); a 429 that says when to come back."""
    if response.status_code == 429:
        return "retry-after" in response.headers
    if response.status_code not in RETRY_STATUSES:
        return False
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):  # not the service's JSON: a proxy's page
        return True
    return not (isinstance(error, dict) and error.get("retryable") is False)


def retry_policy(retries: int) -> Dict[str, Any]:
    """Arguments for tenacity.Retrying / AsyncRetrying: up to `retries` more tries, 0.2 s doubling to
    5 s apart; the last response (or connection error) is what the caller then sees."""
    return dict(
        stop=tenacity.stop_after_attempt(retries + 1),
        wait=tenacity.wait_exponential(multiplier=0.2, max=5.0),
        retry=(tenacity.retry_if_exception(lambda e: isinstance(e, httpx.TransportError)
                                           and not isinstance(e, httpx.TimeoutException))
               | tenacity.retry_if_result(may_pass_on_retry)),
        retry_error_callback=lambda state: state.outcome.result(),
    )


def transport_error(url: str, request: Request, error: httpx.TransportError) -> ServiceUnreachable:
    """A connection failure: nothing is known of the kernel (a KernelError all the same, of kind
    timeout or unavailable)."""
    if isinstance(error, httpx.TimeoutException):
        return ServiceUnreachable(f"the ascrun service at {url} did not answer {request.method} {request.path} "
                                  "in time", kind=Kind.TIMEOUT)
    return ServiceUnreachable(f"cannot reach the ascrun service at {url}: {error.__class__.__name__}: {error}",
                              kind=Kind.UNAVAILABLE)


def send(http: httpx.Client, retry: Dict[str, Any], url: str, request: Request) -> httpx.Response:
    """The response to `request` (retried as `retry`, retry_policy's, says); ServiceUnreachable if none came."""
    try:
        return tenacity.Retrying(**retry)(http.request, request.method, request.path, content=body_stream(request),
                                          **request_options(request))
    except httpx.TransportError as e:
        raise transport_error(url, request, e) from None


async def send_async(http: httpx.AsyncClient, retry: Dict[str, Any], url: str, request: Request) -> httpx.Response:
    """As `send`, with an async connection pool."""
    stream = body_stream(request)
    try:
        return await tenacity.AsyncRetrying(**retry)(
            http.request, request.method, request.path,
            content=None if stream is None else AsyncUpload(stream), **request_options(request))
    except httpx.TransportError as e:
        raise transport_error(url, request, e) from None


class BaseClient:
    """What Client and AsyncClient share (as httpx's BaseClient): the service, the token, the
    timeout of each request and the retry policy, and the sans-IO core that makes their requests."""

    def __init__(self, url: Optional[str], token: Optional[str], timeout: float, retries: int):
        self.url = service_url(url)
        self.retries = retries
        self._api = ServiceApi()
        self._retry = retry_policy(retries)
        self._pool = pool_options(self.url, token, timeout)  # the shell's connection pool takes them


def run(exchange: Exchange[T], send_one: Callable[[Request], httpx.Response]) -> T:
    """The exchange's value, its requests sent one after the other. A connection failure is thrown
    into the exchange, so that it fails as what the exchange was doing (e.g. a comparison run)."""
    responses, failure = None, None
    while True:
        try:
            requests = exchange.send(responses) if failure is None else exchange.throw(failure)
        except StopIteration as done:
            return done.value
        try:
            responses, failure = [send_one(request) for request in requests], None
        except ServiceUnreachable as e:
            failure = e


async def run_async(exchange: Exchange[T], send_one: Callable[[Request], Awaitable[httpx.Response]]) -> T:
    """As `run`, each batch of requests sent at once."""
    responses, failure = None, None
    while True:
        try:
            requests = exchange.send(responses) if failure is None else exchange.throw(failure)
        except StopIteration as done:
            return done.value
        try:
            responses, failure = list(await asyncio.gather(*map(send_one, requests))), None
        except ServiceUnreachable as e:
            failure = e


def run_blocking(exchange: Exchange[T], url: str, token: Optional[str], timeout: float, retries: int) -> T:
    """The exchange's value, sent over a blocking connection pool of its own, closed after: how
    AsyncClient's LaunchResults read their `source` and `trace` (plain properties, which cannot await)."""
    with httpx.Client(**pool_options(url, token, timeout)) as http:
        retry = retry_policy(retries)
        return run(exchange, lambda request: send(http, retry, url, request))


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

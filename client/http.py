"""What Client and AsyncClient share of talking to the service: the retry policy, the one
KernelError every failed request becomes, and the long-poll schedule of a wait.

Every call the clients make is idempotent (submissions carry an Idempotency-Key), so a connection
failure or a 502/503/504 is retried with exponential backoff; a timeout is not (the service may
still be working on it).
"""
from __future__ import annotations

import time
from typing import Any, Dict, Iterator, Tuple

import httpx
import tenacity

from .compiler.errors import KernelError

TERMINAL = ("finished", "failed", "timed_out")
POLL_S = 25  # one long-poll request; below the server's cap and common proxy idle timeouts
RETRY_STATUSES = (502, 503, 504)


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


def transport_error(url: str, method: str, path: str, error: httpx.TransportError) -> KernelError:
    if isinstance(error, httpx.TimeoutException):
        return KernelError(f"the ascrun service at {url} did not answer {method} {path} in time", kind="timeout")
    return KernelError(f"cannot reach the ascrun service at {url}: {error.__class__.__name__}: {error}",
                       kind="unavailable")


def checked(response: httpx.Response, accept: tuple, method: str, path: str) -> httpx.Response:
    """The response if it succeeded or its status is in `accept`; else the service's error."""
    if response.is_success or response.status_code in accept:
        return response
    try:
        error = response.json()["error"]
        kind, message = error["kind"], error["message"]
    except (ValueError, KeyError, TypeError):
        kind = "unavailable" if response.status_code >= 500 else "bad_request"
        message = f"{method} {path} answered {response.status_code}: {response.text[:200]}"
    raise KernelError(message, kind=kind)


def poll_waits(timeout: float, poll: float = POLL_S) -> Iterator[Tuple[float, bool]]:
    """For each long-poll of a job: how long the service may hold it, and whether it is the last
    before `timeout` runs out (the caller then raises `wait_timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        yield max(0.0, min(poll, remaining)), remaining <= 0


def wait_timeout(job_id: str, timeout: float, record: Dict[str, Any]) -> KernelError:
    return KernelError(f"job {job_id} did not end within {timeout:g} s (status {record['status']})", kind="timeout")

"""AsyncClient: Client's API for asyncio (services, notebooks) that launch many kernels at once.

    async with ascrun.AsyncClient(url) as client:
        results = await asyncio.gather(*(client.launch(kernel, 8, x, y, z, n) for x, y, z in batches))

A shell over core.py, as Client is: the same requests, a batch of them (blob uploads and
downloads) sent at once.
"""
from __future__ import annotations

import asyncio
import functools
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import httpx
import tenacity

from ..bench import Benchmark, from_record, policy_json
from ..job_status import TERMINAL
from ..result import LaunchResult
from .client import Client
from .core import POLL_S, Exchange, OnUpload, Request, ServiceApi, T
from .handle import QueuedLaunch, second_run
from .http import AsyncUpload, body_stream, pool_options, request_options, retry_policy, service_url, transport_error
from .submission import compared_on, submission, with_benchmark


class AsyncClient:
    """One async connection pool to one service; the same arguments and retry policy as Client."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 60.0,
                 retries: int = 6):
        self.url = service_url(url)
        self.retries, self._token = retries, token
        self._api = ServiceApi()
        self._retry = retry_policy(retries)
        self._http = httpx.AsyncClient(**pool_options(self.url, token, timeout))

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- the I/O: core.py's requests, each batch sent at once -------------------------------------

    async def _send(self, request: Request) -> httpx.Response:
        """As Client._send: the same retry policy, then one KernelError."""
        stream = body_stream(request)
        try:
            return await tenacity.AsyncRetrying(**self._retry)(
                self._http.request, request.method, request.path,
                content=None if stream is None else AsyncUpload(stream), **request_options(request))
        except httpx.TransportError as e:
            raise transport_error(self.url, request, e) from None

    async def _run(self, exchange: Exchange[T]) -> T:
        responses = None
        while True:
            try:
                requests = exchange.send(responses)
            except StopIteration as done:
                return done.value
            responses = list(await asyncio.gather(*map(self._send, requests)))

    # -- the service's API, as Client's -----------------------------------------------------------

    async def jobs(self, limit: int = 20) -> List[Dict[str, Any]]:
        return await self._run(self._api.jobs(limit))

    async def job(self, job_id: str, wait: float = 0) -> Dict[str, Any]:
        return await self._run(self._api.job(job_id, wait))

    async def targets(self) -> List[Dict[str, Any]]:
        return await self._run(self._api.targets())

    async def source(self, job_id: str) -> str:
        return await self._run(self._api.source(job_id))

    async def trace(self, job_id: str) -> str:
        return await self._run(self._api.trace(job_id))

    def trace_blocking(self, job_id: str) -> str:
        """For LaunchResult.trace, a plain property: the trace, fetched with a blocking request."""
        with Client(self.url, token=self._token, retries=self.retries) as client:
            return client.trace(job_id)

    def source_blocking(self, job_id: str) -> str:
        """For LaunchResult.source, a plain property: the source, fetched with a blocking request."""
        with Client(self.url, token=self._token, retries=self.retries) as client:
            return client.source(job_id)

    async def ir(self, job_id: str) -> str:
        return await self._run(self._api.ir(job_id))

    async def missing_blobs(self, digests: Sequence[str]) -> List[str]:
        return await self._run(self._api.missing_blobs(digests))

    async def upload_blob(self, digest: str, data: Union[bytes, Iterable[bytes]]) -> None:
        await self._run(self._api.upload_blob(digest, data))

    async def blob(self, digest: str) -> bytes:
        return await self._run(self._api.blob(digest))

    async def submit_job(self, body: Dict[str, Any], blobs: Optional[Dict[str, bytes]] = None, wait: float = 0,
                         on_upload: Optional[OnUpload] = None) -> Dict[str, Any]:
        return await self._run(self._api.submit(body, blobs or {}, wait, on_upload))

    async def wait(self, job_id: str, timeout: float, poll: float = POLL_S,
                   on_poll: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
        return await self._run(self._api.wait(job_id, timeout, poll, on_poll))

    async def outputs(self, record: Dict[str, Any]) -> Dict[str, bytes]:
        return await self._run(self._api.outputs(record))

    # -- the launch ----------------------------------------------------------------------------

    async def submit(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                     timeout: Optional[float] = None, on_upload: Optional[OnUpload] = None, bounds: str = "fault",
                     soc: Optional[str] = None, compare: Optional[str] = None,
                     benchmark: Optional[Dict[str, Any]] = None, hazards: str = "warn") -> "AsyncLaunchHandle":
        """Queue `kernel` (uploading the tensors the service lacks) and return its handle;
        `on_upload`, `compare` and `benchmark` as Client.submit."""
        start = time.perf_counter()
        job = with_benchmark(submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards),
                             benchmark, compare)
        record = await self.submit_job(job.body, job.blobs, wait=0, on_upload=on_upload)
        handle = AsyncLaunchHandle(self, record, job.host, start, time.perf_counter() - start, job.max_wait)
        if compare is not None:
            with second_run(compare):
                record = await self.submit_job(compared_on(job.body, compare), job.blobs, wait=0)
            handle.against = AsyncLaunchHandle(self, record, job.host.detached(), start, time.perf_counter() - start,
                                               job.max_wait)
        return handle

    async def launch(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                     timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
                     compare: Optional[str] = None, hazards: str = "warn") -> LaunchResult:
        """Run `kernel` remotely; the tensors it writes are copied back into the caller's arrays.
        `compare`: as Client.launch."""
        handle = await self.submit(kernel, core_num, *args, target=target, timeout=timeout, bounds=bounds,
                                   soc=soc, compare=compare, hazards=hazards)
        return await handle.result()

    async def benchmark(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                        timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
                        warmup: Optional[int] = None, min_repeats: Optional[int] = None,
                        max_repeats: Optional[int] = None, target_rel_error: Optional[float] = None,
                        budget_seconds: Optional[float] = None) -> Benchmark:
        """As Client.benchmark: one benchmark job, its Benchmark."""
        policy = policy_json(warmup=warmup, min_repeats=min_repeats, max_repeats=max_repeats,
                             target_rel_error=target_rel_error, budget_seconds=budget_seconds)
        handle = await self.submit(kernel, core_num, *args, target=target, timeout=timeout, bounds=bounds, soc=soc,
                                   benchmark=policy)
        result = await handle.result()
        return from_record(handle.record, result)


class AsyncLaunchHandle(QueuedLaunch):
    """A queued launch: `id` at once, `await result(timeout)` as LaunchHandle.result."""

    async def result(self, timeout: Optional[float] = None) -> LaunchResult:
        if self._result is None:
            if self.status not in TERMINAL:
                self._record = await self._client.wait(self.id, self._max_wait if timeout is None else timeout)
            download_start = self.finished()
            outputs = await self._client.outputs(self._record)
            self._result = self.written_back(outputs, download_start,
                                             functools.partial(self._client.source_blocking, self.id),
                                             functools.partial(self._client.trace_blocking, self.id))
        if self.against is not None and self._result.comparison is None:
            with second_run(self.against.record["target"]):
                other = await self.against.result(timeout)
            self.compare(other)
        return self._result

"""AsyncClient: Client's API for asyncio (services, notebooks) that launch many kernels at once.

    async with ascrun.AsyncClient(url) as client:
        results = await asyncio.gather(*(client.launch(kernel, 8, x, y, z, n) for x, y, z in batches))

A shell over core.py, as Client is: the same requests, a batch of them (blob uploads and
downloads) sent at once.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import httpx

from ..bench import Benchmark, policy_json
from ..result import LaunchResult
from .core import POLL_S, Exchange, OnUpload, Request, T
from .handle import AsyncLaunchHandle
from .http import BaseClient, run_async, run_blocking, send_async
from .submission import submission, with_benchmark


class AsyncClient(BaseClient):
    """One async connection pool to one service; the same arguments and retry policy as Client."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 60.0,
                 retries: int = 6):
        super().__init__(url, token, timeout, retries)
        self._http = httpx.AsyncClient(**self._pool)
        # a LaunchResult's `source` and `trace` are plain properties: read with a blocking request of their own
        self._fetch = functools.partial(run_blocking, url=self.url, token=token, timeout=timeout, retries=retries)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- the I/O: core.py's requests, each batch sent at once -------------------------------------

    async def _send(self, request: Request) -> httpx.Response:
        return await send_async(self._http, self._retry, self.url, request)

    async def _run(self, exchange: Exchange[T]) -> T:
        return await run_async(exchange, self._send)

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
                     benchmark: Optional[Dict[str, Any]] = None, hazards: str = "warn",
                     model: bool = True) -> AsyncLaunchHandle:
        """Queue `kernel` (uploading the tensors the service lacks) and return its handle;
        `on_upload`, `compare`, `benchmark` and `model` as Client.submit."""
        started = self._api.clock()
        job = with_benchmark(submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards,
                                        model=model), benchmark, compare)
        launch = await self._run(self._api.submit_launch(job, started, on_upload=on_upload, compare=compare))
        return AsyncLaunchHandle(launch, self._api, self._run, self._fetch)

    async def launch(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                     timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
                     compare: Optional[str] = None, hazards: str = "warn", model: bool = True) -> LaunchResult:
        """Run `kernel` remotely, as Client.launch (the same requests); the tensors it writes are
        copied back into the caller's arrays."""
        started = self._api.clock()
        job = submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards, model=model)
        return await self._run(self._api.launch(job, started, self._fetch, compare))

    async def benchmark(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                        timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
                        warmup: Optional[int] = None, min_repeats: Optional[int] = None,
                        max_repeats: Optional[int] = None, target_rel_error: Optional[float] = None,
                        budget_seconds: Optional[float] = None, hazards: str = "warn") -> Benchmark:
        """As Client.benchmark: one benchmark job, its Benchmark."""
        policy = policy_json(warmup=warmup, min_repeats=min_repeats, max_repeats=max_repeats,
                             target_rel_error=target_rel_error, budget_seconds=budget_seconds)
        started = self._api.clock()
        job = with_benchmark(submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards), policy)
        return await self._run(self._api.benchmark(job, started, self._fetch))

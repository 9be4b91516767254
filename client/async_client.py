"""AsyncClient: Client's API for asyncio (services, notebooks) that launch many kernels at once.

    async with ascrun.AsyncClient(url) as client:
        results = await asyncio.gather(*(client.launch(kernel, 8, x, y, z, n) for x, y, z in batches))
"""
from __future__ import annotations

import asyncio
import os
import time
import uuid
from typing import Any, Dict, Optional

import httpx
import tenacity

from .args import HostArgs
from .client import DEFAULT_URL, WAIT_MARGIN_S, Client, compared_on
from .compiler.errors import KernelError
from .handle import QueuedLaunch, Upload, inline_outputs, second_run


class AsyncUpload:
    """Upload's chunks for httpx.AsyncClient (which takes async iterables only)."""

    def __init__(self, data: bytes):
        self.upload = Upload(data)

    async def __aiter__(self):
        for chunk in self.upload:
            yield chunk
from .http import TERMINAL, checked, poll_waits, retry_policy, transport_error, wait_timeout
from .result import LaunchResult


class AsyncClient:
    """One async connection pool to one service; the same arguments and retry policy as Client."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 60.0,
                 retries: int = 6):
        self.url = (url or os.environ.get("ASCRUN_URL") or DEFAULT_URL).rstrip("/")
        self.retries, self._token = retries, token
        self._retry = retry_policy(retries)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers,
                                       timeout=httpx.Timeout(timeout, connect=10.0))

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _request(self, method: str, path: str, accept: tuple = (), **kwargs: Any) -> httpx.Response:
        """As Client._request: the same retry policy, then one KernelError."""
        try:
            response = await tenacity.AsyncRetrying(**self._retry)(self._http.request, method, path, **kwargs)
        except httpx.TransportError as e:
            raise transport_error(self.url, method, path, e) from None
        return checked(response, accept, method, path)

    async def submit(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                     timeout: Optional[float] = None, bounds: str = "fault",
                     soc: Optional[str] = None, compare: Optional[str] = None) -> "AsyncLaunchHandle":
        """Queue `kernel` (uploading the tensors the service lacks) and return its handle;
        `compare`: queue it on that target too, as Client.launch does."""
        start = time.perf_counter()
        body, blobs, host = Client._job(kernel, core_num, args, target, timeout, bounds, soc)
        handle = await self._queue(body, blobs, host, start, timeout)
        if compare is not None:
            with second_run(compare):
                handle.against = await self._queue(compared_on(body, compare), blobs, host.detached(), start,
                                                   timeout)
        return handle

    async def _queue(self, body: Dict[str, Any], blobs: Dict[str, bytes], host: HostArgs, start: float,
                     timeout: Optional[float]) -> "AsyncLaunchHandle":
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        for _ in range(2):
            response = await self._request("POST", "/v1/jobs", accept=(409,), json=body, params={"wait": "0"},
                                           headers=headers)
            if response.status_code != 409:
                return AsyncLaunchHandle(self, response.json(), host, start, time.perf_counter() - start,
                                         (timeout or 600) + WAIT_MARGIN_S)
            await asyncio.gather(*(self._request("PUT", f"/v1/blobs/{digest}", content=AsyncUpload(blobs[digest]),
                                                 headers={"Content-Type": "application/octet-stream",
                                                          "Content-Length": str(len(blobs[digest]))})
                                   for digest in response.json()["error"]["missing"]))
        raise KernelError("the server kept asking for blobs that were just uploaded (are they expiring "
                          "immediately? check ASCRUN_BLOB_TTL)", kind="unavailable")

    async def launch(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
                     timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
                     compare: Optional[str] = None) -> LaunchResult:
        """Run `kernel` remotely; the tensors it writes are copied back into the caller's arrays.
        `compare`: as Client.launch."""
        handle = await self.submit(kernel, core_num, *args, target=target, timeout=timeout, bounds=bounds,
                                   soc=soc, compare=compare)
        return await handle.result()

    async def wait(self, job_id: str, timeout: float) -> Dict[str, Any]:
        """Long-poll until the job ends; KernelError kind timeout after `timeout` s."""
        for wait, last in poll_waits(timeout):
            record = (await self._request("GET", f"/v1/jobs/{job_id}", params={"wait": f"{wait:.3f}"},
                                          timeout=wait + 30)).json()
            if record["status"] in TERMINAL:
                return record
            if last:
                raise wait_timeout(job_id, timeout, record)

    async def source(self, job_id: str) -> str:
        return (await self._request("GET", f"/v1/jobs/{job_id}/source")).text

    def _source_now(self, job_id: str) -> str:
        """LaunchResult.source is a plain property: it fetches with a blocking request."""
        with Client(self.url, token=self._token, retries=self.retries) as client:
            return client.source(job_id)


class AsyncLaunchHandle(QueuedLaunch):
    """A queued launch: `id` at once, `await result(timeout)` as LaunchHandle.result."""

    async def result(self, timeout: Optional[float] = None) -> LaunchResult:
        if self._result is None:
            if self.status not in TERMINAL:
                self._record = await self._client.wait(self.id, self._max_wait if timeout is None else timeout)
            download_start = self.finished()
            outputs = inline_outputs(self._record)
            refs = {n: ref for n, ref in self._record["outputs"].items() if n not in outputs}
            blobs = await asyncio.gather(*(self._client._request("GET", f"/v1/blobs/{ref['blob']}")
                                           for ref in refs.values()))
            outputs.update({n: b.content for n, b in zip(refs, blobs)})
            self._result = self.written_back(outputs, download_start,
                                             lambda: self._client._source_now(self.id))
        if self.against is not None and self._result.comparison is None:
            with second_run(self.against.record["target"]):
                other = await self.against.result(timeout)
            self.compare(other)
        return self._result

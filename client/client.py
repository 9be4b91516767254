"""Client: launch kernels on an ascrun service. Thin: httpx, tenacity and numpy, no pyasc needed.

    with ascrun.Client() as client:               # ASCRUN_URL, else http://127.0.0.1:8000
        result = client.launch(kernel, 8, x, y, z, n)
    ascrun.remote(kernel)[8](x, y, z, n)          # pyasc's launch syntax
"""
from __future__ import annotations

import base64
import functools
import hashlib
import os
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

import httpx
import numpy as np
import tenacity

from .args import HostArgs, launch_args
from .handle import Upload
from .compiler.errors import KernelError
from .compiler.pipeline import check_bounds
from .http import POLL_S, TERMINAL, checked, poll_waits, retry_policy, transport_error, wait_timeout
from .result import LaunchResult

if TYPE_CHECKING:
    from .handle import LaunchHandle

DEFAULT_URL = "http://127.0.0.1:8000"
INLINE_BYTES = 64 << 10  # tensors up to this size travel inside the submission (the service's store.INLINE_BYTES)
WAIT_MARGIN_S = 60  # beyond the job's own timeout, for queueing


class Client:
    """One connection pool to one service. `timeout` bounds each HTTP request; `retries` is how
    often an unreachable or briefly unavailable (502/503/504) service is tried again."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 60.0,
                 retries: int = 6):
        self.url = (url or os.environ.get("ASCRUN_URL") or DEFAULT_URL).rstrip("/")
        self.retries = retries
        self._retry = retry_policy(retries)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.url, headers=headers,
                                  timeout=httpx.Timeout(timeout, connect=10.0))

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- HTTP, with every failure turned into one clear KernelError ---------------------------

    def _request(self, method: str, path: str, accept: tuple = (), **kwargs: Any) -> httpx.Response:
        """The response, if it succeeded or its status is in `accept`; else KernelError (retried
        as http.retry_policy says first)."""
        try:
            response = tenacity.Retrying(**self._retry)(self._http.request, method, path, **kwargs)
        except httpx.TransportError as e:
            raise transport_error(self.url, method, path, e) from None
        return checked(response, accept, method, path)

    # -- the launch ----------------------------------------------------------------------------

    @staticmethod
    def _arguments(host: HostArgs) -> tuple:
        """The job's argument JSON (small tensors inline, all-zero ones as `zeros`), and the bytes of
        each tensor blob by digest."""
        args, blobs = [], {}
        for spec, (name, value) in zip(host.specs, host.values.items()):
            if spec.kind == "tensor":
                arg = {"kind": "tensor", "dtype": spec.dtype, "shape": list(value.shape)}
                data = value.tobytes()
                if not np.frombuffer(data, np.uint8).any():  # bytes, not values: -0.0 is not zeros
                    arg["zeros"] = True
                elif value.nbytes <= INLINE_BYTES:
                    arg["data"] = base64.b64encode(data).decode()
                else:
                    arg["blob"] = hashlib.sha256(data).hexdigest()
                    blobs[arg["blob"]] = data
                args.append(arg)
            else:  # a scalar, or a struct's field values
                args.append({"kind": spec.kind, "dtype": spec.dtype, "value": spec.value})
        return args, blobs

    def _submit(self, body: Dict[str, Any], blobs: Dict[str, bytes], wait: float) -> Dict[str, Any]:
        """Submit; if the server lacks some blobs (409), upload just those and submit again.
        A re-run with the same inputs therefore uploads nothing and costs one request."""
        params = {"wait": f"{wait:.3f}"}
        headers = {"Idempotency-Key": uuid.uuid4().hex}  # a retried submit never runs the job twice
        for _ in range(2):
            response = self._request("POST", "/v1/jobs", accept=(409,), json=body, params=params,
                                     headers=headers, timeout=wait + 30)
            if response.status_code != 409:
                return response.json()
            for digest in response.json()["error"]["missing"]:
                self._request("PUT", f"/v1/blobs/{digest}", content=Upload(blobs[digest]),
                              headers={"Content-Type": "application/octet-stream",
                                       "Content-Length": str(len(blobs[digest]))})
        raise KernelError("the server kept asking for blobs that were just uploaded (are they expiring "
                          "immediately? check ASCRUN_BLOB_TTL)", kind="unavailable")

    def wait(self, job_id: str, timeout: float, poll: float = POLL_S,
             on_poll: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
        """Long-poll until the job ends (no busy polling) and return its record; KernelError kind
        timeout after `timeout` s. `on_poll(record)` sees each record of a job still running."""
        for wait, last in poll_waits(timeout, poll):
            record = self._request("GET", f"/v1/jobs/{job_id}", params={"wait": f"{wait:.3f}"},
                                   timeout=wait + 30).json()
            if record["status"] in TERMINAL:
                return record
            if on_poll is not None:
                on_poll(record)
            if last:
                raise wait_timeout(job_id, timeout, record)

    def source(self, job_id: str) -> str:
        return self._request("GET", f"/v1/jobs/{job_id}/source").text

    @classmethod
    def _job(cls, kernel: Any, core_num: int, args: Any, target: str, timeout: Optional[float], bounds: str,
             soc: Optional[str] = None):
        """The submission body, the blobs it refers to, and the caller's arguments."""
        check_bounds(bounds)
        bundle, host = launch_args(kernel, args)
        arg_json, blobs = cls._arguments(host)
        body = {"bundle": bundle.to_json(), "core_num": core_num, "target": target, "args": arg_json}
        if timeout is not None:
            body["timeout"] = timeout
        if bounds != "fault":  # the default is left out: older services know no "bounds"
            body["bounds"] = bounds
        if soc is not None:
            body["soc"] = soc
        return body, blobs, host

    def launch(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
               timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
               compare: Optional[str] = None) -> LaunchResult:
        """Run `kernel` remotely; the tensors it writes are copied back into the caller's arrays.
        A cached launch is one request that waits for the job, then one download per output.
        `bounds="warn"`: out-of-operand accesses the device performs become `result.warnings`.
        `soc` (e.g. "Ascend910B1"): only a worker serving that SOC runs it (503 at once if none does).
        `compare="cpu"`: the same launch runs on that target too, at the same time; the caller's
        arrays get `target`'s outputs and `result.comparison` diffs the two (compare.py)."""
        from .handle import LaunchHandle  # handle.py builds on this module

        if compare is not None:
            return self.submit(kernel, core_num, *args, target=target, timeout=timeout, bounds=bounds, soc=soc,
                               compare=compare).result()
        start = time.perf_counter()
        body, blobs, host = self._job(kernel, core_num, args, target, timeout, bounds, soc)
        record = self._submit(body, blobs, wait=POLL_S)
        # "upload": the client's share of the submission, without the time the job itself took
        worker_s = record["ended_at"] - record["created_at"] if record["status"] in TERMINAL else 0.0
        upload_s = max(0.0, time.perf_counter() - start - worker_s)
        return LaunchHandle(self, record, host, started=start, upload_s=upload_s,
                            max_wait=(timeout or 600) + WAIT_MARGIN_S).result()

    def submit(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu", timeout: Optional[float] = None,
               on_upload: Optional[Callable[[int, int], None]] = None, bounds: str = "fault",
               soc: Optional[str] = None, compare: Optional[str] = None) -> "LaunchHandle":
        """Queue `kernel` and return its LaunchHandle without waiting for the run, so that many
        launches can be in flight at once. `on_upload(sent, total)` follows the tensor upload.
        `compare`: queue it on that target too, as `launch` does."""
        from .handle import LaunchHandle, second_run, upload_missing  # handle.py builds on this module

        start = time.perf_counter()
        body, blobs, host = self._job(kernel, core_num, args, target, timeout, bounds, soc)
        if on_upload is not None:
            upload_missing(self, blobs, on_upload)
        record = self._submit(body, blobs, wait=0)
        max_wait = (timeout or 600) + WAIT_MARGIN_S
        handle = LaunchHandle(self, record, host, started=start, upload_s=time.perf_counter() - start,
                              max_wait=max_wait)
        if compare is not None:
            with second_run(compare):
                record = self._submit(compared_on(body, compare), blobs, wait=0)
            handle.against = LaunchHandle(self, record, host.detached(), started=start, upload_s=0.0,
                                          max_wait=max_wait)
        return handle


def compared_on(body: Dict[str, Any], target: str) -> Dict[str, Any]:
    """The job body of a launch's comparison run: the same launch on `target`, on any SOC."""
    return {**{k: v for k, v in body.items() if k != "soc"}, "target": target}


class RemoteKernel:
    """`remote(kernel)[core_num](*args)` or `[core_num, stream]`: pyasc's launch syntax, run remotely."""

    def __init__(self, kernel: Any, client: Optional[Client] = None, bounds: str = "fault"):
        self.kernel = kernel
        self.client = client
        check_bounds(bounds)
        self.bounds = bounds

    def __getitem__(self, launch: Any):
        core_num = launch[0] if isinstance(launch, tuple) else launch  # a stream means nothing remotely
        return functools.partial(self._launch, core_num)

    def _launch(self, core_num: int, *args: Any) -> LaunchResult:
        if self.client is None:
            self.client = Client()
        return self.client.launch(self.kernel, core_num, *args, bounds=self.bounds)


def remote(kernel: Any, client: Optional[Client] = None, bounds: str = "fault") -> RemoteKernel:
    return RemoteKernel(kernel, client, bounds)

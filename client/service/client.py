"""Client: launch kernels on an ascrun service. Thin: httpx, tenacity and numpy, no pyasc needed.

    with ascrun.Client() as client:               # ASCRUN_URL, else http://127.0.0.1:8000
        result = client.launch(kernel, 8, x, y, z, n)
    ascrun.remote(kernel)[8](x, y, z, n)          # pyasc's launch syntax

A shell over core.py, which builds every request and reads every answer: Client sends them.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import httpx

from ..bench import Benchmark, policy_json
from ..compiler.targets.contract import check_bounds, check_hazards
from ..result import LaunchResult
from .core import POLL_S, Exchange, OnUpload, Request, T
from .handle import LaunchHandle
from .http import BaseClient, run, send
from .submission import submission, with_benchmark


class Client(BaseClient):
    """One connection pool to one service. `timeout` bounds each HTTP request; `retries` is how
    often an unreachable or briefly unavailable (502/503/504) service is tried again."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 60.0,
                 retries: int = 6):
        super().__init__(url, token, timeout, retries)
        self._http = httpx.Client(**self._pool)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- the I/O: core.py's requests sent one after the other -------------------------------------

    def _send(self, request: Request) -> httpx.Response:
        return send(self._http, self._retry, self.url, request)

    def _run(self, exchange: Exchange[T]) -> T:
        return run(exchange, self._send)

    # -- the service's API (core.ServiceApi says what each does) ----------------------------------

    def jobs(self, limit: int = 20) -> List[Dict[str, Any]]:
        return self._run(self._api.jobs(limit))

    def job(self, job_id: str, wait: float = 0) -> Dict[str, Any]:
        return self._run(self._api.job(job_id, wait))

    def targets(self) -> List[Dict[str, Any]]:
        return self._run(self._api.targets())

    def source(self, job_id: str) -> str:
        return self._run(self._api.source(job_id))

    def ir(self, job_id: str) -> str:
        return self._run(self._api.ir(job_id))

    def trace(self, job_id: str) -> str:
        """The job's modeled timeline (cpu) as Perfetto trace JSON; KernelError not_found if it has none."""
        return self._run(self._api.trace(job_id))

    def missing_blobs(self, digests: Sequence[str]) -> List[str]:
        return self._run(self._api.missing_blobs(digests))

    def upload_blob(self, digest: str, data: Union[bytes, Iterable[bytes]]) -> None:
        self._run(self._api.upload_blob(digest, data))

    def blob(self, digest: str) -> bytes:
        return self._run(self._api.blob(digest))

    def submit_job(self, body: Dict[str, Any], blobs: Optional[Dict[str, bytes]] = None, wait: float = 0,
                   on_upload: Optional[OnUpload] = None) -> Dict[str, Any]:
        """Submit a job body as the API takes it (submission.py builds one), uploading the blobs the
        service lacks; its record after up to `wait` s."""
        return self._run(self._api.submit(body, blobs or {}, wait, on_upload))

    def wait(self, job_id: str, timeout: float, poll: float = POLL_S,
             on_poll: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
        return self._run(self._api.wait(job_id, timeout, poll, on_poll))

    def outputs(self, record: Dict[str, Any]) -> Dict[str, bytes]:
        return self._run(self._api.outputs(record))

    # -- the launch ----------------------------------------------------------------------------

    def launch(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu",
               timeout: Optional[float] = None, bounds: str = "fault", soc: Optional[str] = None,
               compare: Optional[str] = None, hazards: str = "warn", model: bool = True) -> LaunchResult:
        """Run `kernel` remotely; the tensors it writes are copied back into the caller's arrays.
        A cached launch is one request that waits for the job, then one download per output the
        record does not carry. `bounds="warn"`: out-of-operand accesses the device performs become
        `result.warnings`. `hazards` (cpu): races between pipes that no flag orders are warnings
        ("warn"), fail the launch ("fault") or go unchecked ("off"); `result.model` and
        `result.trace` show the timeline (`model=False`: none, and a faster run). `soc` (e.g.
        "Ascend910B1"): only a worker serving that SOC runs it (503 at once if none does).
        `compare="cpu"`: the same launch runs on that target too, at the same time; the caller's
        arrays get `target`'s outputs and `result.comparison` diffs the two (compare.py)."""
        started = self._api.clock()
        job = submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards, model=model)
        return self._run(self._api.launch(job, started, self._run, compare))

    def submit(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu", timeout: Optional[float] = None,
               on_upload: Optional[OnUpload] = None, bounds: str = "fault",
               soc: Optional[str] = None, compare: Optional[str] = None,
               benchmark: Optional[Dict[str, Any]] = None, hazards: str = "warn", model: bool = True) -> LaunchHandle:
        """Queue `kernel` and return its LaunchHandle without waiting for the run, so that many
        launches can be in flight at once. `on_upload(sent, total)` follows the tensor upload.
        `compare`: queue it on that target too, as `launch` does. `benchmark`: a benchmark job's
        policy (bench.policy_json; `benchmark()` is the usual way). `hazards`, `model`: as `launch`."""
        started = self._api.clock()
        job = with_benchmark(submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards,
                                        model=model), benchmark, compare)
        launch = self._run(self._api.submit_launch(job, started, on_upload=on_upload, compare=compare))
        return LaunchHandle(launch, self._api, self._run)

    def benchmark(self, kernel: Any, core_num: int, *args: Any, target: str = "cpu", timeout: Optional[float] = None,
                  bounds: str = "fault", soc: Optional[str] = None, warmup: Optional[int] = None,
                  min_repeats: Optional[int] = None, max_repeats: Optional[int] = None,
                  target_rel_error: Optional[float] = None, budget_seconds: Optional[float] = None,
                  hazards: str = "warn") -> Benchmark:
        """Benchmark `kernel` in one job: warm-up, then repeats until the relative standard error is
        at or under `target_rel_error`, `max_repeats` or `budget_seconds` (unset: the service's
        defaults, bench.py). The last repeat's outputs are copied into the caller's arrays; a
        runtime_error if they differ from the first run's. Returns the Benchmark (statistics,
        stop rule, modeled cycles and hazard findings on cpu; `.result` the LaunchResult). `hazards`
        as for `launch`."""
        policy = policy_json(warmup=warmup, min_repeats=min_repeats, max_repeats=max_repeats,
                             target_rel_error=target_rel_error, budget_seconds=budget_seconds)
        started = self._api.clock()
        job = with_benchmark(submission(kernel, core_num, args, target, timeout, bounds, soc, hazards=hazards), policy)
        return self._run(self._api.benchmark(job, started, self._run))


class RemoteKernel:
    """`remote(kernel)[core_num](*args)` or `[core_num, stream]`: pyasc's launch syntax, run remotely."""

    def __init__(self, kernel: Any, client: Optional[Client] = None, bounds: str = "fault", hazards: str = "warn",
                 model: bool = True):
        self.kernel = kernel
        self.client = client
        check_bounds(bounds)
        check_hazards(hazards)
        self.bounds = bounds
        self.hazards = hazards
        self.model = model

    def __getitem__(self, launch: Any):
        core_num = launch[0] if isinstance(launch, tuple) else launch  # a stream means nothing remotely
        return functools.partial(self._launch, core_num)

    def _launch(self, core_num: int, *args: Any) -> LaunchResult:
        if self.client is None:
            self.client = Client()
        return self.client.launch(self.kernel, core_num, *args, bounds=self.bounds, hazards=self.hazards,
                                  model=self.model)


def remote(kernel: Any, client: Optional[Client] = None, bounds: str = "fault", hazards: str = "warn",
           model: bool = True) -> RemoteKernel:
    return RemoteKernel(kernel, client, bounds, hazards, model)

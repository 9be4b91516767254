"""LaunchHandle: a launch submitted with `Client.submit`, to be gathered later with `.result()`.

    handles = [client.submit(kernel, 8, x, y, z, n) for x, y, z in batches]   # all queued at once
    results = [h.result(timeout=120) for h in handles]                        # outputs written back
"""
from __future__ import annotations

import contextlib
import functools
import time
from typing import Any, Callable, Dict, Iterator, Optional

import numpy as np

from ..args import HostArgs
from ..compare import compare_outputs
from ..compiler.errors import KernelError
from ..job_status import TERMINAL
from ..result import LaunchResult
from .core import POLL_S, raise_failure

__tracebackhide__ = True  # pytest: a failed launch's traceback ends at the line that launched
STATUS_POLL_S = 1.0  # with on_status: often enough to show queued -> started


@contextlib.contextmanager
def second_run(target: str) -> Iterator[None]:
    """A failure of the launch that runs on `target` only to be compared with says so."""
    try:
        yield
    except KernelError as e:
        raise KernelError(f"the comparison run on '{target}' failed: {e}", kind=e.kind, log=e.log,
                          warnings=e.warnings) from None


class QueuedLaunch:
    """What LaunchHandle and AsyncLaunchHandle share: the job's record as last seen and the caller's
    arrays its outputs go back into."""

    def __init__(self, client: Any, record: Dict[str, Any], host: HostArgs, started: float, upload_s: float,
                 max_wait: float):
        self._client, self._record, self._host = client, record, host
        self._started, self._upload_s, self._max_wait = started, upload_s, max_wait
        self._result: Optional[LaunchResult] = None
        self.against: Optional[QueuedLaunch] = None  # with compare=: the same job on the second target

    def compare(self, other: LaunchResult) -> None:
        self._result.comparison = compare_outputs(self._result.outputs, other.outputs, self._record["target"],
                                                  self.against.record["target"])

    @property
    def id(self) -> str:
        return self._record["id"]

    @property
    def status(self) -> str:
        """queued, started, finished, failed or timed_out, as last seen."""
        return self._record["status"]

    @property
    def record(self) -> Dict[str, Any]:
        """The job's record (JobResult JSON) as last seen."""
        return self._record

    def finished(self) -> float:
        """Raises the job's failure as KernelError; else the time its download starts."""
        raise_failure(self._record)
        return time.perf_counter()

    def written_back(self, outputs: Dict[str, bytes], download_start: float,
                     fetch_source: Callable[[], str], fetch_trace: Optional[Callable[[], str]] = None) -> LaunchResult:
        """The LaunchResult of the finished job whose output blobs were downloaded; writes them back."""
        record, arrays = self._record, {}
        for name, ref in record["outputs"].items():
            array = np.frombuffer(bytearray(outputs[name]), dtype=ref["dtype"]).reshape(ref["shape"])  # writable
            self._host.write_back(name, array)
            arrays[name] = array
        timings = {k: v for k, v in record["timings"].items() if k != "total"}
        timings.update(upload=self._upload_s, download=time.perf_counter() - download_start,
                       total=time.perf_counter() - self._started)
        return LaunchResult(outputs=arrays, timings=timings, cache=record["cache"], ir_hash=record["ir_hash"],
                            job_id=record["id"], log=record.get("log") or "",
                            warnings=list(record.get("warnings") or []), _fetch_source=fetch_source,
                            model=record.get("model"),  # a job with no model has no trace: no request for it
                            _fetch_trace=fetch_trace if record.get("model") is not None else None)


class LaunchHandle(QueuedLaunch):
    """A queued launch. `id` is the job's id; `result()` waits for it, copies its outputs into the
    caller's arrays and returns the LaunchResult, or raises KernelError as `launch` would."""

    def done(self, wait: float = 0) -> bool:
        """Whether the job has ended; asks the service, waiting up to `wait` s, unless already known."""
        if self.status not in TERMINAL:
            self._record = self._client.job(self.id, wait)
        return self.status in TERMINAL

    def result(self, timeout: Optional[float] = None,
               on_status: Optional[Callable[["LaunchHandle"], None]] = None) -> LaunchResult:
        """Wait up to `timeout` s (default: the job's timeout plus queueing) for the job to end.
        KernelError kind timeout if it does not (the job goes on). `on_status(handle)` is called
        after each poll; with it, polls are a second apart, so a display can follow the job."""
        if self._result is None:
            if self.status not in TERMINAL:
                def seen(record: Dict[str, Any]) -> None:
                    self._record = record
                    if on_status:
                        on_status(self)
                self._record = self._client.wait(self.id, self._max_wait if timeout is None else timeout,
                                                 poll=STATUS_POLL_S if on_status else POLL_S, on_poll=seen)
            download_start = self.finished()
            outputs = self._client.outputs(self._record)
            self._result = self.written_back(outputs, download_start, functools.partial(self._client.source, self.id),
                                             functools.partial(self._client.trace, self.id))
        if self.against is not None and self._result.comparison is None:
            with second_run(self.against.record["target"]):
                other = self.against.result(timeout)
            self.compare(other)
        return self._result

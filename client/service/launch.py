"""A launch the service took, without I/O: its job's record as last seen, the caller's arguments its
outputs go back into, and the LaunchResult they make. core.py's launch flow moves it along; the
shells' handles (handle.py) show it."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, Optional

import numpy as np

from ..args import HostArgs, as_declared
from ..compiler.errors import KernelError
from ..launch_checks import storage_dtype
from ..result import LaunchResult


@contextlib.contextmanager
def second_run(target: str) -> Iterator[None]:
    """A failure of the launch that runs on `target` only to be compared with says so (as the same
    class of error: a ServiceUnreachable stays one)."""
    try:
        yield
    except KernelError as e:
        raise type(e)(f"the comparison run on '{target}' failed: {e}", kind=e.kind, log=e.log,
                      warnings=e.warnings) from None


class QueuedLaunch:
    """A submitted launch. `started`: the clock when its submission began; `upload_s`: the client's
    share of the submission; `max_wait`: how long its result waits for the job by default.
    `against`: with compare=, the same launch on the second target; `result` once it is known."""

    def __init__(self, record: Dict[str, Any], host: HostArgs, started: float, upload_s: float, max_wait: float):
        self.record, self.host = record, host
        self.started, self.upload_s, self.max_wait = started, upload_s, max_wait
        self.against: Optional[QueuedLaunch] = None
        self.result: Optional[LaunchResult] = None

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def status(self) -> str:
        """queued, started, finished, failed or timed_out, as last seen (job_status.JobStatus)."""
        return self.record["status"]

    def written_back(self, outputs: Dict[str, bytes], download_s: float, total_s: float,
                     fetch_source: Callable[[], str], fetch_trace: Callable[[], str]) -> LaunchResult:
        """The LaunchResult of the finished job whose outputs are `outputs` (bytes by name); writes
        them back into the caller's tensors. `fetch_source`/`fetch_trace`: what the result's
        `source` and `trace` call on first use."""
        arrays = {}
        for name, ref in self.record["outputs"].items():
            array = np.frombuffer(bytearray(outputs[name]), dtype=storage_dtype(ref["dtype"])).reshape(ref["shape"])
            self.host.write_back(name, array)
            arrays[name] = as_declared(array, ref["dtype"])
        timings = {k: v for k, v in self.record["timings"].items() if k != "total"}
        timings.update(upload=self.upload_s, download=download_s, total=total_s)
        model = self.record.get("model")
        return LaunchResult(outputs=arrays, timings=timings, cache=self.record["cache"], ir_hash=self.record["ir_hash"],
                            job_id=self.id, log=self.record.get("log") or "",
                            warnings=list(self.record.get("warnings") or []), _fetch_source=fetch_source,
                            model=model,  # a job with no model has no trace: no request for it
                            _fetch_trace=fetch_trace if model is not None else None)

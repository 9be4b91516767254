"""The handles of launches submitted with `Client.submit` and `AsyncClient.submit`, to be gathered later.

    handles = [client.submit(kernel, 8, x, y, z, n) for x, y, z in batches]   # all queued at once
    results = [h.result(timeout=120) for h in handles]                        # outputs written back

Each runs core.py's launch flow (ServiceApi.launch_result) on its launch with its shell's I/O.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Optional

from ..job_status import TERMINAL
from ..result import LaunchResult
from .core import POLL_S, Exchange, Runner, ServiceApi
from .launch import QueuedLaunch

__tracebackhide__ = True  # pytest: a failed launch's traceback ends at the line that launched
STATUS_POLL_S = 1.0  # with on_status: often enough to show queued -> started


class SubmittedLaunch:
    """What both shells' handles show: the job's id, status and record, as last seen."""

    def __init__(self, launch: QueuedLaunch, api: ServiceApi):
        self._launch, self._api = launch, api

    @property
    def id(self) -> str:
        return self._launch.id

    @property
    def status(self) -> str:
        """queued, started, finished, failed or timed_out, as last seen."""
        return self._launch.status

    @property
    def record(self) -> Dict[str, Any]:
        """The job's record (JobResult JSON) as last seen."""
        return self._launch.record


class LaunchHandle(SubmittedLaunch):
    """A queued launch. `id` is the job's id; `result()` waits for it, copies its outputs into the
    caller's arrays and returns the LaunchResult, or raises KernelError as `launch` would."""

    def __init__(self, launch: QueuedLaunch, api: ServiceApi, run: Runner):
        super().__init__(launch, api)
        self._run = run

    def done(self, wait: float = 0) -> bool:
        """Whether the job has ended; asks the service, waiting up to `wait` s, unless already known."""
        if self.status not in TERMINAL:
            self._launch.record = self._run(self._api.job(self.id, wait))
        return self.status in TERMINAL

    def result(self, timeout: Optional[float] = None,
               on_status: Optional[Callable[["LaunchHandle"], None]] = None) -> LaunchResult:
        """Wait up to `timeout` s (default: the job's timeout plus queueing) for the job to end.
        KernelError kind timeout if it does not (the job goes on). `on_status(handle)` is called
        after each poll; with it, polls are a second apart, so a display can follow the job."""
        seen = None if on_status is None else (lambda launch: on_status(self))
        return self._run(self._api.launch_result(self._launch, self._run, timeout,
                                                 poll=STATUS_POLL_S if on_status else POLL_S, on_poll=seen))


class AsyncLaunchHandle(SubmittedLaunch):
    """A queued launch: `id` at once, `await result(timeout)` as LaunchHandle.result."""

    def __init__(self, launch: QueuedLaunch, api: ServiceApi, run: Callable[[Exchange[Any]], Awaitable[Any]],
                 fetch: Runner):
        super().__init__(launch, api)
        self._run, self._fetch = run, fetch

    async def result(self, timeout: Optional[float] = None) -> LaunchResult:
        return await self._run(self._api.launch_result(self._launch, self._fetch, timeout))

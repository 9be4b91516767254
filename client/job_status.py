"""A job's states and the moves between them, the one table the API server, the workers, the client
and the dashboard read (the dashboard through GET /dashboard/states.js):

    queued -> started -> finished | failed | timed_out
    queued -> failed | timed_out        (reaped: lost, or no worker serves it)
    started -> queued                   (handed to a worker of the other stage: build, run)

Every accepted job reaches a terminal state, and a terminal state is never left."""
from __future__ import annotations

import enum
from typing import Dict, FrozenSet


class JobStatus(str, enum.Enum):
    QUEUED = "queued"
    STARTED = "started"
    FINISHED = "finished"
    FAILED = "failed"
    TIMED_OUT = "timed_out"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL

    def __str__(self) -> str:
        return self.value


TRANSITIONS: Dict[JobStatus, FrozenSet[JobStatus]] = {
    JobStatus.QUEUED: frozenset({JobStatus.STARTED, JobStatus.FAILED, JobStatus.TIMED_OUT}),
    JobStatus.STARTED: frozenset({JobStatus.QUEUED, JobStatus.FINISHED, JobStatus.FAILED, JobStatus.TIMED_OUT}),
    JobStatus.FINISHED: frozenset(),
    JobStatus.FAILED: frozenset(),
    JobStatus.TIMED_OUT: frozenset(),
}
TERMINAL = frozenset(status for status, following in TRANSITIONS.items() if not following)


def may_move(old: str, new: str) -> bool:
    """Whether a job in state `old` may be put in state `new`."""
    return JobStatus(new) in TRANSITIONS[JobStatus(old)]

"""A job's states, shared by the API server, the workers and the client: queued -> started ->
finished | failed | timed_out. Every accepted job reaches a terminal state."""
import enum


class JobStatus(str, enum.Enum):
    QUEUED = "queued"
    STARTED = "started"
    FINISHED = "finished"
    FAILED = "failed"
    TIMED_OUT = "timed_out"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({JobStatus.FINISHED, JobStatus.FAILED, JobStatus.TIMED_OUT})

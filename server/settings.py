"""Service settings, read once from the environment (the operator's knobs)."""
from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {raw!r}") from None


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {raw!r}") from None
    if not value > 0 or value == float("inf"):
        raise SystemExit(f"{name} must be a positive number of seconds, got {raw!r}")
    return value


def _redis_url() -> str:
    """REDIS_URL, or the contents of the file REDIS_URL_FILE names (a container secret: a URL with
    a password is never in the environment)."""
    path = os.environ.get("REDIS_URL_FILE")
    if path:
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError as e:
            raise SystemExit(f"REDIS_URL_FILE: cannot read {path}: {e.strerror}") from None
    return os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL


@dataclass(frozen=True)
class Settings:
    redis_url: str = DEFAULT_REDIS_URL
    blob_ttl_s: int = 3600
    result_ttl_s: int = 86400
    artifact_ttl_s: int = 7 * 86400
    max_request_bytes: int = 64 << 20  # hard cap on any JSON body, before authentication
    worker_memory_bytes: int = 8 << 30  # address space of a work horse (0: unlimited)
    worker_max_files: int = 256
    job_timeout_s: int = 120
    max_job_timeout_s: int = 600
    max_wait_s: int = 60
    unserved_grace_s: int = 60  # a queued job whose queue no live worker has read this long fails
    metrics_port: int = 0  # 0: /metrics on the API's port, behind its tokens; else on this port, without them
    metrics_host: str = "0.0.0.0"  # where metrics_port listens
    # The pool's liveness (the tests shorten them; production keeps these):
    job_heartbeat_s: float = 1.0  # how often a running job says it is alive
    job_heartbeat_ttl_s: int = 5  # a job silent this long has lost its work horse (reaped)
    unqueued_grace_s: float = 5.0  # a job still queued this long without its RQ job was lost (Redis lost data): reaped
    worker_beat_s: float = 1.0  # how often a worker says it is alive
    worker_ttl_s: float = 5.0  # a worker silent this long is gone
    queue_refresh_s: int = 1  # a worker reads the queue names this often: a new tenant's queue is served within it

    @classmethod
    def from_env(cls) -> "Settings":
        return cls(
            redis_url=_redis_url(),
            blob_ttl_s=_int("ASCRUN_BLOB_TTL", cls.blob_ttl_s),
            result_ttl_s=_int("ASCRUN_RESULT_TTL", cls.result_ttl_s),
            artifact_ttl_s=_int("ASCRUN_ARTIFACT_TTL", cls.artifact_ttl_s),
            max_request_bytes=_int("ASCRUN_MAX_REQUEST_BYTES", cls.max_request_bytes),
            worker_memory_bytes=_int("ASCRUN_WORKER_MEMORY_BYTES", cls.worker_memory_bytes),
            worker_max_files=_int("ASCRUN_WORKER_MAX_FILES", cls.worker_max_files),
            job_timeout_s=_int("ASCRUN_JOB_TIMEOUT", cls.job_timeout_s),
            max_job_timeout_s=_int("ASCRUN_MAX_JOB_TIMEOUT", cls.max_job_timeout_s),
            max_wait_s=_int("ASCRUN_MAX_WAIT", cls.max_wait_s),
            unserved_grace_s=_int("ASCRUN_UNSERVED_GRACE", cls.unserved_grace_s),
            metrics_port=_int("ASCRUN_METRICS_PORT", cls.metrics_port),
            metrics_host=os.environ.get("ASCRUN_METRICS_HOST") or cls.metrics_host,
            job_heartbeat_s=_float("ASCRUN_JOB_HEARTBEAT", cls.job_heartbeat_s),
            job_heartbeat_ttl_s=_int("ASCRUN_JOB_HEARTBEAT_TTL", cls.job_heartbeat_ttl_s),
            unqueued_grace_s=_float("ASCRUN_UNQUEUED_GRACE", cls.unqueued_grace_s),
            worker_beat_s=_float("ASCRUN_WORKER_BEAT", cls.worker_beat_s),
            worker_ttl_s=_float("ASCRUN_WORKER_TTL", cls.worker_ttl_s),
            queue_refresh_s=_int("ASCRUN_QUEUE_REFRESH", cls.queue_refresh_s),
        )

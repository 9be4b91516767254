"""Every environment variable ascrun reads, in one place (ENVIRONMENT; README "Settings" lists the
same), and the settings objects a process builds from them once: ServiceSettings (the API server
and the workers), ClientSettings (a client, the CLI, the pytest plugin) and HostSettings (what this
host's toolchains use: the C++ compiler, CANN). No other module reads the environment by name:
tests/test_settings.py checks it. A bad value stops the process with a message naming the variable.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_URL = "http://127.0.0.1:8000"

# name -> what it sets; the service's, then a client's, then the host's
ENVIRONMENT = {
    "REDIS_URL": f"the pool's Redis (default {DEFAULT_REDIS_URL})",
    "REDIS_URL_FILE": "a file holding REDIS_URL (a container secret: a URL with a password stays out of the "
                      "environment); wins over REDIS_URL",
    "ASCRUN_CACHE_REDIS_URL": "the compile caches' Redis (frontend memo, artifacts; run it with an LRU policy, so a "
                              "full cache evicts; default: REDIS_URL's)",
    "ASCRUN_CACHE_REDIS_URL_FILE": "a file holding ASCRUN_CACHE_REDIS_URL; wins over it",
    "ASCRUN_REDIS_TIMEOUT": "seconds a Redis command may take before the caller gives up and retries (5 s)",
    "ASCRUN_TENANTS_FILE": "the tenants file (JSON); none: open mode",
    "ASCRUN_TENANTS": "the tenants JSON itself, when there is no file",
    "ASCRUN_BLOB_TTL": "seconds an uploaded blob and a job's inline inputs are kept (3600)",
    "ASCRUN_RESULT_TTL": "seconds a job's record, outputs and trace are kept (86400)",
    "ASCRUN_ARTIFACT_TTL": "seconds a compile cache entry is kept (604800)",
    "ASCRUN_MAX_REQUEST_BYTES": "cap on any request body but a blob upload's, counted as it arrives (64 MiB)",
    "ASCRUN_WORKER_MEMORY_BYTES": "address space of each jailed stage (8 GiB; 0: unlimited)",
    "ASCRUN_WORKER_MAX_FILES": "open files of each jailed stage (256)",
    "ASCRUN_BROKER_MEMORY_BYTES": "data memory of a worker's own process, the broker (RLIMIT_DATA; 2 GiB; 0: "
                                  "unlimited): a job that needs more there fails with `limit`",
    "ASCRUN_JOB_TIMEOUT": "a job's timeout when its request names none (120 s)",
    "ASCRUN_MAX_JOB_TIMEOUT": "the longest timeout a request may name (600 s)",
    "ASCRUN_MAX_WAIT": "the longest long-poll (60 s)",
    "ASCRUN_HEAD_TIMEOUT": "a connection whose request head is not complete this long after it began is closed (10 s)",
    "ASCRUN_STALL_TIMEOUT": "a connection whose body stops coming or whose answer goes unread this long is closed "
                            "(30 s)",
    "ASCRUN_MAX_CONNECTIONS_PER_CLIENT": "connections one client address may hold open; beyond, refused with 503 (256)",
    "ASCRUN_MAX_CONNECTIONS": "connections the API server holds open in all; beyond, refused with 503 (0: its "
                              "open-file limit less 256)",
    "ASCRUN_ANONYMOUS_RATE": "requests a second one client address may make without a valid token, in bursts of 5 s "
                             "(20)",
    "ASCRUN_UPLOAD_STALL": "a blob upload that sends no byte this long is closed and what it stored freed (30 s)",
    "ASCRUN_DOWNLOAD_STALL": "a blob download whose reader takes no piece (1 MiB) this long is closed (30 s)",
    "ASCRUN_UNSERVED_GRACE": "a queued job whose queue no live worker has read this long fails (60 s)",
    "ASCRUN_METRICS_PORT": "serve /metrics on this port without tokens (0: on the API's port, behind them)",
    "ASCRUN_METRICS_HOST": "where ASCRUN_METRICS_PORT listens (0.0.0.0)",
    "ASCRUN_JOB_HEARTBEAT": "how often a running job says it is alive (1 s)",
    "ASCRUN_JOB_HEARTBEAT_TTL": "a job silent this long lost its worker and is failed (5 s)",
    "ASCRUN_UNQUEUED_GRACE": "a job queued this long without its RQ job was lost and is failed (5 s)",
    "ASCRUN_WORKER_BEAT": "how often a worker says it is alive (1 s)",
    "ASCRUN_WORKER_TTL": "a worker silent this long is gone (5 s)",
    "ASCRUN_QUEUE_REFRESH": "how often a worker looks for new tenants' queues (1 s)",
    "ASCRUN_REDIS_MAXMEMORY": "`ascrun up`: its redis-server's maxmemory, in Redis's syntax such as 4gb (a quarter "
                              "of the RAM)",
    "ASCRUN_CACHE_REDIS_MAXMEMORY": "`ascrun up`: its cache redis-server's maxmemory, in Redis's syntax (a sixteenth "
                                    "of the RAM)",
    "ASCRUN_URL": f"a client's service (default {DEFAULT_URL})",
    "ASCRUN_TOKEN": "a client's bearer token (the CLI's --token, the plugin's --ascrun-token)",
    "ASCRUN_CACHE_DIR": "run_local's compile cache (default $XDG_CACHE_HOME/ascrun, else ~/.cache/ascrun)",
    "XDG_CACHE_HOME": "where ASCRUN_CACHE_DIR defaults to",
    "CXX": "the cpu target's C++ compiler (default c++)",
    "ASCRUN_SIM_SOC": "the SOC the sim target simulates (Ascend910B1)",
    "ASCEND_HOME_PATH": "CANN's installation (its set_env.sh sets it): sim and npu need it; without it "
                        "ascrun's own host tiling stands in for pyasc's",
    "PYASC_COMPILER": "pyasc's bisheng, where it is not on PATH",
    "ASCENDC_DUMP": "pyasc's: whether sim and npu builds print from kernels (True)",
}


def _text(environ: Mapping[str, str], name: str, default: str = "") -> str:
    return environ.get(name) or default


def _int(environ: Mapping[str, str], name: str, default: int, minimum: int | None = None) -> int:
    raw = _text(environ, name)
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise SystemExit(f"{name} must be at least {minimum}, got {raw!r}")
    return value


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = _text(environ, name)
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {raw!r}") from None
    if not value > 0 or value == float("inf"):
        raise SystemExit(f"{name} must be a positive number of seconds, got {raw!r}")
    return value


def _file_text(path: str, name: str) -> str:
    """What the file at `path` (from variable `name`: a container secret) holds; "" for no path."""
    if not path:
        return ""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        raise SystemExit(f"{name}: cannot read {path}: {e.strerror}") from None


def redis_configured(environ: Mapping[str, str]) -> bool:
    """Whether REDIS_URL names a Redis (`ascrun up` starts its own otherwise)."""
    return bool(_text(environ, "REDIS_URL"))


def cache_redis_configured(environ: Mapping[str, str]) -> bool:
    """Whether ASCRUN_CACHE_REDIS_URL (or its file) names the caches' Redis."""
    return bool(_text(environ, "ASCRUN_CACHE_REDIS_URL") or _text(environ, "ASCRUN_CACHE_REDIS_URL_FILE"))


@dataclass(frozen=True)
class ServiceSettings:
    """The operator's knobs of the API server and the workers."""
    redis_url: str = DEFAULT_REDIS_URL
    cache_redis_url: str = ""  # the compile caches' Redis ("": redis_url's)
    redis_timeout_s: float = 5.0  # a Redis command taking longer fails (TimeoutError): the caller retries
    tenants_file: str = ""
    tenants_json: str = ""
    blob_ttl_s: int = 3600
    result_ttl_s: int = 86400
    artifact_ttl_s: int = 7 * 86400
    max_request_bytes: int = 64 << 20  # cap on any body but a blob upload's (a tenant's may be lower)
    worker_memory_bytes: int = 8 << 30  # address space of a jailed stage (0: unlimited)
    worker_max_files: int = 256
    broker_memory_bytes: int = 2 << 30  # RLIMIT_DATA of a worker's own process (0: unlimited)
    job_timeout_s: int = 120
    max_job_timeout_s: int = 600
    max_wait_s: int = 60
    # The HTTP edge's connections (server/connections.py) and anonymous requests (server/edge.py):
    head_timeout_s: float = 10.0  # from a request's first byte (or the connection's start) to its head's end
    stall_timeout_s: float = 30.0  # a body with no byte, or an answer with none read, this long
    max_connections_per_client: int = 256
    max_connections: int = 0  # 0: the API server's open-file limit less what it keeps for itself
    anonymous_rate: int = 20  # requests a second per client address without a valid token
    # a blob transfer through the API that stalls this long is closed and what it holds freed
    upload_stall_s: float = 30.0
    download_stall_s: float = 30.0
    unserved_grace_s: int = 60  # a queued job whose queue no live worker has read this long fails
    metrics_port: int = 0  # 0: /metrics on the API's port, behind its tokens; else on this port, without them
    metrics_host: str = "0.0.0.0"  # where metrics_port listens
    # The pool's liveness (the tests shorten them; production keeps these):
    job_heartbeat_s: float = 1.0  # how often a running job says it is alive
    job_heartbeat_ttl_s: int = 5  # a job silent this long has lost its work horse (reaped)
    unqueued_grace_s: float = 5.0  # a job still queued this long without its RQ job was lost (Redis lost data)
    worker_beat_s: float = 1.0  # how often a worker says it is alive
    worker_ttl_s: float = 5.0  # a worker silent this long is gone
    queue_refresh_s: int = 1  # a worker reads the queue names this often: a new tenant's queue is served within it
    redis_maxmemory: str = ""  # `ascrun up`'s redis-server, in Redis's syntax ("": a quarter of the RAM)
    cache_redis_maxmemory: str = ""  # `ascrun up`'s cache redis-server ("": a sixteenth of the RAM)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "ServiceSettings":
        return cls(
            redis_url=(_file_text(_text(environ, "REDIS_URL_FILE"), "REDIS_URL_FILE")
                       or _text(environ, "REDIS_URL", DEFAULT_REDIS_URL)),
            cache_redis_url=(_file_text(_text(environ, "ASCRUN_CACHE_REDIS_URL_FILE"), "ASCRUN_CACHE_REDIS_URL_FILE")
                             or _text(environ, "ASCRUN_CACHE_REDIS_URL")),
            redis_timeout_s=_seconds(environ, "ASCRUN_REDIS_TIMEOUT", cls.redis_timeout_s),
            tenants_file=_text(environ, "ASCRUN_TENANTS_FILE"),
            tenants_json=_text(environ, "ASCRUN_TENANTS"),
            blob_ttl_s=_int(environ, "ASCRUN_BLOB_TTL", cls.blob_ttl_s),
            result_ttl_s=_int(environ, "ASCRUN_RESULT_TTL", cls.result_ttl_s),
            artifact_ttl_s=_int(environ, "ASCRUN_ARTIFACT_TTL", cls.artifact_ttl_s),
            max_request_bytes=_int(environ, "ASCRUN_MAX_REQUEST_BYTES", cls.max_request_bytes),
            worker_memory_bytes=_int(environ, "ASCRUN_WORKER_MEMORY_BYTES", cls.worker_memory_bytes),
            worker_max_files=_int(environ, "ASCRUN_WORKER_MAX_FILES", cls.worker_max_files),
            broker_memory_bytes=_int(environ, "ASCRUN_BROKER_MEMORY_BYTES", cls.broker_memory_bytes),
            job_timeout_s=_int(environ, "ASCRUN_JOB_TIMEOUT", cls.job_timeout_s),
            max_job_timeout_s=_int(environ, "ASCRUN_MAX_JOB_TIMEOUT", cls.max_job_timeout_s),
            max_wait_s=_int(environ, "ASCRUN_MAX_WAIT", cls.max_wait_s),
            head_timeout_s=_seconds(environ, "ASCRUN_HEAD_TIMEOUT", cls.head_timeout_s),
            stall_timeout_s=_seconds(environ, "ASCRUN_STALL_TIMEOUT", cls.stall_timeout_s),
            max_connections_per_client=_int(environ, "ASCRUN_MAX_CONNECTIONS_PER_CLIENT",
                                            cls.max_connections_per_client, minimum=1),
            max_connections=_int(environ, "ASCRUN_MAX_CONNECTIONS", cls.max_connections, minimum=0),
            anonymous_rate=_int(environ, "ASCRUN_ANONYMOUS_RATE", cls.anonymous_rate, minimum=1),
            upload_stall_s=_seconds(environ, "ASCRUN_UPLOAD_STALL", cls.upload_stall_s),
            download_stall_s=_seconds(environ, "ASCRUN_DOWNLOAD_STALL", cls.download_stall_s),
            unserved_grace_s=_int(environ, "ASCRUN_UNSERVED_GRACE", cls.unserved_grace_s),
            metrics_port=_int(environ, "ASCRUN_METRICS_PORT", cls.metrics_port),
            metrics_host=_text(environ, "ASCRUN_METRICS_HOST", cls.metrics_host),
            job_heartbeat_s=_seconds(environ, "ASCRUN_JOB_HEARTBEAT", cls.job_heartbeat_s),
            job_heartbeat_ttl_s=_int(environ, "ASCRUN_JOB_HEARTBEAT_TTL", cls.job_heartbeat_ttl_s),
            unqueued_grace_s=_seconds(environ, "ASCRUN_UNQUEUED_GRACE", cls.unqueued_grace_s),
            worker_beat_s=_seconds(environ, "ASCRUN_WORKER_BEAT", cls.worker_beat_s),
            worker_ttl_s=_seconds(environ, "ASCRUN_WORKER_TTL", cls.worker_ttl_s),
            queue_refresh_s=_int(environ, "ASCRUN_QUEUE_REFRESH", cls.queue_refresh_s),
            redis_maxmemory=_text(environ, "ASCRUN_REDIS_MAXMEMORY"),
            cache_redis_maxmemory=_text(environ, "ASCRUN_CACHE_REDIS_MAXMEMORY"),
        )

    @property
    def tenants_source(self) -> str:
        """Where the tenants come from: the file, ASCRUN_TENANTS, or "" (open mode)."""
        return self.tenants_file or ("ASCRUN_TENANTS" if self.tenants_json else "")


@dataclass(frozen=True)
class ClientSettings:
    url: str = DEFAULT_URL
    url_given: bool = False  # ASCRUN_URL is set (the pytest plugin is active only then, or with --ascrun-url)
    token: str | None = None
    cache_dir: Path = Path.home() / ".cache" / "ascrun"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "ClientSettings":
        cache = Path(_text(environ, "XDG_CACHE_HOME") or Path.home() / ".cache") / "ascrun"
        return cls(url=_text(environ, "ASCRUN_URL", DEFAULT_URL).rstrip("/"),
                   url_given=bool(_text(environ, "ASCRUN_URL")),
                   token=_text(environ, "ASCRUN_TOKEN") or None,
                   cache_dir=Path(_text(environ, "ASCRUN_CACHE_DIR") or cache))


@dataclass(frozen=True)
class HostSettings:
    cxx: str = "c++"
    sim_soc: str = "Ascend910B1"
    ascend_home: str = ""
    pyasc_compiler: str = ""
    ascendc_dump: bool = True  # pyasc compiles printing in unless ASCENDC_DUMP says otherwise

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "HostSettings":
        return cls(cxx=_text(environ, "CXX", cls.cxx), sim_soc=_text(environ, "ASCRUN_SIM_SOC", cls.sim_soc),
                   ascend_home=_text(environ, "ASCEND_HOME_PATH"), pyasc_compiler=_text(environ, "PYASC_COMPILER"),
                   ascendc_dump=_text(environ, "ASCENDC_DUMP", "True").lower() == "true")

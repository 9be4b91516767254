"""Tenants: who may use the service, with which bearer token, within which limits.

The operator describes tenants in JSON, in the file named by ASCRUN_TENANTS_FILE or inline in
ASCRUN_TENANTS:

    {"limits": {"max_active_jobs": 32},                     # defaults for every tenant
     "tenants": [{"name": "ci", "token_sha256": "<hex>", "limits": {"launches_per_minute": 600}},
                 {"name": "ops", "token_sha256": "<hex>", "operator": true}]}   # sees the whole pool

Only the sha256 of each token is stored; a presented token is hashed and compared in constant
time. With no tenants configured the service runs in open mode: one tenant, "open", no token.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ..compiler.settings import ServiceSettings

OPEN_TENANT = "open"


@dataclass(frozen=True)
class Limits:
    # a body the API reads and parses (all but blob uploads) on its one core, every tenant's: a
    # submission's bundle (max_bundle_bytes) and inline tensors (the client inlines at most 1 MiB)
    # fit; a 12 MiB one stopped the event loop for 130-160 ms under load
    max_request_bytes: int = 4 << 20
    max_blob_bytes: int = 1 << 30
    max_bytes_in_flight: int = 4 << 30  # tensor bytes of this tenant's queued + running jobs
    max_job_tensor_bytes: int = 1 << 30  # one job's tensor bytes, zeros included (what its worker moves)
    max_stored_bytes: int = 4 << 30  # blob bytes this tenant has in Redis (inputs and outputs until they expire)
    # blob transfers through the API at once (store/transfers.py): each upload holds its declared
    # size in Redis, each download a piece in the API
    max_concurrent_uploads: int = 4
    max_concurrent_downloads: int = 8
    max_active_jobs: int = 64  # queued + running
    max_log_bytes: int = 64 << 10  # of what a job's kernel printed, kept in its record
    max_trace_bytes: int = 1 << 20  # a job's trace as kept (zlib-compressed); a larger one is not kept
    # a tenant's share of the workers (store/share.py): its jobs running at once, and the worker
    # time they may take a minute (charged ahead, settled when each job ends)
    max_running_jobs: int = 64
    worker_seconds_per_minute: int = 64 * 60
    launches_per_minute: int = 1200
    # every request of this tenant, whatever its answer, in the API server (edge.py): bursts of BURST_S
    requests_per_second: int = 200
    # the body bytes a second of its requests that the API reads and parses (all but blob uploads,
    # which their route bounds), counted as they arrive, in bursts of BURST_S (at least one body of
    # max_request_bytes): parsing is the API's single core, shared by every tenant
    request_bytes_per_second: int = 8 << 20
    # the CPU its bundle checks may take in the check pool (server/bundle_checks.py), which every
    # tenant's checks share: charged as each check ends, a check refused (429) while the minute's is spent
    check_seconds_per_minute: int = 10
    max_core_num: int = 256
    max_bundle_bytes: int = 1 << 20

    @classmethod
    def from_json(cls, data: Dict[str, Any], base: "Limits") -> "Limits":
        if not isinstance(data, dict):
            raise ValueError(f"limits must be an object of name: integer, not {json.dumps(data)[:80]}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown limit(s) {sorted(unknown)}; known: {sorted(known)}")
        try:
            limits = dataclasses.replace(base, **{k: int(v) for k, v in data.items()})
        except (TypeError, ValueError):
            raise ValueError(f"limits must be integers: {json.dumps(data)[:200]}") from None
        stopped = [name for name in RATES if getattr(limits, name) < 1]
        if stopped:  # a bucket of no tokens refuses everything, and a rate divides
            raise ValueError(f"rates must be at least 1: {', '.join(stopped)}")
        return limits


# the limits that are rates (per second or minute): a token bucket each
RATES = ("worker_seconds_per_minute", "launches_per_minute", "requests_per_second", "request_bytes_per_second",
         "check_seconds_per_minute")


LIMIT_NAMES = tuple(field.name for field in dataclasses.fields(Limits))


@dataclass(frozen=True)
class Tenant:
    name: str
    limits: Limits
    # whose compile caches this tenant's launches read and fill: its own, unless the tenants file
    # gives tenants that share their caches the same "cache_group"
    cache_group: str = ""
    # sees the pool's figures (every tenant's series and queues in /metrics and /v1/targets, the
    # workers, every tenant's jobs: routers/operator.py); a tenant sees its own only
    operator: bool = False

    @property
    def caches(self) -> str:
        return self.cache_group or self.name


class Tenants:
    def __init__(self, tenants: List[tuple], default_limits: Limits):
        self._by_hash = tenants  # [(token_sha256, Tenant)]
        self.open_mode = not tenants
        self.count = len(tenants)
        self._open = Tenant(OPEN_TENANT, default_limits, operator=True)  # the one tenant is the whole pool

    @classmethod
    def from_settings(cls, settings: ServiceSettings) -> "Tenants":
        """The tenants file, else the tenants JSON, else open mode. A mistake in them stops the
        process with one line naming where it is (SystemExit, as a wrong setting does)."""
        source = f"ASCRUN_TENANTS_FILE {settings.tenants_file}" if settings.tenants_file else "ASCRUN_TENANTS"
        try:
            raw = settings.tenants_json
            if settings.tenants_file:
                with open(settings.tenants_file) as f:
                    raw = f.read()
            return cls.from_json(json.loads(raw) if raw else {})
        except OSError as e:
            raise SystemExit(f"{source}: cannot read it: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise SystemExit(f"{source}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
        except ValueError as e:
            raise SystemExit(f"{source}: {e}") from None

    @classmethod
    def from_json(cls, data: Any) -> "Tenants":
        """The tenants of the JSON document `data`; ValueError saying what is wrong with it."""
        if not isinstance(data, dict) or not isinstance(data.get("tenants", []), list):
            raise ValueError('expected {"limits": {...}, "tenants": [{"name": ..., "token_sha256": ...}, ...]}')
        defaults = Limits.from_json(data.get("limits", {}), Limits())
        tenants = []
        for number, entry in enumerate(data.get("tenants", []), 1):
            if not isinstance(entry, dict) or "name" not in entry or "token_sha256" not in entry:
                raise ValueError(f"tenant #{number} needs a \"name\" and a \"token_sha256\"")
            digest = str(entry["token_sha256"]).lower()
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise ValueError(f"tenant {entry.get('name')!r}: token_sha256 must be 64 hex digits")
            tenant = Tenant(str(entry["name"]), Limits.from_json(entry.get("limits", {}), defaults),
                            str(entry.get("cache_group", "")), entry.get("operator") is True)
            tenants.append((digest, tenant))
        return cls(tenants, defaults)

    def names(self) -> List[str]:
        """Every tenant's name, as the tenants file gives them (open mode: its one tenant)."""
        return [OPEN_TENANT] if self.open_mode else [tenant.name for _, tenant in self._by_hash]

    def authenticate(self, authorization: Optional[str]) -> Optional[Tenant]:
        """The tenant whose token this Authorization header carries; None if none matches."""
        if self.open_mode:
            return self._open
        if not authorization or not authorization.startswith("Bearer "):
            return None
        presented = hashlib.sha256(authorization[len("Bearer "):].strip().encode()).hexdigest()
        found = None
        for digest, tenant in self._by_hash:  # no early exit: the time does not depend on which matched
            if hmac.compare_digest(presented, digest):
                found = tenant
        return found

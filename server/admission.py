"""Whether a job is taken: the launch arguments against the kernel (launch_checks, as the client
checks them), the tenant's limits and quotas, a live worker to serve it, and the submission's
Idempotency-Key. An admitted job is stored and queued; the worker trusts what is admitted here."""
from __future__ import annotations

import hashlib
import json
import math
import time
from typing import Dict, Optional, Tuple

from starlette.concurrency import run_in_threadpool

from ..compiler import benchmark, structs
from ..compiler.bundle import KernelBundle
from ..compiler.errors import BundleRejected, KernelError, Kind
from ..job_status import JobStatus
from ..launch_checks import annotation_problem, constexpr_only_problem, count_problem
from .bundle_checks import BundleChecks, Checked, ChecksSpent
from .errors import ApiError
from .models import JobRequest
from ..compiler.settings import ServiceSettings
from .store.blobs import BlobStore
from .store.jobs import JobStore
from .store.pool import PoolView
from .tenants import Limits, Tenant

SERVED_FOR_S = 1.0
# A submission this small has its bundle measured and hashed on the event loop (a fraction of a
# millisecond); a bigger one in a thread. A thread hop waits for the GIL behind whatever holds it,
# which under load took an honest launch's admission from 2 to 40 ms.
INLINE_BODY_BYTES = 64 << 10


class Admission:
    def __init__(self, jobs: JobStore, blobs: BlobStore, pool: PoolView, settings: ServiceSettings):
        self.jobs, self.blobs, self.pool, self.settings = jobs, blobs, pool, settings
        self.checks = BundleChecks()
        self._served_until: Dict[Tuple[str, Optional[str]], float] = {}  # (target, soc) -> until when it is

    async def admit(self, body: JobRequest, who: Tenant, idempotency_key: Optional[str], job_id: str,
                    body_bytes: Optional[int] = None) -> dict:
        """The record of the job `body` makes (queued as `job_id`), or of the earlier job its
        Idempotency-Key made; ApiError if it is refused. The bundle's sizes (in a thread, unless the
        request's `body_bytes` are few) and the rest of the request (in a thread: Redis) are checked
        here, its source by the gate in the check pool (bundle_checks.py)."""
        if body_bytes is not None and body_bytes <= INLINE_BODY_BYTES:
            bundle, digest = self._bundle(body, who.limits)
        else:
            bundle, digest = await run_in_threadpool(self._bundle, body, who.limits)
        try:
            checked = await self.checks.check(who.name, bundle, digest, who.limits.check_seconds_per_minute)
        except BundleRejected as e:
            raise ApiError(Kind.BUNDLE_REJECTED, str(e)) from None
        except ChecksSpent as e:
            raise ApiError(Kind.LIMIT, str(e), status=429,
                           headers={"Retry-After": str(max(1, math.ceil(e.retry_after_s)))}) from None
        return await run_in_threadpool(self._admit, body, who, idempotency_key, job_id, checked)

    def _bundle(self, body: JobRequest, limits: Limits) -> Tuple[KernelBundle, str]:
        """The bundle within its tenant's sizes, and its digest."""
        bundle_json = body.bundle.model_dump()
        bundle_bytes = len(json.dumps(bundle_json))
        if bundle_bytes > limits.max_bundle_bytes:
            raise ApiError(Kind.LIMIT, f"kernel bundle of {bundle_bytes} bytes exceeds the "
                                       f"{limits.max_bundle_bytes}-byte limit (max_bundle_bytes)", status=413)
        if body.core_num > limits.max_core_num:
            raise ApiError(Kind.LIMIT, f"core_num {body.core_num} exceeds the limit of {limits.max_core_num} "
                                       "(max_core_num)", status=413)
        try:
            bundle = KernelBundle.from_json(bundle_json)
            return bundle, bundle.digest
        except BundleRejected as e:
            raise ApiError(Kind.BUNDLE_REJECTED, str(e)) from None

    def _admit(self, body: JobRequest, who: Tenant, idempotency_key: Optional[str], job_id: str,
               checked: Checked) -> dict:
        limits, bundle, names, constexprs = who.limits, checked.bundle, checked.names, checked.constexprs
        problem = count_problem(bundle.entry, names, len(body.args))
        if problem:
            raise ApiError(Kind.BAD_REQUEST, problem, status=400)
        _check_struct_args(body)
        for name, annotation, arg in zip(names, checked.annotations, body.args):
            problem = (constexpr_only_problem(name, arg.dtype, constexprs) if arg.kind == "scalar" else None) \
                or annotation_problem(bundle.entry, name, annotation, arg.kind, arg.dtype, getattr(arg, "value", None))
            if problem:
                raise ApiError(Kind.BAD_REQUEST, problem)
        in_flight = self._check_tensor_args(body, names, who)
        timeout = body.timeout or self.settings.job_timeout_s
        if timeout > self.settings.max_job_timeout_s:
            raise ApiError(Kind.BAD_REQUEST, f"timeout {timeout:g} s exceeds the limit of "
                                             f"{self.settings.max_job_timeout_s} s", status=400)
        try:  # a benchmark job: its policy, the budget tied to the timeout
            policy = None if body.benchmark is None else benchmark.job_policy(
                body.benchmark.model_dump(exclude_none=True), timeout)
        except KernelError as e:
            raise ApiError(Kind.BAD_REQUEST, str(e)) from None
        if not self._served(body.target, body.soc):
            raise self._unserved(body.target, body.soc)
        record = {"id": job_id, "status": JobStatus.QUEUED.value, "tenant": who.name, "target": body.target,
                  "soc": body.soc, "core_num": body.core_num, "kernel": bundle.entry, "bounds": body.bounds,
                  "hazards": body.hazards, "created_at": time.time()}
        args, inputs = [], {}
        for arg in body.args:  # an inline tensor's bytes go apart, raw: no base64 in and out of JSON again
            args.append(arg.model_dump(exclude_none=True, exclude={"data"}))
            if arg.kind == "tensor" and arg.raw is not None:
                args[-1]["input"] = str(len(inputs))
                inputs[args[-1]["input"]] = arg.raw
        spec = {"tenant": who.name, "caches": who.caches, "bundle": bundle.to_json(), "core_num": body.core_num,
                "target": body.target, "args": args, "options": body.options.model_dump(exclude_none=True),
                "timeout": timeout, "bounds": body.bounds, "hazards": body.hazards, "model": body.model,
                "max_log_bytes": limits.max_log_bytes, "max_trace_bytes": limits.max_trace_bytes}
        if policy is not None:
            spec["benchmark"] = policy
        idempotency = None
        if idempotency_key:
            idempotency = (idempotency_key, hashlib.sha256(body.model_dump_json().encode()).hexdigest())
        verdict, value = self.jobs.admit(record, spec, inputs, in_flight, limits, idempotency)
        if verdict == "earlier":
            return value
        if verdict != "admitted":
            raise _refusal(verdict, value, limits)
        return record

    def _served(self, target: str, soc: Optional[str]) -> bool:
        """Whether a live worker serves `target` (and `soc`). A yes holds for SERVED_FOR_S: a round
        trip fewer per launch; a job that comes to a pool whose last worker died just then waits."""
        if self._served_until.get((target, soc), 0.0) > time.monotonic():
            return True
        if self.pool.live_workers(target, soc) == 0:
            return False
        self._served_until[(target, soc)] = time.monotonic() + SERVED_FOR_S
        return True

    def _unserved(self, target: str, soc: Optional[str]) -> ApiError:
        """503 at once: a job nobody serves never waits in a queue nobody reads. Not worth a client's
        retries (`retryable: false`): a worker for it is an operator's doing, not seconds away."""
        if soc is None:
            return ApiError(Kind.UNAVAILABLE, f"no worker serves target '{target}' right now", retryable=False)
        socs = sorted({s for said in self.pool.live_capabilities(target).values() for s in said.get("socs", [])})
        return ApiError(Kind.UNAVAILABLE, f"no worker serves SOC '{soc}' on target '{target}' right now; served: "
                                          f"{', '.join(socs) if socs else 'none'}", served=socs, retryable=False)

    def _check_tensor_args(self, body: JobRequest, names, who: Tenant) -> int:
        """Total tensor bytes; every blob present and of the size its dtype and shape say (inline
        data was checked by the model)."""
        uploaded = [(n, a) for n, a in zip(names, body.args) if a.kind == "tensor" and a.blob is not None]
        sizes = self.blobs.sizes(who.name, [a.blob for _, a in uploaded])
        missing = sorted({arg.blob for (_, arg), size in zip(uploaded, sizes) if size is None})
        if missing:
            raise ApiError(Kind.MISSING_BLOBS, f"{len(missing)} tensor blob(s) are not on the server: upload "
                                               "them, then submit again", missing=missing)
        for (name, arg), size in zip(uploaded, sizes):
            if arg.nbytes != size:
                raise ApiError(Kind.BAD_REQUEST, f"tensor '{name}': {arg.dtype}{arg.shape} needs {arg.nbytes} "
                                                 f"bytes but its blob has {size}", status=400)
        for name, arg in zip(names, body.args):  # sent as nothing, but the worker holds it as a blob's bytes
            if arg.kind == "tensor" and arg.zeros and arg.nbytes > who.limits.max_blob_bytes:
                raise ApiError(Kind.LIMIT, f"tensor '{name}' of {arg.nbytes} bytes (zeros) exceeds the "
                                           f"{who.limits.max_blob_bytes}-byte limit (max_blob_bytes)", status=413)
        total = sum(a.nbytes for a in body.args if a.kind == "tensor")
        if total > who.limits.max_job_tensor_bytes:  # each of them the worker moves to the kernel and back
            raise ApiError(Kind.LIMIT, f"the job's tensors hold {total} bytes (zeros included), over the "
                                       f"{who.limits.max_job_tensor_bytes}-byte limit (max_job_tensor_bytes)",
                           status=413)
        return total


def _check_struct_args(body: JobRequest) -> None:
    """Each struct argument names a struct of the bundle and gives each field a value of its
    dtype (the worker would otherwise pack a wrapped or truncated value)."""
    struct_args = [(i, a) for i, a in enumerate(body.args) if a.kind == "struct"]
    if not struct_args and not body.bundle.structs:
        return
    try:
        defs = structs.definitions_from_json({n: d.model_dump() for n, d in body.bundle.structs.items()})
    except BundleRejected as e:
        raise ApiError(Kind.BUNDLE_REJECTED, str(e)) from None
    for i, arg in struct_args:
        if arg.dtype not in defs:
            raise ApiError(Kind.BAD_REQUEST, f"argument {i} is a struct {arg.dtype}, which the bundle "
                                             "does not define")
        try:
            structs.check_value(defs, arg.dtype, arg.value)
        except KernelError as e:
            raise ApiError(Kind.BAD_REQUEST, f"argument {i}: {e}") from None


def _refusal(verdict: str, value: Optional[str], limits: Limits) -> ApiError:
    if verdict == "mismatch":
        return ApiError(Kind.BAD_REQUEST, "this Idempotency-Key was used for a different submission")
    if verdict == "stored":
        return ApiError(Kind.LIMIT, f"your stored blobs, your ended jobs' records and the tensors of your queued and "
                                    f"running jobs (each may come back as an output) hold {value} bytes; with this "
                                    f"job's they would exceed {limits.max_stored_bytes} (max_stored_bytes)")
    if verdict == "active":
        return ApiError(Kind.LIMIT, f"you have {value} jobs queued or running, the limit is "
                                    f"{limits.max_active_jobs} (max_active_jobs)")
    return ApiError(Kind.LIMIT, f"tensor bytes of your queued and running jobs would exceed "
                                f"{limits.max_bytes_in_flight} (max_bytes_in_flight)")

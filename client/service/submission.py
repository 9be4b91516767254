"""A launch as the service takes it: the job's JSON body and the bytes of the tensor blobs it
refers to. Pure, as core.py: Client and AsyncClient send what it builds."""
from __future__ import annotations

import base64
import hashlib
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..args import HostArgs, launch_args
from ..compiler.errors import KernelError, Kind
from ..compiler.targets.contract import check_bounds, check_hazards

INLINE_BYTES = 64 << 10  # tensors up to this size travel inside the submission (the service's store.jobs.INLINE_BYTES)
INLINE_TOTAL_BYTES = 1 << 20  # ... while the submission's inline tensors stay under this (a tenant's
# max_request_bytes, 4 MiB by default, bounds the JSON the API parses); the others are uploaded
DEFAULT_JOB_TIMEOUT_S = 600  # what a result waits for a job that names no timeout
WAIT_MARGIN_S = 60  # beyond the job's own timeout, for queueing


class Submission(NamedTuple):
    """The job's body, the blobs it refers to by digest, and the caller's arguments (whose tensors
    get the outputs)."""
    body: Dict[str, Any]
    blobs: Dict[str, bytes]
    host: HostArgs

    @property
    def max_wait(self) -> float:
        """How long the launch's result waits for the job by default: its timeout plus queueing."""
        return (self.body.get("timeout") or DEFAULT_JOB_TIMEOUT_S) + WAIT_MARGIN_S


def submission(kernel: Any, core_num: int, args: Sequence[Any], target: str = "cpu", timeout: Optional[float] = None,
               bounds: str = "fault", soc: Optional[str] = None, hazards: str = "warn", model: bool = True
               ) -> Submission:
    """`kernel[core_num](*args)` on `target` as a job submission."""
    check_bounds(bounds)
    check_hazards(hazards)
    bundle, host = launch_args(kernel, args)
    arguments, blobs = job_arguments(host)
    body = {"bundle": bundle.to_json(), "core_num": core_num, "target": target, "args": arguments}
    if timeout is not None:
        body["timeout"] = timeout
    if bounds != "fault":  # the default is left out: older services know no "bounds"
        body["bounds"] = bounds
    if hazards != "warn":  # likewise: older services know no "hazards"
        body["hazards"] = hazards
    if not model:  # likewise: older services know no "model"
        body["model"] = False
    if soc is not None:
        body["soc"] = soc
    return Submission(body, blobs, host)


def with_benchmark(job: Submission, policy: Optional[Dict[str, Any]], compare: Optional[str] = None) -> Submission:
    """The submission as a benchmark job with `policy` (None: as it is)."""
    if policy is None:
        return job
    if compare is not None:
        raise KernelError("a benchmark does not compare targets (compare=): benchmark each target on its own",
                          kind=Kind.BAD_REQUEST)
    job.body["benchmark"] = policy
    return job


def job_arguments(host: HostArgs) -> Tuple[List[Dict[str, Any]], Dict[str, bytes]]:
    """The job's argument JSON (small tensors inline, all-zero ones as `zeros`), and the bytes of
    each tensor blob by digest."""
    args, blobs, inline = [], {}, 0
    for spec, (name, value) in zip(host.specs, host.values.items()):
        if spec.kind == "tensor":
            arg = {"kind": "tensor", "dtype": spec.dtype, "shape": list(value.shape)}
            data = value.tobytes()
            if not np.frombuffer(data, np.uint8).any():  # bytes, not values: -0.0 is not zeros
                arg["zeros"] = True
            elif value.nbytes <= INLINE_BYTES and inline + value.nbytes <= INLINE_TOTAL_BYTES:
                arg["data"] = base64.b64encode(data).decode()
                inline += value.nbytes
            else:
                arg["blob"] = hashlib.sha256(data).hexdigest()
                blobs[arg["blob"]] = data
            args.append(arg)
        else:  # a scalar, or a struct's field values
            args.append({"kind": spec.kind, "dtype": spec.dtype, "value": spec.value})
    return args, blobs


def compared_on(body: Dict[str, Any], target: str) -> Dict[str, Any]:
    """The job body of a launch's comparison run: the same launch on `target`, on any SOC."""
    return {**{k: v for k, v in body.items() if k != "soc"}, "target": target}

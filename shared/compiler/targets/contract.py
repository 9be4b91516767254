"""What a target is: a Toolchain (Ascend C -> artifact) and a Runner (artifact + buffers -> written
buffers, timings, log) behind one Target, as Triton's backends pair a compiler with a driver.

Built without limits (run_local, the self-test) a target's stages run in this process; built with
a worker's limits they build and run in jails (ascrun.compiler.sandbox) and also have a `deadline`
(the job's), `warm()` (before the first job) and, for the runner, `for_tenant(tenant)`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Protocol, Sequence

from .. import frontend, socs
from ..errors import BuildError, KernelError, KernelRuntimeError

# pyasc's KernelType names (asc.runtime.config): which cores each block of a launch runs
PYASC_KERNEL_TYPES = ("AIV_ONLY", "AIC_ONLY", "MIX_AIV_HARD_SYNC", "MIX_AIC_HARD_SYNC", "MIX_AIV_1_0", "MIX_AIC_1_0",
                      "MIX_AIC_1_1", "MIX_AIC_1_2")
MAX_CORE_NUM = 65535
BOUNDS = ("fault", "warn")  # launch options; the index is the cpu runtime's ABI code
HAZARDS = ("off", "warn", "fault")
MAX_DIAGNOSTIC_LINES = 40


@dataclass(frozen=True)
class RunResult:
    written: List[str]  # names of the tensor parameters the kernel stored to
    seconds: float
    log: str = ""  # what printf/DumpTensor printed, block by block
    warnings: List[str] = field(default_factory=list)
    # a device's phases, e.g. {"h2d": s, "kernel": s, "d2h": s}; `seconds` is the kernel's part
    timings: Dict[str, float] = field(default_factory=dict)
    # the cpu target's modeled timeline (targets/cpu/runtime/ascrun/pipes/trace.h): {"cycles", "clock_ghz", "cores":
    # [{"core", "cycles", "instructions", "busy", "critical_path"}], "unlisted_cores"}; None elsewhere
    model: Optional[Dict[str, Any]] = None
    trace: Optional[str] = None  # the same as a Chrome/Perfetto trace (JSON text)


def check_bounds(bounds: str) -> int:
    """The ABI code of a bounds policy; KernelError kind bad_request for anything else."""
    if bounds not in BOUNDS:
        raise KernelError(f"bounds must be 'fault' or 'warn', got {bounds!r}", kind="bad_request")
    return BOUNDS.index(bounds)


def check_hazards(hazards: str) -> int:
    """The ABI code of a hazard policy; KernelError kind bad_request for anything else."""
    if hazards not in HAZARDS:
        raise KernelError(f"hazards must be 'off', 'warn' or 'fault', got {hazards!r}", kind="bad_request")
    return HAZARDS.index(hazards)


def check_core_num(core_num: Any) -> None:
    if not isinstance(core_num, int) or not 1 <= core_num <= MAX_CORE_NUM:
        raise KernelRuntimeError(f"core_num must be an integer from 1 to {MAX_CORE_NUM}, got {core_num!r}")


def compiler_diagnostics(stderr: str, folder: str) -> str:
    """A compiler's messages as a user reads them: the lines with "error" first (all lines if none),
    at most MAX_DIAGNOSTIC_LINES, without the build's temporary `folder` in paths."""
    lines = [ln.replace(folder + "/", "") for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln] or lines
    shown = errors[:MAX_DIAGNOSTIC_LINES]
    more = len(errors) - len(shown)
    return "\n".join(shown) + (f"\n... {more} more" if more > 0 else "")


class Toolchain:
    """Ascend C source -> an artifact its target's Runner loads. `id` names the artifact cache's
    namespace: target, compiler version, flags (anything that changes the binary). `build`'s
    `npu_arch`: the `__NPU_ARCH__` of the SOC the source was generated for (socs.py), which the
    artifact key carries besides this id."""
    id: str

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY",
              npu_arch: int = socs.DEFAULT_NPU_ARCH) -> bytes:
        raise NotImplementedError

    def warm(self) -> None:
        """What the toolchain prepares once, before a worker's first job."""

    @staticmethod
    def check_kernel(kernel_name: str, kernel_type: str) -> None:
        """What the build pastes into code or flags is a C identifier and one of pyasc's kernel types."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel_name):
            raise BuildError(f"kernel name {kernel_name!r} is not a C identifier")
        if kernel_type not in PYASC_KERNEL_TYPES:
            raise BuildError(f"kernel type {kernel_type!r} is not one of pyasc's: {', '.join(PYASC_KERNEL_TYPES)}")


class Runner(Protocol):
    # whether `values` may hold BrokerTensors (sandbox/tensors.py: sent from their sources, written
    # back into sinks) rather than only arrays: a broker gives arrays to a runner that does not
    streams_tensors: ClassVar[bool] = False

    def run(self, artifact: bytes, core_num: int, params: Sequence[Dict[str, str]], kernel_args: Sequence[str],
            values: Sequence[Any], bounds: str = "fault", hazards: str = "warn", model: bool = True) -> RunResult:
        """Launch with `values` for the runtime `params` (tensors as C-contiguous ndarrays, written
        in place; structs as their packed bytes). A fault raises KernelError carrying the log and
        warnings up to it. `bounds`, `hazards`: launch policies (BOUNDS, HAZARDS); `model`: whether
        the result carries the modeled timeline (model and trace) where the target has one."""

    def close(self) -> None: ...


class Target:
    """A target's stages: `frontend` (bundle, args, options, soc) -> FrontendResult, `toolchain`,
    `runner` (None on a worker that only builds). Plug-ins are listed in targets.REGISTRY and built
    as `Target(limits, runs, socs)`: `limits` None runs the stages in this process."""
    name: ClassVar[str]
    kernel_types: ClassVar[tuple] = ()
    frontend = staticmethod(frontend.run)
    toolchain: Toolchain
    runner: Optional[Runner]

    def __init__(self, limits: Dict[str, int] | None = None, runs: bool = True, socs: Sequence[str] = ()):
        raise NotImplementedError

    def capabilities(self) -> Dict[str, Any]:
        """What a worker serving this target says it can do (heartbeat, /v1/targets)."""
        return {"kernel_types": list(self.kernel_types), "pyasc": frontend.pyasc_version()}

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()

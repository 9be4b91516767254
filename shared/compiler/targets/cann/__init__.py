"""The CANN targets: `sim` (camodel) and `npu`, built with bisheng (toolchain.py) and run by
pyasc's runtime in a device process (device.py, driven by runner.py); in a worker, in jails
(jailed.py). Only where CANN is installed (ASCEND_HOME_PATH, bisheng found the way pyasc finds it).
"""
from __future__ import annotations

import shutil
from typing import Dict, Sequence

from ...errors import KernelError
from ...settings import HostSettings
from ..contract import Target
from .jailed import JailedCannToolchain
from .runner import CannRunner
from .toolchain import KERNEL_TYPES, CannToolchain, cann_release

def missing_cann() -> str | None:
    """Why this host cannot build for CANN, or None."""
    host = HostSettings.from_env()
    if not host.ascend_home:
        return "ASCEND_HOME_PATH is not set"
    if not (host.pyasc_compiler or shutil.which("bisheng")):
        return "bisheng is not on PATH (nor PYASC_COMPILER set)"
    return None


class CannTarget(Target):
    backend: str
    kernel_types = KERNEL_TYPES

    def __init__(self, limits: Dict[str, int] | None = None, runs: bool = True, socs: Sequence[str] = ()):
        reason = missing_cann()
        if reason is not None:
            raise KernelError(f"target '{self.name}' needs CANN and bisheng, which this host lacks ({reason}): "
                              "use target 'cpu'", kind="unavailable")
        if runs:
            self.runner: CannRunner | None = CannRunner(self.backend, self._soc(), limits=limits)
            self.soc = self.runner.ready["soc"]
        else:  # a build-only worker's: no device to ask, so the operator names the SOC it builds for
            self.runner = None
            self.soc = self._build_soc(socs)
        try:
            self.compiler = CannToolchain(self.soc)
        except BaseException:
            self.close()
            raise
        self.toolchain = self.compiler if limits is None else JailedCannToolchain(self.compiler, limits)

    def _soc(self) -> str | None:
        return None

    def _build_soc(self, socs: Sequence[str]) -> str:
        if len(socs) == 1:
            return socs[0]
        if not socs and self._soc():
            return self._soc()
        raise KernelError(f"a build-only '{self.name}' worker builds for one SOC: name it with --soc "
                          f"({len(socs)} given)", kind="unavailable")

    def capabilities(self) -> dict:
        # the keys the pool reads (worker heartbeat, /v1/targets): socs, cores
        return dict(super().capabilities(), socs=[self.soc],
                    cores=self.runner.ready["core_num"] if self.runner is not None else None,
                    cann=cann_release(self.compiler.cann_version), bisheng=self.compiler.bisheng_version,
                    backend=self.backend, bounds_checked=False, hazards_checked=False)


class SimTarget(CannTarget):
    name = "sim"
    backend = "Model"

    def _soc(self) -> str:
        return HostSettings.from_env().sim_soc


class NpuTarget(CannTarget):
    """The SoC is the device's own (pyasc's set_platform asks the runtime)."""
    name = "npu"
    backend = "NPU"


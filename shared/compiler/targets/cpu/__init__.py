"""The cpu target: pyasc's Ascend C compiled by the system C++ compiler against ascrun's own
Ascend C runtime (toolchain.py), loaded and launched with ctypes (runner.py); in a worker, both in
jails (jailed.py). The embedded default, and the reference the others are compared with."""
from __future__ import annotations

from typing import Dict, Sequence

from ... import frontend
from ...socs import modelled
from ..contract import PYASC_KERNEL_TYPES, Target
from .jailed import JailedCpuToolchain, JailedRunners
from .runner import CpuRunner
from .toolchain import CpuToolchain


class CpuTarget(Target):
    name = "cpu"
    kernel_types = PYASC_KERNEL_TYPES

    def __init__(self, limits: Dict[str, int] | None = None, runs: bool = True, socs: Sequence[str] = ()):
        # `runs`: a build-only worker needs no device, and the cpu target has none to ask. `socs`:
        # the operator's (--soc), which the worker serves instead of every SOC the runtime models
        self.compiler = CpuToolchain()
        self.socs = list(socs)
        if limits is None:
            self.toolchain, self.runner = self.compiler, CpuRunner()
        else:  # a fresh jail per build; a warm run jail per tenant
            self.toolchain, self.runner = JailedCpuToolchain(self.compiler, limits), JailedRunners(limits)

    def capabilities(self) -> dict:
        # the pipe model: the hazard check and the modeled timeline (runtime/ascrun/pipes/)
        # socs: by default every SOC of the installed pyasc whose NPU arch the runtime models (socs.py)
        return dict(super().capabilities(), toolchain=self.compiler.compiler_version, hazards_checked=True,
                    cost_model="910B-class", socs=self.socs or modelled(frontend.known_socs()))

"""The cpu target: pyasc's Ascend C compiled by the system C++ compiler against ascrun's own
Ascend C runtime, run in this process. The embedded default, and the reference the others are
compared with."""
from __future__ import annotations

from .pipeline import Target
from .runner import CpuRunner
from .toolchain import CpuToolchain


class CpuTarget(Target):
    name = "cpu"
    kernel_types = ("AIV_ONLY",)  # the vector side; the cube side is to come
    jailed = True

    def __init__(self):
        self.toolchain = CpuToolchain()
        self.runner = CpuRunner()

    def capabilities(self) -> dict:
        return dict(super().capabilities(), toolchain=self.toolchain.compiler_version)

"""SOCs and their NPU architectures: the `__NPU_ARCH__` value bisheng defines in a kernel's device
code for a SOC, which the cpu target's toolchain defines too, so that its runtime
(runtime/ascrun/core/soc.h) models that architecture's core.

asc-devkit docs/zh/guide/编程指南/语言扩展层/SIMD-BuiltIn关键字.md (__NPU_ARCH__): Atlas A2 and
Atlas A3 training/inference products 2201, Ascend 950PR/950DT 3510; bisheng's --npu-arch names them
dav-2201 (docs/zh/api/Utils-API/RTC/aclrtcCompileProg.md) and dav-3510 (docs/zh/guide/入门教程/
快速入门/基于SIMT编程/HelloWorld.md). pyasc names the same split by compilation arch
(asc/runtime/config.py platform_to_arch: Ascend910B*, Ascend910_93* -> c220; Ascend950PR_95* -> c310).
"""
from __future__ import annotations

from typing import Dict, Iterable, List

ARCH_2201, ARCH_3510 = 2201, 3510
# SOC name prefix -> __NPU_ARCH__, as pyasc's platform_to_arch splits its Platform names
_ARCH_OF_PREFIX = {"Ascend910B": ARCH_2201, "Ascend910_93": ARCH_2201, "Ascend950PR_95": ARCH_3510}
DEFAULT_NPU_ARCH = ARCH_2201  # the arch of frontend.DEFAULT_SOC, Ascend910B1
ARCH_NAMES: Dict[int, str] = {ARCH_2201: "dav-2201 (pyasc c220)", ARCH_3510: "dav-3510 (pyasc c310)"}


def npu_arch(soc: str) -> int:
    """`__NPU_ARCH__` of `soc`; ValueError for a SOC of no modelled architecture."""
    for prefix, arch in _ARCH_OF_PREFIX.items():
        if soc.startswith(prefix):
            return arch
    raise ValueError(f"SOC {soc!r} has no NPU architecture ascrun models (2201: Ascend910B*, Ascend910_93*; "
                     "3510: Ascend950PR_95*)")


def modelled(socs: Iterable[str]) -> List[str]:
    """The SOCs of `socs` whose architecture the cpu runtime models, in order."""
    return [s for s in socs if any(s.startswith(p) for p in _ARCH_OF_PREFIX)]

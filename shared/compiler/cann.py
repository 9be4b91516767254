"""The CANN targets: `sim` (camodel) and `npu`, built with bisheng and run by pyasc's launcher.

Only where CANN is installed (ASCEND_HOME_PATH, bisheng on the way pyasc finds it).
"""
from __future__ import annotations

import os
import shutil

from .errors import KernelError
from .pipeline import Target


def missing_cann() -> str | None:
    """Why this host cannot build for CANN, or None."""
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home:
        return "ASCEND_HOME_PATH is not set"
    if not (os.environ.get("PYASC_COMPILER") or shutil.which("bisheng")):
        return "bisheng is not on PATH (nor PYASC_COMPILER set)"
    return None


class CannTarget(Target):
    def __init__(self):
        reason = missing_cann()
        if reason is not None:
            raise KernelError(f"target '{self.name}' needs CANN and bisheng, which this host lacks ({reason}): "
                              "use target 'cpu'", kind="unavailable")
        raise KernelError(f"target '{self.name}': ascrun's CANN toolchain and runner are not written yet",
                          kind="unavailable")


class SimTarget(CannTarget):
    name = "sim"


class NpuTarget(CannTarget):
    name = "npu"

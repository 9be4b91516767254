"""The CANN targets in a worker's jails: what a CANN stage's jail sees (the installation, the NPU's
device nodes, an allow-list of variables), and each build in a fresh jail (JailedCannToolchain, the
broker's side; `serve_build` inside). The device process's jail is the runner's (runner.py).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Mapping, Tuple

from ... import socs
from ...errors import BuildError
from ...sandbox import confine
from ...sandbox.framing import MAX_HEADER_BYTES, read_message, write_message
from ...sandbox.inside import BROKER_REQUEST_CAP, STDIN, STDOUT, announce_ready
from ...sandbox.jail import (MAX_ARTIFACT_BYTES, JailCrashed, JailedToolchain, JailTimeout, PythonJail, error_reply,
                             kernel_error, out_of_protocol)
from .toolchain import ARTIFACT_MAGIC, CannToolchain

# What a CANN stage's jail sees besides Python and ascrun: the installation read-only, the NPU's
# device nodes (npu only), and these variables of the worker's environment (never its secrets).
JAIL_VARIABLES = ("PYASC_COMPILER", "PYASC_LINKER", "LD_LIBRARY_PATH", "LD_PRELOAD", "ASCRUN_SIM_SOC", "ASCENDC_DUMP")
NPU_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
DRIVER_PATHS = ("/usr/local/Ascend/driver", "/etc/ascend_install.info")  # the NPU driver's libraries and version


def jail_view(environ: Mapping[str, str]) -> Tuple[List[str], Dict[str, str]]:
    """(read-only paths, environment) of a CANN stage's jail: the CANN installation, the compiler
    and linker, the library folders on LD_LIBRARY_PATH and the driver, where they exist; the
    ASCEND_* variables and JAIL_VARIABLES; PATH keeps only the folders inside those paths."""
    environment = {k: v for k, v in environ.items() if k.startswith("ASCEND_") or k in JAIL_VARIABLES}
    paths = [environ["ASCEND_HOME_PATH"], *DRIVER_PATHS]
    paths += [os.path.dirname(environ[k]) for k in ("PYASC_COMPILER", "PYASC_LINKER") if environ.get(k)]
    paths += [p for p in environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    ro = sorted({q for p in paths if os.path.exists(p) for q in (os.path.abspath(p), os.path.realpath(p))})
    inside = [p for p in environ.get("PATH", "").split(":")
              if p and any(os.path.realpath(p).startswith(r.rstrip("/") + "/") or os.path.realpath(p) == r for r in ro)]
    environment["PATH"] = ":".join([*inside, "/usr/bin", "/bin"])
    return ro, environment


def npu_devices() -> List[str]:
    """The device nodes pyasc's runtime opens on an NPU host."""
    return sorted(str(p) for p in Path("/dev").glob("davinci[0-9]*")) + [d for d in NPU_DEVICES if os.path.exists(d)]



class JailedCannToolchain(JailedToolchain):
    """CannToolchain.build in a fresh jail (`serve_build`): bisheng reads the kernel's C++ there,
    never in the broker. Nothing to warm: pyasc's Compiler starts anew in each build's jail."""

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY",
              npu_arch: int = socs.DEFAULT_NPU_ARCH) -> bytes:
        ro, environment = jail_view(os.environ)
        stage = PythonJail(f"cann-build:{self.toolchain.soc}", self.limits, ro, (), environment)
        try:
            reply, blobs = stage.request({"source": source, "kernel_name": kernel_name, "kernel_type": kernel_type,
                                          "npu_arch": npu_arch},
                                         [], self.deadline.left(),
                                         MAX_HEADER_BYTES + MAX_ARTIFACT_BYTES)
        except JailTimeout:
            raise self.deadline.expired() from None
        except JailCrashed as e:
            raise BuildError(f"the build of '{kernel_name}' crashed its jail: {e}") from None
        finally:
            stage.close()
        if "error" in reply:
            raise kernel_error(reply, "build")
        if len(blobs) != 1 or not bytes(blobs[0][:len(ARTIFACT_MAGIC)]) == ARTIFACT_MAGIC:
            raise out_of_protocol("build")
        return bytes(blobs[0])



def serve_build(limits: Dict[str, int], soc: str) -> None:
    """One build: pyasc's Compiler runs bisheng and ld.lld, so no seccomp filter on new programs;
    the jail (no network, read-only view, no secrets) and the rlimits hold."""
    confine.apply_limits(limits)
    announce_ready()
    header, _ = read_message(STDIN, cap=BROKER_REQUEST_CAP)
    try:
        reply, blobs = {"ok": True}, [CannToolchain(soc).build(str(header["source"]), str(header["kernel_name"]),
                                                                str(header["kernel_type"]), int(header["npu_arch"]))]
    except BaseException as e:  # noqa: BLE001 - everything becomes the answer
        reply, blobs = error_reply(e), []
    write_message(STDOUT, reply, blobs)

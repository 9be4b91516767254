"""The CANN targets' toolchain: pyasc's own Compiler (bisheng, then ld.lld) on the Ascend C the
frontend emitted, for the kernel type pyasc would choose. The artifact is pyasc's binary behind a
one-line JSON header (kernel name, kernel type, core type, whether it prints): the runner needs
them, the binary does not say them.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from functools import cached_property
from pathlib import Path
from typing import Any, Dict, Sequence, Tuple

from ... import frontend, socs
from ...errors import BuildError, KernelError, KernelRuntimeError
from ...settings import HostSettings
from ..contract import Toolchain, compiler_diagnostics

KERNEL_TYPES = ("AIV_ONLY", "MIX_AIC_1_2", "AIC_ONLY")  # what pyasc's Compiler.run_passes chooses from
ARTIFACT_MAGIC = b"ascrun-cann 1\n"

_PRINTS = re.compile(r"^\s*AscendC::(printf|DumpTensor)\(", re.M)  # pyasc's DetectEnableDebug


def toolchain_id(cann_version: str, bisheng_version: str, arch: str, flags: Sequence[str]) -> str:
    """The artifact cache's namespace: a CANN or bisheng upgrade, another SoC architecture or
    other flags never reuse a binary."""
    parts = ["cann", cann_version, bisheng_version, arch, "\0".join(flags)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def cann_version(home: str | os.PathLike) -> str:
    """The installation's version files as they are (compiler/version.info: `Version=...`;
    version.cfg: the runtime's, which pyasc keys its runtime wrapper on)."""
    texts = []
    for name in ("compiler/version.info", "version.cfg"):
        path = Path(home) / name
        if path.is_file():
            texts.append(f"{name}: {path.read_text(errors='replace').strip()}")
    if not texts:
        raise KernelError(f"no CANN version file under ASCEND_HOME_PATH={home} (compiler/version.info, version.cfg)",
                          kind="unavailable")
    return "\n".join(texts)


def cann_release(version: str) -> str:
    """The `Version=` of compiler/version.info within cann_version's text, else its first line."""
    found = re.search(r"^(?:compiler/version\.info: )?Version=(\S+)", version, re.M)
    return found.group(1) if found else version.splitlines()[0]


def prints(source: str) -> bool:
    """Whether the kernel prints (printf, DumpTensor): pyasc then adds the dump buffer."""
    return bool(_PRINTS.search(source))


def bisheng_diagnostics(message: str) -> str:
    """pyasc's compile error, its lines with "error" first, without its temporary folder (gone
    by now) in every path."""
    return compiler_diagnostics(re.sub(r"\S*/pyasc_compiler_[^/\s]+/", "", message), chr(0))


def pack_artifact(header: Dict[str, Any], binary: bytes) -> bytes:
    return ARTIFACT_MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + binary


def unpack_artifact(artifact: bytes) -> Tuple[Dict[str, Any], bytes]:
    if not artifact.startswith(ARTIFACT_MAGIC):
        raise KernelRuntimeError("the artifact was not built by ascrun's CANN toolchain: rebuild the kernel")
    line_end = artifact.index(b"\n", len(ARTIFACT_MAGIC))
    return json.loads(artifact[len(ARTIFACT_MAGIC):line_end]), artifact[line_end + 1:]



class CannToolchain(Toolchain):
    """pyasc's Compiler for one SoC: Ascend C source -> the packed artifact."""

    def __init__(self, soc: str):
        from asc.lib import runtime as rt
        from asc.runtime.compiler import CompilationTarget, Compiler
        from asc.runtime.config import KernelType, Platform
        self.soc = soc
        rt.set_soc_version(Platform(soc))  # what Compiler() reads; nothing of the runtime is loaded here
        try:
            probe = Compiler()
        except RuntimeError as e:  # bisheng or ld.lld not found
            raise KernelError(f"pyasc's compiler cannot start: {e}", kind="unavailable") from None
        # what pyasc's Compiler builds for: pyasc 1.1.1 says it as `platform`, the nightly as `arch`
        self.bisheng, self.platform = probe.compiler, getattr(probe, "arch", None) or probe.platform
        targets = [CompilationTarget.get(KernelType[t], self.platform) for t in KERNEL_TYPES]
        self.arch = ",".join(sorted({a for t in targets for a in (t.common_arch, t.vec_arch, t.cube_arch) if a}))
        self.flags = [*targets[0].common_options, f"-O{probe.options.opt_level}",
                      f"auto_sync={probe.options.auto_sync}", f"ASCENDC_DUMP={HostSettings.from_env().ascendc_dump}",
                      f"pyasc={frontend.pyasc_version()}", f"platform={self.platform.value}"]
        self.cann_version = cann_version(HostSettings.from_env().ascend_home)

    @cached_property
    def bisheng_version(self) -> str:
        out = subprocess.run([self.bisheng, "--version"], capture_output=True, text=True, timeout=60)
        return (out.stdout.strip().splitlines() or [self.bisheng])[0]

    @cached_property
    def id(self) -> str:
        return toolchain_id(self.cann_version, self.bisheng_version, self.arch, self.flags)

    def check_arch(self, npu_arch: int) -> None:
        """bisheng builds for this toolchain's SOC only: source generated for another arch is refused."""
        if npu_arch != socs.npu_arch(self.soc):
            raise BuildError(f"the source was generated for __NPU_ARCH__ {npu_arch}, this toolchain builds for "
                             f"{self.soc} ({socs.npu_arch(self.soc)})")

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY",
              npu_arch: int = socs.DEFAULT_NPU_ARCH) -> bytes:
        from asc.lib import runtime as rt
        from asc.runtime.compiler import CompileOptions, Compiler
        from asc.runtime.config import KernelType, Platform
        self.check_kernel(kernel_name, kernel_type)
        self.check_arch(npu_arch)
        rt.set_soc_version(Platform(self.soc))
        compiler = Compiler(CompileOptions(kernel_type=KernelType[kernel_type]))
        # what Compiler.run does after the translation (the frontend ran that part)
        source = frontend.without_sites(source)  # the calls are the cpu runtime's
        compiler.enable_debug = prints(source) and HostSettings.from_env().ascendc_dump
        if compiler.enable_debug:
            source = compiler._gen_init_dump_code(source, kernel_name)
        try:
            kernel = compiler.run_compilation(source)
        except RuntimeError as e:
            raise BuildError(f"bisheng could not build '{kernel_name}' ({kernel_type}):\n"
                             f"{bisheng_diagnostics(str(e))}") from None
        header = {"kernel_name": kernel_name, "kernel_type": kernel_type, "core_type": kernel.core_type.value,
                  "debug": kernel.enable_debug, "toolchain": self.id}
        return pack_artifact(header, kernel.binary)


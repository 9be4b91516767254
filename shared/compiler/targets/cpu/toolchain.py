"""The cpu target's toolchain: pyasc's Ascend C, unchanged, compiled with the system C++ compiler
against ascrun's own implementation of the Ascend C API (runtime/kernel_operator.h) into a
shared library the CpuRunner loads.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from functools import cached_property
from pathlib import Path

from ... import socs
from ...errors import BuildError
from ...frontend import site_tokens
from ...settings import HostSettings
from ...tempdir import private_temp_dir, runtime_temp_dir
from ..contract import Toolchain, compiler_diagnostics

RUNTIME_DIR = Path(__file__).with_name("runtime")
BUILD_TIMEOUT_S = 300
# -fno-strict-aliasing: the runtime views the Unified Buffer's bytes as tensors of any dtype.
CPU_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-fno-strict-aliasing", "-pthread")
# gold links a kernel in about a third of GNU ld's time (a sixth of a build miss, bench/build_time.py);
# binutils has shipped it beside ld, but newer releases may not.
LINK_FLAGS = ("-fuse-ld=gold",) if shutil.which("ld.gold") else ()
# A diagnostic at a line of the generated C++, and the runtime's spellings of half and bfloat16_t.
_KERNEL_CPP_AT = re.compile(r"^kernel\.cpp:([0-9]{1,9}):([0-9]{1,9}): (.*)$")
_RUNTIME_TYPES = tuple((re.compile(rf"(?:::)?ascrun::detail::Float16<(?:::)?ascrun::detail::{codec}>(?: (?=>))?"), name)
                       for codec, name in (("Binary16Codec", "half"), ("BFloat16Codec", "bfloat16_t")))


def arch_flags(npu_arch: int) -> tuple:
    """What the build defines for a kernel of `npu_arch`: bisheng's `__NPU_ARCH__` (socs.py), from
    which runtime/ascrun/core/soc.h takes the modelled core's constants."""
    if npu_arch not in socs.ARCH_NAMES:
        raise BuildError(f"the cpu runtime models no NPU architecture {npu_arch!r}: it models "
                         f"{', '.join(f'{a} {n}' for a, n in socs.ARCH_NAMES.items())}")
    return (f"-D__NPU_ARCH__={npu_arch}",)


def runtime_digest(runtime: Path = RUNTIME_DIR) -> str:
    """sha256 over every runtime header and source, so a runtime change never reuses an old binary."""
    h = hashlib.sha256()
    for path in sorted([*runtime.rglob("*.h"), *runtime.rglob("*.cpp")]):
        h.update(str(path.relative_to(runtime)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


class CpuToolchain(Toolchain):
    """Builds a shared library exporting the kernel plus the launch ABI of runtime/ascrun/launch/launch.h."""
    target = "cpu"

    def __init__(self, cxx: str | None = None, runtime: Path = RUNTIME_DIR):
        """`runtime`: the runtime folder to build against (another one only in bench/build_time.py)."""
        self.runtime = runtime
        name = cxx or HostSettings.from_env().cxx
        path = shutil.which(name)
        if path is None:
            raise BuildError(f"C++ compiler '{name}' not found: install g++ or clang++, or set CXX")
        self.cxx = path

    @cached_property
    def compiler_version(self) -> str:
        out = subprocess.run([self.cxx, "--version"], capture_output=True, text=True, timeout=60)
        return out.stdout.splitlines()[0] if out.stdout else self.cxx

    @cached_property
    def id(self) -> str:
        """Target + compiler version + runtime headers + flags: the artifact cache's namespace."""
        parts = [self.target, self.compiler_version, runtime_digest(self.runtime), " ".join(CPU_FLAGS + LINK_FLAGS)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def _prebuilt(self, npu_arch: int = socs.DEFAULT_NPU_ARCH) -> tuple[Path, list[Path]]:
        """(folder, objects), built once per toolchain id and NPU arch (and again if a temp cleaner
        removed them). The folder holds kernel_operator.h.gch: parsing the runtime headers is about 40% of
        a kernel's compile; g++ looks for the .gch in each include folder before the header
        itself, and ignores it unless it matches the flags exactly. The objects are the runtime's
        sources (launch/launch.cpp: the launch machinery, otherwise most of every kernel's compile).
        Each file appears atomically, so concurrent builders never see half of one."""
        # includes name paths from the runtime folder
        flags = [*(f for f in CPU_FLAGS if f != "-shared"), *arch_flags(npu_arch), "-I", str(self.runtime)]
        folder = runtime_temp_dir() / f"runtime_{self.id[:24]}_{npu_arch}"
        folder.mkdir(mode=0o755, exist_ok=True)
        outputs = [(folder / "kernel_operator.h.gch", ["-x", "c++-header", str(self.runtime / "kernel_operator.h")])]
        outputs += [(folder / f"{src.stem}.o", ["-c", str(src)]) for src in sorted(self.runtime.rglob("*.cpp"))]
        for out, args in outputs:
            if out.exists():
                continue
            partial = folder / f".{os.getpid()}.{out.name}"
            proc = subprocess.run([self.cxx, *flags, *args, "-o", str(partial)], capture_output=True, text=True,
                                  timeout=BUILD_TIMEOUT_S)
            if proc.returncode != 0:
                raise BuildError(f"the cpu runtime does not compile:\n{compiler_diagnostics(proc.stderr, '')}")
            os.replace(partial, out)
        return folder, [out for out, _ in outputs[1:]]

    def command(self, folder: str, npu_arch: int = socs.DEFAULT_NPU_ARCH) -> list:
        """The compile of folder/kernel.cpp into folder/kernel.so for `npu_arch`."""
        include, objects = self._prebuilt(npu_arch)
        # the real path: /usr/bin/c++ is a link through /etc/alternatives, outside a jail's view
        return [os.path.realpath(self.cxx), *CPU_FLAGS, *arch_flags(npu_arch), *LINK_FLAGS,
                "-I", str(include), "-I", str(self.runtime),
                "-o", f"{folder}/kernel.so",
                f"{folder}/kernel.cpp", *map(str, objects)]

    def read_only_paths(self, npu_arch: int = socs.DEFAULT_NPU_ARCH) -> list:
        """What the compile reads besides /usr: the runtime's sources and prebuilt folder."""
        return [str(self.runtime), str(self._prebuilt(npu_arch)[0])]

    def warm(self) -> None:
        """The prebuilt runtime of each modelled arch, built once before the first job."""
        for npu_arch in socs.ARCH_NAMES:
            self._prebuilt(npu_arch)

    @classmethod
    def translation_unit(cls, source: str, kernel_name: str, kernel_type: str) -> str:
        cls.check_kernel(kernel_name, kernel_type)
        return f"{source}\nASCRUN_EXPORT_KERNEL({kernel_name}, {kernel_type})\n"

    @staticmethod
    def failed(kernel_name: str, stderr: str, folder: str, source: str) -> BuildError:
        return BuildError(f"the C++ build of '{kernel_name}' failed (the generated Ascend C uses something "
                          f"the cpu runtime lacks, or is invalid):\n"
                          f"{compiler_diagnostics(kernel_diagnostics(stderr, folder, source), folder)}")

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY",
              npu_arch: int = socs.DEFAULT_NPU_ARCH) -> bytes:
        unit = self.translation_unit(source, kernel_name, kernel_type)
        _remove_stale_builds()
        with tempfile.TemporaryDirectory(prefix="build_", dir=private_temp_dir()) as tmp:
            (Path(tmp) / "kernel.cpp").write_text(unit)
            try:
                proc = subprocess.run(self.command(tmp, npu_arch), capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                                      cwd=tmp)
            except subprocess.TimeoutExpired:
                raise BuildError(f"the C++ build of '{kernel_name}' took longer than {BUILD_TIMEOUT_S} s") from None
            if proc.returncode != 0:
                raise self.failed(kernel_name, proc.stderr, tmp, source)
            return (Path(tmp) / "kernel.so").read_bytes()


def kernel_diagnostics(stderr: str, folder: str, source: str) -> str:
    """The compiler's messages about the generated C++ (`source`, built in `folder`) at the kernel's
    Python line, as a compiler of the Python would say them ("kernel.py:30: error: ...", the C++
    line after it), with half and bfloat16_t as the kernel names them."""
    lines, tokens = [], site_tokens(source)  # once: the compiler may say many lines
    for line in stderr.replace(folder + "/", "").splitlines():
        for spelled, name in _RUNTIME_TYPES:
            line = spelled.sub(name, line)
        at = _KERNEL_CPP_AT.match(line)
        where = at and 0 < int(at.group(1)) <= len(tokens) and tokens[int(at.group(1)) - 1]
        if where:
            line = f"{where}: {at.group(3)} (generated C++: kernel.cpp:{at.group(1)}:{at.group(2)})"
        lines.append(line)
    return "\n".join(lines)


def _remove_stale_builds() -> None:
    """Build folders of processes killed mid-build (a job's timeout, a SIGKILLed worker): older than
    any live build can be."""
    cutoff = time.time() - 2 * BUILD_TIMEOUT_S
    for folder in private_temp_dir().glob("build_*"):
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except FileNotFoundError:
            pass  # another builder removed it first

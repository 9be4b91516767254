"""Runner: Artifact + host buffers -> the buffers the kernel wrote, and the run time.

The cpu runner loads the artifact (a shared library) with ctypes and calls its
`ascrun_launch`, which runs one thread per block, each with its own Unified Buffer.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

from .errors import KernelRuntimeError

ERROR_CAPACITY = 4096
MAX_CORE_NUM = 65535

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}


class AscrunRegion(ctypes.Structure):
    """One tensor argument as the runtime sees it (cpu_runtime/ascrun/launch.h)."""
    _fields_ = [("base", ctypes.c_void_p), ("bytes", ctypes.c_uint64), ("name", ctypes.c_char_p),
                ("written", ctypes.c_uint32)]


@dataclass(frozen=True)
class RunResult:
    written: List[str]  # names of the tensor parameters the kernel stored to
    seconds: float


class _Library:
    """A loaded artifact: its launch entry point and parameter signature."""

    def __init__(self, path: Path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.ascrun_signature.restype = ctypes.c_char_p
        self.launch = self.lib.ascrun_launch
        self.launch.restype = ctypes.c_int
        self.launch.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(AscrunRegion),
                                ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32]
        self.signature = self.lib.ascrun_signature().decode().split(",")


class CpuRunner:
    """Loads cpu artifacts (once per distinct binary and process) and launches them."""

    def __init__(self, library_dir: str | os.PathLike | None = None):
        self.library_dir = Path(library_dir or tempfile.mkdtemp(prefix="ascrun_libs_"))
        self._libraries: Dict[str, _Library] = {}
        self._lock = threading.Lock()

    def _load(self, artifact: bytes) -> _Library:
        digest = hashlib.sha256(artifact).hexdigest()
        with self._lock:
            library = self._libraries.get(digest)
            if library is None:
                path = self.library_dir / f"{digest}.so"
                if not path.exists():
                    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
                    tmp.write_bytes(artifact)
                    os.replace(tmp, path)
                library = self._libraries[digest] = _Library(path)
            return library

    def run(self, artifact: bytes, core_num: int, params: Sequence[Dict[str, str]], kernel_args: Sequence[str],
            values: Sequence[Any]) -> RunResult:
        """Launch with `values` for the runtime `params` (tensors as C-contiguous ndarrays)."""
        if not isinstance(core_num, int) or not 1 <= core_num <= MAX_CORE_NUM:
            raise KernelRuntimeError(f"core_num must be an integer from 1 to {MAX_CORE_NUM}, got {core_num!r}")
        library = self._load(artifact)
        if len(library.signature) != len(kernel_args):
            raise KernelRuntimeError(f"artifact has {len(library.signature)} parameters, pyasc declared "
                                     f"{len(kernel_args)}: rebuild the kernel")
        keep: List[Any] = []  # ctypes objects that must outlive the call
        argv = (ctypes.c_void_p * len(kernel_args))()
        regions: List[AscrunRegion] = []
        names: List[str] = []
        explicit = iter(zip(params, values))
        for i, (kind, code) in enumerate(zip(kernel_args, library.signature)):
            if kind == "explicit":
                param, value = next(explicit)
                cell = self._argument(param, value, code, regions, names)
            elif kind == "ffts_addr":
                # The FFTS base address matters only for cross-core sync on a device.
                ffts = (ctypes.c_uint64 * 1)(0)
                keep.append(ffts)
                cell = ctypes.c_void_p(ctypes.addressof(ffts))
            else:
                raise KernelRuntimeError(f"kernel argument kind '{kind}' is not supported on the cpu target")
            keep.append(cell)
            argv[i] = ctypes.addressof(cell)
        region_array = (AscrunRegion * max(1, len(regions)))(*regions)
        err = ctypes.create_string_buffer(ERROR_CAPACITY)
        start = time.perf_counter()
        status = library.launch(core_num, argv, region_array, len(regions), err, ERROR_CAPACITY)
        seconds = time.perf_counter() - start
        if status != 0:
            raise KernelRuntimeError(err.value.decode(errors="replace") or f"kernel failed with status {status}")
        written = [names[i] for i in range(len(regions)) if region_array[i].written]
        return RunResult(written=written, seconds=seconds)

    @staticmethod
    def _argument(param: Dict[str, str], value: Any, code: str, regions: List[AscrunRegion],
                  names: List[str]) -> ctypes._SimpleCData:
        name = param["name"]
        if param["kind"] == "tensor":
            if not isinstance(value, np.ndarray) or not value.flags.c_contiguous:
                raise KernelRuntimeError(f"tensor argument '{name}' must be a C-contiguous ndarray")
            if code != f"ptr:{value.dtype.name}":
                raise KernelRuntimeError(f"tensor argument '{name}' is {value.dtype.name}, the kernel takes {code}")
            regions.append(AscrunRegion(value.ctypes.data, value.nbytes, name.encode(), 0))
            names.append(name)
            return ctypes.c_void_p(value.ctypes.data)
        ctype = _SCALAR_CTYPES.get(code)
        if ctype is None:
            raise KernelRuntimeError(f"scalar argument '{name}' has C type {code}, unsupported on the cpu target")
        cell = ctype(value)
        if ctype not in (ctypes.c_float, ctypes.c_double, ctypes.c_bool) and cell.value != value:
            raise KernelRuntimeError(f"scalar argument '{name}' = {value!r} does not fit the kernel's {code} parameter")
        return cell

"""Runner: Artifact + host buffers -> the buffers the kernel wrote, what it printed, its warnings
and the run time.

The cpu runner loads the artifact (a shared library) with ctypes and calls its
`ascrun_launch`, which runs one thread per block, each with its own Unified Buffer.

Bounds policy (`bounds`): "fault" (default) stops the launch at the first access out of its
operand; with "warn", each tensor argument runs in a copy followed by a guard zone of GUARD_BYTES
filled with GUARD_POISON, so that an access past its end does what the device does (reads
whatever is there, writes that land nowhere the caller sees) and becomes a warning; the logical
part is copied back afterwards. Accesses before a tensor or past its guard zone still fault.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

from ...errors import KernelRuntimeError
from ...tempdir import private_temp_dir
from ..contract import RunResult, check_bounds, check_core_num, check_hazards

ERROR_CAPACITY = 4096
ABI_VERSION = 3  # runtime/ascrun/launch/launch.h kAbiVersion
GUARD_BYTES = 1 << 20
GUARD_POISON = 0xA5

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}


class AscrunRegion(ctypes.Structure):
    """One tensor argument as the runtime sees it (runtime/ascrun/launch/launch.h)."""
    _fields_ = [("base", ctypes.c_void_p), ("bytes", ctypes.c_uint64), ("guard_bytes", ctypes.c_uint64),
                ("name", ctypes.c_char_p), ("written", ctypes.c_uint32)]


class AscrunReport(ctypes.Structure):
    """What the blocks printed and the warnings, allocated by the runtime (launch/launch.h)."""
    _fields_ = [("log", ctypes.c_void_p), ("log_bytes", ctypes.c_uint64), ("warnings", ctypes.c_void_p),
                ("warnings_bytes", ctypes.c_uint64), ("model", ctypes.c_void_p), ("model_bytes", ctypes.c_uint64),
                ("trace", ctypes.c_void_p), ("trace_bytes", ctypes.c_uint64)]


def _text(pointer: int | None, size: int) -> str:
    return ctypes.string_at(pointer, size).decode("utf-8", errors="replace") if pointer else ""


class _Library:
    """A loaded artifact: its launch entry point and parameter signature."""

    def __init__(self, path: Path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.ascrun_signature.restype = ctypes.c_char_p
        version = getattr(self.lib, "ascrun_abi_version", None)
        if version is None or version() != ABI_VERSION:
            raise KernelRuntimeError("the artifact was built for another version of the cpu runtime: rebuild it")
        self.launch = self.lib.ascrun_launch
        self.launch.restype = ctypes.c_int
        self.launch.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(AscrunRegion),
                                ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                                ctypes.POINTER(AscrunReport), ctypes.c_char_p, ctypes.c_uint32]
        self.free_report = self.lib.ascrun_free_report
        self.free_report.restype = None
        self.free_report.argtypes = [ctypes.POINTER(AscrunReport)]
        self.signature = self.lib.ascrun_signature().decode().split(",")


class CpuRunner:
    """Loads cpu artifacts (once per distinct binary and process) and launches them."""
    streams_tensors = False  # takes arrays only (contract.Runner)

    def __init__(self):
        self._libraries: Dict[str, _Library] = {}
        self._lock = threading.Lock()

    def _load(self, artifact: bytes) -> _Library:
        digest = hashlib.sha256(artifact).hexdigest()
        with self._lock:
            library = self._libraries.get(digest)
            if library is None:
                fd, name = tempfile.mkstemp(prefix=f"{digest[:16]}_", suffix=".so", dir=private_temp_dir())
                try:
                    with os.fdopen(fd, "wb") as f:
                        f.write(artifact)
                    library = self._libraries[digest] = _Library(Path(name))
                finally:
                    os.unlink(name)  # loaded, the mapping stays: nothing is left behind, even if killed later
            return library

    def run(self, artifact: bytes, core_num: int, params: Sequence[Dict[str, str]], kernel_args: Sequence[str],
            values: Sequence[Any], bounds: str = "fault", hazards: str = "warn", model: bool = True) -> RunResult:
        """Launch with `values` for the runtime `params` (tensors as C-contiguous ndarrays, written
        in place; structs as their packed bytes). A fault raises KernelRuntimeError carrying the log
        and warnings up to it. `hazards`: the policy for races between pipes; `model`: return the
        modeled timeline (model and trace; False: neither, and a faster launch)."""
        check_core_num(core_num)
        bounds_code = check_bounds(bounds)
        hazards_code = check_hazards(hazards)
        library = self._load(artifact)
        if len(library.signature) != len(kernel_args):
            raise KernelRuntimeError(f"artifact has {len(library.signature)} parameters, pyasc declared "
                                     f"{len(kernel_args)}: rebuild the kernel")
        keep: List[Any] = []  # ctypes objects that must outlive the call
        argv = (ctypes.c_void_p * len(kernel_args))()
        regions: List[AscrunRegion] = []
        names: List[str] = []
        copies: Dict[tuple, np.ndarray] = {}  # bounds "warn": one guarded copy per distinct array
        guarded: Dict[str, tuple] = {}  # tensor name -> (the caller's array, its guarded copy)
        explicit = iter(zip(params, values))
        for i, (kind, code) in enumerate(zip(kernel_args, library.signature)):
            if kind == "explicit":
                param, value = next(explicit)
                guard = 0
                if bounds == "warn" and param["kind"] == "tensor" and isinstance(value, np.ndarray) \
                        and value.flags.c_contiguous:
                    key = (value.ctypes.data, value.nbytes, value.dtype.str)
                    copy = copies.get(key)
                    if copy is None:
                        copy = copies[key] = _with_guard(value)
                    guarded[param["name"]] = (value, copy)
                    value, guard = copy[:value.nbytes].view(value.dtype).reshape(value.shape), GUARD_BYTES
                cell = self._argument(param, value, code, regions, names, guard, keep)
            elif kind in ("ffts_addr", "dump_addr"):
                # The FFTS base address matters only for cross-core sync on a device; the dump workspace
                # only to a device's printf (the runtime's writes the report): a cell each must exist.
                word = (ctypes.c_uint64 * 1)(0)
                keep.append(word)
                cell = ctypes.c_void_p(ctypes.addressof(word))
            else:
                raise KernelRuntimeError(f"kernel argument kind '{kind}' is not supported on the cpu target")
            keep.append(cell)
            argv[i] = ctypes.addressof(cell)
        region_array = (AscrunRegion * max(1, len(regions)))(*regions)
        err = ctypes.create_string_buffer(ERROR_CAPACITY)
        report = AscrunReport()
        start = time.perf_counter()
        status = library.launch(core_num, argv, region_array, len(regions), bounds_code, hazards_code, int(model),
                                ctypes.byref(report), err, ERROR_CAPACITY)
        seconds = time.perf_counter() - start
        try:
            log = _text(report.log, report.log_bytes)
            warnings = _text(report.warnings, report.warnings_bytes).splitlines()
            figures = json.loads(_text(report.model, report.model_bytes)) if report.model else None
            trace = _text(report.trace, report.trace_bytes) or None
        finally:
            library.free_report(ctypes.byref(report))
        if status != 0:
            raise KernelRuntimeError(err.value.decode(errors="replace") or f"kernel failed with status {status}",
                                     log=log, warnings=warnings)
        written = [names[i] for i in range(len(regions)) if region_array[i].written]
        for name in written:
            if name in guarded:
                caller, copy = guarded[name]
                caller.reshape(-1).view(np.uint8)[:] = copy[:caller.nbytes]
        return RunResult(written=written, seconds=seconds, log=log, warnings=warnings, model=figures, trace=trace)

    def close(self) -> None:
        """Nothing to release: a loaded artifact stays mapped for the process's life (ctypes cannot
        unload a library safely while a kernel's detached code might run)."""

    @staticmethod
    def _argument(param: Dict[str, Any], value: Any, code: str, regions: List[AscrunRegion],
                  names: List[str], guard: int, keep: List[Any]) -> ctypes._SimpleCData:
        name = param["name"]
        if param["kind"] == "tensor":
            if not isinstance(value, np.ndarray) or not value.flags.c_contiguous:
                raise KernelRuntimeError(f"tensor argument '{name}' must be a C-contiguous ndarray")
            # a bfloat16 tensor (numpy has none) is held as its bits, uint16: its param names it
            bf16 = (param["dtype"], value.dtype.name) == ("bfloat16", "uint16")
            dtype = "bfloat16" if bf16 else value.dtype.name
            if code != f"ptr:{dtype}":
                raise KernelRuntimeError(f"tensor argument '{name}' is {dtype}, the kernel takes {code}")
            regions.append(AscrunRegion(value.ctypes.data, value.nbytes, guard, name.encode(), 0))
            names.append(name)
            return ctypes.c_void_p(value.ctypes.data)
        if param["kind"] == "struct":
            # the kernel takes `__gm__ S*` and copies sizeof(S) bytes from it (pyasc's copy_struct)
            if not code.startswith("ptr:struct:"):
                raise KernelRuntimeError(f"struct argument '{name}' ({param['dtype']}): the kernel takes {code}, "
                                         "not a struct")
            size = int(code.split(":")[2])
            if size != len(value):
                raise KernelRuntimeError(f"struct argument '{name}' ({param['dtype']}) packs to {len(value)} bytes, "
                                         f"but the kernel's C++ struct is {size} bytes")
            data = ctypes.create_string_buffer(value, len(value))
            keep.append(data)
            return ctypes.c_void_p(ctypes.addressof(data))
        ctype = _SCALAR_CTYPES.get(code)
        if ctype is None:
            raise KernelRuntimeError(f"scalar argument '{name}' has C type {code}, unsupported on the cpu target")
        cell = ctype(value)
        if ctype not in (ctypes.c_float, ctypes.c_double, ctypes.c_bool) and cell.value != value:
            raise KernelRuntimeError(f"scalar argument '{name}' = {value!r} does not fit the kernel's {code} parameter")
        return cell


def _with_guard(array: np.ndarray) -> np.ndarray:
    """A copy of `array`'s bytes followed by GUARD_BYTES of GUARD_POISON (flat uint8)."""
    copy = np.empty(array.nbytes + GUARD_BYTES, np.uint8)
    copy[:array.nbytes] = array.reshape(-1).view(np.uint8)
    copy[array.nbytes:] = GUARD_POISON
    return copy

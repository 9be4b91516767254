"""The CANN targets' device process: pyasc's runtime on camodel or an NPU, one launch per
request over stdin/stdout (sandbox.framing). It lives in a child of the worker (a jail there), so a
simulator crash or a hang ends that child, not the worker; it exits after a device error so that
the next launch finds a freshly initialised device.
"""
from __future__ import annotations

import os
import resource
import time
from typing import Any, Dict, List, Mapping, Sequence

from ...errors import KernelError, KernelRuntimeError
from ...sandbox.framing import read_message, write_message



def scalar_value(param: Mapping[str, str], value: Any):
    """A scalar as pyasc's Launcher.expand_kernel_args passes it: a Python int (bool too: it is
    an int) as int32, a float as float32, a numpy-typed one as its dtype."""
    import numpy as np
    dtype = np.dtype({"int": np.int32, "bool": np.int32, "float": np.float32}.get(param["dtype"]) or param["dtype"])
    try:
        if dtype.kind in "iu" and not np.iinfo(dtype).min <= int(value) == value <= np.iinfo(dtype).max:
            raise OverflowError("out of its range" if int(value) == value else "not an integer")
        return dtype.type(value)
    except (OverflowError, ValueError, TypeError) as e:
        raise KernelRuntimeError(f"scalar argument '{param['name']}' = {value!r} does not fit {dtype.name}: "
                                 f"{e}") from None


def argument_words(cells: Sequence[Any]) -> List[int]:
    """The kernel's argument block as pyasc's Launcher.launch_kernel lays it out, in 64-bit words:
    a scalar (numpy scalar) padded to 4 bytes (or 8 when between 4 and 8), a device address (int)
    8-aligned, the whole padded to 8."""
    import numpy as np
    block = bytearray()
    for cell in cells:
        if isinstance(cell, np.generic):
            block += cell.tobytes()
            if cell.itemsize < 4:
                block += bytes(4 - cell.itemsize)
            elif 4 < cell.itemsize < 8:
                block += bytes(8 - cell.itemsize)
        else:
            if len(block) % 8:
                block += bytes(4)
            block += int(cell).to_bytes(8, "little")
    block += bytes(-len(block) % 8)
    return [int.from_bytes(block[i:i + 8], "little") for i in range(0, len(block), 8)]



def serve_device(backend: str, soc: str, sync_timeout_ms: int) -> None:
    """Answer launches on stdin/stdout until stdin closes; exit after a device error, so that the
    next launch gets a freshly initialised device."""
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # whatever the runtime prints goes to stderr, never into the replies
    try:
        from asc.lib import runtime as rt
        from asc.runtime import config
        from asc.runtime.launcher import Launcher
        # an NPU's SoC is the device's own: set_platform asks the runtime
        config.set_platform(config.Backend(backend), config.Platform(soc) if soc else None)
        ready = {"soc": rt.get_soc_version().value, "core_num": Launcher.get_core_num()}
    except Exception as e:  # noqa: BLE001 - it becomes the answer
        write_message(reply_fd, {"error": {"message": f"{type(e).__name__}: {e}", "kind": "unavailable"}})
        return
    write_message(reply_fd, {"ready": ready})
    while True:
        try:
            header, blobs = read_message(0)
        except EOFError:
            return
        try:
            reply, written = _launch(header, blobs, sync_timeout_ms)
        except KernelError as e:
            reply, written = {"error": {"message": str(e), "kind": e.kind}}, []
        except Exception as e:  # noqa: BLE001 - the device failed: answer, reset, and end
            write_message(reply_fd, {"error": {"message": f"the device failed: {type(e).__name__}: {e}",
                                                    "kind": "runtime_error"}, "ended": True})
            _reset_device()
            return
        write_message(reply_fd, reply, written)


def _launch(header: Dict[str, Any], blobs: List[memoryview], sync_timeout_ms: int):
    import ctypes
    import numpy as np
    from asc.lib import runtime as rt
    from asc.runtime import utils as asc_utils
    from asc.runtime.memory_handle import ByteArrayHandle, NumpyArrayHandle
    kernel = header["kernel"]
    cells: List[Any] = []  # numpy scalars and memory handles, in argument order
    tensors: List[np.ndarray] = []
    values = iter(header["values"])
    params = iter(header["params"])
    for kind in header["kernel_args"]:
        if kind == "explicit":
            param, value = next(params), next(values)
            if "tensor" in value:
                array = np.frombuffer(blobs[value["tensor"]["blob"]], dtype=value["tensor"]["dtype"])
                tensors.append(array)
                cells.append(NumpyArrayHandle(array))
            elif "struct" in value:
                cells.append(ByteArrayHandle(bytes(blobs[value["struct"]])))
            else:
                cells.append(scalar_value(param, value["scalar"]))
        elif kind == "ffts_addr":
            cells.append(NumpyArrayHandle(np.array([rt.c2c_ctrl_addr()], dtype=np.uint64)))
        else:
            raise KernelRuntimeError(f"kernel argument kind '{kind}' is not supported by pyasc's launcher")
    if kernel["debug"]:
        cells.append(NumpyArrayHandle(np.zeros(asc_utils.TOTAL_DUMP_SIZE, dtype=np.int8)))
    handles = [c for c in cells if not isinstance(c, np.generic)]
    timings: Dict[str, float] = {}
    log = ""
    copied: List[Any] = []
    try:
        handle = rt.register_device_binary_kernel(bytes(blobs[0]), rt.magic_elf_value(rt.CoreType(kernel["core_type"])))
        function = rt.register_function(handle, kernel["kernel_name"], mode=0)
        start = time.perf_counter()
        placed = []  # the scalars, and the device address of each handle's copy
        for cell in cells:
            if isinstance(cell, np.generic):
                placed.append(cell)
            else:
                placed.append(cell.copy_to_device())
                copied.append(cell)
        words = argument_words(placed)
        timings["h2d"] = time.perf_counter() - start
        stream = rt.current_stream()
        start = time.perf_counter()
        rt.launch_kernel(function, header["core_num"], [ctypes.c_uint64(w) for w in words], stream_handle=stream)
        rt.synchronize(stream, timeout=sync_timeout_ms)  # 0: no timeout
        timings["kernel"] = time.perf_counter() - start
        start = time.perf_counter()
        for cell in handles[:-1] if kernel["debug"] else handles:  # the dump buffer is printed, not copied
            cell.copy_from_device()
        timings["d2h"] = time.perf_counter() - start
        if kernel["debug"]:
            # the dump buffer's address is the last word, as in pyasc's launcher
            log = _printed(lambda: rt.call_print_interface(ctypes.c_uint64(words[-1]),
                                                           ctypes.c_size_t(asc_utils.TOTAL_DUMP_SIZE), stream,
                                                           kernel["kernel_name"].encode()))
    finally:
        for cell in copied:
            cell.release_memory()
        rt.free_mem()  # unregisters the binary
    names = [p["name"] for p, v in zip(header["params"], header["values"]) if "tensor" in v]
    reply = {"ok": {"written": names, "timings": timings, "log": log}}
    return reply, [memoryview(t).cast("B") for t in tensors]


def _printed(action) -> str:
    """What `action` writes to stdout (CANN's dump printer writes there), as text."""
    import ctypes
    import tempfile
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryFile() as out:
        libc.fflush(None)
        saved = os.dup(1)
        os.dup2(out.fileno(), 1)
        try:
            action()
            libc.fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        out.seek(0)
        return out.read().decode("utf-8", errors="replace")


def _reset_device() -> None:
    """Leave the device as a new process finds it; pyasc's bookkeeping of the old context goes."""
    from asc.lib.runtime import interface, state
    try:
        state.kernels.clear()
        state.allocs.clear()
        interface.reset_device()
    except Exception:  # noqa: BLE001 - the process ends next: the driver releases what is left
        pass



def serve_jailed(limits: Dict[str, int], backend: str, soc: str, sync_timeout_ms: str) -> None:
    """sandbox.inside.STAGES "device": no core dumps; no CPU, memory or seccomp limits, which pyasc's
    runtime on an NPU or camodel has not been measured against (the broker's deadline kills it)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    serve_device(backend, soc, int(sync_timeout_ms))

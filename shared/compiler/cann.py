"""The CANN targets: `sim` (camodel) and `npu`, built with bisheng and run by pyasc's runtime.

Only where CANN is installed (ASCEND_HOME_PATH, bisheng found the way pyasc finds it).

Toolchain: pyasc's own Compiler (bisheng, then ld.lld) on the Ascend C the frontend emitted, for
the kernel type pyasc would choose. The artifact is pyasc's binary behind a one-line JSON header
(kernel name, kernel type, core type, whether it prints): the runner needs them, the binary does
not say them.

Runner: the device lives in a child process (`serve_device`), which loads pyasc's runtime after
`config.set_platform(Backend.Model | Backend.NPU, Platform.<soc>)`. A simulator crash or a hang
then ends that child, not the worker; the next launch starts a fresh one, so every job after a
failure finds a re-initialised device. Bounds are not checked on a device (only the cpu target
can): `bounds` is validated and otherwise ignored, and so is `hazards` (the pipe model is the cpu
target's).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from functools import cached_property
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from . import frontend, jail
from .errors import BuildError, KernelError, KernelRuntimeError
from .pipeline import Target
from .runner import MAX_CORE_NUM, RunResult, check_bounds, check_hazards
from .toolchain import _diagnostics

KERNEL_TYPES = ("AIV_ONLY", "MIX_AIC_1_2", "AIC_ONLY")  # what pyasc's Compiler.run_passes chooses from
SIM_SOC_ENV = "ASCRUN_SIM_SOC"  # the simulated SoC; pyasc's Model default otherwise
DEFAULT_SIM_SOC = "Ascend910B1"
START_TIMEOUT_S = 600  # the first start builds pyasc's runtime wrapper with the host C++ compiler
RUN_TIMEOUT_S = 900  # camodel simulates cycle by cycle: big kernels take minutes
REPLY_GRACE_S = 30  # after the device's own synchronize timeout: time to reset and answer
ARTIFACT_MAGIC = b"ascrun-cann 1\n"

_PRINTS = re.compile(r"^\s*AscendC::(printf|DumpTensor)\(", re.M)  # pyasc's DetectEnableDebug


def missing_cann() -> str | None:
    """Why this host cannot build for CANN, or None."""
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home:
        return "ASCEND_HOME_PATH is not set"
    if not (os.environ.get("PYASC_COMPILER") or shutil.which("bisheng")):
        return "bisheng is not on PATH (nor PYASC_COMPILER set)"
    return None


# ---------------------------------------------------------------------------------------------
# Pure parts

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


def dump_enabled(environ: Mapping[str, str]) -> bool:
    """pyasc compiles printing in unless ASCENDC_DUMP says otherwise."""
    return str(environ.get("ASCENDC_DUMP", "True")).lower() == "true"


def bisheng_diagnostics(message: str) -> str:
    """pyasc's compile error, its lines with "error" first, without its temporary folder (gone
    by now) in every path."""
    return _diagnostics(re.sub(r"\S*/pyasc_compiler_[^/\s]+/", "", message), chr(0))


def pack_artifact(header: Dict[str, Any], binary: bytes) -> bytes:
    return ARTIFACT_MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + binary


def unpack_artifact(artifact: bytes) -> Tuple[Dict[str, Any], bytes]:
    if not artifact.startswith(ARTIFACT_MAGIC):
        raise KernelRuntimeError("the artifact was not built by ascrun's CANN toolchain: rebuild the kernel")
    line_end = artifact.index(b"\n", len(ARTIFACT_MAGIC))
    return json.loads(artifact[len(ARTIFACT_MAGIC):line_end]), artifact[line_end + 1:]


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


def device_env(environ: Mapping[str, str], backend: str, home: str, soc: str, torch_npu: bool) -> Dict[str, str]:
    """The device process's environment, as pyasc's quick start sets it: for camodel its library
    folder first on LD_LIBRARY_PATH, and libruntime_camodel.so preloaded where torch_npu is
    installed (importing it loads the NPU runtime); for an NPU, no camodel preload."""
    env = dict(environ)
    preload = [p for p in env.get("LD_PRELOAD", "").split(":") if p and "libruntime_camodel" not in p]
    if backend == "Model":
        lib = str(Path(home) / "tools" / "simulator" / soc / "lib")
        env["LD_LIBRARY_PATH"] = ":".join([lib, *[p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]])
        if torch_npu:
            preload.insert(0, "libruntime_camodel.so")
    if preload:
        env["LD_PRELOAD"] = ":".join(preload)
    else:
        env.pop("LD_PRELOAD", None)
    return env


# What a CANN stage's jail sees besides Python and ascrun: the installation read-only, the NPU's
# device nodes (npu only), and these variables of the worker's environment (never its secrets).
JAIL_VARIABLES = ("PYASC_COMPILER", "PYASC_LINKER", "LD_LIBRARY_PATH", "LD_PRELOAD", SIM_SOC_ENV, "ASCENDC_DUMP")
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


# ---------------------------------------------------------------------------------------------
# Toolchain

class CannToolchain:
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
        self.bisheng, self.platform = probe.compiler, probe.platform
        targets = [CompilationTarget.get(KernelType[t], probe.platform) for t in KERNEL_TYPES]
        self.arch = ",".join(sorted({a for t in targets for a in (t.common_arch, t.vec_arch, t.cube_arch) if a}))
        self.flags = [*targets[0].common_options, f"-O{probe.options.opt_level}",
                      f"auto_sync={probe.options.auto_sync}", f"ASCENDC_DUMP={dump_enabled(os.environ)}",
                      f"pyasc={frontend.pyasc_version()}", f"platform={self.platform.value}"]
        self.cann_version = cann_version(os.environ["ASCEND_HOME_PATH"])

    @cached_property
    def bisheng_version(self) -> str:
        out = subprocess.run([self.bisheng, "--version"], capture_output=True, text=True, timeout=60)
        return (out.stdout.strip().splitlines() or [self.bisheng])[0]

    @cached_property
    def id(self) -> str:
        return toolchain_id(self.cann_version, self.bisheng_version, self.arch, self.flags)

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY") -> bytes:
        from asc.lib import runtime as rt
        from asc.runtime.compiler import CompileOptions, Compiler
        from asc.runtime.config import KernelType, Platform
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel_name):
            raise BuildError(f"kernel name {kernel_name!r} is not a C identifier")
        if kernel_type not in KernelType.__members__:
            raise BuildError(f"kernel type {kernel_type!r} is not one of pyasc's")
        rt.set_soc_version(Platform(self.soc))
        compiler = Compiler(CompileOptions(kernel_type=KernelType[kernel_type]))
        # what Compiler.run does after the translation (the frontend ran that part)
        compiler.enable_debug = prints(source) and dump_enabled(os.environ)
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


class JailedCannToolchain:
    """CannToolchain.build in a fresh jail (jailed.py's cann-build stage): bisheng reads the
    kernel's C++ there, never in the broker."""

    def __init__(self, toolchain: CannToolchain, limits: Dict[str, int]):
        self.toolchain, self.limits, self.id = toolchain, limits, toolchain.id
        self.deadline = jail.Deadline(3600)

    def warm(self) -> None:
        pass  # nothing to prepare: pyasc's Compiler starts anew in each build's jail

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY") -> bytes:
        ro, environment = jail_view(os.environ)
        stage = jail.PythonJail(f"cann-build:{self.toolchain.soc}", self.limits, ro, (), environment)
        try:
            reply, blobs = stage.request({"source": source, "kernel_name": kernel_name, "kernel_type": kernel_type},
                                         [], self.deadline.left(),
                                         jail.MAX_HEADER_BYTES + jail.MAX_ARTIFACT_BYTES)
        except jail.JailTimeout:
            raise self.deadline.expired() from None
        except jail.JailCrashed as e:
            raise BuildError(f"the build of '{kernel_name}' crashed its jail: {e}") from None
        finally:
            stage.close()
        if "error" in reply:
            raise jail.kernel_error(reply, "build")
        if len(blobs) != 1 or not bytes(blobs[0][:len(ARTIFACT_MAGIC)]) == ARTIFACT_MAGIC:
            raise jail.out_of_protocol("build")
        return bytes(blobs[0])


# ---------------------------------------------------------------------------------------------
# Device process (the child): pyasc's runtime, one launch per request

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
        jail.write_message(reply_fd, {"error": {"message": f"{type(e).__name__}: {e}", "kind": "unavailable"}})
        return
    jail.write_message(reply_fd, {"ready": ready})
    while True:
        try:
            header, blobs = jail.read_message(0)
        except EOFError:
            return
        try:
            reply, written = _launch(header, blobs, sync_timeout_ms)
        except KernelError as e:
            reply, written = {"error": {"message": str(e), "kind": e.kind}}, []
        except Exception as e:  # noqa: BLE001 - the device failed: answer, reset, and end
            jail.write_message(reply_fd, {"error": {"message": f"the device failed: {type(e).__name__}: {e}",
                                                    "kind": "runtime_error"}, "ended": True})
            _reset_device()
            return
        jail.write_message(reply_fd, reply, written)


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


# ---------------------------------------------------------------------------------------------
# Runner (the parent): the device process's client

class CannRunner:
    """CpuRunner.run's contract, on camodel (`backend` "Model") or an NPU ("NPU"). The device does
    not say which buffers a kernel stored to: like pyasc's launcher, every tensor comes back, and
    `written` names them all."""

    def __init__(self, backend: str, soc: str | None, timeout_s: float = RUN_TIMEOUT_S,
                 limits: Dict[str, int] | None = None):
        self.backend, self.requested_soc, self.timeout_s = backend, soc, timeout_s
        self.limits = limits  # a worker's: the device process runs in a jail (jailed.py's device stage)
        self.deadline: jail.Deadline | None = None  # the job's, in a worker
        self.tenant: str | None = None
        self.process: subprocess.Popen | None = None
        self.ready: Dict[str, Any] = {}
        self._lock = threading.Lock()
        self._start()

    def for_tenant(self, tenant: str) -> "CannRunner":
        """A device process another tenant's kernels ran in is never handed on (device memory is
        not cleared between launches): the next launch starts a fresh one."""
        if self.tenant is not None and tenant != self.tenant:
            self._stop()
        self.tenant = tenant
        return self

    def _start(self) -> None:
        import importlib.util
        home = os.environ["ASCEND_HOME_PATH"]
        soc = self.requested_soc or ""  # "": the NPU's own
        env = device_env(os.environ, self.backend, home, soc, importlib.util.find_spec("torch_npu") is not None)
        # an NPU's runtime stops a hung kernel itself; camodel is left to this process's deadline
        sync_ms = int(self.timeout_s * 1000) if self.backend == "NPU" else 0
        if self.limits is None:
            code = ("import sys; from ascrun.compiler.cann import serve_device; "
                    "serve_device(*sys.argv[1:3], int(sys.argv[3]))")
            self.process = subprocess.Popen([sys.executable, "-c", code, self.backend, soc, str(sync_ms)],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
                                            start_new_session=True)
        else:
            ro, environment = jail_view(env)
            devices = npu_devices() if self.backend == "NPU" else []
            self.process = jail.popen(jail.python_command(f"device:{self.backend}:{soc}:{sync_ms}", self.limits, ro,
                                                          devices, environment),
                                      groups=[os.stat(d).st_gid for d in devices],  # the jail's user opens them
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            header, _ = jail.read_message(self.process.stdout.fileno(), time.monotonic() + START_TIMEOUT_S)
        except (EOFError, TimeoutError, ValueError) as e:
            self._stop()
            raise KernelError(f"the {self._device} did not start ({e}): see the worker's log", kind="unavailable") \
                from None
        if "error" in header:
            self._stop()
            raise KernelError(f"the {self._device} did not start: {header['error']['message']}", kind="unavailable")
        self.ready = header["ready"]

    @property
    def _device(self) -> str:
        return "camodel simulator" if self.backend == "Model" else "NPU"

    def _stop(self) -> None:
        if self.process is not None:
            jail.kill(self.process)
            self.process = None

    def run(self, artifact: bytes, core_num: int, params: Sequence[Dict[str, str]], kernel_args: Sequence[str],
            values: Sequence[Any], bounds: str = "fault", hazards: str = "warn") -> RunResult:
        import numpy as np
        check_bounds(bounds)
        check_hazards(hazards)
        kernel, binary = unpack_artifact(artifact)
        if not isinstance(core_num, int) or not 1 <= core_num <= MAX_CORE_NUM:
            raise KernelRuntimeError(f"core_num must be an integer from 1 to {MAX_CORE_NUM}, got {core_num!r}")
        blobs: List[Any] = [binary]
        sent, tensors = [], []
        for param, value in zip(params, values):
            if param["kind"] == "tensor":
                if not isinstance(value, np.ndarray) or not value.flags.c_contiguous:
                    raise KernelRuntimeError(f"tensor argument '{param['name']}' must be a C-contiguous ndarray")
                if value.nbytes == 0:
                    raise KernelRuntimeError(f"tensor argument '{param['name']}' is empty: the device cannot "
                                             "allocate 0 bytes")
                sent.append({"tensor": {"dtype": value.dtype.name, "blob": len(blobs)}})
                blobs.append(memoryview(value).cast("B"))
                tensors.append(value)
            elif param["kind"] == "struct":
                sent.append({"struct": len(blobs)})
                blobs.append(bytes(value))
            else:
                scalar_value(param, value)  # refused here, before the device sees it
                sent.append({"scalar": value.item() if isinstance(value, np.generic) else value})
        request = {"kernel": kernel, "core_num": core_num, "params": list(params), "kernel_args": list(kernel_args),
                   "values": sent}
        with self._lock:
            if self.process is None:
                self._start()  # the previous launch ended the device process: a fresh device
            reply, written = self._exchange(request, blobs)
        if "error" in reply:
            raise KernelError(reply["error"]["message"], kind=reply["error"]["kind"])
        ok = reply["ok"]
        if [len(data) for data in written] != [array.nbytes for array in tensors]:
            self.close()
            raise KernelError(f"the {self._device}'s process answered out of protocol", kind="runtime_error")
        for array, data in zip(tensors, written):
            array.reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8)
        timings = {k: float(v) for k, v in ok["timings"].items()}
        return RunResult(written=list(ok["written"]), seconds=timings["kernel"], log=ok["log"], timings=timings)

    def _exchange(self, request: Dict[str, Any], blobs: List[Any]):
        timeout_s = self.timeout_s if self.deadline is None else min(self.timeout_s, self.deadline.left())
        deadline = time.monotonic() + timeout_s + REPLY_GRACE_S
        try:
            jail.write_message(self.process.stdin.fileno(), request, blobs, deadline)
            reply, written = jail.read_message(self.process.stdout.fileno(), deadline)
        except TimeoutError:
            self._stop()
            raise KernelError(f"the kernel did not finish on the {self._device} within {timeout_s:g} s: "
                              "it was stopped; the device is re-initialised for the next launch", kind="timeout") \
                from None
        except (EOFError, BrokenPipeError, ValueError):
            try:
                self.process.wait(timeout=REPLY_GRACE_S)
            except subprocess.TimeoutExpired:
                pass  # alive but out of protocol: stopped below
            how = jail.describe_exit(self.process.returncode)
            self._stop()
            raise KernelError(f"the {self._device} crashed running the kernel (its process {how}); the device "
                              "is re-initialised for the next launch", kind="runtime_error") from None
        if reply.get("ended"):  # a device error: it reset the device and ends; the next launch starts anew
            self.process.wait(timeout=REPLY_GRACE_S)
            self._stop()
        return reply, written

    def close(self) -> None:
        self._stop()


# ---------------------------------------------------------------------------------------------
# Targets

class CannTarget(Target):
    backend: str
    kernel_types = KERNEL_TYPES

    def __init__(self, limits: Dict[str, int] | None = None, runs: bool = True, socs: Sequence[str] = ()):
        reason = missing_cann()
        if reason is not None:
            raise KernelError(f"target '{self.name}' needs CANN and bisheng, which this host lacks ({reason}): "
                              "use target 'cpu'", kind="unavailable")
        if runs:
            self.runner: CannRunner | None = CannRunner(self.backend, self._soc(), limits=limits)
            self.soc = self.runner.ready["soc"]
        else:  # a build-only worker's: no device to ask, so the operator names the SOC it builds for
            self.runner = None
            self.soc = self._build_soc(socs)
        try:
            self.compiler = CannToolchain(self.soc)
        except BaseException:
            self.close()
            raise
        self.toolchain = self.compiler if limits is None else JailedCannToolchain(self.compiler, limits)

    def _soc(self) -> str | None:
        return None

    def _build_soc(self, socs: Sequence[str]) -> str:
        if len(socs) == 1:
            return socs[0]
        if not socs and self._soc():
            return self._soc()
        raise KernelError(f"a build-only '{self.name}' worker builds for one SOC: name it with --soc "
                          f"({len(socs)} given)", kind="unavailable")

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()

    def capabilities(self) -> dict:
        # the keys the pool reads (worker heartbeat, /v1/targets): socs, cores
        return dict(super().capabilities(), socs=[self.soc],
                    cores=self.runner.ready["core_num"] if self.runner is not None else None,
                    cann=cann_release(self.compiler.cann_version), bisheng=self.compiler.bisheng_version,
                    backend=self.backend, bounds_checked=False, hazards_checked=False)


class SimTarget(CannTarget):
    name = "sim"
    backend = "Model"

    def _soc(self) -> str:
        return os.environ.get(SIM_SOC_ENV) or DEFAULT_SIM_SOC


class NpuTarget(CannTarget):
    """The SoC is the device's own (pyasc's set_platform asks the runtime)."""
    name = "npu"
    backend = "NPU"

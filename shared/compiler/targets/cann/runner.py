"""The CANN targets' runner: the client of the device process (device.py), in this process or,
in a worker, in a jail that sees the CANN installation (jailed.py). Bounds are not checked on a
device (only the cpu target can): `bounds` is validated and otherwise ignored, and so are `hazards`
and `model` (the pipe model is the cpu target's).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence

from ...errors import KernelError, KernelRuntimeError
from ...settings import HostSettings
from ...sandbox import bwrap
from ...sandbox.framing import read_message, write_message
from ...sandbox.jail import Deadline, in_protocol, kernel_error
from ..contract import RunResult, check_bounds, check_core_num, check_hazards
from .device import scalar_value
from .jailed import jail_view, npu_devices
from .toolchain import unpack_artifact

START_TIMEOUT_S = 600  # the first start builds pyasc's runtime wrapper with the host C++ compiler
RUN_TIMEOUT_S = 900  # camodel simulates cycle by cycle: big kernels take minutes
REPLY_GRACE_S = 30  # after the device's own synchronize timeout: time to reset and answer
DEVICE_PHASES = ("h2d", "kernel", "d2h")  # what device.py times


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



class CannRunner:
    """CpuRunner.run's contract, on camodel (`backend` "Model") or an NPU ("NPU"). The device does
    not say which buffers a kernel stored to: like pyasc's launcher, every tensor comes back, and
    `written` names them all."""
    streams_tensors = False  # takes arrays only (contract.Runner)

    def __init__(self, backend: str, soc: str | None, timeout_s: float = RUN_TIMEOUT_S,
                 limits: Dict[str, int] | None = None):
        self.backend, self.requested_soc, self.timeout_s = backend, soc, timeout_s
        self.limits = limits  # a worker's: the device process runs in a jail (jailed.py's device stage)
        self.deadline: Deadline | None = None  # the job's, in a worker
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
        home = HostSettings.from_env().ascend_home
        soc = self.requested_soc or ""  # "": the NPU's own
        env = device_env(os.environ, self.backend, home, soc, importlib.util.find_spec("torch_npu") is not None)
        # an NPU's runtime stops a hung kernel itself; camodel is left to this process's deadline
        sync_ms = int(self.timeout_s * 1000) if self.backend == "NPU" else 0
        if self.limits is None:
            code = ("import sys; from ascrun.compiler.targets.cann.device import serve_device; "
                    "serve_device(*sys.argv[1:3], int(sys.argv[3]))")
            self.process = subprocess.Popen([sys.executable, "-c", code, self.backend, soc, str(sync_ms)],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
                                            start_new_session=True)
        else:
            ro, environment = jail_view(env)
            devices = npu_devices() if self.backend == "NPU" else []
            self.process = bwrap.popen(bwrap.python_command(f"device:{self.backend}:{soc}:{sync_ms}", self.limits, ro,
                                                          devices, environment),
                                      groups=[os.stat(d).st_gid for d in devices],  # the jail's user opens them
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            header, _ = read_message(self.process.stdout.fileno(), time.monotonic() + START_TIMEOUT_S)
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
            bwrap.kill(self.process)
            self.process = None

    def run(self, artifact: bytes, core_num: int, params: Sequence[Dict[str, str]], kernel_args: Sequence[str],
            values: Sequence[Any], bounds: str = "fault", hazards: str = "warn", model: bool = True) -> RunResult:
        import numpy as np
        check_bounds(bounds)
        check_hazards(hazards)
        kernel, binary = unpack_artifact(artifact)
        check_core_num(core_num)
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
            raise kernel_error(reply, "device")
        with in_protocol("device"):
            ok = reply["ok"]
            # device times go into the pool's histograms: each phase, finite, within the launch's timeout
            timings = {phase: float(ok["timings"][phase]) for phase in DEVICE_PHASES}
            if not all(0 <= seconds <= self.timeout_s for seconds in timings.values()):
                raise ValueError("a device time that cannot be")
            log = str(ok["log"])
        if [len(data) for data in written] != [array.nbytes for array in tensors]:
            self.close()
            raise KernelError(f"the {self._device}'s process answered out of protocol", kind="runtime_error")
        for array, data in zip(tensors, written):
            array.reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8)
        return RunResult(written=[p["name"] for p in params if p["kind"] == "tensor"], seconds=timings["kernel"],
                         log=log, timings=timings)

    def _exchange(self, request: Dict[str, Any], blobs: List[Any]):
        timeout_s = self.timeout_s if self.deadline is None else min(self.timeout_s, self.deadline.left())
        deadline = time.monotonic() + timeout_s + REPLY_GRACE_S
        try:
            write_message(self.process.stdin.fileno(), request, blobs, deadline)
            reply, written = read_message(self.process.stdout.fileno(), deadline)
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
            how = bwrap.describe_exit(self.process.returncode)
            self._stop()
            raise KernelError(f"the {self._device} crashed running the kernel (its process {how}); the device "
                              "is re-initialised for the next launch", kind="runtime_error") from None
        if reply.get("ended"):  # a device error: it reset the device and ends; the next launch starts anew
            self.process.wait(timeout=REPLY_GRACE_S)
            self._stop()
        return reply, written

    def close(self) -> None:
        self._stop()


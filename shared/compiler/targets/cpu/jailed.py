"""The cpu target in a worker's jails: each build in a fresh jail, each tenant's launches in a run
jail of its own, kept warm for that tenant's next job only. JailedCpuToolchain and JailedRunners are
the broker's side; `serve` runs inside the run jail.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from collections import OrderedDict
from typing import Any, Dict, List

import numpy as np

from ... import socs
from ...errors import KernelError
from ...sandbox import confine, probes
from ...sandbox.bwrap import SCRATCH, command, kill, popen, usage
from ...sandbox.framing import MAX_HEADER_BYTES, read_message, write_all, write_message
from ...sandbox.inside import BROKER_REQUEST_CAP, STDIN, STDOUT, announce_ready
from ...sandbox.jail import (MAX_ARTIFACT_BYTES, Deadline, JailCrashed, JailedToolchain, JailTimeout, PythonJail,
                             error_reply, in_protocol, kernel_error, out_of_protocol)
from ...sandbox.tensors import ArrayTensor, BrokerTensor
from ..contract import RunResult
from .runner import CpuRunner

RUN_JAIL_ARTIFACTS = 8  # artifacts a run jail keeps, so that a tenant's repeated launch sends none
IDLE_CPU_S = 0.05  # what a run jail may spend between two launches (an idle one spends none)


class JailedCpuToolchain(JailedToolchain):
    """The C++ compile in a fresh jail (its own pid namespace: cc1plus dies with it)."""
    MAX_STDERR = 1 << 20

    def build(self, source: str, kernel_name: str, kernel_type: str = "AIV_ONLY",
              npu_arch: int = socs.DEFAULT_NPU_ARCH) -> bytes:
        unit = self.toolchain.translation_unit(source, kernel_name, kernel_type).encode()
        source_fd = os.memfd_create("kernel.cpp")
        write_all(source_fd, unit)
        os.lseek(source_fd, 0, os.SEEK_SET)
        compile_ = shlex.join(self.toolchain.command(SCRATCH, npu_arch))
        # the .so comes back over stdout: the broker never opens a path the jail could have planted
        script = f"{compile_} >&2 && exec cat {SCRATCH}/kernel.so"
        filter_fd = confine.build_filter()
        cmd = command(["/bin/sh", "-c", script], self.toolchain.read_only_paths(npu_arch),
                      files=[(source_fd, f"{SCRATCH}/kernel.cpp")], seccomp=filter_fd)
        # every process of the jail inherits them
        rlimits = {"cpu": self.limits["cpu"], "core": 0, "fsize": MAX_ARTIFACT_BYTES}
        if self.limits["memory"] > 0:  # 0: unlimited
            rlimits["as"] = self.limits["memory"]

        # stdout and stderr are files, not pipes: RLIMIT_FSIZE bounds what the jail can make the
        # broker hold, however much a (compromised) compiler writes
        out_fd, err_fd = os.memfd_create("kernel.so"), os.memfd_create("build.stderr")
        try:
            try:
                process = popen(cmd, stdin=subprocess.DEVNULL, stdout=out_fd, stderr=err_fd,
                                pass_fds=[source_fd, filter_fd], rlimits=rlimits)
            finally:
                os.close(source_fd)
                os.close(filter_fd)
            try:
                process.wait(timeout=self.deadline.left())
            except subprocess.TimeoutExpired:
                raise self.deadline.expired() from None
            finally:
                if process.returncode is None:
                    kill(process)  # its pid namespace: nothing of the build outlives it
            if process.returncode != 0:
                err = os.pread(err_fd, self.MAX_STDERR, 0)
                raise self.toolchain.failed(kernel_name, err.decode(errors="replace"), SCRATCH, source)
            out = os.pread(out_fd, MAX_ARTIFACT_BYTES, 0)
        finally:
            os.close(out_fd)
            os.close(err_fd)
        if not out.startswith(b"\x7fELF"):
            raise KernelError(f"the C++ build of '{kernel_name}' gave no shared library", kind="build_error")
        return out


class JailedRunners:
    """A runner jail per tenant, reused for that tenant's next job only; the least recently used
    goes when there are more than `size`. A jail is reused only if nothing of the last launch
    still runs in it: no thread it did not have when it started, no CPU spent while idle."""
    streams_tensors = True  # takes BrokerTensors (sandbox/tensors.py), not only arrays (contract.Runner)

    def __init__(self, limits: Dict, size: int = 4):
        self.limits = limits
        self.size = size
        self.jails: Dict[str, PythonJail] = {}
        self.deadline = Deadline(3600)
        self.tenant = ""

    def for_tenant(self, tenant: str) -> "JailedRunners":
        self.tenant = tenant
        return self

    def _jail(self) -> PythonJail:
        jail_ = self.jails.pop(self.tenant, None)
        if jail_ is not None:
            now = usage(jail_.stage_pid)
            # its RLIMIT_CPU (a limit on its whole life) could end this job, or it ran while idle
            if now.cpu_s + self.deadline.left() >= self.limits["cpu"] or now.cpu_s - jail_.cpu_s > IDLE_CPU_S:
                jail_.close()
                jail_ = None
        if jail_ is None or not jail_.alive:
            jail_ = PythonJail("run", self.limits)
        self.jails[self.tenant] = jail_  # most recent last
        while len(self.jails) > self.size:
            self.jails.pop(next(iter(self.jails))).close()
        return jail_

    def run(self, artifact: bytes, core_num: int, params, kernel_args, values, bounds: str = "fault",
            hazards: str = "warn", model: bool = True):
        """CpuRunner.run's contract; a tensor is a numpy array (written back in place) or a
        BrokerTensor (sent from its source and received into its sink, piece by piece). A jail gets
        each artifact once: it keeps the last RUN_JAIL_ARTIFACTS it was sent, by digest."""
        jail_ = self._jail()
        digest = hashlib.sha256(artifact).hexdigest()
        blobs, sent, tensors = [b"" if digest in jail_.artifacts else artifact], [], {}
        for param, value in zip(params, values):
            if isinstance(value, (np.ndarray, BrokerTensor)):
                tensor = ArrayTensor(value) if isinstance(value, np.ndarray) else value
                sent.append({"tensor": {"dtype": tensor.dtype.name, "shape": list(tensor.shape), "blob": len(blobs)}})
                blobs.append(tensor.frame())
                tensors[param["name"]] = tensor
            elif isinstance(value, (bytes, bytearray)):
                sent.append({"struct": len(blobs)})
                blobs.append(bytes(value))
            else:
                sent.append({"scalar": value})
        request = {"core_num": core_num, "params": list(params), "kernel_args": list(kernel_args), "values": sent,
                   "bounds": bounds, "hazards": hazards, "model": bool(model), "artifact": digest}
        # a reply holds the header and at most the tensors it was sent: a jail cannot flood the broker
        max_reply = MAX_HEADER_BYTES + sum(tensor.nbytes for tensor in tensors.values())
        received: List[str] = []  # the written tensors, in the order their frames came

        def sink_for(reply: Dict, index: int, size: int):
            """Frame `index` of the reply is the tensor its header names `written[index]`, whole."""
            try:
                name = str(reply["ok"]["written"][index])
            except (KeyError, TypeError, IndexError):
                raise out_of_protocol("run") from None
            if name not in tensors or name in received or size != tensors[name].nbytes:
                raise out_of_protocol("run")
            received.append(name)
            return tensors[name].receive()

        reply = self._request(jail_, request, blobs, max_reply, sink_for)
        if reply.get("need_artifact"):  # it does not hold what we counted on: send it
            blobs[0] = artifact
            reply = self._request(jail_, request, blobs, max_reply, sink_for)
        left = self._left_running(jail_)
        jail_.artifacts.pop(digest, None)
        jail_.artifacts[digest] = True  # most recent last, as the jail keeps them
        while len(jail_.artifacts) > RUN_JAIL_ARTIFACTS:
            jail_.artifacts.pop(next(iter(jail_.artifacts)))
        if "error" in reply:
            raise kernel_error(reply, "run")
        if left:
            raise KernelError(left, kind="runtime_error")
        with in_protocol("run"):
            ok = reply["ok"]
            model, trace = ok["model"], ok["trace"]
            if not (model is None or isinstance(model, dict)) or not (trace is None or isinstance(trace, str)):
                raise ValueError("model or trace of the wrong type")
            seconds = float(ok["seconds"])
            if not 0 <= seconds <= self.deadline.timeout_s:  # NaN too: it goes into the pool's histograms
                raise ValueError("a run time that cannot be")
            result = RunResult(written=[str(n) for n in ok["written"]], seconds=seconds,
                               log=str(ok["log"]), warnings=[str(w) for w in ok["warnings"]], model=model, trace=trace)
        if result.written != received:  # every tensor it says it wrote came back, once
            raise out_of_protocol("run")
        return result

    def _left_running(self, jail_: PythonJail) -> str:
        """Why the jail cannot serve another launch ("" if it can): what the kernel started still
        runs (a launch may start threads and return). Such a jail is stopped at once."""
        now = usage(jail_.stage_pid)
        jail_.cpu_s = now.cpu_s
        started = now.threads - jail_.threads
        if not started:
            return ""
        self.jails.pop(self.tenant, None)
        jail_.close()
        return (f"the kernel left {len(started)} thread(s) running after its launch ended: they were stopped with "
                "its jail")

    def probe(self, request: Dict) -> Dict[str, str]:
        """check.probes run in this tenant's run jail, as its kernels run there."""
        jail_ = self._jail()
        reply = self._request(jail_, {"probe": request}, [], MAX_HEADER_BYTES)
        with in_protocol("run"):
            return dict(reply["ok"])

    def _request(self, jail_: PythonJail, request: Dict, blobs: List, max_reply: int, sink_for=None) -> Dict:
        try:
            return jail_.request(request, blobs, self.deadline.left(), max_reply, sink_for)[0]
        except JailTimeout:
            self.jails.pop(self.tenant, None)
            raise self.deadline.expired() from None
        except JailCrashed as e:
            self.jails.pop(self.tenant, None)
            raise KernelError(f"the kernel crashed its jail: {e}", kind="runtime_error") from None
        except BaseException:  # out of protocol, or a tensor's source or sink failed: the jail was closed
            self.jails.pop(self.tenant, None)
            raise

    def close(self) -> None:
        for jail_ in self.jails.values():
            jail_.close()
        self.jails.clear()


# ---------------------------------------------------------------------------------------------
# inside the run jail

def _run_one(runner, header: Dict[str, Any], blobs: List[memoryview], artifacts: "OrderedDict[str, bytes]"):
    """One launch. The broker sends an artifact the first time only (an empty frame after):
    `artifacts` keeps the last RUN_JAIL_ARTIFACTS, as the broker counts them."""
    digest = header["artifact"]
    if blobs[0]:
        artifacts[digest] = bytes(blobs[0])
    artifact = artifacts.get(digest)
    if artifact is None:
        return {"need_artifact": True}, []  # the broker counted on one this jail no longer holds
    artifacts.move_to_end(digest)
    while len(artifacts) > RUN_JAIL_ARTIFACTS:
        artifacts.popitem(last=False)
    values, tensors = [], {}
    for param, value in zip(header["params"], header["values"]):
        if "tensor" in value:
            t = value["tensor"]
            array = np.frombuffer(blobs[t["blob"]], dtype=t["dtype"]).reshape(t["shape"])  # each its own frame
            tensors[param["name"]] = array
            values.append(array)
        elif "struct" in value:
            values.append(bytes(blobs[value["struct"]]))
        else:
            values.append(value["scalar"])
    ran = runner.run(artifact, header["core_num"], header["params"], header["kernel_args"], values,
                     bounds=header["bounds"], hazards=header["hazards"], model=header["model"] is True)
    reply = {"ok": {"written": ran.written, "seconds": ran.seconds, "log": ran.log, "warnings": ran.warnings,
                    "model": ran.model, "trace": ran.trace}}
    return reply, [memoryview(tensors[name]).cast("B") for name in ran.written]


def serve(limits: Dict[str, int]) -> None:
    """The run jail (sandbox.inside.STAGES "run"): launches of one tenant, one request each."""
    confine.apply_limits(limits)
    confine.confine(allow_fork=False)
    runner = CpuRunner()
    artifacts: "OrderedDict[str, bytes]" = OrderedDict()
    announce_ready()
    while True:
        try:
            header, blobs = read_message(STDIN, cap=BROKER_REQUEST_CAP)
        except EOFError:
            return
        try:
            if "probe" in header:  # the broker's, never a tenant's: --check-jail and the isolation tests
                reply, written = {"ok": probes.probes(header["probe"])}, []
            else:
                reply, written = _run_one(runner, header, blobs, artifacts)
        except BaseException as e:  # noqa: BLE001 - everything becomes the answer
            reply, written = error_reply(e), []
        write_message(STDOUT, reply, written)

"""What runs inside a jail (jail.py starts it): `main(stage, limits)`.

Every stage applies its rlimits and seccomp filter before it reads a request, and talks to the
broker only over stdin/stdout (jail.py's framing).

- frontend: a zygote. It imports and warms pyasc, then for each request forks a child that runs
  frontend.run under a stricter filter (no fork) and its own CPU limit. The zygote never parses
  a request: it passes the frames to the child and relays the child's answer, with how the child
  ended. It is not dumpable, so a child cannot write its memory, and children share no writable
  place (each writes its answer to a pipe of its own).
- run: a runner for one tenant's jobs: artifact and tensors in, RunResult and written tensors out.
- probe: tries what a hostile stage would (--check-jail, the tests) under a stage's filter.
- cann-build:<soc>, device:<backend>:<soc>:<sync ms>: the CANN targets' build and device process.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import sys
from collections import OrderedDict
from typing import Any, Dict, List

from . import jail
from .errors import KernelError

STDIN, STDOUT = 0, 1


def _limits(limits: Dict[str, int]) -> None:
    from ascrun.server.workers import sandbox
    sandbox.limit_resources(limits["cpu"], limits["files"], limits["memory"])


def _error(e: BaseException) -> Dict[str, Any]:
    if isinstance(e, KernelError):
        return {"error": {"kind": e.kind, "message": str(e), "log": e.log, "warnings": e.warnings}}
    if isinstance(e, MemoryError):
        return {"error": {"kind": "limit", "message": "the stage ran out of its jail's memory"}}
    return {"error": {"kind": "runtime_error", "message": f"internal error in the jail: {e.__class__.__name__}: {e}"}}


# ---------------------------------------------------------------------------------------------
# frontend zygote

def _warm_up() -> None:
    """pyasc's first compile in a process sets up MLIR (about 2 s): paid once, by the zygote."""
    from .bundle import KernelBundle, KernelFunction
    from .frontend import ArgSpec, run
    warm = KernelBundle(entry="ascrun_warm_up", constants=(), modules=(("asc", "asc"),), functions=(
        KernelFunction("ascrun_warm_up", "@asc.jit\ndef ascrun_warm_up(x: asc.GlobalAddress):\n"
                       "    asc.pipe_barrier(asc.PipeID.PIPE_ALL)\n", "<ascrun warm-up>", 1),))
    run(warm, [ArgSpec("tensor", "float32")])


def _frontend_child(frames: List[bytes], answer: int, cpu_s: int) -> None:
    from ascrun.server.workers import sandbox
    os.close(STDIN)
    os.close(STDOUT)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    sandbox.confine(allow_fork=False)
    try:
        from . import frontend
        from .bundle import KernelBundle
        header, _ = jail.parse_message(frames)
        result = frontend.run(KernelBundle.from_json(header["bundle"]),
                              [frontend.ArgSpec(a["kind"], a["dtype"], a.get("value")) for a in header["args"]],
                              header["options"])
        reply = {"ok": result.to_json()}
    except BaseException as e:  # noqa: BLE001 - everything becomes the answer
        reply = _error(e)
    jail.write_message(answer, reply)
    os._exit(0)


# What the broker sends is bounded by the tenant's limits, not by a jail's reply caps: a launch's
# tensors (several of up to max_blob_bytes) arrive in one message.
BROKER_REQUEST_CAP = 1 << 62


def clear_scratch(folder: str, keep) -> None:
    """Remove what a previous child left in the scratch (all but the names in `keep`), so nothing
    passes from one job (tenant) to the next; a child cannot fork, so nothing of it still writes."""
    for name in set(os.listdir(folder)) - keep:
        _remove(os.path.join(folder, name))


def _remove(path: str) -> None:
    """Like rmtree, but a folder the child made unreadable (chmod 000) is opened up first, not
    left behind with what it holds; links are removed, never followed."""
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        for entry in os.listdir(path):
            _remove(os.path.join(path, entry))
        os.rmdir(path)
    else:
        os.unlink(path)


def _frontend(limits: Dict[str, int]) -> None:
    from ascrun.server.workers import sandbox
    _limits(dict(limits, cpu=resource.RLIM_INFINITY))
    _warm_up()
    import gc
    gc.freeze()  # the children's GC leaves the warm pages shared
    sandbox.not_dumpable()
    sandbox.confine(allow_fork=True)
    jail.write_message(STDOUT, {"ready": True})
    warm = set(os.listdir(jail.SCRATCH))
    while True:
        try:
            frames = jail.read_frames(STDIN, cap=BROKER_REQUEST_CAP)
        except EOFError:
            return
        clear_scratch(jail.SCRATCH, warm)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _frontend_child(frames, write, limits["cpu"])
        os.close(write)
        answer = bytearray()  # relayed unparsed: the broker checks it
        while len(answer) <= jail.MAX_ANSWER_BYTES:
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            answer += chunk
        os.close(read)
        if len(answer) > jail.MAX_ANSWER_BYTES:
            os.kill(pid, signal.SIGKILL)
            answer = bytearray()
        _, status = os.waitpid(pid, 0)
        ended = (f"killed by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
                 else f"exited with status {os.WEXITSTATUS(status)}")
        jail.write_frames(STDOUT, [json.dumps({"ended": ended}).encode(), bytes(answer)])


# ---------------------------------------------------------------------------------------------
# runner

def _run_one(runner, header: Dict[str, Any], blobs: List[memoryview], artifacts: "OrderedDict[str, bytes]"):
    """One launch. The broker sends an artifact the first time only (an empty frame after):
    `artifacts` keeps the last RUN_JAIL_ARTIFACTS, as the broker counts them."""
    import numpy as np
    digest = header["artifact"]
    if blobs[0]:
        artifacts[digest] = bytes(blobs[0])
    artifact = artifacts.get(digest)
    if artifact is None:
        return {"need_artifact": True}, []  # the broker counted on one this jail no longer holds
    artifacts.move_to_end(digest)
    while len(artifacts) > jail.RUN_JAIL_ARTIFACTS:
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
                     bounds=header["bounds"], hazards=header["hazards"])
    reply = {"ok": {"written": ran.written, "seconds": ran.seconds, "log": ran.log, "warnings": ran.warnings,
                    "model": ran.model, "trace": ran.trace}}
    return reply, [memoryview(tensors[name]).cast("B") for name in ran.written]


def _runner(limits: Dict[str, int]) -> None:
    from ascrun.server.workers import sandbox
    from .runner import CpuRunner
    _limits(limits)
    sandbox.confine(allow_fork=False)
    runner = CpuRunner()
    artifacts: "OrderedDict[str, bytes]" = OrderedDict()
    jail.write_message(STDOUT, {"ready": True})
    while True:
        try:
            header, blobs = jail.read_message(STDIN, cap=BROKER_REQUEST_CAP)
        except EOFError:
            return
        try:
            reply, written = _run_one(runner, header, blobs, artifacts)
        except BaseException as e:  # noqa: BLE001 - everything becomes the answer
            reply, written = _error(e), []
        usage = resource.getrusage(resource.RUSAGE_SELF)
        reply["cpu_s"] = usage.ru_utime + usage.ru_stime  # RLIMIT_CPU counts the jail's life: the broker retires it in time
        jail.write_message(STDOUT, reply, written)


# ---------------------------------------------------------------------------------------------
# probes

def _attempt(action) -> str:
    try:
        action()
        return "allowed"
    except OSError as e:
        return f"refused ({os.strerror(e.errno) if e.errno else e})"


def _connect(host: str, port: int) -> None:
    import socket
    with socket.create_connection((host, port), timeout=2):
        pass


def _fork_and_exit() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def _exec() -> None:
    import subprocess
    subprocess.run(["/bin/true"], check=True)


def _inherited_fds() -> str:
    fds = sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2)
    return "none" if len(fds) <= 1 else f"open: {fds}"  # one is listdir's own


def _write(path: str) -> None:
    with open(path, "w") as f:
        f.write("jail")


def probes(request: Dict[str, Any]) -> Dict[str, str]:
    """What a compromised stage can do; each value "allowed", "refused (...)" or a finding."""
    results = {
        "environment": "empty" if not {k for k in os.environ if k not in ("PATH", "TMPDIR", "HOME")}
        else f"has {sorted(os.environ)}",
        "inherited fds": _inherited_fds(),
        "write scratch": _attempt(lambda: _write("/tmp/probe")),
        "see other processes": "no" if sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, os.getpid()]
        or all(int(p) in (1, 2, os.getpid(), os.getppid()) for p in os.listdir("/proc") if p.isdigit())
        else f"yes: {sorted(p for p in os.listdir('/proc') if p.isdigit())}",
        "signal parent": _attempt(lambda: os.kill(os.getppid(), 0)),
        "signal everyone": _attempt(lambda: os.kill(-1, 0)),
        "fork": _attempt(_fork_and_exit),
        "exec": _attempt(_exec),
    }
    for path in request.get("read", []):
        results[f"read {path}"] = _attempt(lambda: open(path, "rb").read(1))
    for path in request.get("write", []):
        results[f"write {path}"] = _attempt(lambda: _write(path))
    for host, port in request.get("connect", []):
        results[f"connect {host}:{port}"] = _attempt(lambda: _connect(host, port))
    return results


def _probe(limits: Dict[str, int], profile: str) -> None:
    from ascrun.server.workers import sandbox
    _limits(limits)
    if profile == "frontend":  # as a frontend child: the zygote's filter, then the child's
        sandbox.confine(allow_fork=True)
        sandbox.confine(allow_fork=False)
    else:
        sandbox.confine(allow_fork=False)
    jail.write_message(STDOUT, {"ready": True})
    header, _ = jail.read_message(STDIN)
    jail.write_message(STDOUT, probes(header))


# ---------------------------------------------------------------------------------------------
# CANN stages (cann.py starts them with the installation in view; tested where CANN is)

def _cann_build(limits: Dict[str, int], soc: str) -> None:
    """One build: pyasc's Compiler runs bisheng and ld.lld, so no seccomp filter on new programs;
    the jail (no network, read-only view, no secrets) and the rlimits hold."""
    _limits(limits)
    jail.write_message(STDOUT, {"ready": True})
    header, _ = jail.read_message(STDIN, cap=BROKER_REQUEST_CAP)
    try:
        from .cann import CannToolchain
        reply, blobs = {"ok": True}, [CannToolchain(soc).build(str(header["source"]), str(header["kernel_name"]),
                                                                str(header["kernel_type"]))]
    except BaseException as e:  # noqa: BLE001 - everything becomes the answer
        reply, blobs = _error(e), []
    jail.write_message(STDOUT, reply, blobs)


def _device(backend: str, soc: str, sync_timeout_ms: str) -> None:
    """The device process, jailed: no core dumps; no CPU, memory or seccomp limits, which pyasc's
    runtime on an NPU or camodel has not been measured against (the broker's deadline kills it)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    from .cann import serve_device
    serve_device(backend, soc, int(sync_timeout_ms))


def main(stage: str, limits_json: str) -> None:
    limits = json.loads(limits_json)
    if stage == "frontend":
        _frontend(limits)
    elif stage == "run":
        _runner(limits)
    elif stage.startswith("cann-build:"):
        _cann_build(limits, stage.split(":", 1)[1])
    elif stage.startswith("device:"):
        _device(*stage.split(":")[1:4])
    elif stage.startswith("probe:"):
        _probe(limits, stage.split(":", 1)[1])
    else:
        sys.exit(f"unknown stage {stage!r}")

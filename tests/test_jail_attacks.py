"""Attacks by a jail that is already compromised, on the broker (sandbox/jail.py's side of the pipes)."""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

from ascrun.compiler.sandbox import bwrap, jail
from ascrun.compiler.targets.cann import jailed as cann_jailed
from ascrun.compiler.targets.cpu import jailed as cpu_jailed
from ascrun.compiler.errors import KernelError

pytestmark = pytest.mark.kernel

LIMITS = {"memory": 8 << 30, "cpu": 60, "files": 64}
# a run jail taken over by an earlier job of its tenant: says it is ready, then never reads again
DEAF = ("import os, time; os.write(1, (2).to_bytes(8, 'big') + (15).to_bytes(8, 'big') + b'{\"ready\": true}'"
        " + (0).to_bytes(8, 'big')); time.sleep(600)")


class Hijacked(jail.PythonJail):
    def __init__(self, script: str):
        self.process = bwrap.popen(bwrap.command(["/usr/bin/python3", "-I", "-c", script]), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ready, self.stderr_tail, self.stage = False, "", "run"
        self.artifacts = {}
        self.cpu_s, self.threads, self.stage_pid = 0.0, frozenset(), 0


def test_a_jail_that_stops_reading_cannot_hang_the_worker():
    runners = cpu_jailed.JailedRunners(LIMITS).for_tenant("mallory")
    runners.jails["mallory"] = Hijacked(DEAF)
    runners.deadline = jail.Deadline(2)
    x = np.zeros(4 << 20, np.float32)  # far more than a pipe holds
    said = []

    def run():
        with pytest.raises(KernelError) as failed:
            runners.run(b"\x7fELF", 1, [{"name": "x", "kind": "tensor", "dtype": "float32"}], ["x"], [x])
        said.append((failed.value.kind, str(failed.value)))
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)  # not a timing: without the fix the write never returns
    try:
        assert said == [("timeout", "the job ran longer than its 2 s timeout and was stopped")]
        assert "mallory" not in runners.jails
    finally:
        runners.close()


# answers a request with a message that claims a 1 GiB frame, then sends nothing more
BLOATED = ("import os, time; ready = b'{\"ready\": true}'; os.write(1, (1).to_bytes(8, 'big') + len(ready).to_bytes(8, 'big')"
           " + ready); os.read(0, 1); os.write(1, (2).to_bytes(8, 'big') + (2).to_bytes(8, 'big') + b'{}'"
           " + (1 << 30).to_bytes(8, 'big')); time.sleep(600)")


def test_a_run_jail_cannot_answer_more_than_the_tensors_it_was_sent():
    runners = cpu_jailed.JailedRunners(LIMITS).for_tenant("mallory")
    runners.jails["mallory"] = Hijacked(BLOATED)
    runners.deadline = jail.Deadline(30)
    x = np.zeros(16, np.float32)
    try:
        with pytest.raises(KernelError) as failed:
            runners.run(b"\x7fELF", 1, [{"name": "x", "kind": "tensor", "dtype": "float32"}], ["x"], [x])
        assert failed.value.kind == "runtime_error"
        assert str(failed.value).startswith("the kernel crashed its jail")
    finally:
        runners.close()


SYSCALLS = """
import ctypes, os
from ascrun.compiler.sandbox import confine
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
confine.confine(allow_fork=False)
params = ctypes.create_string_buffer(120)
info = ctypes.create_string_buffer(128)
ctypes.memmove(info, (ctypes.c_int * 3)(0, 0, -1), 12)  # si_code SI_QUEUE: what kill() would refuse
for name, nr, args in (("io_uring_setup", 425, (8, ctypes.addressof(params))),
                       ("rt_sigqueueinfo", 129, (os.getppid(), 0, ctypes.addressof(info))),
                       ("rt_tgsigqueueinfo", 297, (os.getppid(), os.getppid(), 0, ctypes.addressof(info)))):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    print(name, "allowed" if r >= 0 else os.strerror(ctypes.get_errno()))
"""


def test_the_filter_refuses_io_uring_and_queued_signals_to_others():
    import subprocess
    done = subprocess.run([sys.executable, "-c", SYSCALLS], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["io_uring_setup Operation not permitted",
                                        "rt_sigqueueinfo Operation not permitted",
                                        "rt_tgsigqueueinfo Operation not permitted"], done.stdout + done.stderr


def test_what_a_frontend_child_leaves_in_the_scratch_is_gone_before_the_next():
    from ascrun.compiler.sandbox.frontend import clear_scratch
    base = Path(tempfile.mkdtemp())  # not under pytest's tmp_path: the jail's user must reach it
    os.chmod(base, 0o755)
    try:
        _clear_the_scratch(clear_scratch, base / "scratch", base / "outside")
    finally:
        shutil.rmtree(base)


def _clear_the_scratch(clear_scratch, scratch, outside):
    scratch.mkdir()
    outside.mkdir()
    (outside / "kept").write_text("the host's")
    (scratch / "warm").write_text("the zygote's")
    (scratch / "planted.py").write_text("import os")
    (scratch / "cache" / "deep").mkdir(parents=True)
    (scratch / "cache" / "deep" / "x").write_text("x")
    (scratch / "link").symlink_to(outside)
    (scratch / "locked" / "inside").mkdir(parents=True)
    (scratch / "locked" / "inside" / "x").write_text("x")
    if os.getuid() == 0:  # as the jail's user: root would read a locked folder anyway
        for path in [scratch, *scratch.rglob("*")]:
            os.lchown(path, 65534, 65534)
    os.chmod(scratch / "locked", 0)
    child = os.fork()
    if child == 0:
        try:
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            clear_scratch(str(scratch), {"warm"})
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    assert sorted(p.name for p in scratch.iterdir()) == ["warm"]
    assert (outside / "kept").read_text() == "the host's"  # a link is removed, not followed


def _answers(reply: str) -> str:
    """A run jail that says it is ready, then answers the first request with the header `reply`
    (a Python expression of bytes)."""
    ready = b'{"ready": true}'
    return (f"import os, time; ready = {ready!r}; reply = {reply}; "
            "os.write(1, (1).to_bytes(8, 'big') + len(ready).to_bytes(8, 'big') + ready); os.read(0, 1); "
            "os.write(1, (1).to_bytes(8, 'big') + len(reply).to_bytes(8, 'big') + reply); time.sleep(600)")


@pytest.mark.parametrize("reply, said", [
    ("b'[' * 100_000 + b']' * 100_000", "the kernel crashed its jail: "),  # past the JSON parser's depth
    ("""b'{"ok": 5}'""", "the run jail answered out of protocol"),
    ("""b'{"ok": {"written": [], "seconds": "soon", "log": "", "warnings": []}}'""",
     "the run jail answered out of protocol"),
    ("""b'{"error": ["not", "an", "object"]}'""", "the run jail answered out of protocol"),
    # a jail never chooses a job's status, nor plants a kind: only the broker's deadline is a timeout
    ("""b'{"error": {"kind": "timeout", "message": "planted"}}'""", "planted"),
    ("""b'{"error": {"kind": "' + b'x' * 100_000 + b'", "message": "planted"}}'""", "planted"),
    ("""b'{"ok": {"written": [], "seconds": 1e308, "log": "", "warnings": [], "model": null, "trace": null}}'""",
     "the run jail answered out of protocol"),
    ("""b'{"ok": {"written": [], "seconds": NaN, "log": "", "warnings": [], "model": null, "trace": null}}'""",
     "the run jail answered out of protocol"),
    ("""b'{"ok": {"written": [], "seconds": -1, "log": "", "warnings": [], "model": null, "trace": null}}'""",
     "the run jail answered out of protocol"),
])
def test_a_run_jail_answering_out_of_protocol_fails_its_job_only(reply, said):
    runners = cpu_jailed.JailedRunners(LIMITS).for_tenant("mallory")
    runners.jails["mallory"] = hijacked = Hijacked(_answers(reply))
    runners.deadline = jail.Deadline(30)
    try:
        with pytest.raises(KernelError) as failed:
            runners.run(b"\x7fELF", 1, [{"name": "x", "kind": "tensor", "dtype": "float32"}], ["x"],
                        [np.zeros(4, np.float32)])
        assert failed.value.kind == "runtime_error" and str(failed.value).startswith(said)
        if said.endswith("crashed its jail: "):
            assert not hijacked.alive and "mallory" not in runners.jails  # never reused
    finally:
        runners.close()


class FloodingCompiler:
    """A build whose compiler was taken over: it writes 600 MB of diagnostics."""
    id = "flood"

    def translation_unit(self, source: str, kernel_name: str, kernel_type: str) -> str:
        return source

    def command(self, scratch: str, npu_arch: int) -> list:
        return ["/bin/sh", "-c", "head -c 600000000 /dev/zero | tr '\\0' x"]

    def read_only_paths(self, npu_arch: int) -> list:
        return []

    def failed(self, kernel_name: str, stderr: str, scratch: str, source: str) -> KernelError:
        return KernelError(f"{len(stderr)} characters of diagnostics", kind="build_error")


def test_a_build_cannot_make_the_broker_hold_unbounded_output():
    import resource
    toolchain = cpu_jailed.JailedCpuToolchain(FloodingCompiler(), LIMITS)
    toolchain.deadline = jail.Deadline(120)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(KernelError) as failed:
        toolchain.build("int x;", "k")
    assert str(failed.value) == f"{cpu_jailed.JailedCpuToolchain.MAX_STDERR} characters of diagnostics"
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 << 10, f"the broker grew by {grown_kib} KiB"  # the output stayed in the jail's file


@pytest.mark.parametrize("reply", [b'{"error": ["not", "an", "object"]}', b'{"ok": true}'])
def test_a_cann_build_jail_answering_out_of_protocol_fails_its_job_only(monkeypatch, reply):
    """The CANN build jail's answer is read as the run jail's is (jail.kernel_error): a malformed
    error, or an answer without the artifact, fails the job as out of protocol."""
    script = ("import os, sys; w = lambda m: os.write(1, (1).to_bytes(8, 'big') + len(m).to_bytes(8, 'big') + m); "
              "w(b'{\"ready\": true}'); sys.stdin.buffer.read(8); w(" + repr(reply) + "); import time; time.sleep(60)")
    monkeypatch.setenv("ASCEND_HOME_PATH", "/nonexistent/ascend")
    monkeypatch.setattr(cann_jailed, "PythonJail", lambda *args: Hijacked(script))
    probe = type("Probe", (), {"soc": "Ascend910B1", "id": "hijacked"})()
    with pytest.raises(KernelError) as e:
        cann_jailed.JailedCannToolchain(probe, LIMITS).build("int x;", "k")
    assert e.value.kind == "runtime_error" and str(e.value) == "the build jail answered out of protocol"

"""The jails, probed for real: each stage's profile as a compromised stage would try it
(sandbox/probes.py), a hand-written hostile artifact in a real run jail, and a killed build."""
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ascrun.compiler import pipeline
from ascrun.compiler.sandbox import bwrap, frontend as sandbox_frontend, jail
from ascrun.compiler.targets.cpu import jailed as cpu_jailed
from ascrun.compiler.bundle import collect
from ascrun.compiler.errors import KernelError
from ascrun.compiler.frontend import ArgSpec
from conftest import start_redis

pytestmark = pytest.mark.kernel

HERE = Path(__file__).parent
LIMITS = {"memory": 8 << 30, "cpu": 60, "files": 64}
HOSTILE = HERE / "hostile" / "attacks.cpp"
SPECS = [ArgSpec("tensor", "float32")] * 3 + [ArgSpec("scalar", "int", 8)]


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory):
    proc, url = start_redis(tmp_path_factory.mktemp("jail-redis"))
    yield int(url.rsplit(":", 1)[1].split("/")[0])
    proc.terminate()
    proc.wait(10)


def _probe(profile: str, request: dict) -> dict:
    secret = os.open("/dev/null", os.O_RDONLY)
    os.set_inheritable(secret, True)  # an fd the broker left inheritable: close_fds must still close it
    try:
        stage = sandbox_frontend.JailedFrontend(LIMITS) if profile == "frontend" else cpu_jailed.JailedRunners(LIMITS)
        try:
            stage.deadline = jail.Deadline(120)
            return stage.for_tenant("mallory").probe(request)  # in a zygote's child, or in the run jail
        finally:
            stage.close()
    finally:
        os.close(secret)


@pytest.mark.parametrize("profile", ["frontend", "run"])
def test_python_stage_is_contained(profile, redis_port, tmp_path, monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{redis_port}")
    mine = tmp_path / "secret.txt"
    mine.write_text("secret")
    answer = _probe(profile, {"read": [str(mine), "/etc/passwd"], "write": [str(tmp_path / "x"), "/usr/x", "/dev/x", "/dev/shm/x"],
                              "connect": [["127.0.0.1", redis_port], ["1.1.1.1", 53]]})
    assert answer.pop("environment") == "has ['HOME', 'LC_CTYPE', 'PATH', 'PWD', 'TMPDIR']"  # nothing of ours
    assert "REDIS_URL" not in json.dumps(answer)
    assert answer.pop("write scratch") == "allowed"
    assert answer.pop("see other processes") == "no"
    assert answer.pop("inherited fds") == "none"
    assert all(v.startswith("refused") for v in answer.values()), answer
    assert not (tmp_path / "x").exists()


SECRET = "ascrun-secret-4f1d9c"  # in the broker's environment only


def _hostile_artifact(marker: Path) -> bytes:
    out = marker.parent / "attacks.so"
    subprocess.run(["c++", "-O1", "-shared", "-fPIC", "-pthread", f'-DMARKER="{marker}"', f'-DSECRET="{SECRET}"',
                    "-o", str(out), str(HOSTILE)], check=True)
    return out.read_bytes()


def _attack(runners, artifact: bytes, mode: int, timeout_s: float = 30) -> str:
    runners.deadline = jail.Deadline(timeout_s)
    with pytest.raises(KernelError) as failed:
        runners.run(artifact, 1, [{"name": "mode", "kind": "scalar", "dtype": "int32"}], ["explicit"], [mode])
    return f"{failed.value.kind}: {failed.value}"


def test_hostile_native_code_in_a_run_jail(tmp_path, monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"redis://:{SECRET}@127.0.0.1:6379/0")  # what a worker's environment holds
    marker = tmp_path / "marker"
    marker.write_text("")  # readable by everyone outside: the jail still cannot see it
    os.chmod(tmp_path, 0o755)
    artifact = _hostile_artifact(marker)
    marker.unlink()
    runners = cpu_jailed.JailedRunners(LIMITS).for_tenant("mallory")
    try:
        # the broker counts on the jail holding the artifact, and it does not: it asks, and gets it
        runners.for_tenant("mallory")._jail().artifacts[hashlib.sha256(artifact).hexdigest()] = True
        assert _attack(runners, artifact, 0) == "runtime_error: ok"
        first = runners.jails["mallory"].process.pid
        said = {mode: _attack(runners, artifact, mode) for mode in (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16)}
        assert said == {
            2: "runtime_error: read /etc/passwd: refused: No such file or directory",
            3: f"runtime_error: read {marker}: refused: No such file or directory",
            4: f"runtime_error: write {marker}: refused: No such file or directory",
            5: "runtime_error: kill parent: refused: Operation not permitted",
            6: "runtime_error: kill everyone: refused: Operation not permitted",
            7: "runtime_error: fork: refused: Operation not permitted",
            8: "runtime_error: inherited fds: refused: Bad file descriptor",
            9: "runtime_error: socket: refused: Operation not permitted",
            10: "runtime_error: read /proc/self/environ: allowed",  # its own, empty environment
            12: "runtime_error: secret found nowhere",  # bwrap, pid 1 there, was started without it too
            # its session's scheduling group runs behind the pool's own processes, and it cannot start
            # another (which would be at nice 0)
            14: "runtime_error: new session: refused: Operation not permitted",
            15: f"runtime_error: scheduled at nice {bwrap.JAIL_AUTOGROUP_NICE}",
            # no controlling terminal (its session is its own: bwrap's --new-session is not used)
            16: "runtime_error: open /dev/tty: refused: No such device or address",
        }
        jail_ = runners.jails["mallory"]
        assert os.getsid(jail_.stage_pid) == jail_.process.pid != os.getsid(0)
        assert runners.jails["mallory"].process.pid == first  # the tenant's jail, reused
        assert not marker.exists()

        # a crash: reported, the jail replaced
        assert _attack(runners, artifact, 1) == "runtime_error: the kernel crashed its jail: killed by SIGSEGV"
        assert "mallory" not in runners.jails
        assert _attack(runners, artifact, 0) == "runtime_error: ok"
        assert runners.jails["mallory"].process.pid != first

        # a spin: stopped at the job's deadline, the jail killed
        spinning = runners.jails["mallory"].process
        assert _attack(runners, artifact, 11, timeout_s=1) == \
            "timeout: the job ran longer than its 1 s timeout and was stopped"
        assert spinning.poll() is not None and "mallory" not in runners.jails
        assert _attack(runners, artifact, 0) == "runtime_error: ok"

        # a thread left running after its launch: the jail is stopped, nothing of it runs on
        leaving = runners.jails["mallory"].process
        assert _attack(runners, artifact, 13) == "runtime_error: a thread left spinning"
        assert leaving.poll() is not None and "mallory" not in runners.jails
        assert _attack(runners, artifact, 0) == "runtime_error: ok"

        # another tenant never gets this tenant's process
        runners.for_tenant("alice")
        assert _attack(runners, artifact, 0) == "runtime_error: ok"
        assert runners.jails["alice"].process.pid != runners.jails["mallory"].process.pid
    finally:
        runners.close()


def _cc1plus_below(pid: int) -> list:
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "cc1plus" and _ancestor(int(comm.parent.name), pid):
                found.append(int(comm.parent.name))
        except (OSError, ValueError):
            pass
    return found


def _ancestor(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return False


def test_a_killed_build_leaves_no_compiler(add_example):
    target = pipeline.get_target("cpu")
    result = target.frontend(collect(add_example.vadd_kernel), SPECS, {})
    toolchain = cpu_jailed.JailedCpuToolchain(target.toolchain, LIMITS)
    toolchain.toolchain.read_only_paths()  # the prebuilt runtime exists before the clock starts
    me = os.getpid()
    seen = []
    # about 300k template instantiations: cc1plus would run on for many seconds
    slow = ("template<int N, int M> struct A { static const int v = A<N - 1, M>::v + A<N - 1, M + 1>::v; };\n"
            "template<int M> struct A<0, M> { static const int v = M; };\nint ascrun_slow = A<800, 0>::v;\n")
    toolchain.deadline = jail.Deadline(1.5)
    import threading
    done = threading.Event()

    def watch():
        while not done.is_set():
            seen.extend(p for p in _cc1plus_below(me) if p not in seen)
            time.sleep(0.02)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with pytest.raises(KernelError) as failed:
            toolchain.build(result.source + slow, result.kernel_name)
    finally:
        done.set()
        watcher.join()
    assert failed.value.kind == "timeout"
    assert seen, "the compiler never started"
    deadline = time.monotonic() + 1  # the kernel tears the pid namespace down after its init died
    while [p for p in seen if Path(f"/proc/{p}").exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in seen if Path(f"/proc/{p}").exists()]


@pytest.mark.parametrize("memory", [LIMITS["memory"], 0])  # ASCRUN_WORKER_MEMORY_BYTES=0: unlimited
def test_a_build_in_its_jail_is_the_same_library(add_example, memory):
    limits = dict(LIMITS, memory=memory)
    target = pipeline.get_target("cpu")
    result = target.frontend(collect(add_example.vadd_kernel), SPECS, {})
    toolchain = cpu_jailed.JailedCpuToolchain(target.toolchain, limits)
    artifact = toolchain.build(result.source, result.kernel_name)
    runners = cpu_jailed.JailedRunners(limits).for_tenant("alice")
    try:
        x, y = np.arange(8 * 2048, dtype=np.float32), np.ones(8 * 2048, np.float32)
        z = np.zeros_like(x)
        ran = runners.run(artifact, 8, result.params, result.kernel_args, [x, y, z, 2048])
        np.testing.assert_array_equal(z, x + y)
        assert ran.written == ["z"]
    finally:
        runners.close()


def test_a_run_jail_is_retired_before_its_lifetime_cpu_limit_could_end_a_job(add_example):
    """RLIMIT_CPU counts a warm run jail's whole life: the broker reads its CPU time so far from /proc
    after each launch, and a jail whose remaining budget is shorter than the next job's deadline is
    replaced first."""
    target = pipeline.get_target("cpu")
    result = target.frontend(collect(add_example.vadd_kernel), SPECS, {})
    artifact = target.toolchain.build(result.source, result.kernel_name)
    runners = cpu_jailed.JailedRunners(LIMITS).for_tenant("alice")
    x, y = np.arange(8 * 2048, dtype=np.float32), np.ones(8 * 2048, np.float32)
    try:
        runners.deadline = jail.Deadline(30)
        runners.run(artifact, 8, result.params, result.kernel_args, [x, y, np.zeros_like(x), 2048])
        first = runners.jails["alice"]
        assert 0 < first.cpu_s < 30  # importing numpy and running the kernel
        runners.run(artifact, 8, result.params, result.kernel_args, [x, y, np.zeros_like(x), 2048])
        assert runners.jails["alice"] is first  # 30 s of deadline still fit in its 60 s
        runners.limits = dict(LIMITS, cpu=int(first.cpu_s) + 30)  # as if it had run long kernels: 30 s no longer fit
        runners.deadline = jail.Deadline(30)
        z = np.zeros_like(x)
        runners.run(artifact, 8, result.params, result.kernel_args, [x, y, z, 2048])
        np.testing.assert_array_equal(z, x + y)
        assert runners.jails["alice"] is not first and not first.alive
    finally:
        runners.close()


def test_check_jail_reports_every_stage_contained(redis_port, tmp_path):
    tenants = tmp_path / "tenants.json"
    tenants.write_text('{"tenants": []}')
    env = dict(os.environ, REDIS_URL=f"redis://127.0.0.1:{redis_port}", ASCRUN_TENANTS_FILE=str(tenants))
    done = subprocess.run([sys.executable, "-m", "ascrun.cli", "worker", "--check-jail"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ok   read {tenants}: refused (No such file or directory)" in done.stdout
    assert f"ok   connect 127.0.0.1:{redis_port}: refused" in done.stdout
    assert done.stdout.count("ok   found: nowhere") == 3  # neither the canary tenant's marker nor the Redis URL
    build = done.stdout[done.stdout.index("build jail:"):]
    assert "ok   socket: refused (Operation not permitted)" in build  # the build's own seccomp filter
    assert done.stdout.endswith("every stage is contained as designed\n")


def _compile_time_hog():
    """A kernel whose compile never ends: pyasc computes the constant in Python (no gate bypass:
    each call is the kernel language)."""
    from ascrun.compiler.bundle import KernelBundle, KernelFunction
    source = "@asc.jit\ndef hog(x: asc.GlobalAddress):\n    asc.printf(\"%d\\n\", 10 ** 10 ** 10 % 7)\n"
    return KernelBundle(entry="hog", constants=(), modules=(("asc", "asc"),),
                        functions=(KernelFunction("hog", source, "hog.py", 1),))


def test_frontend_zygote_survives_a_crashed_child_and_is_replaced_after_a_hang(add_example):
    frontend = sandbox_frontend.JailedFrontend(dict(LIMITS, cpu=1))
    try:
        frontend.start()
        spare = frontend.spare
        with pytest.raises(KernelError) as crashed:  # the child's CPU limit (soft = hard) kills it
            frontend(_compile_time_hog(), [ArgSpec("tensor", "float32")], {})
        assert (crashed.value.kind, str(crashed.value)) == ("compile_error",
                                                            "the frontend crashed its jail: killed by SIGKILL")
        assert frontend.zygotes[""] is spare and spare.alive  # the spare became the tenant's; only the child died
    finally:
        frontend.close()

    frontend = sandbox_frontend.JailedFrontend(LIMITS)
    try:
        frontend.start()
        frontend.deadline = jail.Deadline(2)
        with pytest.raises(KernelError) as hung:
            frontend(_compile_time_hog(), [ArgSpec("tensor", "float32")], {})
        assert (hung.value.kind, str(hung.value)) == ("timeout",
                                                      "the job ran longer than its 2 s timeout and was stopped")
        zygote = frontend.zygotes[""]
        assert not zygote.alive  # killed with its child

        frontend.deadline = jail.Deadline(120)
        result = frontend(collect(add_example.vadd_kernel), SPECS, {})  # a new zygote serves the next job
        assert result.kernel_name and frontend.zygotes[""] is not zygote
    finally:
        frontend.close()


def test_a_stage_that_dies_at_start_says_why_and_a_ready_one_writes_to_no_one():
    """Until a stage is ready, its stderr (ours and pyasc's, no tenant's yet) says why it died;
    once ready, its stderr is /dev/null (a tenant's data could be in it) and the broker holds no
    end of it."""
    broken = jail.PythonJail("nonesuch", LIMITS)
    with pytest.raises(jail.JailCrashed) as died:
        broken.wait_ready(time.monotonic() + 60)
    assert str(died.value) == "exited with status 1; its stderr ends: unknown stage 'nonesuch'"

    ready = jail.PythonJail("run", LIMITS)
    try:
        ready.wait_ready(time.monotonic() + 60)
        assert os.readlink(f"/proc/{ready.stage_pid}/fd/2") == "/dev/null"
        assert ready.process.stderr.closed
    finally:
        ready.close()

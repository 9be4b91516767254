"""A real multi-host pool without containers: Redis (state and cache), the API server, two cpu workers and a client,
each in a network namespace of its own, joined by veth pairs on a bridge. Each part runs the
command its image runs (the Dockerfile's ENTRYPOINT + CMD; Redis as compose runs it) with its
compose environment, secrets as files. Launches from the client's namespace reach the pool only
over that network. One worker's namespace is killed mid-load: every accepted job still ends. A
worker whose namespace loses its link to Redis leaves /v1/targets."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import deploy_files as files

ROOT = Path(__file__).resolve().parents[1]
TAG = f"as{os.getpid() % 100000}"  # names of this run's namespaces and links (15 characters at most)
SUBNET = f"10.213.{os.getpid() % 200}"
HOSTS = {"redis": 1, "api": 2, "w1": 3, "w2": 4, "client": 5, "cache": 6}
PASSWORD = "netns-test-password"
TOKEN = "netns-test-token"


def _ip(*args: str, ns: str | None = None) -> None:
    command = ["ip", *args] if ns is None else ["ip", "netns", "exec", ns, "ip", *args]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=30)


def _ns(host: str) -> str:
    return f"{TAG}{host}"


def _namespaces_work() -> str | None:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "needs root and iproute2 (ip netns)"
    probe = f"{TAG}probe"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if done.returncode != 0:
        return f"network namespaces are not permitted here: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


pytestmark = [pytest.mark.service, pytest.mark.slow, pytest.mark.skipif(_namespaces_work() is not None, reason=str(_namespaces_work()))]


class Network:
    """The namespaces, the bridge and the processes started in them; `close` removes them all."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.processes: dict = {}
        self.bridge = f"{TAG}br"
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", self.bridge, "up")
        for host, number in HOSTS.items():
            ns, outside, inside = _ns(host), f"{TAG}{host}o", f"{TAG}{host}i"
            _ip("netns", "add", ns)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", ns)
            _ip("link", "set", outside, "master", self.bridge)
            _ip("link", "set", outside, "up")
            _ip("addr", "add", f"{SUBNET}.{number}/24", "dev", inside, ns=ns)
            _ip("link", "set", inside, "up", ns=ns)
            _ip("link", "set", "lo", "up", ns=ns)

    def start(self, host: str, argv: list, env: dict, cwd: Path) -> subprocess.Popen:
        log = open(self.workdir / f"{host}.log", "w")
        process = subprocess.Popen(["ip", "netns", "exec", _ns(host), *argv], env=env, cwd=cwd, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        self.processes[host] = process
        return process

    def kill_namespace(self, host: str) -> None:
        """SIGKILL every process of the namespace, as a host that loses power."""
        pids = subprocess.run(["ip", "netns", "pids", _ns(host)], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.processes[host].wait(30)

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for host in HOSTS:
            subprocess.run(["ip", "netns", "del", _ns(host)], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


def _as_in_image(argv: list) -> list:
    """`ascrun ...` as the image has it on PATH: this environment's."""
    return [sys.executable, "-m", "ascrun.cli", *argv[1:]] if argv[0] == "ascrun" else argv


def _environment(service: str, secrets: Path) -> dict:
    """The compose service's environment, its /run/secrets files being ours; nothing of this process's."""
    env = {"PATH": os.environ["PATH"], "HOME": str(secrets.parent)}
    for name, value in files.service_environment(service).items():
        env[name] = str(value).replace("/run/secrets", str(secrets))
    return env


def _client(code: str, timeout: float = 300) -> dict:
    """Run `code` in the client's namespace (ascrun and the test kernels importable); its last
    stdout line is JSON."""
    prelude = f"import sys; sys.path[:0] = {[str(ROOT / 'tests'), str(ROOT / 'tests' / 'kernels')]!r}\n"
    done = subprocess.run(["ip", "netns", "exec", _ns("client"), sys.executable, "-c", prelude + code],
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


API = f"http://{SUBNET}.{HOSTS['api']}:8000"
TARGETS = f"""
import json, httpx
answer = httpx.get("{API}/v1/targets", headers={{"Authorization": "Bearer {TOKEN}"}}, timeout=10).json()
print(json.dumps({{t["name"]: [w["name"] for w in t["live"]] for t in answer["targets"]}}))
"""
LOAD = f"""
import json, threading, time
import numpy as np
import ascrun, ops
accepted, outcomes, lock = [], {{}}, threading.Lock()
stop = time.monotonic() + float(sys.argv[1]) if len(sys.argv) > 1 else time.monotonic() + 8

def client(seed):
    rng = np.random.default_rng(seed)
    with ascrun.Client("{API}", token="{TOKEN}", timeout=30) as c:
        done = 0
        while time.monotonic() < stop or done < 3:  # three jobs each at least, however slow the machine
            done += 1
            x = rng.random(64, dtype=np.float32)
            z = np.zeros_like(x)
            handle = c.submit(ops.spin_kernel, 1, x, z, 1)
            with lock:
                accepted.append(handle.id)
                if len(accepted) == len(threads):
                    print("under load", flush=True)  # every client has a job in: the test kills a worker host
            try:
                handle.result(timeout=120)
                outcome = "verified" if np.array_equal(z, x + np.float32(1)) else "wrong"
            except ascrun.KernelError as e:
                outcome = e.kind
            with lock:
                outcomes[handle.id] = outcome

threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({{"accepted": len(accepted), "outcomes": outcomes}}))
"""


@pytest.fixture
def pool(tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "redis_password").write_text(PASSWORD)
    (secrets / "redis_url").write_text(f"redis://:{PASSWORD}@{SUBNET}.{HOSTS['redis']}:6379/0")
    (secrets / "cache_redis_url").write_text(f"redis://:{PASSWORD}@{SUBNET}.{HOSTS['cache']}:6379/0")
    import hashlib
    (secrets / "tenants").write_text(json.dumps({"tenants": [  # compose mounts each secret by its name
        {"name": "ci", "token_sha256": hashlib.sha256(TOKEN.encode()).hexdigest()}]}))
    (tmp_path / "data").mkdir()
    net = Network(tmp_path)
    try:
        for host, service in (("redis", "redis"), ("cache", "redis-cache")):
            redis = " ".join(files.compose()["services"][service]["command"][2:]).replace("$$", "$")
            net.start(host, ["sh", "-c", redis.replace("/run/secrets", str(secrets))], {"PATH": os.environ["PATH"]},
                      tmp_path / "data")
        net.start("api", _as_in_image(files.entrypoint("server")), _environment("server", secrets), tmp_path)
        for worker in ("w1", "w2"):
            net.start(worker, _as_in_image(files.entrypoint("worker-cpu")), _environment("worker-cpu", secrets),
                      tmp_path)
        deadline = time.monotonic() + 90
        while True:
            try:
                if len(_client(TARGETS, timeout=30)["cpu"]) == 2:
                    break
            except (AssertionError, ValueError, IndexError):
                pass
            assert time.monotonic() < deadline and all(p.poll() is None for p in net.processes.values()), \
                "the pool did not come up: " + "".join((tmp_path / f"{h}.log").read_text()[-1500:]
                                                       for h in ("api", "w1", "w2", "redis", "cache"))
            time.sleep(1)
        net.secrets = secrets
        yield net
    finally:
        net.close()


def test_a_pool_across_namespaces_survives_a_dead_worker_host_and_sees_a_cut_one_leave(pool):
    names = {h: f"ascrun-{os.uname().nodename}-{pool.processes[h].pid}" for h in ("w1", "w2")}
    assert sorted(_client(TARGETS)["cpu"]) == sorted(names.values())

    load = subprocess.Popen(["ip", "netns", "exec", _ns("client"), sys.executable, "-c",
                             f"import sys; sys.argv = ['load', '8']; sys.path[:0] = "
                             f"{[str(ROOT / 'tests'), str(ROOT / 'tests' / 'kernels')]!r}\n" + LOAD],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert load.stdout.readline() == "under load\n", load.stderr.read()[-3000:]
    pool.kill_namespace("w1")  # a worker host dies under load
    out, err = load.communicate(timeout=300)
    assert load.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    outcomes = result["outcomes"]
    # every accepted job ended, none is left waiting; jobs submitted after the kill were served too
    assert result["accepted"] == len(outcomes) >= 18
    # at most the one job the dead worker held fails: reaped as stopped (running) or lost (just taken);
    # what the API says of each job the client did not verify, once it ends (60 s at most)
    unverified = [job for job, outcome in outcomes.items() if outcome != "verified"]
    ended = _client(f"""
import json, httpx
said = {{}}
for job in {unverified!r}:
    said[job] = httpx.get("{API}/v1/jobs/" + job, params={{"wait": "60"}}, timeout=90,
                          headers={{"Authorization": "Bearer {TOKEN}"}}).json()
print(json.dumps({{job: [r["status"], (r.get("error") or {{}}).get("kind")] for job, r in said.items()}}))
""")
    assert len(unverified) <= 1, (outcomes, ended)
    assert all(status == "failed" and kind in ("runtime_error", "unavailable") for status, kind in ended.values()), \
        (outcomes, ended)

    # w1 is gone from the pool; cut w2 off from Redis: it leaves too, within the workers' TTL
    _ip("link", "set", f"{TAG}w2i", "down", ns=_ns("w2"))
    deadline = time.monotonic() + 20
    while _client(TARGETS)["cpu"] and time.monotonic() < deadline:
        time.sleep(1)
    assert _client(TARGETS)["cpu"] == []
    assert pool.processes["w2"].poll() is None  # cut off, not dead: it comes back with its link
    _ip("link", "set", f"{TAG}w2i", "up", ns=_ns("w2"))
    deadline = time.monotonic() + 30
    while _client(TARGETS)["cpu"] != [names["w2"]] and time.monotonic() < deadline:
        time.sleep(1)
    assert _client(TARGETS)["cpu"] == [names["w2"]]

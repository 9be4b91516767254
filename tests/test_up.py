"""`ascrun up`: the embedded stack starts, serves a launch, and leaves nothing behind after SIGTERM;
it says which tenants are in force, and replaces a worker that dies."""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

import ascrun
import ops
from conftest import LIVENESS_ENV

pytestmark = pytest.mark.service


def _descendants(pid: int) -> set:
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _stop(up: subprocess.Popen) -> None:
    """After a failed assert: `up` stops its stack (its children have their own sessions)."""
    if up.poll() is None:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


def test_up_serves_a_launch_and_stops_cleanly(add_example):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | LIVENESS_ENV  # the embedded redis-server
    up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers", "1"], env=env,
                          stdout=subprocess.PIPE, text=True)
    try:
        line = up.stdout.readline()
        match = re.search(r"ascrun is up at (http://\S+) \(redis (\S+), 1 cpu worker\(s\), open mode", line)
        assert match, line
        x = np.arange(4096, dtype=np.float32)
        z = np.zeros_like(x)
        with ascrun.Client(match.group(1)) as client:
            client.launch(add_example.vadd_kernel, 2, x, x, z, 2048)
        np.testing.assert_array_equal(z, x + x)
        processes = _descendants(up.pid)
        assert len(processes) >= 3  # redis-server, API server, worker
        up.send_signal(signal.SIGTERM)
        assert up.wait(30) == 0
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in processes if _alive(p)]
    finally:
        _stop(up)


def test_up_names_its_tenants_and_restarts_a_dead_worker(tmp_path):
    tenants = tmp_path / "tenants.json"
    token = "up-secret-token"
    tenants.write_text(json.dumps({"tenants": [{"name": "ci", "token_sha256": hashlib.sha256(token.encode()).hexdigest()}]}))
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | LIVENESS_ENV
    env["ASCRUN_TENANTS_FILE"] = str(tenants)
    up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers", "2"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = up.stdout.readline()
        match = re.search(r"ascrun is up at (http://\S+) \(redis \S+, 2 cpu worker\(s\), 1 tenant\(s\) from (\S+)\)",
                          line)
        assert match and match.group(2) == str(tenants), line
        url = match.group(1)
        worker = next(p for p in _descendants(up.pid)
                      if " worker " in Path(f"/proc/{p}/cmdline").read_text().replace("\0", " "))
        os.kill(worker, signal.SIGKILL)
        said = up.stderr.readline()
        assert re.fullmatch(r"ascrun: worker [01] exited with -9; restarting\n", said), said
        dead, auth = f"ascrun-{os.uname().nodename}-{worker}", {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until two live workers, the dead one not among them
            live = [w["name"] for t in httpx.get(f"{url}/v1/targets", headers=auth).json()["targets"] if t["name"] == "cpu"
                    for w in t["live"]]
            if not _alive(worker) and len(live) == 2 and dead not in live:
                break
            time.sleep(0.1)
        assert up.poll() is None
        assert len(live) == 2 and dead not in live, live
        x = np.arange(64, dtype=np.float32)
        z = np.zeros_like(x)
        with ascrun.Client(url, token=token) as client:
            client.launch(ops.spin_kernel, 1, x, z, 1)
        np.testing.assert_array_equal(z, x + 1)
        assert httpx.get(f"{url}/v1/health").json()["workers"]["cpu"] == 2
        up.send_signal(signal.SIGTERM)
        assert up.wait(30) == 0
    finally:
        _stop(up)


def test_a_worker_whose_jail_dies_at_start_stops_up_saying_why():
    """A worker too small to import pyasc in its frontend's jail: `up` stops, and what it prints ends
    with the jail's own words (the worker's stderr, which `up` otherwise drops)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"ASCRUN_WORKER_MEMORY_BYTES": str(64 << 20)}
    up = subprocess.run([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers", "1"], env=env,
                        capture_output=True, text=True, timeout=120)
    assert up.returncode == 1 and up.stdout == ""
    first, *tail = up.stderr.splitlines()
    assert re.fullmatch(r"ascrun: a process of the stack exited while starting: \S+ -m ascrun.cli worker exited with 1",
                        first), up.stderr
    assert tail and all(line.startswith("  | ") for line in tail), up.stderr
    # the jail's last word, from its stderr: out of memory in Python's heap, or while mapping pyasc's library
    assert re.fullmatch(r"  \| (MemoryError|ImportError: \S+ failed to map segment from shared object)", tail[-1]), \
        up.stderr

"""Faults: a crashed run jail, a SIGKILLed worker, Redis restarted under the server.

Each test has its own Redis, server and worker, so what it breaks is its own."""
import os
import signal
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

import ascrun
import ops
from conftest import Service, start_redis

pytestmark = pytest.mark.service


@pytest.fixture
def pool(tmp_path):
    proc, url = start_redis(tmp_path)
    svc = Service(url)
    svc.redis = (proc, url, tmp_path)
    svc.add_worker()
    yield svc
    svc.stop()
    svc.redis[0].terminate()
    svc.redis[0].wait(10)


def _children(pid: int):
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError):
            pass
    return found


def _descendants(pid: int):
    found = _children(pid)
    for child in list(found):
        found += _descendants(child)
    return found


def _run_jail(worker_pid: int) -> int:
    """The jailed runner's Python (worker -> bwrap -> bwrap, its pid namespace's init -> python),
    once the job has reached its run."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pid in _descendants(worker_pid):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].startswith(b"/usr/bin/python") or b"python" in argv[0]:
                if len(argv) > 3 and argv[-3] == b"run":
                    return pid
        time.sleep(0.05)
    raise AssertionError("no run jail")


def _start_spin(client, rounds=2**31 - 1, timeout=60):
    x = np.ones(64, np.float32)
    args, blobs = ascrun.service.submission.job_arguments(ascrun.args.prepare(["x", "z", "rounds"],
                                                                      [x, np.zeros_like(x), rounds]))
    bundle = ascrun.compiler.bundle.collect(ops.spin_kernel).to_json()
    job = client.submit_job({"bundle": bundle, "core_num": 1, "args": args, "timeout": timeout}, blobs, wait=0)
    deadline = time.monotonic() + 60
    while client.job(job["id"])["status"] != "started":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return job["id"]


def _launch_ok(client):
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    client.launch(ops.spin_kernel, 1, x, z, 1, timeout=20)
    np.testing.assert_array_equal(z, x + 1)


def test_crashed_run_jail_fails_its_job_only(pool):
    with ascrun.Client(pool.url) as client:
        job_id = _start_spin(client)
        os.kill(_run_jail(pool.workers[0].pid), signal.SIGSEGV)  # what a native crash in the kernel does
        record = client.wait(job_id, 30)
        assert record["status"] == "failed" and record["error"]["kind"] == "runtime_error"
        assert record["error"]["message"] == "the kernel crashed its jail: killed by SIGSEGV"
        _launch_ok(client)  # the same worker serves the next job, in a new run jail


def test_sigkilled_worker_job_ends_failed_in_bounded_time(pool):
    with ascrun.Client(pool.url) as client:
        job_id = _start_spin(client)
        worker = pool.workers.pop(0)
        jails = _descendants(worker.pid)
        os.killpg(worker.pid, signal.SIGKILL)  # the worker: its jails die with it
        killed = time.monotonic()
        record = client.wait(job_id, 30)
        assert time.monotonic() - killed < 10
        assert record["status"] == "failed"
        assert "the worker running this job stopped (no heartbeat" in record["error"]["message"]
        # no process left behind: they die with the worker (the kernel kills and reaps them, soon after
        # the job is reaped now that a job silent a second is lost)
        deadline = time.monotonic() + 10
        while [pid for pid in jails if Path(f"/proc/{pid}").exists()] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jails and not [pid for pid in jails if Path(f"/proc/{pid}").exists()]
        pool.add_worker()
        _launch_ok(client)


def test_redis_restart_gives_503_then_recovers_and_loses_no_job(pool):
    proc, url, workdir = pool.redis
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with ascrun.Client(pool.url) as client:
        job_id = _start_spin(client, timeout=4)  # ends by its timeout while Redis is away and back
        proc.send_signal(signal.SIGTERM)  # a graceful restart: Redis flushes its append-only file
        proc.wait(10)
        down = httpx.get(f"{pool.url}/v1/jobs/{job_id}")
        assert down.status_code == 503
        assert down.json()["error"]["kind"] == "unavailable"
        assert "Redis is unreachable" in down.json()["error"]["message"]
        def restart():
            pool.redis = (start_redis(workdir, port)[0], url, workdir)
        comeback = threading.Timer(1.0, restart)
        comeback.start()
        # Polled while Redis is still away: the client retries the 503s with backoff until it is back.
        record = client.wait(job_id, 60)  # accepted before the restart: it still reaches an end
        comeback.join()
        assert record["status"] in ("timed_out", "failed")
        assert httpx.get(f"{pool.url}/v1/health").status_code == 200
        _launch_ok(client)

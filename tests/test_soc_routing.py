"""Routing by SOC, with real cpu workers told which SOCs to serve (--soc; by default a cpu worker
serves every SOC it models, tests/test_soc950.py): a job naming a SOC runs only on a worker serving
it, one naming none on any, one naming a SOC nobody serves is refused at once; /v1/targets and
`ascrun targets` show the live pool, and a dead worker leaves it."""
import os
import signal
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest
import redis

import ascrun
import ops
from ascrun.compiler import frontend
from ascrun.compiler.targets.contract import PYASC_KERNEL_TYPES as KERNEL_TYPES
from conftest import LIVENESS, Service, ghost_worker, start_redis

pytestmark = pytest.mark.service

SOC, OTHER_SOC = "Ascend910B1", "Ascend910B2"


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Its own Redis: a job left waiting for a SOC nobody serves must not weigh on other tests."""
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    svc = Service(url, {"ASCRUN_UNSERVED_GRACE": "2"})
    me = [sys.executable, "-m", "ascrun.cli", "worker"]
    svc.other = svc.stack.start(me + ["--soc", OTHER_SOC], svc.env)
    svc.soc_worker = svc.stack.start(me + ["--soc", SOC], svc.env)
    svc.wait_for_workers(2)
    yield svc
    svc.stop()
    proc.terminate()
    proc.wait(10)


def _launch(pool, soc=None):
    x = np.random.default_rng(3).random(64, dtype=np.float32)
    z = np.zeros_like(x)
    with ascrun.Client(pool.url, retries=0) as client:
        result = client.launch(ops.spin_kernel, 1, x, z, 1, soc=soc)
        record = client.job(result.job_id)
    np.testing.assert_array_equal(z, x + 1)
    return record


def _targets(pool):
    return {t["name"]: t for t in httpx.get(f"{pool.url}/v1/targets").json()["targets"]}


def test_a_job_naming_a_soc_runs_on_a_worker_serving_it(pool):
    for _ in range(4):  # the other worker would take about half of them if it could
        record = _launch(pool, SOC)
        assert record["soc"] == SOC and record["worker"].endswith(f"-{pool.soc_worker.pid}")


def test_a_job_naming_no_soc_runs_on_any_worker(pool):
    both = {f"ascrun-{os.uname().nodename}-{p.pid}" for p in (pool.other, pool.soc_worker)}
    workers = set()
    for _ in range(60):  # a worker reads a queue that appears within QUEUE_REFRESH_S: not the first launch
        workers.add(_launch(pool)["worker"])
        if workers == both:
            break
    # both take them from their SOC-less queues
    assert workers == both
    assert _launch(pool)["soc"] is None


def test_a_soc_nobody_serves_is_refused_at_once_naming_the_served_ones(pool):
    submits = []
    with ascrun.Client(pool.url) as client, pytest.raises(ascrun.KernelError) as e:
        client._http.event_hooks["response"].append(
            lambda response: submits.append(response.status_code) if response.request.url.path == "/v1/jobs" else None)
        client.launch(ops.spin_kernel, 1, np.zeros(64, np.float32), np.zeros(64, np.float32), 1, soc="Ascend310P3")
    assert e.value.kind == "unavailable"
    assert str(e.value) == f"no worker serves SOC 'Ascend310P3' on target 'cpu' right now; served: {SOC}, {OTHER_SOC}"
    # the 503 says no retry changes it: the client (6 retries by default) asked once (11 s of retries before)
    assert submits == [503]
    answer = httpx.post(f"{pool.url}/v1/jobs", json={"bundle": {}, "core_num": 1, "args": [], "soc": "bad soc"})
    assert answer.status_code == 422 and "soc" in answer.json()["error"]["message"]


def test_targets_show_the_live_pool_and_its_queue(pool):
    cpu = _targets(pool)["cpu"]
    assert cpu["workers"] == 2 and cpu["socs"] == {SOC: 1, OTHER_SOC: 1}
    assert sorted(w["socs"] for w in cpu["live"]) == [[SOC], [OTHER_SOC]]
    assert all(w["kernel_types"] == list(KERNEL_TYPES) and w["pyasc"] == frontend.pyasc_version() for w in cpu["live"])
    assert _targets(pool)["sim"] == {"name": "sim", "description": "CANN's camodel simulator (bisheng build, "
                                     "pyasc's launcher)", "workers": 0, "socs": {}, "queued": 0,
                                     "oldest_queued_s": None, "live": []}
    # a job for a SOC that only a heartbeat (no worker) claims waits in its queue: depth and age show it
    connection = redis.Redis.from_url(pool.env["REDIS_URL"])
    with ghost_worker(connection, {"cpu": {"socs": ["Ghost1"]}}, "test-ghost-worker"):
        with ascrun.Client(pool.url, retries=0) as client:
            client.submit(ops.spin_kernel, 1, np.zeros(64, np.float32), np.zeros(64, np.float32), 1, soc="Ghost1")
        deadline = time.monotonic() + 30
        while (cpu := _targets(pool)["cpu"])["queued"] == 1 and cpu["oldest_queued_s"] < 0.5:
            assert time.monotonic() < deadline, cpu
            time.sleep(0.05)  # until the job has waited half a second
        assert cpu["queued"] == 1 and cpu["oldest_queued_s"] >= 0.5
        table = subprocess.run([sys.executable, "-m", "ascrun.cli", "targets", "--url", pool.url],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        assert table[0].split() == ["target", "workers", "queued", "oldest", "socs"]
        assert table[1].split()[:3] == ["cpu", "3", "1"] and table[1].endswith(f"{SOC} (1), {OTHER_SOC} (1), Ghost1 (1)")
        assert any(line.strip().startswith(f"ascrun-{os.uname().nodename}-{pool.soc_worker.pid}: build + run; socs {SOC};")
                   for line in table)


def test_a_queued_job_says_its_place_in_its_queue(pool):
    """GET /v1/jobs/{id} of a queued job: its position in its tenant's queue and that queue's
    depth (what `ascrun launch`'s progress line shows as "queued: 2nd of 3")."""
    connection = redis.Redis.from_url(pool.env["REDIS_URL"])
    ghost = {"cpu": {"socs": ["Ghost3"]}}
    with ghost_worker(connection, ghost, "test-ghost-worker-3"):  # serves the SOC, reads nothing
        with ascrun.Client(pool.url, retries=0) as client:
            handles = [client.submit(ops.spin_kernel, 1, np.full(64, i, np.float32), np.zeros(64, np.float32), 1,
                                     soc="Ghost3") for i in range(3)]
            seen = [client.job(h.id) for h in handles]
    assert [(r["status"], r["queue_position"], r["queue_depth"]) for r in seen] == [
        ("queued", 1, 3), ("queued", 2, 3), ("queued", 3, 3)]


def test_a_job_whose_last_worker_left_fails_rather_than_waiting_forever(pool):
    """Admitted while a worker served its SOC, which then left: after ASCRUN_UNSERVED_GRACE (2 s
    here) with no live worker for its queue, the reaper fails it, saying why."""
    connection = redis.Redis.from_url(pool.env["REDIS_URL"])
    with ascrun.Client(pool.url, retries=0) as client:
        with ghost_worker(connection, {"cpu": {"socs": ["Ghost2"]}}, "test-ghost-worker-2"):
            handle = client.submit(ops.spin_kernel, 1, np.zeros(64, np.float32), np.zeros(64, np.float32), 1,
                                   soc="Ghost2")
        with pytest.raises(ascrun.KernelError) as e:
            handle.result(timeout=60)
    assert e.value.kind == "unavailable"
    assert str(e.value) == ("no worker has served the run stage of target 'cpu' for SOC 'Ghost2' for 2 s: the job "
                            "was failed rather than left queued; submit again once such a worker is back")


def test_a_dead_worker_leaves_the_pool_and_its_soc_within_seconds(pool):
    os.killpg(pool.soc_worker.pid, signal.SIGKILL)
    pool.soc_worker.wait()
    deadline = time.monotonic() + 3 * LIVENESS.worker_ttl_s
    while SOC in _targets(pool)["cpu"]["socs"] and time.monotonic() < deadline:
        time.sleep(0.2)
    cpu = _targets(pool)["cpu"]
    assert cpu["socs"] == {OTHER_SOC: 1} and cpu["workers"] == 1
    with ascrun.Client(pool.url, retries=0) as client, pytest.raises(ascrun.KernelError) as e:
        client.launch(ops.spin_kernel, 1, np.zeros(64, np.float32), np.zeros(64, np.float32), 1, soc=SOC)
    assert str(e.value) == f"no worker serves SOC '{SOC}' on target 'cpu' right now; served: {OTHER_SOC}"

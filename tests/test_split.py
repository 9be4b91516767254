"""The compile/run split on cpu, with real workers: a build-only worker (`--only build`, a host with
the toolkit) and a run-only one (`--only run`, a device host). A job whose artifact is not cached
crosses them through the artifact cache, and its record names both workers; a cached one never
leaves the run worker; without a build worker, an uncached kernel fails at once with a clear
message, and without a run worker nothing is accepted."""
import os
import signal
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

import asc
import ascrun
import ops
from conftest import LIVENESS, Service, start_redis

pytestmark = pytest.mark.service


def _name(process) -> str:
    return f"ascrun-{os.uname().nodename}-{process.pid}"


def _live(pool) -> dict:
    [cpu] = [t for t in httpx.get(f"{pool.url}/v1/targets").json()["targets"] if t["name"] == "cpu"]
    return {w["name"]: w["stages"] for w in cpu["live"]}


def _wait_for(pool, live: dict, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while _live(pool) != live:
        assert time.monotonic() < deadline, f"the pool is {_live(pool)}, not {live}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Its own Redis, so that every kernel's first launch misses the caches."""
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    svc = Service(url)
    me = [sys.executable, "-m", "ascrun.cli", "worker"]
    svc.builder = svc.stack.start(me + ["--only", "build"], svc.env)
    svc.runner = svc.stack.start(me + ["--only", "run"], svc.env)
    svc.wait_for_workers(None)
    _wait_for(svc, {_name(svc.builder): ["build"], _name(svc.runner): ["run"]})
    yield svc
    svc.stop()
    proc.terminate()
    proc.wait(10)


def _launch(pool, dtype):
    x = np.random.default_rng(5).random(64).astype(dtype)
    z = np.zeros_like(x)
    with ascrun.Client(pool.url, retries=0) as client:
        result = client.launch(ops.spin_kernel, 1, x, z, 1)
        record = client.job(result.job_id)
    np.testing.assert_array_equal(z, x + dtype(1))
    return record


def test_an_uncached_job_is_built_by_the_build_worker_and_run_by_the_run_worker(pool):
    record = _launch(pool, np.float32)
    assert record["status"] == "finished"
    assert set(record["stages"]) == {"build", "run"}
    assert record["stages"]["build"]["worker"] == _name(pool.builder)
    assert record["stages"]["run"]["worker"] == _name(pool.runner) == record["worker"]
    assert all(stage["seconds"] > 0 for stage in record["stages"].values())
    assert record["cache"] == {"frontend": "miss", "build": "miss"}  # as the build worker found them
    assert {"queue", "frontend", "build", "run", "total"} <= set(record["timings"])
    shown = subprocess.run([sys.executable, "-m", "ascrun.cli", "show", record["id"], "--url", pool.url],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert f"stages    build on {_name(pool.builder)} (" in "\n".join(shown)
    assert f"run on {_name(pool.runner)} (" in "\n".join(shown)


def test_a_cached_job_never_leaves_the_run_worker(pool):
    _launch(pool, np.float32)
    record = _launch(pool, np.float32)
    assert list(record["stages"]) == ["run"] and record["stages"]["run"]["worker"] == _name(pool.runner)
    assert record["cache"] == {"frontend": "hit", "build": "hit"}


@asc.jit
def refused_kernel(x: asc.GlobalAddress):
    assert False, "refused on purpose"


def test_a_build_that_fails_ends_the_job_on_the_build_worker(pool):
    with ascrun.Client(pool.url, retries=0) as client:
        handle = client.submit(refused_kernel, 1, np.zeros(8, np.float32))
        with pytest.raises(ascrun.KernelError) as e:
            handle.result(timeout=120)
        record = handle.record
    assert e.value.kind == "compile_error" and "refused on purpose" in str(e.value)
    assert record["status"] == "failed" and record["worker"] == _name(pool.builder)


def test_without_a_build_worker_an_uncached_kernel_fails_at_once_and_a_cached_one_runs(pool):
    _launch(pool, np.float32)  # cached now, whatever ran before
    os.killpg(pool.builder.pid, signal.SIGTERM)
    pool.builder.wait(30)
    _wait_for(pool, {_name(pool.runner): ["run"]})
    with ascrun.Client(pool.url, retries=0) as client, pytest.raises(ascrun.KernelError) as e:
        client.launch(ops.spin_kernel, 1, np.zeros(64, np.float16), np.zeros(64, np.float16), 1)
    assert e.value.kind == "unavailable"
    assert str(e.value) == "this kernel is not built yet, and no worker builds for target 'cpu' right now"
    assert _launch(pool, np.float32)["stages"]["run"]["worker"] == _name(pool.runner)


def test_without_a_run_worker_no_job_is_accepted(pool):
    os.killpg(pool.runner.pid, signal.SIGTERM)
    pool.runner.wait(30)
    deadline = time.monotonic() + 3 * LIVENESS.worker_ttl_s
    while httpx.get(f"{pool.url}/v1/health").json()["workers"]["cpu"] and time.monotonic() < deadline:
        time.sleep(0.2)
    pool.builder = pool.stack.start([sys.executable, "-m", "ascrun.cli", "worker", "--only", "build"], pool.env)
    _wait_for(pool, {_name(pool.builder): ["build"]})
    with ascrun.Client(pool.url, retries=0) as client, pytest.raises(ascrun.KernelError) as e:
        client.launch(ops.spin_kernel, 1, np.zeros(64, np.float32), np.zeros(64, np.float32), 1)
    assert e.value.kind == "unavailable" and str(e.value) == "no worker serves target 'cpu' right now"

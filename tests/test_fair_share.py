"""A fair share of the workers (issue 25, 9): a tenant's running-jobs cap and worker-seconds budget
hold its jobs back so that another tenant gets the next free worker; one round-robin turn per
tenant, however many queues its jobs spread over; each tenant's worker time in /metrics. Real
redis-server, API server and cpu workers; the long jobs are spin_kernel runs ended by their timeout."""
import hashlib
import json
import signal
import sys
import time

import httpx
import numpy as np
import pytest
import redis

import ascrun
import ops
from ascrun.args import prepare
from ascrun.server.store.share import SPENT_TTL_S, Shares, running_key
from conftest import Service, ghost_worker, start_redis

pytestmark = pytest.mark.service

TOKENS = {"hog": "hog-token", "honest": "honest-token", "frugal": "frugal-token", "spread": "spread-token",
          "single": "single-token"}
LIMITS = {"hog": {"max_running_jobs": 1}, "frugal": {"worker_seconds_per_minute": 2}}
SOCS = ("Ascend910B2", "Ascend910B3", "Ascend910B4")  # real SOCs: the frontend compiles for its job's


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Its own Redis and two workers: the long jobs here must not hold the session's workers."""
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    config = {"tenants": [{"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
                           "limits": LIMITS.get(name, {})} for name, token in TOKENS.items()]}
    svc = Service(url, {"ASCRUN_TENANTS": json.dumps(config)})
    svc.redis_url = url
    svc.add_worker()
    svc.add_worker()
    yield svc
    svc.stop()
    proc.terminate()
    proc.wait(10)


def _body(rounds, timeout=30):
    x = np.ones(64, np.float32)
    args, blobs = ascrun.service.submission.job_arguments(prepare(["x", "z", "rounds"], [x, np.zeros_like(x), rounds]))
    return {"bundle": ascrun.compiler.bundle.collect(ops.spin_kernel).to_json(), "core_num": 1, "args": args,
            "timeout": timeout}, blobs


def _client(pool, name):
    return ascrun.Client(pool.url, token=TOKENS[name], retries=0)


def test_a_tenant_at_its_running_cap_leaves_the_next_free_worker_to_another(pool):
    """hog may run one job at a time: of its two 2-second jobs one runs, and honest's small job
    takes the other worker at once instead of waiting for hog's to time out."""
    with _client(pool, "hog") as hog, _client(pool, "honest") as honest:
        hog.submit_job(*_body(1), wait=20)  # compiles spin_kernel for both: the timings below are runs
        honest.submit_job(*_body(1), wait=20)
        long = [hog.submit_job(*_body(2**31 - 1, timeout=2))["id"] for _ in range(2)]
        time.sleep(0.5)  # both workers are free: without the cap each takes one of hog's
        small = honest.submit_job(*_body(1), wait=20)
        assert small["status"] == "finished"
        assert small["timings"]["queue"] < 2.0, small["timings"]
        states = [hog.job(job_id)["status"] for job_id in long]
        assert sorted(states) == ["queued", "started"], states
        assert [hog.wait(job_id, 30)["status"] for job_id in long] == ["timed_out", "timed_out"]


def test_a_tenant_out_of_worker_seconds_waits_for_the_next_minute(pool):
    """frugal may spend 2 worker-seconds a minute: a 3-second job spends them, and its next job
    stays queued on idle workers until the minute is over; /metrics shows the time it spent."""
    if 60 - time.time() % 60 < 10:
        time.sleep(60 - time.time() % 60)  # the minute below must last the test
    minute_ends = (time.time() // 60 + 1) * 60
    with _client(pool, "frugal") as frugal:
        assert frugal.submit_job(*_body(2**31 - 1, timeout=3), wait=20)["status"] == "timed_out"
        waiting = frugal.submit_job(*_body(1))["id"]
        until = min(minute_ends - 1, time.time() + 3)
        while time.time() < until:
            assert frugal.job(waiting)["status"] == "queued"
            time.sleep(0.2)
    metrics = httpx.get(f"{pool.url}/metrics", headers={"Authorization": f"Bearer {TOKENS['frugal']}"})
    spent = [float(line.split()[-1]) for line in metrics.text.splitlines()
             if line.startswith("ascrun_worker_seconds_total{") and 'tenant="frugal"' in line]
    assert spent and 3.0 <= spent[0] < 10.0, metrics.text


def test_one_turn_per_tenant_however_many_queues_its_jobs_spread_over(pool, tmp_path):
    """spread queues six jobs over three SOCs, single two naming none, before a worker serving all
    three SOCs starts (a stand-in that takes nothing makes the API accept them): the worker takes
    their jobs in turn (single's two among its first four), not one job of each of spread's three
    SOC queues before single's second."""
    connection = redis.Redis.from_url(pool.redis_url)
    served = {"cpu": {"socs": list(SOCS), "stages": ["build", "run"]}}
    with ghost_worker(connection, served, "stand-in"), _client(pool, "spread") as spread, \
            _client(pool, "single") as single:
        # the session's two workers (every SOC they model, these too) would take the jobs at once unless stopped
        for worker in pool.workers:
            worker.send_signal(signal.SIGSTOP)
        try:
            ids = [spread.submit_job(*_with_soc(_body(1), soc))["id"] for soc in SOCS for _ in range(2)]
            ids += [single.submit_job(*_body(1))["id"] for _ in range(2)]
            me = [sys.executable, "-m", "ascrun.cli", "worker", "--burst"] + [a for s in SOCS for a in ("--soc", s)]
            worker = pool.stack.start(me, pool.env)
            assert worker.wait(120) == 0
        finally:
            for worker in pool.workers:
                worker.send_signal(signal.SIGCONT)
        records = [spread.job(i) for i in ids[:6]] + [single.job(i) for i in ids[6:]]
    assert all(r["status"] == "finished" for r in records), [r["status"] for r in records]
    order = [r["tenant"] for r in sorted(records, key=lambda r: r["started_at"])]
    assert order[:4].count("single") == 2, order


def _with_soc(submission, soc):
    body, blobs = submission
    return {**body, "soc": soc}, blobs


def test_every_minute_of_spending_expires(redis_url):
    """A minute's spending key gets its expiry from the charge that made it (the claim's, a beat's, or
    a release's in a minute nobody charged before): none is left to live forever."""
    tenant = f"expiry-{time.time_ns()}"
    with redis.Redis.from_url(redis_url) as connection:
        shares = Shares(connection, slot_ttl_s=5, ahead_s=1)
        for job in ("same-minute", "next-minute"):
            assert shares.claim(tenant, job)
            if job == "next-minute":  # as if the job ran into the next minute: its key is not there yet
                shares._charged_minute[job] -= 1
                connection.delete(*connection.keys(f"ascrun:tenant:{tenant}:worker-ms:*"))
            shares.release(tenant, "cpu", job, charged_s=1, spent_s=0.25)
            keys = connection.keys(f"ascrun:tenant:{tenant}:worker-ms:*")
            assert len(keys) == 1 and 0 < connection.ttl(keys[0]) <= SPENT_TTL_S, job
        assert int(connection.get(keys[0])) == -750  # the refund of the job whose charge went elsewhere
        connection.delete(*keys, running_key(tenant))

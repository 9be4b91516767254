"""/metrics, scraped from the real service: what launches, failures, cache hits and blob transfers
add; the pool's queues and workers; that what each worker process records reaches the scrape;
and how /metrics is protected."""
import hashlib
import json
import sys
import uuid

import httpx
import numpy as np
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

import ascrun
import faulty
import ops
from ascrun.compiler.errors import Kind
from ascrun.server.metrics import recorder
from ascrun.server.store.jobs import JobStore
from conftest import LIVENESS, Service, _free_port, ghost_worker, own_service, start_redis

pytestmark = pytest.mark.service

TOKEN = "metrics-test-token"  # the operator's
TENANT_TOKENS = {"alice": "metrics-alice-token", "bob": "metrics-bob-token"}
CPU_RUN = {"target": "cpu", "soc": "any", "stage": "run"}
N = 4096  # elements binary_kernel adds: 16 KiB, inline


def scrape(url: str, token: str | None = None) -> dict:
    """(sample name, frozenset of labels) -> value."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(f"{url}/metrics", headers=headers, timeout=10)
    response.raise_for_status()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.text) for s in family.samples}


TENANT_SERIES = ("ascrun_jobs_total", "ascrun_cache_lookups_total", "ascrun_stage_seconds", "ascrun_tensor_bytes_total")


def value(samples: dict, name: str, **labels) -> float:
    """A sample's value; of a tenant's series, open mode's one tenant's unless `tenant` is given."""
    if name.startswith(TENANT_SERIES):
        labels.setdefault("tenant", "open")
    return samples.get((name, frozenset(labels.items())), 0.0)


def grew(before: dict, after: dict, name: str, **labels) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """An API server and two worker processes on a Redis of their own: what the scrapes count is
    only what these tests did, whatever other tests of the session leave running."""
    redis_process, url = start_redis(tmp_path_factory.mktemp("metrics-pool"))
    service = Service(url)
    for _ in range(2):  # started together: add_worker would wait for each in turn
        service.workers.append(service.stack.start([sys.executable, "-m", "ascrun.cli", "worker"], service.env))
    service.wait_for_workers(2)
    with ascrun.Client(service.url) as client:
        yield service, client
    service.stop()
    redis_process.terminate()
    redis_process.wait(10)


def test_launches_failures_cache_hits_and_blobs_are_counted(pool):
    service, client = pool
    before = scrape(service.url)
    x, y = np.random.rand(2, N).astype(np.float32)
    for _ in range(2):  # a miss (the pool's Redis is new), then a hit, of both caches
        z = np.zeros_like(x)
        client.launch(ops.binary_kernel, 1, x, y, z, N, "add")
    with pytest.raises(ascrun.KernelError):
        client.launch(faulty.ub_overflow_kernel, 1, np.zeros(4096, np.float32), 4096)
    big_x, big_y = np.random.rand(2, 32768).astype(np.float32)  # over INLINE_BYTES: blobs both ways
    big_z = np.zeros_like(big_x)
    client.launch(ops.binary_kernel, 1, big_x, big_y, big_z, N, "add")
    after = scrape(service.url)

    assert grew(before, after, "ascrun_jobs_total", target="cpu", soc="any", status="finished", error_kind="none") == 3
    assert grew(before, after, "ascrun_jobs_total", target="cpu", soc="any", status="failed",
                error_kind="runtime_error") == 1
    for stage in ("frontend", "build"):
        assert grew(before, after, "ascrun_cache_lookups_total", target="cpu", stage=stage, result="miss") == 1
        assert grew(before, after, "ascrun_cache_lookups_total", target="cpu", stage=stage, result="hit") == 2
    for stage, jobs in (("queue", 4), ("frontend", 4), ("build", 4), ("run", 3)):  # the failed job never ran
        assert grew(before, after, "ascrun_stage_seconds_count", target="cpu", stage=stage) == jobs
        assert grew(before, after, "ascrun_stage_seconds_bucket", target="cpu", stage=stage, le="+Inf") == jobs
        assert grew(before, after, "ascrun_stage_seconds_sum", target="cpu", stage=stage) > 0
    assert grew(before, after, "ascrun_stage_seconds_count", target="", stage="upload") == 2
    assert grew(before, after, "ascrun_stage_seconds_count", target="", stage="download") == 1
    assert grew(before, after, "ascrun_tensor_bytes_total", direction="in", kind="inline") == 2 * (x.nbytes + y.nbytes)
    assert grew(before, after, "ascrun_tensor_bytes_total", direction="out", kind="inline") == 2 * z.nbytes
    assert grew(before, after, "ascrun_tensor_bytes_total", direction="in", kind="blob") == big_x.nbytes + big_y.nbytes
    assert grew(before, after, "ascrun_tensor_bytes_total", direction="out", kind="blob") == big_z.nbytes
    assert grew(before, after, "ascrun_http_request_duration_seconds_count", handler="/v1/blobs/{digest}",
                method="PUT", status="201") == 2
    assert grew(before, after, "ascrun_http_requests_total", handler="/v1/jobs", method="POST", status="202") >= 4
    for role in ("build", "run"):
        assert value(after, "ascrun_workers_live", target="cpu", soc="any", role=role) == 2
    assert value(after, "ascrun_queue_depth", **CPU_RUN) == 0
    assert value(after, "ascrun_metrics_redis_up") == 1


def test_what_two_concurrent_workers_record_reaches_the_scrape(pool):
    service, client = pool
    x, y = np.random.rand(2, N).astype(np.float32)
    client.launch(ops.binary_kernel, 1, x, y, np.zeros_like(x), N, "add")  # built once: the rest are quick
    before = scrape(service.url)
    handles = [client.submit(ops.binary_kernel, 1, x, y, np.zeros_like(x), N, "add") for _ in range(12)]
    for handle in handles:
        handle.result()
    after = scrape(service.url)
    workers = {client.wait(h.id, 5)["worker"] for h in handles}
    assert len(workers) == 2  # both worker processes ran some of the jobs, and every job is counted
    assert grew(before, after, "ascrun_jobs_total", target="cpu", soc="any", status="finished", error_kind="none") == 12
    assert grew(before, after, "ascrun_stage_seconds_count", target="cpu", stage="run") == 12


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A Redis of its own (its queue is not drained by the session's workers) and two API servers
    on it: one serving /metrics behind tokens, one on a metrics port of its own."""
    redis_process, url = start_redis(tmp_path_factory.mktemp("metrics-redis"))
    tenants = json.dumps({"tenants": [
        {"name": "ops", "token_sha256": hashlib.sha256(TOKEN.encode()).hexdigest(), "operator": True},
        *[{"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest()}
          for name, token in TENANT_TOKENS.items()]]})
    metrics_port = _free_port()
    servers = [Service(url, {"ASCRUN_TENANTS": tenants}),
               Service(url, {"ASCRUN_TENANTS": tenants, "ASCRUN_METRICS_PORT": str(metrics_port)})]
    for server in servers:
        server.wait_for_workers(None)
    yield url, servers, f"http://127.0.0.1:{metrics_port}", redis_process
    for server in servers:
        server.stop()
    redis_process.terminate()
    redis_process.wait(10)


def test_metrics_need_a_token_or_their_own_port(guarded):
    _, (behind_tokens, own_port), metrics_url, _ = guarded
    assert httpx.get(f"{behind_tokens.url}/metrics").status_code == 401
    assert httpx.get(f"{behind_tokens.url}/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert value(scrape(behind_tokens.url, TOKEN), "ascrun_metrics_redis_up") == 1
    assert httpx.get(f"{own_port.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404
    assert value(scrape(metrics_url), "ascrun_metrics_redis_up") == 1  # no token there: the operator keeps it private


def test_queue_depth_oldest_age_and_live_workers(guarded):
    url, (behind_tokens, _), metrics_url, _ = guarded
    connection = redis.Redis.from_url(url)
    # a worker that beats but takes no job (a busy one): the API accepts a job, which waits
    with ghost_worker(connection, {"cpu": {"socs": [], "stages": ["run"]}}, "busy-worker"):
        with ascrun.Client(behind_tokens.url, token=TOKEN) as client:
            x = np.ones(256, np.float32)
            client.submit(ops.binary_kernel, 1, x, x, np.zeros_like(x), 256, "add")
        for samples in (scrape(behind_tokens.url, TOKEN), scrape(metrics_url)):  # the pool's, from either server
            assert value(samples, "ascrun_queue_depth", **CPU_RUN) == 1
            assert value(samples, "ascrun_queue_oldest_age_seconds", **CPU_RUN) > 0
            assert value(samples, "ascrun_workers_live", target="cpu", soc="any", role="run") == 1
            assert value(samples, "ascrun_workers_live", target="cpu", soc="any", role="build") == 0


def test_a_tenant_sees_its_own_figures_and_the_operator_the_pools(guarded):
    """Another tenant's jobs, their ends and kinds, its queues, the pool's workers and the API's
    HTTP series are the operator's to see, in /metrics and /v1/targets: a tenant sees its own."""
    url, (behind_tokens, _), metrics_url, _ = guarded
    connection = redis.Redis.from_url(url)
    where = {"target": "cpu", "soc": "TenantGhost", "stage": "run"}
    with ghost_worker(connection, {"cpu": {"socs": ["TenantGhost"], "stages": ["run"]}}, "tenant-ghost"):
        with ascrun.Client(behind_tokens.url, token=TENANT_TOKENS["alice"]) as alice:
            x = np.ones(256, np.float32)
            waiting = alice.submit(ops.binary_kernel, 1, x, x, np.zeros_like(x), 256, "add", soc="TenantGhost")
            ended = alice.submit(ops.binary_kernel, 1, x, x, np.zeros_like(x), 256, "add", soc="TenantGhost")
        JobStore(connection, LIVENESS).fail(ended.id, Kind.RUNTIME_ERROR, "alice's secret failure")
        seen = {name: scrape(behind_tokens.url, token) for name, token in TENANT_TOKENS.items()}
        seen["ops"] = scrape(behind_tokens.url, TOKEN)
        targets = {name: httpx.get(f"{behind_tokens.url}/v1/targets", headers={"Authorization": f"Bearer {token}"})
                   .json()["targets"][0] for name, token in [*TENANT_TOKENS.items(), ("ops", TOKEN)]}
    assert not any(dict(labels).get("tenant") == "alice" for _, labels in seen["bob"])
    assert not any(name.startswith(("ascrun_workers_live", "ascrun_http", "ascrun_redis", "ascrun_jails"))
                   for name, _ in seen["bob"])
    assert value(seen["bob"], "ascrun_queue_depth", **where) == 0 and targets["bob"]["queued"] == 0
    # both of hers wait in her queue (the failed one until a worker takes it and drops it)
    assert value(seen["alice"], "ascrun_queue_depth", **where) == 2 and targets["alice"]["queued"] == 2
    assert value(seen["alice"], "ascrun_jobs_total", tenant="alice", target="cpu", soc="TenantGhost",
                 status="failed", error_kind="runtime_error") == 1
    assert value(seen["ops"], "ascrun_jobs_total", tenant="alice", target="cpu", soc="TenantGhost",
                 status="failed", error_kind="runtime_error") == 1
    assert value(seen["ops"], "ascrun_queue_depth", **where) >= 1 and targets["ops"]["queued"] >= 1
    assert any(name.startswith("ascrun_workers_live") for name, _ in seen["ops"])
    assert waiting.status == "queued"


def test_the_state_redis_memory_is_the_operators(guarded):
    url, (behind_tokens, _), metrics_url, _ = guarded
    connection = redis.Redis.from_url(url)
    connection.config_set("maxmemory", 3 << 30)
    try:
        samples = scrape(metrics_url)
        used = connection.info("memory")["used_memory"]
    finally:
        connection.config_set("maxmemory", 0)
    assert value(samples, "ascrun_redis_maxmemory_bytes") == 3 << 30
    assert used / 2 < value(samples, "ascrun_redis_used_memory_bytes") < used * 2  # it moves between the two reads
    tenant = scrape(behind_tokens.url, TENANT_TOKENS["bob"])
    assert not any(name.startswith("ascrun_redis") for name, _ in tenant)


def test_a_jail_that_cannot_start_is_counted(tmp_path):
    """A worker whose jails get too little memory for pyasc (an operator's mistake) exits at its
    start, and the scrape counts its frontend jail's failed start, which the alert rules watch."""
    with own_service(tmp_path, {"ASCRUN_WORKER_MEMORY_BYTES": str(64 << 20)}) as service:
        worker = service.stack.start([sys.executable, "-m", "ascrun.cli", "worker"], service.env)
        assert worker.wait(120) != 0
        samples = scrape(service.url)
    assert value(samples, "ascrun_jails_failed_total", stage="frontend", when="start") == 1
    assert value(samples, "ascrun_jails_failed_total", stage="frontend", when="crash") == 0


def test_a_scrape_without_redis_says_so(guarded):
    """Last of the module: it stops the module's Redis."""
    _, _, metrics_url, redis_process = guarded
    redis_process.terminate()
    redis_process.wait(10)
    samples = scrape(metrics_url)
    assert value(samples, "ascrun_metrics_redis_up") == 0
    assert not any(name.startswith("ascrun_jobs") for name, _ in samples)


def test_pending_deltas_fold_to_what_each_increment_would_have_made(redis_url):
    """Jobs' packed deltas, folded (summed per field), leave the hash as their increments one by one
    would: counts exactly, a sum incremented once exactly, a sum of several to its last digits."""
    rng = np.random.default_rng(7)
    deltas = [[["count", str(int(n)), "i"], ["sum", repr(float(s)), "f"]]
              + [["lone", repr(float(s))[:9], "f"]] * (i == 3)
              for i, (n, s) in enumerate(zip(rng.integers(1, 1 << 40, 20), rng.random(20) * 1e-3))]
    folded, one_by_one, pending = (f"ascrun-test:{k}:{uuid.uuid4().hex}" for k in ("folded", "direct", "pending"))
    with redis.Redis.from_url(redis_url) as connection:
        for delta in deltas:
            connection.rpush(pending, json.dumps(delta))
            for field, amount, kind in delta:
                (connection.hincrby if kind == "i" else connection.hincrbyfloat)(one_by_one, field, amount)
        connection.register_script(recorder.FOLD_LUA + "fold_metrics(KEYS[1], KEYS[2])")(keys=[pending, folded])
        got, want = connection.hgetall(folded), connection.hgetall(one_by_one)
        assert not connection.exists(pending)
        connection.delete(folded, one_by_one)
    assert got[b"count"] == want[b"count"] and got[b"lone"] == want[b"lone"]
    assert float(got[b"sum"]) == pytest.approx(float(want[b"sum"]), rel=1e-14)

"""Two Redis roles (issue 25, item 1): the compile caches live in a cache Redis of their own (LRU: a
full cache evicts and never refuses a job), the state in a noeviction Redis; a worker that meets a
full state Redis fails that job with `limit` and serves the next, and one whose Redis stalls past
ASCRUN_REDIS_TIMEOUT reconnects instead of exiting. A stack of its own: two redis-servers, the API
server and one worker."""
import shutil
import socket
import time

import numpy as np
import pytest
import redis
from rq import Worker

import ascrun
import deploy_files
import ops
from ascrun.compiler.settings import ServiceSettings
from ascrun.server.store import connect
from ascrun.server.store.cache import RedisCache
from conftest import Service, start_redis

pytestmark = pytest.mark.service

TIMEOUT_S = 1  # ASCRUN_REDIS_TIMEOUT of the stack: a stall longer than this (plus a BLPOP's wait) times out


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    state_proc, state_url = start_redis(tmp_path_factory.mktemp("state"))
    cache_proc, cache_url = start_redis(tmp_path_factory.mktemp("cache"))
    svc = Service(state_url, {"ASCRUN_CACHE_REDIS_URL": cache_url, "ASCRUN_REDIS_TIMEOUT": str(TIMEOUT_S)})
    try:
        svc.state, svc.cache = redis.Redis.from_url(state_url), redis.Redis.from_url(cache_url)
        svc.cache.config_set("maxmemory-policy", "allkeys-lru")
        svc.add_worker()
        yield svc
    finally:
        svc.stop()
        for proc in (state_proc, cache_proc):
            proc.terminate()
            proc.wait(10)


def _spin(client, z_elements=64):
    """spin_kernel: z = x + 1 over its first 64 elements; a bigger z comes back whole, as a blob."""
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(z_elements, np.float32)
    result = client.launch(ops.spin_kernel, 1, x, z, 1)
    np.testing.assert_array_equal(z[:64], x + 1)
    return result


def _wait_live(stack, deadline_s=60):
    """Until the API sees the worker live again: its liveness lapses while Redis does not answer,
    and a job submitted before it beats again is refused (no worker serves target 'cpu')."""
    stack.wait_for_workers(1, timeout=deadline_s)


def _births(connection):
    """When RQ's worker registrations began: a worker that starts over registers anew."""
    return {w.name: w.birth_date for w in Worker.all(connection=connection)}


def _idle(connection, deadline_s=30):
    """Once the worker is done with its last job (its client may have the result before the worker
    has done its bookkeeping) and back to dequeueing, what it sends is its dequeue loop's, at
    least every second. Returns its registration's birth."""
    deadline = time.monotonic() + deadline_s
    while not [w for w in Worker.all(connection=connection) if w.get_state() == "idle"]:
        assert time.monotonic() < deadline, "the worker did not go idle"
        time.sleep(0.05)
    return _births(connection)


def _cache_keys(connection):
    """The kinds of compile cache entry `connection`'s Redis holds."""
    return sorted({k.decode().split("-")[0] for pattern in ("ascrun:frontend-*", "ascrun:artifact-*")
                   for k in connection.scan_iter(match=pattern)})


def test_caches_go_to_the_cache_redis_which_evicts_when_full(stack):
    """The compile caches' entries are written to the cache Redis, none to the state Redis; a
    cache over its maxmemory evicts (allkeys-lru) to keep them, and the job is served."""
    # 16 MiB of older entries, 2 MiB over: what the job adds evicts them, not its own (LRU sampled
    # widely, so that the oldest go first; a job's entries, the artifact's .so included, are < 2 MiB)
    for i in range(256):
        stack.cache.set(f"junk-{i}", b"j" * (64 << 10))
    stack.cache.config_set("maxmemory-samples", 64)
    stack.cache.config_set("maxmemory", stack.cache.info("memory")["used_memory"] - (2 << 20))
    try:
        with ascrun.Client(stack.url, retries=0) as client:
            result = _spin(client)
            assert result.cache == {"frontend": "miss", "build": "miss"}
            assert "spin_kernel" in client.source(result.job_id)  # the API reads a job's files from the cache
    finally:
        stack.cache.config_set("maxmemory", 0)
    assert stack.cache.info("stats")["evicted_keys"] > 0
    assert _cache_keys(stack.cache) == ["ascrun:artifact", "ascrun:frontend"]
    assert _cache_keys(stack.state) == []
    assert stack.state.exists(f"ascrun:final:{result.job_id}") and not stack.cache.keys("ascrun:final*")


def test_an_entry_the_cache_cannot_keep_fails_no_job(tmp_path):
    """A cache Redis that cannot hold an entry (maxmemory below what it uses) or cannot be reached:
    the entry is not kept, and reading it is a miss, not an error."""
    proc, url = start_redis(tmp_path)
    try:
        full = redis.Redis.from_url(url)
        full.config_set("maxmemory-policy", "allkeys-lru")
        full.config_set("maxmemory", 1)
        cache = RedisCache(full, 60)
        cache.put("artifact-x", b"a" * 4096)
        assert cache.get("artifact-x") is None
    finally:
        proc.terminate()
        proc.wait(10)
    gone = RedisCache(redis.Redis.from_url(url, socket_connect_timeout=1), 60)
    gone.put("artifact-x", b"a")
    assert gone.get("artifact-x") is None


def test_a_full_state_redis_fails_the_job_with_limit_and_the_worker_serves_the_next(stack):
    """The job's 4 MB output does not fit in the state Redis (noeviction): the job fails with
    `limit`, saying so; the worker does not exit, and serves the next job once there is room."""
    worker = stack.workers[0]
    with ascrun.Client(stack.url, retries=0) as client:
        _spin(client)  # compiled and cached: what follows only runs
        stack.state.config_set("maxmemory", stack.state.info("memory")["used_memory"] + (1 << 20))
        try:
            with pytest.raises(ascrun.KernelError) as refused:
                _spin(client, z_elements=1 << 20)
        finally:
            stack.state.config_set("maxmemory", 0)
        assert refused.value.kind == "limit"
        assert "the service's Redis is full (maxmemory reached)" in str(refused.value)
        _wait_live(stack)
        result = _spin(client)
        assert client.job(result.job_id)["worker"] == f"ascrun-{socket.gethostname()}-{worker.pid}"
    assert worker.poll() is None


def test_a_worker_survives_a_stalled_state_redis(stack):
    """Redis answers nothing for 4 s, past the worker's ASCRUN_REDIS_TIMEOUT (and its BLPOP's
    wait): its commands time out, RQ's loop gives up, and the worker starts over once Redis
    answers, the same process; a job submitted once it is live again runs there."""
    worker = stack.workers[0]
    with ascrun.Client(stack.url, retries=0) as client:
        _spin(client)
        born = _idle(stack.state)
        sleeper = redis.Redis.from_url(stack.env["REDIS_URL"], socket_timeout=30)
        sleeper.execute_command("DEBUG", "SLEEP", 2 * TIMEOUT_S + 2)
        deadline = time.monotonic() + 20
        while worker.poll() is None and _births(stack.state) == born:  # RQ's loop gave up: exit, or start over
            assert time.monotonic() < deadline, "the worker neither met the timeout nor exited"
            time.sleep(0.1)
        assert worker.poll() is None, "the worker exited on a Redis timeout"
        _wait_live(stack)
        result = _spin(client)
        assert client.job(result.job_id)["worker"] == f"ascrun-{socket.gethostname()}-{worker.pid}"


@pytest.mark.unit
def test_every_connection_has_the_timeout_and_the_cache_defaults_to_the_state_redis():
    settings = ServiceSettings.from_env({"REDIS_URL": "redis://state:6379/0", "ASCRUN_REDIS_TIMEOUT": "2.5"})
    state, cache = connect.state(settings, blocking_s=1), connect.cache(settings)
    assert state.connection_pool.connection_kwargs["socket_timeout"] == 3.5  # a BLPOP's second allowed for
    assert cache.connection_pool.connection_kwargs["socket_timeout"] == 2.5
    assert cache.connection_pool.connection_kwargs["host"] == "state"
    apart = ServiceSettings.from_env({"REDIS_URL": "redis://state:6379/0", "ASCRUN_CACHE_REDIS_URL": "redis://c:1/0"})
    assert connect.cache(apart).connection_pool.connection_kwargs["host"] == "c"
    assert connect.state_async(apart, listening=True).connection_pool.connection_kwargs["socket_timeout"] is None


@pytest.mark.unit
def test_ascrun_up_runs_a_cache_redis_that_evicts(monkeypatch):
    from ascrun.cli.stack import cache_redis_command, redis_command
    monkeypatch.setenv("ASCRUN_CACHE_REDIS_MAXMEMORY", "64mb")
    cache = " ".join(cache_redis_command(6380))
    assert "--maxmemory 64mb --maxmemory-policy allkeys-lru" in cache and "--appendonly no" in cache
    assert "--maxmemory-policy noeviction" in " ".join(redis_command(6379, "/tmp"))


@pytest.mark.unit
def test_the_deployments_have_both_roles():
    """Compose and the Kubernetes base run a cache Redis that evicts beside the state Redis that
    does not, and give its URL (a secret file) to the API server and every worker."""
    services = deploy_files.compose()["services"]
    assert "--maxmemory-policy allkeys-lru" in " ".join(services["redis-cache"]["command"])
    assert "--maxmemory-policy noeviction" in " ".join(services["redis"]["command"])
    for name in ("server", "worker-cpu", "worker-cann"):
        assert deploy_files.service_environment(name)["ASCRUN_CACHE_REDIS_URL_FILE"] == "/run/secrets/cache_redis_url"
    documents = {(doc["kind"], doc["metadata"]["name"]): doc for _, doc in deploy_files.k8s_documents()}
    [cache] = documents[("Deployment", "redis-cache")]["spec"]["template"]["spec"]["containers"]
    assert "--maxmemory-policy allkeys-lru" in " ".join(cache["args"])
    assert documents[("Service", "redis-cache")]["spec"]["selector"]["app.kubernetes.io/component"] == "cache"
    assert documents[("Service", "redis")]["spec"]["selector"]["app.kubernetes.io/component"] == "state"
    ascrun_containers = [c for doc in documents.values() if doc["kind"] == "Deployment"
                         and doc["metadata"]["name"].startswith("ascrun-")
                         for c in doc["spec"]["template"]["spec"]["containers"]]
    assert len(ascrun_containers) >= 5
    cache_url = {"name": "ASCRUN_CACHE_REDIS_URL_FILE", "value": "/run/secrets/ascrun/cache-redis-url"}
    assert all(cache_url in container["env"] for container in ascrun_containers)


@pytest.mark.unit
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (kubectl kustomize)")
@pytest.mark.parametrize("where", ["base", "overlays/single-node"])
def test_the_kubernetes_manifests_render(tmp_path, where):
    """`kubectl kustomize` builds the base and the overlay, the secret files being written."""
    kinds = [(doc["kind"], doc["metadata"]["name"]) for doc in deploy_files.kustomize(where, tmp_path)]
    assert ("Deployment", "redis-cache") in kinds and ("StatefulSet", "redis") in kinds

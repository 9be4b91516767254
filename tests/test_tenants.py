"""Tenants: bearer tokens (stored as hashes), isolation between tenants, and per-tenant limits."""
import hashlib
import json
import uuid

import httpx
import numpy as np
import pytest

import ascrun
import ops
from conftest import Service, load_module

pytestmark = pytest.mark.service

TOKENS = {"alice": "alice-secret-token", "bob": "bob-secret-token", "tiny": "tiny-secret-token",
          "lean": "lean-secret-token", "carol": "carol-secret-token", "dave": "dave-secret-token"}


@pytest.fixture(scope="module")
def pool(redis_url, service):
    """A server with three tenants, served by the session's workers (same Redis, same queues)."""
    config = {
        "limits": {"max_core_num": 16},
        "tenants": [{"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest()}
                    for name, token in TOKENS.items() if name in ("alice", "bob")] + [
            {"name": "lean", "token_sha256": hashlib.sha256(TOKENS["lean"].encode()).hexdigest(),
             "limits": {"max_bytes_in_flight": 400}},
            {"name": "tiny", "token_sha256": hashlib.sha256(TOKENS["tiny"].encode()).hexdigest(),
             "limits": {"max_blob_bytes": 4096, "max_active_jobs": 1, "launches_per_minute": 3,
                        "max_bundle_bytes": 2000, "max_request_bytes": 20000, "max_bytes_in_flight": 1 << 20}}] + [
            {"name": name, "token_sha256": hashlib.sha256(TOKENS[name].encode()).hexdigest(), "cache_group": "team"}
            for name in ("carol", "dave")],
    }
    svc = Service(redis_url, {"ASCRUN_TENANTS": json.dumps(config)})
    svc.wait_for_workers(None)
    yield svc
    svc.stop()


def test_no_or_wrong_token_is_401(pool):
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "alice-secret-token"}):
        response = httpx.get(f"{pool.url}/v1/jobs", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["kind"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"
    assert httpx.get(f"{pool.url}/v1/health").json()["open_mode"] is False


def test_tenants_see_only_their_own_jobs_and_blobs(pool):
    x = np.arange(32768, dtype=np.float32)  # above INLINE_BYTES: uploaded as a blob (spin_kernel reads 64)
    z = np.zeros_like(x)
    with ascrun.Client(pool.url, token=TOKENS["alice"]) as alice, ascrun.Client(pool.url, token=TOKENS["bob"]) as bob:
        result = alice.launch(ops.spin_kernel, 1, x, z, 1)
        np.testing.assert_array_equal(z[:64], x[:64] + 1)
        assert [j["id"] for j in alice.jobs()][0] == result.job_id
        assert result.job_id not in [j["id"] for j in bob.jobs()]
        assert json.loads(alice.trace(result.job_id))["traceEvents"]  # her cpu job has a trace...
        for read in (bob.job, bob.source, bob.trace):  # ...which bob cannot read, as none of her job
            with pytest.raises(ascrun.KernelError) as e:
                read(result.job_id)
            assert e.value.kind == "not_found"
        blob = hashlib.sha256(x.tobytes()).hexdigest()
        assert alice.blob(blob) == x.tobytes()
        with pytest.raises(ascrun.KernelError, match="no blob"):
            bob.blob(blob)
        # bob's launch of the same data uploads it again: alice's copy is not his
        uploads = []
        bob._http.event_hooks["request"].append(lambda r: uploads.append(r) if r.method == "PUT" else None)
        z2 = np.zeros_like(x)
        bob.launch(ops.spin_kernel, 1, x, z2, 1)
        np.testing.assert_array_equal(z2[:64], x[:64] + 1)
        assert len(uploads) == 1  # x again; z is all zeros, sent as such


def test_the_caches_are_per_tenant_unless_tenants_share_them(pool, tmp_path):
    """A cache hit says only what the same tenant (or one it shares its caches with) compiled: it
    never answers "has someone compiled this?" for another tenant's first launch."""
    unique = uuid.uuid4().int % 1_000_000  # a kernel nobody compiled before: its C++ prints this
    path = tmp_path / "fresh.py"
    path.write_text(f"import asc\n\n\n@asc.jit\ndef fresh(x: asc.GlobalAddress, n: int):\n"
                    f"    asc.printf(\"%d\\n\", n + {unique})\n")
    kernel = load_module(path).fresh
    caches = {}
    for name in ("alice", "bob", "alice", "carol", "dave"):
        with ascrun.Client(pool.url, token=TOKENS[name]) as client:
            caches.setdefault(name, []).append(client.launch(kernel, 1, np.zeros(8, np.float32), 1).cache)
    miss, hit = {"frontend": "miss", "build": "miss"}, {"frontend": "hit", "build": "hit"}
    assert caches == {"alice": [miss, hit], "bob": [miss], "carol": [miss], "dave": [hit]}


def test_limits_are_enforced_and_named(pool, framework_example):
    headers = {"Authorization": f"Bearer {TOKENS['tiny']}"}
    big = bytes(8192)
    response = httpx.put(f"{pool.url}/v1/blobs/{hashlib.sha256(big).hexdigest()}", content=big, headers=headers)
    assert response.status_code == 413 and "(max_blob_bytes)" in response.json()["error"]["message"]

    bundle = ascrun.compiler.bundle.collect(framework_example.vadd_framework_kernel).to_json()
    job = {"bundle": bundle, "core_num": 1, "args": []}
    response = httpx.post(f"{pool.url}/v1/jobs", json=job, headers=headers)
    assert response.status_code == 413 and "(max_bundle_bytes)" in response.json()["error"]["message"]

    padded = {**job, "options": {"pad": "x" * 30000}}
    response = httpx.post(f"{pool.url}/v1/jobs", json=padded, headers=headers)
    assert response.status_code == 413 and "(max_request_bytes)" in response.json()["error"]["message"]

    alice = {"Authorization": f"Bearer {TOKENS['alice']}"}
    response = httpx.post(f"{pool.url}/v1/jobs", json={**job, "core_num": 64}, headers=alice)
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "core_num 64 exceeds the limit of 16 (max_core_num)"


def test_active_jobs_and_rate_limits(pool):
    from ascrun.args import prepare
    with ascrun.Client(pool.url, token=TOKENS["tiny"], retries=0) as tiny:
        x = np.ones(64, np.float32)
        bundle = ascrun.compiler.bundle.collect(ops.spin_kernel).to_json()

        def body(rounds, timeout=None):
            args, blobs = ascrun.service.submission.job_arguments(prepare(["x", "z", "rounds"],
                                                                  [x, np.zeros_like(x), rounds]))
            return {"bundle": bundle, "core_num": 1, "args": args, "timeout": timeout or 30}, blobs

        slow = tiny.submit_job(*body(2**31 - 1, timeout=2), wait=0)  # runs until its 2 s timeout
        with pytest.raises(ascrun.KernelError) as e:
            tiny.submit_job(*body(1), wait=0)
        assert e.value.kind == "limit"
        assert str(e.value) == "you have 1 jobs queued or running, the limit is 1 (max_active_jobs)"
        assert tiny.wait(slow["id"], 30)["status"] == "timed_out"
        outcomes = []
        for _ in range(7):  # 3 a minute, refused ones too: 7 in a row span at most two windows, so some are refused
            try:
                outcomes.append(tiny.submit_job(*body(1), wait=20)["status"])
            except ascrun.KernelError as err:
                outcomes.append(str(err))
        assert "more than 3 launches this minute (launches_per_minute; refused ones count too)" in outcomes
        assert set(outcomes) <= {"finished", "more than 3 launches this minute (launches_per_minute; refused ones "
                                             "count too)"}


def test_bytes_in_flight_limit(pool):
    x = np.ones(64, np.float32)  # x and z: 512 tensor bytes, over lean's 400
    with ascrun.Client(pool.url, token=TOKENS["lean"], retries=0) as lean:
        with pytest.raises(ascrun.KernelError) as e:
            lean.launch(ops.spin_kernel, 1, x, np.zeros_like(x), 1)
    assert e.value.kind == "limit"
    assert str(e.value) == "tensor bytes of your queued and running jobs would exceed 400 (max_bytes_in_flight)"

"""The service end to end: Client -> FastAPI -> Redis -> RQ worker processes -> outputs."""
import numpy as np
import pytest

import ascrun
import faulty
import ops
from conftest import ROOT, load_module

pytestmark = pytest.mark.service

RNG = np.random.default_rng(7)


def _xy(size, dtype=np.float32):
    return RNG.random(size).astype(dtype), RNG.random(size).astype(dtype)


def test_launch_tutorial_add(client, add_example):
    x, y = _xy(8 * 2048)
    z = np.zeros_like(x)
    result = client.launch(add_example.vadd_kernel, 8, x, y, z, 2048)
    np.testing.assert_allclose(z, x + y)
    assert set(result.outputs) == {"z"}
    assert {"queue", "frontend", "build", "run", "upload", "download", "total"} <= set(result.timings)
    assert "AscendC::Add(" in result.source


def test_launch_tutorial_framework_with_remote_syntax(client, framework_example):
    x, y = _xy(16384)
    z = np.zeros_like(x)
    kernel = ascrun.remote(framework_example.vadd_framework_kernel, client)
    kernel[8](x, y, z, 2048, 128)
    np.testing.assert_allclose(z, x + y)
    z2 = np.zeros_like(x)
    kernel[8, None](x, y, z2, 2048, 128)  # pyasc's [core_num, stream] form
    np.testing.assert_allclose(z2, x + y)


def test_caches_across_launches_edits_and_workers(client, tmp_path):
    """Build hit on relaunch; a comment-only edit misses the frontend memo but hits the artifact;
    the artifact one worker built serves the other."""
    source = (ROOT / "examples" / "add_framework.py").read_text()
    # A constant no other test uses, so this kernel starts cold in the shared caches.
    source = source.replace("TILE_NUM = 8", "TILE_NUM = 4")
    (tmp_path / "fresh.py").write_text(source)
    kernel = load_module(tmp_path / "fresh.py", "fresh_add").vadd_framework_kernel
    x, y = _xy(4096)
    results = []
    for _ in range(4):
        z = np.zeros_like(x)
        results.append(client.launch(kernel, 4, x, y, z, 1024, 128))
        np.testing.assert_allclose(z, x + y)
    assert results[0].cache == {"frontend": "miss", "build": "miss"}
    assert all(r.cache == {"frontend": "hit", "build": "hit"} for r in results[1:])
    workers = {client.wait(r.job_id, 5)["worker"] for r in results}
    assert len(workers) == 2  # both workers served this kernel; only the first one built it

    (tmp_path / "edited.py").write_text(source.replace("    z_local = out_queue_z.alloc_tensor(z_gm.dtype)\n",
                                                       "    # allocate the output tile\n"
                                                       "    z_local = out_queue_z.alloc_tensor(z_gm.dtype)\n"))
    edited = load_module(tmp_path / "edited.py", "edited_add").vadd_framework_kernel
    z = np.zeros_like(x)
    result = client.launch(edited, 4, x, y, z, 1024, 128)
    np.testing.assert_allclose(z, x + y)
    assert result.cache == {"frontend": "miss", "build": "hit"}
    assert result.ir_hash == results[0].ir_hash


def test_identical_rerun_uploads_no_blob(client, add_example):
    x, y = _xy(32768)  # above INLINE_BYTES: blobs (the kernel adds the first 4096)
    z = np.zeros_like(x)
    client.launch(add_example.vadd_kernel, 2, x, y, z, 2048)
    uploads = []
    client._http.event_hooks["request"].append(lambda r: uploads.append(r.url.path) if r.method == "PUT" else None)
    z = np.zeros_like(x)
    client.launch(add_example.vadd_kernel, 2, x, y, z, 2048)
    np.testing.assert_allclose(z[:4096], (x + y)[:4096])
    assert uploads == []
    client.launch(add_example.vadd_kernel, 2, x + 1, y, z, 2048)  # a new x: exactly one upload
    assert len(uploads) == 1 and uploads[0].startswith("/v1/blobs/")


def test_runtime_error_then_worker_serves_next_job(client, add_example):
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(faulty.ub_overflow_kernel, 1, np.zeros(4096, np.float32), 4096)
    assert e.value.kind == "runtime_error"
    assert "LocalTensor" in str(e.value) and "Unified Buffer" in str(e.value)
    for _ in range(2):  # each of the two workers
        x, y = _xy(4096)
        z = np.zeros_like(x)
        client.launch(add_example.vadd_kernel, 2, x, y, z, 2048)
        np.testing.assert_allclose(z, x + y)


def test_kernel_that_never_ends_is_stopped_by_the_job_timeout(client):
    x = np.ones(64, np.float32)
    z = np.zeros_like(x)
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(ops.spin_kernel, 1, x, z, 2**31 - 1, timeout=3)
    assert e.value.kind == "timeout"
    assert "3 s timeout" in str(e.value)
    x, z = np.ones(64, np.float32), np.zeros(64, np.float32)
    client.launch(ops.spin_kernel, 1, x, z, 1)
    np.testing.assert_array_equal(z, x + 1)


def test_server_rejects_a_bundle_that_imports(client, add_example):
    import httpx
    bundle = ascrun.compiler.bundle.collect(add_example.vadd_kernel).to_json()
    bundle["functions"][0]["source"] = bundle["functions"][0]["source"].replace(
        "    offset = ", "    import os\n    offset = ", 1)
    response = httpx.post(f"{client.url}/v1/jobs", json={"bundle": bundle, "core_num": 1, "args": []})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["kind"] == "bundle_rejected"
    assert "kernel 'vadd_kernel'" in error["message"] and "imports are not allowed" in error["message"]


@pytest.mark.unit
def test_unreachable_service_is_one_clear_error(add_example):
    with ascrun.Client("http://127.0.0.1:9", retries=1) as dead:
        with pytest.raises(ascrun.KernelError) as e:
            dead.launch(add_example.vadd_kernel, 1, np.zeros(2048, np.float32), np.zeros(2048, np.float32),
                        np.zeros(2048, np.float32), 2048)
    assert e.value.kind == "unavailable"
    assert str(e.value).startswith("cannot reach the ascrun service at http://127.0.0.1:9")
    assert e.value.__suppress_context__  # no httpx traceback chained under it


def test_job_record_source_ir_health_and_openapi(client, add_example):
    import httpx
    x, y = _xy(4096)
    z = np.zeros_like(x)
    result = client.launch(add_example.vadd_kernel, 2, x, y, z, 2048)
    record = httpx.get(f"{client.url}/v1/jobs/{result.job_id}").json()
    assert record["status"] == "finished" and record["kernel"] == "vadd_kernel" and record["core_num"] == 2
    assert record["created_at"] <= record["started_at"] <= record["ended_at"]
    assert record["outputs"]["z"]["dtype"] == "float32" and record["outputs"]["z"]["shape"] == [4096]
    source = httpx.get(f"{client.url}/v1/jobs/{result.job_id}/source")
    assert source.status_code == 200 and source.text == result.source
    assert "extern \"C\"" in source.text and "vadd_kernel" in source.text
    ir = httpx.get(f"{client.url}/v1/jobs/{result.job_id}/ir").text
    assert "func.func @vadd_kernel" in ir
    missing = httpx.get(f"{client.url}/v1/jobs/{'0' * 32}")
    assert missing.status_code == 404 and missing.json()["error"]["kind"] == "not_found"
    health = httpx.get(f"{client.url}/v1/health").json()
    assert health["status"] == "ok" and health["workers"]["cpu"] == 2
    spec = httpx.get(f"{client.url}/openapi.json").json()
    assert {"/v1/jobs", "/v1/jobs/{job_id}", "/v1/blobs/{digest}", "/v1/health"} <= set(spec["paths"])
    assert httpx.get(f"{client.url}/docs").status_code == 200


def test_long_poll_returns_when_the_job_ends(client):
    """A GET with wait answers as soon as the job ends, long before the wait runs out."""
    import time

    import httpx
    x = np.ones(64, np.float32)
    z = np.zeros_like(x)
    bundle = ascrun.compiler.bundle.collect(ops.spin_kernel).to_json()
    args, blobs = ascrun.service.submission.job_arguments(ascrun.args.prepare(["x", "z", "rounds"], [x, z, 30_000_000]))
    job = client.submit_job({"bundle": bundle, "core_num": 1, "args": args}, blobs, wait=0)
    assert job["status"] in ("queued", "started")
    start = time.monotonic()
    record = httpx.get(f"{client.url}/v1/jobs/{job['id']}", params={"wait": 50}, timeout=60).json()
    assert record["status"] == "finished"
    assert time.monotonic() - start < 30


def test_blob_limits_and_digest_checks(redis_url):
    import hashlib

    import httpx
    from conftest import Service
    small = Service(redis_url, {"ASCRUN_TENANTS": '{"limits": {"max_blob_bytes": 1024}}'})
    try:
        small.wait_for_workers(None)
        data = bytes(2048)
        digest = hashlib.sha256(data).hexdigest()
        response = httpx.put(f"{small.url}/v1/blobs/{digest}", content=data)
        assert response.status_code == 413
        assert response.json()["error"] == {"kind": "limit", "message": "blob of 2048 bytes exceeds the 1024-byte "
                                                                        "limit (max_blob_bytes)"}
        chunked = httpx.put(f"{small.url}/v1/blobs/{digest}", content=iter([data[:1000], data[1000:]]))
        assert chunked.status_code == 411  # no Content-Length: no size to reserve, refused before it is read
        ok = bytes(512)
        wrong = httpx.put(f"{small.url}/v1/blobs/{digest}", content=ok)
        assert wrong.status_code == 400 and "corrupted upload" in wrong.json()["error"]["message"]
        good = httpx.put(f"{small.url}/v1/blobs/{hashlib.sha256(ok).hexdigest()}", content=ok)
        assert good.status_code == 201
    finally:
        small.stop()


def test_retried_submit_with_the_same_idempotency_key_runs_once(client, add_example):
    import httpx
    x = np.arange(4096, dtype=np.float32)
    args, blobs = ascrun.service.submission.job_arguments(ascrun.args.prepare(["x", "y", "z", "block_length"],
                                                                      [x, x, np.zeros_like(x), 2048]))
    for digest, data in blobs.items():
        httpx.put(f"{client.url}/v1/blobs/{digest}", content=data).raise_for_status()
    body = {"bundle": ascrun.compiler.bundle.collect(add_example.vadd_kernel).to_json(), "core_num": 2,
            "args": args}
    headers = {"Idempotency-Key": "retry-me-1"}
    first = httpx.post(f"{client.url}/v1/jobs", json=body, headers=headers).json()
    again = httpx.post(f"{client.url}/v1/jobs", json=body, headers=headers, params={"wait": 30}).json()
    assert again["id"] == first["id"] and again["status"] == "finished"
    listed = [j["id"] for j in httpx.get(f"{client.url}/v1/jobs", params={"limit": 50}).json()["jobs"]]
    assert listed.count(first["id"]) == 1
    other = httpx.post(f"{client.url}/v1/jobs", json={**body, "core_num": 1}, headers=headers)
    assert other.status_code == 422
    assert other.json()["error"]["message"] == "this Idempotency-Key was used for a different submission"

"""The API under hostile and heavy input: struct nesting, huge and empty tensors, inline tensors,
scalar values, broken bodies, atomic admission, lost jobs, Redis full, dead workers."""
import base64
import concurrent.futures
import hashlib
import json
import os
import signal
import socket
import sys
import time
from urllib.parse import urlparse

import httpx
import numpy as np
import pytest
import redis

import ascrun
import ops
from ascrun.server.store.jobs import INLINE_BYTES, JobStore
from ascrun.server.store.queues import queue_name
from conftest import LIVENESS, Service, ghost_worker, start_redis

pytestmark = pytest.mark.service

TOKENS = {"race": "race-secret-token", "small": "small-secret-token"}


@pytest.fixture(scope="module")
def api(service):
    with httpx.Client(base_url=service.url, timeout=120) as http:
        yield http


@pytest.fixture(scope="module")
def pool(redis_url, service):
    """A server with tenants of small limits, served by the session's workers."""
    config = {"tenants": [
        {"name": "race", "token_sha256": hashlib.sha256(TOKENS["race"].encode()).hexdigest(),
         "limits": {"max_active_jobs": 8, "launches_per_minute": 1000}},
        {"name": "small", "token_sha256": hashlib.sha256(TOKENS["small"].encode()).hexdigest(),
         "limits": {"max_blob_bytes": 8000, "max_stored_bytes": 10000}}]}
    svc = Service(redis_url, {"ASCRUN_TENANTS": json.dumps(config)})
    svc.wait_for_workers(None)
    yield svc
    svc.stop()


def _job(args=None, **bundle_extra):
    """A submission of ops.spin_kernel (x, z, rounds) with inline tensors."""
    x = base64.b64encode(np.ones(64, np.float32).tobytes()).decode()
    tensor = {"kind": "tensor", "data": x, "dtype": "float32", "shape": [64]}
    bundle = dict(ascrun.compiler.bundle.collect(ops.spin_kernel).to_json(), **bundle_extra)
    return {"bundle": bundle, "core_num": 1,
            "args": args or [tensor, tensor, {"kind": "scalar", "dtype": "int", "value": 1}]}


def _error(response, status):
    assert response.status_code == status, response.text
    return response.json()["error"]


# --- struct definitions ----------------------------------------------------------------------

def test_struct_diamond_is_refused_at_once_while_the_server_keeps_answering(api):
    levels = 24  # S0 nests S1 twice, S1 nests S2 twice, ...: 2**24 fields spelled out
    structs = {f"S{i}": {"pack": 8, "fields": [{"name": "a", "struct": f"S{i + 1}"}, {"name": "b", "struct": f"S{i + 1}"}]}
               for i in range(levels)}
    structs[f"S{levels}"] = {"pack": 8, "fields": [{"name": "v", "dtype": "int32"}]}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        submitted = pool.submit(api.post, "/v1/jobs", json=_job(structs=structs))
        health = pool.submit(api.get, "/v1/health")
        error = _error(submitted.result(), 422)
        assert health.result().json()["status"] == "ok"
    assert error == {"kind": "bundle_rejected",
                     "message": "struct 'S10' has 16384 fields with its nested structs spelled out, more than 8192"}


def test_deep_struct_chain_is_refused(api):
    structs = {f"S{i}": {"pack": 8, "fields": [{"name": "a", "struct": f"S{i + 1}"}]} for i in range(40)}
    structs["S40"] = {"pack": 8, "fields": [{"name": "v", "dtype": "int32"}]}
    error = _error(api.post("/v1/jobs", json=_job(structs=structs)), 422)
    assert error == {"kind": "bundle_rejected", "message": "struct 'S0' nests structs more than 32 levels deep"}


# --- scalar arguments and broken bodies ------------------------------------------------------

@pytest.mark.parametrize("dtype,value,problem", [
    ("int", float("nan"), "scalar of dtype int: got nan, not an integer"),
    ("int", "abc", "scalar of dtype int: got 'abc', not a number"),
    ("int", 10 ** 30, f"scalar of dtype int: {10 ** 30} is outside [{-2 ** 63}, {2 ** 64 - 1}]"),
    ("int", 1.5, "scalar of dtype int: got 1.5, not an integer"),
    ("int8", 300, "scalar of dtype int8: 300 is outside [-128, 127]"),
    ("bool", "yes", "scalar of dtype bool: got 'yes', not true or false"),
    ("float32", 1e39, "scalar of dtype float32: 1e+39 is out of its range"),
    ("str", 3, "scalar of dtype str: got 3, not a string"),
    ("float32", [1.0], "scalar of dtype float32: got [1.0], not a number"),
    ("bool", [True], "scalar of dtype bool: got [True], not true or false"),
    ("tuple", [8, 1.5], "scalar of dtype tuple: item 1: got 1.5, not an integer"),
    ("tuple", [8, True], "scalar of dtype tuple: item 1: got True, not a number"),
    ("tuple", [2 ** 63], f"scalar of dtype tuple: item 0: {2 ** 63} is outside [{-2 ** 63}, {2 ** 63 - 1}]"),
    ("tuple", "8,8", "scalar of dtype tuple: got '8,8', not a list of at most 32 integers"),
    ("dtype", "bool", "scalar of dtype dtype: got 'bool', not one of int8, uint8, int16, uint16, int32, uint32, "
                      "int64, uint64, float16, float32, float64, bfloat16"),
    ("function", "posix:system", "scalar of dtype function: got 'posix:system', not 'module:name' of a function of "
                                 "asc's or asctile's kernel language"),
    ("function", "asc.language.core:__getattr__", "scalar of dtype function: got 'asc.language.core:__getattr__', "
                                                  "not 'module:name' of a function of asc's or asctile's kernel "
                                                  "language"),
])
def test_scalar_of_the_wrong_kind_is_refused(api, dtype, value, problem):
    job = _job()
    job["args"][2] = {"kind": "scalar", "dtype": dtype, "value": value}
    response = api.post("/v1/jobs", content=json.dumps(job).encode(), headers={"Content-Type": "application/json"})
    error = _error(response, 422)
    assert error["kind"] == "bad_request" and f"body.args.2.scalar: {problem}" in error["message"]


@pytest.mark.parametrize("dtype, value, what", [("str", "abc", "a string"), ("tuple", [8, 8], "a tuple"),
                                               ("dtype", "float16", "a pyasc dtype"),
                                               ("function", "asc.language.basic.vec_unary:exp", "a function")])
def test_constexpr_kinds_for_a_parameter_that_is_not_constexpr(api, dtype, value, what):
    job = _job()
    job["args"][2] = {"kind": "scalar", "dtype": dtype, "value": value}
    assert _error(api.post("/v1/jobs", json=job), 422) == {
        "kind": "bad_request", "message": f"argument 'rounds' is {what}: only a ConstExpr parameter takes one"}


def test_a_tuple_has_at_most_32_items(api):
    job = _job()
    job["args"][2] = {"kind": "scalar", "dtype": "tuple", "value": [1] * 33}
    error = _error(api.post("/v1/jobs", json=job), 422)
    assert error["kind"] == "bad_request" and "List should have at most 32 items after validation" in error["message"]


def test_float_scalars_may_be_nan_or_infinite(api):
    job = _job()  # ops.scalar_kernel(x, z, n: ConstExpr[int], add: float, mul: float)
    job["bundle"] = ascrun.compiler.bundle.collect(ops.scalar_kernel).to_json()
    job["args"] += [{"kind": "scalar", "dtype": "float", "value": float("inf")},
                    {"kind": "scalar", "dtype": "float", "value": float("nan")}]
    job["args"][2]["value"] = 64
    response = api.post("/v1/jobs", content=json.dumps(job).encode(), headers={"Content-Type": "application/json"})
    assert response.status_code == 202, response.text  # pyasc's own check then says what it thinks of a float


@pytest.mark.parametrize("field,value,problem", [
    ("filename", "a\x00b.py", "body.bundle.functions.0.filename: String should match pattern"),
    ("lineno", 10 ** 9, "body.bundle.functions.0.lineno: Input should be less than or equal to 100000"),
])
def test_bundle_metadata_is_bounded(api, field, value, problem):
    job = _job()
    job["bundle"]["functions"][0][field] = value
    error = _error(api.post("/v1/jobs", json=job), 422)
    assert error["kind"] == "bad_request" and problem in error["message"]


@pytest.mark.parametrize("body", [
    b'{"core_num": 1, "bundle": "\xff\xfe"}',  # not UTF-8
    b'{"core_num": ' + b"9" * 5000 + b"}",  # more digits than Python's int parser takes
    b"[" * 100_000 + b"]" * 100_000,  # deeper than the JSON parser's recursion
])
def test_unparsable_bodies_get_the_error_shape(api, body):
    error = _error(api.post("/v1/jobs", content=body, headers={"Content-Type": "application/json"}), 400)
    assert error == {"kind": "bad_request", "message": "the body is not valid JSON (or not UTF-8, or nested or "
                                                       "sized beyond what the parser takes)"}


def test_unknown_route_gets_the_error_shape(api):
    assert _error(api.get("/v1/nothing"), 404) == {"kind": "not_found", "message": "Not Found"}


# --- tensors: empty, inline, huge --------------------------------------------------------------

def test_empty_tensor_is_a_present_blob(api):
    empty = hashlib.sha256(b"").hexdigest()
    assert api.put(f"/v1/blobs/{empty}", content=b"").status_code == 201
    assert api.post("/v1/blobs/missing", json={"digests": [empty]}).json() == {"missing": []}
    assert api.get(f"/v1/blobs/{empty}").content == b""
    job = _job()
    job["args"][1] = {"kind": "tensor", "blob": empty, "dtype": "float32", "shape": [0]}
    assert api.post("/v1/jobs", json=job).status_code == 202
    job["args"][1] = {"kind": "tensor", "data": "", "dtype": "float32", "shape": [0]}
    assert api.post("/v1/jobs", json=job).status_code == 202


@pytest.mark.parametrize("tensor,problem", [
    ({"data": base64.b64encode(bytes(100)).decode(), "shape": [64]},
     "tensor: float32[64] needs 256 bytes but data has 100"),  # not what dtype and shape say
    ({"data": "not base64!", "shape": [64]}, "data is not base64"),
    ({"data": "", "blob": "0" * 64, "shape": [0]}, "a tensor has one of a blob, inline data or zeros"),
    ({"zeros": True, "blob": "0" * 64, "shape": [4]}, "a tensor has one of a blob, inline data or zeros"),
    ({"shape": [64]}, "a tensor has one of a blob, inline data or zeros"),
    ({"zeros": False, "shape": [64]}, "Input should be True"),
    ({"data": base64.b64encode(bytes(INLINE_BYTES + 4)).decode(), "shape": [INLINE_BYTES // 4 + 1]},
     "String should have at most"),  # over INLINE_BYTES: upload it as a blob
    ({"blob": "0" * 64, "shape": [-1]}, "Input should be greater than or equal to 0"),
])
def test_inline_tensor_checks(api, tensor, problem):
    job = _job()
    job["args"][0] = {"kind": "tensor", "dtype": "float32", **tensor}
    error = _error(api.post("/v1/jobs", json=job), 422)
    assert error["kind"] == "bad_request" and problem in error["message"], error


def test_small_tensors_travel_inline_both_ways(client):
    requests = []
    client._http.event_hooks["request"].append(lambda r: requests.append(f"{r.method} {r.url.path}"))
    try:
        x = np.arange(64, dtype=np.float32)
        z = np.zeros_like(x)
        client.launch(ops.spin_kernel, 1, x, z, 1)
    finally:
        client._http.event_hooks["request"].clear()
    np.testing.assert_array_equal(z, x + 1)
    assert [r.split()[0] for r in requests] == ["POST"], requests  # no upload, no download


@pytest.mark.unit
def test_inline_tensors_stay_under_their_total():
    """A submission's JSON is parsed on the API's one core: tensors go inline only while their bytes
    stay under INLINE_TOTAL_BYTES in all, the rest as blobs, so a launch's body fits a tenant's
    max_request_bytes (4 MiB by default) whatever its argument count."""
    from ascrun.args import prepare
    from ascrun.service.submission import INLINE_TOTAL_BYTES, job_arguments
    from ascrun.server.tenants import Limits
    tensors = [np.full(INLINE_BYTES // 4, i + 1, np.float32) for i in range(40)]  # 2.5 MiB, 64 KiB each
    args, blobs = job_arguments(prepare([f"t{i}" for i in range(40)], tensors))
    inline = [a for a in args if "data" in a]
    assert len(inline) == INLINE_TOTAL_BYTES // INLINE_BYTES and len(blobs) == 40 - len(inline)
    assert all(a["blob"] in blobs for a in args if "data" not in a)
    assert len(json.dumps(args)) < Limits().max_request_bytes // 2


def test_zero_filled_tensors_are_not_sent_whatever_their_size(client):
    """An all-zero tensor (an output buffer, usually) travels as `zeros`: a 128 KiB one needs no
    upload; -0.0 is not zeros (its bytes differ), so a kernel still sees its sign."""
    requests = []
    client._http.event_hooks["request"].append(lambda r: requests.append(f"{r.method} {r.url.path}"))
    try:
        x = np.random.default_rng(8).random(32768, dtype=np.float32)  # 128 KiB: a blob
        y = np.zeros_like(x)
        z = np.zeros_like(x)
        client.launch(ops.binary_kernel, 8, x, y, z, 4096, "add")
        np.testing.assert_array_equal(z, x)
        # x's upload only (the first POST answers 409 naming it), and the output's download
        assert [r.split()[0] for r in requests] == ["POST", "PUT", "POST", "GET"], requests
        requests.clear()
        minus = np.full(64, -0.0, np.float32)
        z = np.zeros(64, np.float32)
        client.launch(ops.binary_kernel, 1, minus, np.ones(64, np.float32), z, 64, "mul")
        assert np.signbit(z).all() and requests == ["POST /v1/jobs"]
    finally:
        client._http.event_hooks["request"].clear()


def test_over_cap_upload_is_refused_before_its_body(pool):
    """The 413 comes back on the headers alone: the body is never sent."""
    url = urlparse(pool.url)
    digest = "0" * 64
    with socket.create_connection((url.hostname, url.port), timeout=30) as conn:
        conn.sendall(f"PUT /v1/blobs/{digest} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKENS['small']}\r\n"
                     "Content-Length: 2000000000\r\n\r\n".encode())
        answer = b""
        while not answer.endswith(b"}"):
            answer += conn.recv(65536)
        answer = answer.decode()
    assert answer.startswith("HTTP/1.1 413"), answer
    assert "blob of 2000000000 bytes exceeds the 8000-byte limit (max_blob_bytes)" in answer


def test_a_zero_tensor_over_the_blob_cap_is_refused(pool):
    """A tensor sent as zeros costs the client nothing to send, but the worker holds its bytes: it
    is capped as the blob it stands for would be."""
    job = _job()
    job["args"][0] = {"kind": "tensor", "dtype": "float32", "shape": [2001], "zeros": True}  # 8004 bytes
    answer = httpx.post(f"{pool.url}/v1/jobs", json=job, headers={"Authorization": f"Bearer {TOKENS['small']}"})
    assert answer.status_code == 413
    assert answer.json()["error"]["message"] == ("tensor 'x' of 8004 bytes (zeros) exceeds the 8000-byte limit "
                                                 "(max_blob_bytes)")


def test_a_stream_without_its_size_is_refused_and_not_retried(pool):
    sent = []
    with ascrun.Client(pool.url, token=TOKENS["small"]) as small:
        small._http.event_hooks["request"].append(lambda r: sent.append(r.method))
        data = bytes(9000)
        with pytest.raises(ascrun.KernelError) as e:  # no Content-Length: no size to reserve
            small.upload_blob(hashlib.sha256(data).hexdigest(),
                              (data[i:i + 1000] for i in range(0, len(data), 1000)))
    assert e.value.kind == "bad_request" and str(e.value).startswith("a blob upload must declare its size")
    assert sent == ["PUT"]  # a 4xx is never retried


def test_stored_bytes_are_capped_per_tenant(pool):
    headers = {"Authorization": f"Bearer {TOKENS['small']}"}
    first, second = b"a" * 6000, b"b" * 6000
    assert httpx.put(f"{pool.url}/v1/blobs/{hashlib.sha256(first).hexdigest()}", content=first,
                     headers=headers).status_code == 201
    again = httpx.put(f"{pool.url}/v1/blobs/{hashlib.sha256(first).hexdigest()}", content=first, headers=headers)
    assert again.status_code == 201  # the same blob again takes no more room
    error = _error(httpx.put(f"{pool.url}/v1/blobs/{hashlib.sha256(second).hexdigest()}", content=second,
                             headers=headers), 429)
    assert error == {"kind": "limit", "message": "storing this blob of 6000 bytes would take your stored blobs (with "
                                                 "your uploads under way, your ended jobs' records and the bytes your "
                                                 "queued and running jobs reserve for their outputs) from 6000 to "
                                                 "12000 bytes, over 10000 (max_stored_bytes); blobs and records are "
                                                 "released as they expire (ASCRUN_BLOB_TTL, ASCRUN_RESULT_TTL), "
                                                 "reservations when their jobs end"}


# --- admission, lost jobs, Redis full, dead workers -------------------------------------------

def test_admission_is_atomic(pool, redis_url):
    """40 submissions at once against max_active_jobs 8: exactly 8 are taken. The jobs go to a SOC
    that only a heartbeat serves, so they stay queued: none can end during the burst and free its
    slot for a ninth (a job that ran and ended meanwhile, as one spinning to a 1 s timeout did under
    load, made room for a ninth admission: a right answer, not a race)."""
    job = {**_job(), "soc": "AdmissionGhost"}
    headers = {"Authorization": f"Bearer {TOKENS['race']}"}
    connection = redis.Redis.from_url(redis_url)
    with httpx.Client(base_url=pool.url, headers=headers, timeout=60) as http:
        with ghost_worker(connection, {"cpu": {"socs": ["AdmissionGhost"]}}, "test-admission-ghost"):
            with concurrent.futures.ThreadPoolExecutor(40) as threads:
                answers = list(threads.map(lambda _: http.post("/v1/jobs", json=job), range(40)))
        accepted = [a.json()["id"] for a in answers if a.status_code == 202]
        refused = [a.json()["error"]["message"] for a in answers if a.status_code == 429]
        assert len(accepted) == 8 and len(refused) == 32, [a.text for a in answers]
        assert all(m.endswith("the limit is 8 (max_active_jobs)") for m in refused), refused
        assert all(http.get(f"/v1/jobs/{job_id}").json()["status"] == "queued" for job_id in accepted)
    jobs = JobStore(connection, LIVENESS)
    for job_id in accepted:  # end them as the reaper would: the tenant's slots are free again
        assert jobs.fail(job_id, "unavailable", "ended by the test")
    # and take them out of a queue no worker serves: the session's Redis is other modules' too
    connection.delete(f"rq:queue:{queue_name('cpu', 'race', 'AdmissionGhost')}")


LOST = {"kind": "unavailable", "message": "the job was lost before a worker started it (the service's Redis lost "
        "it, or its worker died): submit again", "python": None, "missing": None, "served": None}


def _queued_for_sim(api, connection) -> dict:
    """A job accepted for target sim, which nobody really serves (a heartbeat says one does): it waits."""
    with ghost_worker(connection, {"sim": {}}, "test-sim-worker"):
        return api.post("/v1/jobs", json={**_job(), "target": "sim"}).json()


def test_a_job_lost_before_a_worker_took_it_is_reaped(api, redis_url):
    """Redis lost the RQ job (e.g. an AOF that missed its last second): the job ends, with a message."""
    connection = redis.Redis.from_url(redis_url)
    record = _queued_for_sim(api, connection)
    assert record["status"] == "queued"
    connection.delete(f"rq:job:{record['id']}")
    connection.lrem(f"rq:queue:{queue_name('sim', 'open')}", 0, record["id"])
    deadline = time.monotonic() + LIVENESS.unqueued_grace_s + 30
    while record["status"] == "queued" and time.monotonic() < deadline:
        record = api.get(f"/v1/jobs/{record['id']}", params={"wait": 5}).json()
    assert record["status"] == "failed"
    assert record["error"] == LOST


def test_a_job_a_worker_took_and_died_with_is_reaped(api, redis_url):
    """A worker moved the job out of its queue (RQ's intermediate list) and was SIGKILLed before it
    started it: the job ends, and no later worker can take it from the list."""
    connection = redis.Redis.from_url(redis_url)
    record = _queued_for_sim(api, connection)
    queue = f"rq:queue:{queue_name('sim', 'open')}"
    assert connection.lmove(queue, f"{queue}:intermediate") == record["id"].encode()  # what RQ's dequeue does
    deadline = time.monotonic() + 2 * LIVENESS.unqueued_grace_s + 30
    while record["status"] == "queued" and time.monotonic() < deadline:
        record = api.get(f"/v1/jobs/{record['id']}", params={"wait": 5}).json()
    assert record["error"] == LOST
    assert connection.lrange(f"{queue}:intermediate", 0, -1) == []


def test_a_job_a_worker_popped_and_died_with_is_reaped(api, redis_url):
    """A worker reading several queues (RQ's BLPOP) popped the job off its queue outright and was
    SIGKILLed before it started it: the job is in no list; it ends all the same."""
    connection = redis.Redis.from_url(redis_url)
    record = _queued_for_sim(api, connection)
    assert connection.lpop(f"rq:queue:{queue_name('sim', 'open')}") == record["id"].encode()
    deadline = time.monotonic() + 2 * LIVENESS.unqueued_grace_s + 30
    while record["status"] == "queued" and time.monotonic() < deadline:
        record = api.get(f"/v1/jobs/{record['id']}", params={"wait": 5}).json()
    assert record["error"] == LOST


def test_a_job_that_ended_before_a_worker_took_it_runs_nothing(api, redis_url):
    """The reaper failed a job still in its queue (its worker was thought lost): the worker that
    dequeues it later ends it at once, without running it or touching its record."""
    from rq.job import Job
    from rq.serializers import JSONSerializer
    from ascrun.server.workers.worker import AscrunWorker
    connection = redis.Redis.from_url(redis_url)
    record = _queued_for_sim(api, connection)
    jobs = JobStore(connection, LIVENESS)
    assert jobs.fail(record["id"], "unavailable", "reaped")
    failed = api.get(f"/v1/jobs/{record['id']}").json()
    AscrunWorker({"sim": {}}, LIVENESS, connection=connection, serializer=JSONSerializer,
                 name="test-late-worker").work(burst=True)
    rq_job = Job.fetch(record["id"], connection=connection, serializer=JSONSerializer)
    assert rq_job.is_finished and rq_job.return_value() is None  # run_job: another outcome won
    assert api.get(f"/v1/jobs/{record['id']}").json() == failed


def test_a_worker_told_to_stop_leaves_its_command_channel_within_a_second(redis_url):
    """RQ's worker reads its command channel in a thread that waits up to 60 s for a message, and its
    teardown joins that thread: a worker told to stop (SIGTERM, the end of a --burst run) could take
    a minute. AscrunWorker's waits a second at most."""
    from rq.serializers import JSONSerializer
    from ascrun.server.workers.worker import AscrunWorker
    worker = AscrunWorker({"sim": {}}, LIVENESS, connection=redis.Redis.from_url(redis_url), serializer=JSONSerializer,
                          name="test-stopping-worker")
    worker.subscribe()
    try:
        assert worker.pubsub_thread.sleep_time <= 1
    finally:
        asked = time.monotonic()
        worker.unsubscribe()
    assert time.monotonic() - asked < 5 and not worker.pubsub_thread.is_alive()


def test_full_redis_answers_507_and_keeps_what_it_had(tmp_path):
    proc, url = start_redis(tmp_path)
    try:
        redis.Redis.from_url(url).config_set("maxmemory", "24mb")
        redis.Redis.from_url(url).config_set("maxmemory-policy", "noeviction")
        svc = Service(url)
        try:
            svc.wait_for_workers(None)
            kept, answer = [], None
            for i in range(20):
                data = bytes([i]) * (3 << 20)
                answer = httpx.put(f"{svc.url}/v1/blobs/{hashlib.sha256(data).hexdigest()}", content=data, timeout=60)
                if answer.status_code != 201:
                    break
                kept.append(data)
            error = _error(answer, 507)
            assert error == {"kind": "limit", "message": "the service's Redis is full (maxmemory reached); nothing was "
                                                         "stored: try again once jobs have ended or blobs expired"}
            assert kept
            for data in kept:
                assert httpx.get(f"{svc.url}/v1/blobs/{hashlib.sha256(data).hexdigest()}").content == data
        finally:
            svc.stop()
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_killed_worker_drops_out_of_health_and_targets(service):
    live = httpx.get(f"{service.url}/v1/health").json()["workers"]["cpu"]
    worker = service.stack.start([sys.executable, "-m", "ascrun.cli", "worker"], service.env)
    service.wait_for_workers(live + 1)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    deadline = time.monotonic() + 3 * LIVENESS.worker_ttl_s
    while httpx.get(f"{service.url}/v1/health").json()["workers"]["cpu"] != live and time.monotonic() < deadline:
        time.sleep(0.2)
    assert httpx.get(f"{service.url}/v1/health").json()["workers"]["cpu"] == live
    [cpu] = [t for t in httpx.get(f"{service.url}/v1/targets").json()["targets"] if t["name"] == "cpu"]
    assert cpu["workers"] == live and len(cpu["live"]) == live

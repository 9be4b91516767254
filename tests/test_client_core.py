"""The client's sans-IO core (client/service/core.py): fed made-up responses, it asks for the requests it
should and returns or raises what Client and AsyncClient then return or raise. The last tests run
both shells, against made-up answers (the same requests) and against the service (the same results)."""
import asyncio
import base64
import hashlib

import httpx
import numpy as np
import pytest

import ascrun
import ops
from ascrun.args import HostArgs
from ascrun.compiler.errors import CompileError, KernelError, KernelRuntimeError, ServiceUnreachable
from ascrun.compiler.frontend import ArgSpec
from ascrun.service.core import LONG_POLL_MARGIN_S, POLL_S, Request, ServiceApi, checked, raise_failure
from ascrun.service.http import run
from ascrun.service.submission import Submission, compared_on

pytestmark = pytest.mark.unit

JOB = "0" * 32
OTHER = "1" * 32


class Service:
    """Answers an exchange's requests as a shell would, from `answers` in order (a response, or a
    function of the request), and keeps every batch it was asked."""

    def __init__(self, *answers):
        self.answers, self.batches = list(answers), []

    def run(self, exchange):
        responses = None
        while True:
            try:
                requests = exchange.send(responses)
            except StopIteration as done:
                return done.value
            self.batches.append(requests)
            responses = [self.answer(request) for request in requests]

    def answer(self, request):
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer


def converse(exchange, *answers):
    """The batches `exchange` asked for, and what it returned."""
    service = Service(*answers)
    returned = service.run(exchange)
    return service.batches, returned


def record(status, **fields):
    return {"id": JOB, "status": status, **fields}


def api(clock=lambda: 0.0):
    return ServiceApi(clock=clock, new_key=lambda: "key-1")


def poll(wait, job=JOB):
    """A long-poll of the job's record."""
    return Request("GET", f"/v1/jobs/{job}", params={"wait": f"{wait:.3f}"}, timeout=wait + LONG_POLL_MARGIN_S)


# -- one request each --------------------------------------------------------------------------------

@pytest.mark.parametrize("call, request_, response, returned", [
    (lambda a: a.jobs(5), Request("GET", "/v1/jobs", params={"limit": 5}),
     httpx.Response(200, json={"jobs": [record("finished")]}), [record("finished")]),
    (lambda a: a.job(JOB, 2), poll(2), httpx.Response(200, json=record("queued")), record("queued")),
    (lambda a: a.targets(), Request("GET", "/v1/targets"), httpx.Response(200, json={"targets": []}), []),
    (lambda a: a.source(JOB), Request("GET", f"/v1/jobs/{JOB}/source"), httpx.Response(200, text="void k()"),
     "void k()"),
    (lambda a: a.ir(JOB), Request("GET", f"/v1/jobs/{JOB}/ir"), httpx.Response(200, text="module {}"), "module {}"),
    (lambda a: a.missing_blobs(["a", "b"]), Request("POST", "/v1/blobs/missing", json={"digests": ["a", "b"]}),
     httpx.Response(200, json={"missing": ["b"]}), ["b"]),
    (lambda a: a.blob("a"), Request("GET", "/v1/blobs/a"), httpx.Response(200, content=b"\x01\x02"), b"\x01\x02"),
    (lambda a: a.upload_blob("a", b"xyz"), Request("PUT", "/v1/blobs/a", content=b"xyz", headers={
        "Content-Type": "application/octet-stream", "Content-Length": "3"}), httpx.Response(201), None),
])
def test_each_call_is_one_request_and_its_answer(call, request_, response, returned):
    assert converse(call(api()), response) == ([[request_]], returned)


def test_blob_chunks_go_without_a_length():
    chunks = iter([b"ab", b"c"])
    [[request]], _ = converse(api().upload_blob("a", chunks), httpx.Response(201))
    assert request.content is chunks and request.headers == {"Content-Type": "application/octet-stream"}


# -- submit: 409, upload, submit again -----------------------------------------------------------------

BODY = {"bundle": {}, "core_num": 1, "target": "cpu", "args": []}
BLOBS = {"a": b"aa", "b": b"bbbb"}
SUBMIT = Request("POST", "/v1/jobs", params={"wait": "0.000"}, json=BODY, headers={"Idempotency-Key": "key-1"},
                 timeout=LONG_POLL_MARGIN_S, accept=(409,))


def put(digest):
    return ServiceApi.blob_put(digest, BLOBS[digest])


def missing(*digests):
    return httpx.Response(409, json={"error": {"kind": "blobs_missing", "message": "upload them",
                                               "missing": list(digests)}})


def test_submit_uploads_just_what_the_409_names_then_submits_again_with_the_same_key():
    batches, returned = converse(api().submit(BODY, BLOBS), missing("b", "a"), httpx.Response(201),
                                 httpx.Response(201), httpx.Response(202, json=record("queued")))
    assert batches == [[SUBMIT], [put("b"), put("a")], [SUBMIT]]
    assert returned == record("queued")


def test_a_submit_of_blobs_the_service_has_is_one_request():
    assert converse(api().submit(BODY, BLOBS), httpx.Response(202, json=record("queued"))) == (
        [[SUBMIT]], record("queued"))


def test_submit_gives_up_when_the_service_keeps_asking_for_the_blobs():
    service = Service(missing("a"), httpx.Response(201), missing("a"), httpx.Response(201))
    with pytest.raises(ascrun.KernelError) as e:
        service.run(api().submit(BODY, BLOBS))
    assert service.batches == [[SUBMIT], [put("a")]] * 2
    assert e.value.kind == "unavailable" and "ASCRUN_BLOB_TTL" in str(e.value)


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])  # the sync shell's order, or any (async)
def test_submit_with_on_upload_asks_first_and_follows_the_bytes(order):
    progress = []
    exchange = api().submit(BODY, BLOBS, on_upload=lambda sent, total: progress.append((sent, total)))
    assert next(exchange) == [Request("POST", "/v1/blobs/missing", json={"digests": ["a", "b"]})]
    uploads = exchange.send([httpx.Response(200, json={"missing": ["a", "b"]})])
    assert uploads == [put("a"), put("b")] and progress == [(0, 6)]
    for digest in order:  # as the shell's streams report the bytes sent
        upload = uploads[("a", "b").index(digest)]
        upload.on_progress(len(upload.content))
    assert progress == [(0, 6), (len(BLOBS[order[0]]), 6), (6, 6)]
    assert exchange.send([httpx.Response(201)] * 2) == [SUBMIT]
    with pytest.raises(StopIteration) as done:
        exchange.send([httpx.Response(202, json=record("queued"))])
    assert done.value.value == record("queued")


# -- wait: long-polls until the job ends ------------------------------------------------------------

def test_wait_long_polls_until_the_job_ends():
    seen = []
    batches, returned = converse(api().wait(JOB, 600, on_poll=seen.append), httpx.Response(200, json=record("queued")),
                                 httpx.Response(200, json=record("started")),
                                 httpx.Response(200, json=record("failed")))
    assert batches == [[poll(25)]] * 3
    assert returned == record("failed") and seen == [record("queued"), record("started")]


def test_wait_gives_up_after_its_timeout_with_the_last_status():
    now = iter([100.0, 100.0, 107.0, 111.0])  # the deadline's start, then each poll's
    seen = []
    service = Service(httpx.Response(200, json=record("queued")), *[httpx.Response(200, json=record("started"))] * 2)
    with pytest.raises(ascrun.KernelError) as e:
        service.run(api(clock=lambda: next(now)).wait(JOB, 10, on_poll=seen.append))
    assert service.batches == [[poll(10)], [poll(3)], [poll(0)]]  # what is left of the 10 s, then one last look
    assert (e.value.kind, str(e.value)) == ("timeout", f"job {JOB} did not end within 10 s (status started)")
    assert seen[-1] == record("started")  # the caller saw the record the error names


def test_outputs_come_from_the_record_and_the_rest_in_one_batch():
    done = record("finished", outputs={"z": {"data": "AQI="}, "w": {"blob": "d1"}, "v": {"blob": "d2"}})
    batches, returned = converse(api().outputs(done), httpx.Response(200, content=b"w"),
                                 httpx.Response(200, content=b"v"))
    assert batches == [[Request("GET", "/v1/blobs/d1"), Request("GET", "/v1/blobs/d2")]]
    assert returned == {"z": b"\x01\x02", "w": b"w", "v": b"v"}


# -- errors -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("response, kind, message", [
    (httpx.Response(429, json={"error": {"kind": "limit", "message": "too many"}}), "limit", "too many"),
    (httpx.Response(404, json={"error": {"kind": "not_found", "message": "no job"}}), "not_found", "no job"),
    (httpx.Response(502, text="<html>bad gateway</html>"), "unavailable",
     "GET /v1/targets answered 502: <html>bad gateway</html>"),
    (httpx.Response(400, text="nope"), "bad_request", "GET /v1/targets answered 400: nope"),
    (httpx.Response(409, json={"error": {"kind": "blobs_missing", "message": "upload"}}), "blobs_missing", "upload"),
])
def test_a_failed_answer_is_the_service_s_error(response, kind, message):
    with pytest.raises(ascrun.KernelError) as e:
        converse(api().targets(), response)  # only a submission reads a 409 itself
    assert (e.value.kind, str(e.value)) == (kind, message)


def test_an_accepted_status_is_the_exchange_s_to_read():
    response = httpx.Response(409, json={})
    assert checked(response, Request("POST", "/v1/jobs", accept=(409,))) is response


@pytest.mark.parametrize("ended, error, kind, message", [
    (record("failed", error={"kind": "compile_error", "message": "line 3"}, log="hi\n", warnings=["w"]),
     CompileError, "compile_error", "line 3"),
    (record("timed_out", error={"kind": "timeout", "message": "ran longer"}), KernelError, "timeout", "ran longer"),
    (record("failed"), KernelRuntimeError, "runtime_error", f"job {JOB} failed"),
])
def test_a_job_that_did_not_finish_is_its_error(ended, error, kind, message):
    """As the class of its kind (errors.KINDS), as a local launch's would be."""
    with pytest.raises(ascrun.KernelError) as e:
        raise_failure(ended)
    assert (type(e.value), e.value.kind, str(e.value), e.value.log) == (error, kind, message, ended.get("log", ""))
    raise_failure(record("finished"))


# -- the launch: submit, wait, outputs; compare and benchmark ---------------------------------------

Z = np.arange(4, dtype=np.float32)


def launched(z):
    """A launch of a kernel whose one argument is the caller's tensor `z`."""
    return Submission(dict(BODY), {}, HostArgs(specs=[ArgSpec("tensor", "float32")], values={"z": z},
                                               callers={"z": z}))


def submitted(wait, body=BODY):
    """The POST of a launch's job, its record after up to `wait` s."""
    return Request("POST", "/v1/jobs", params={"wait": f"{wait:.3f}"}, json=body, headers={"Idempotency-Key": "key-1"},
                   timeout=wait + LONG_POLL_MARGIN_S, accept=(409,))


def inline(array):
    return {"dtype": array.dtype.name, "shape": list(array.shape), "data": base64.b64encode(array.tobytes()).decode()}


def ran(outputs=None, job=JOB, target="cpu", **fields):
    """The record of a finished job (its outputs inline unless given)."""
    return {**record("finished", target=target, created_at=10.0, ended_at=12.5, ir_hash="h",
                     cache={"frontend": "hit", "build": "hit"}, timings={"queue": 0.1, "run": 2.0, "total": 2.5},
                     outputs=outputs or {"z": inline(Z)}, **fields), "id": job}


def queued(job=JOB, target="cpu"):
    return {**record("queued", target=target), "id": job}


def no_fetch(exchange):
    raise AssertionError("a launch's source and trace are fetched only when read")


def test_a_cached_launch_is_one_request():
    z = np.zeros(4, np.float32)
    batches, result = converse(api().launch(launched(z), 0.0, no_fetch), httpx.Response(200, json=ran()))
    assert batches == [[submitted(POLL_S)]]
    np.testing.assert_array_equal(z, Z)  # written back into the caller's tensor
    np.testing.assert_array_equal(result.outputs["z"], Z)
    assert (result.job_id, result.cache, result.ir_hash, result.model) == (JOB, {"frontend": "hit", "build": "hit"},
                                                                           "h", None)
    assert set(result.timings) == {"queue", "run", "upload", "download", "total"}


def test_a_launch_s_timings_leave_out_the_time_the_job_took():
    now = iter([103.5, 104.0, 104.25])  # the submission is answered, the download starts, it ends
    launch = api(clock=lambda: next(now)).launch(launched(np.zeros(4, np.float32)), 100.0, no_fetch)
    _, result = converse(launch, httpx.Response(200, json=ran()))
    assert result.timings == {"queue": 0.1, "run": 2.0, "upload": 1.0, "download": 0.25, "total": 4.25}


def test_a_launch_still_running_after_the_submission_s_wait_long_polls_then_downloads():
    z = np.zeros(4, np.float32)
    batches, _ = converse(api().launch(launched(z), 0.0, no_fetch), httpx.Response(200, json=record("started")),
                          httpx.Response(200, json=ran({"z": {"dtype": "float32", "shape": [4], "blob": "d1"}})),
                          httpx.Response(200, content=Z.tobytes()))
    assert batches == [[submitted(POLL_S)], [poll(POLL_S)], [Request("GET", "/v1/blobs/d1")]]
    np.testing.assert_array_equal(z, Z)


def test_a_failed_launch_raises_its_kind_s_class_with_what_the_kernel_printed():
    failed = record("failed", error={"kind": "runtime_error", "message": "block 3: out of bounds"}, log="hi\n",
                    created_at=10.0, ended_at=10.5)
    with pytest.raises(KernelRuntimeError) as e:
        converse(api().launch(launched(np.zeros(4, np.float32)), 0.0, no_fetch), httpx.Response(200, json=failed))
    assert (str(e.value), e.value.log) == ("block 3: out of bounds", "hi\n")


def test_a_result_fetches_its_source_and_trace_once_when_first_read():
    fetched = Service(httpx.Response(200, text="void k()"), httpx.Response(200, text='{"traceEvents": []}'))
    _, result = converse(api().launch(launched(np.zeros(4, np.float32)), 0.0, fetched.run),
                         httpx.Response(200, json=ran(model={"cycles": 7})))
    assert fetched.batches == []
    assert (result.source, result.source, result.trace, result.trace) == ("void k()", "void k()",
                                                                          '{"traceEvents": []}', '{"traceEvents": []}')
    assert fetched.batches == [[Request("GET", f"/v1/jobs/{JOB}/source")], [Request("GET", f"/v1/jobs/{JOB}/trace")]]


def test_a_job_without_a_model_has_no_trace_to_fetch():
    _, result = converse(api().launch(launched(np.zeros(4, np.float32)), 0.0, no_fetch),
                         httpx.Response(200, json=ran()))
    assert result.trace is None


def test_a_submitted_launch_s_result_polls_and_shows_each_record():
    launch = converse(api().submit_launch(launched(np.zeros(4, np.float32)), 0.0),
                      httpx.Response(202, json=record("queued")))[1]
    seen = []
    batches, result = converse(api().launch_result(launch, no_fetch, poll=1.0,
                                                   on_poll=lambda launch: seen.append(launch.status)),
                               httpx.Response(200, json=record("started")), httpx.Response(200, json=ran()))
    assert batches == [[poll(1.0)], [poll(1.0)]]
    assert seen == ["started"] and launch.status == "finished" and launch.result is result
    assert converse(api().launch_result(launch, no_fetch)) == ([], result)  # gathered once


def test_compare_queues_both_runs_then_diffs_their_outputs():
    z = np.zeros(4, np.float32)
    other = ran({"z": inline(Z + 1)}, job=OTHER, target="sim")
    batches, result = converse(api().launch(launched(z), 0.0, no_fetch, compare="sim"),
                               httpx.Response(202, json=queued()), httpx.Response(202, json=queued(OTHER, "sim")),
                               httpx.Response(200, json=ran()), httpx.Response(200, json=other))
    assert batches == [[submitted(0)], [submitted(0, compared_on(BODY, "sim"))], [poll(POLL_S)],
                       [poll(POLL_S, OTHER)]]
    np.testing.assert_array_equal(z, Z)  # the first target's outputs
    assert not result.comparison.matches and result.comparison.differing == {"z": 4}


def test_a_failed_comparison_run_says_so_as_its_kind_s_class():
    failed = {**record("failed", error={"kind": "runtime_error", "message": "boom"}), "id": OTHER}
    with pytest.raises(KernelRuntimeError) as e:
        converse(api().launch(launched(np.zeros(4, np.float32)), 0.0, no_fetch, compare="sim"),
                 httpx.Response(202, json=queued()), httpx.Response(202, json=queued(OTHER, "sim")),
                 httpx.Response(200, json=ran()), httpx.Response(200, json=failed))
    assert str(e.value) == "the comparison run on 'sim' failed: boom"


def test_a_connection_failure_is_thrown_into_the_exchange_and_fails_as_what_it_was_doing():
    def send_one(request):
        if request.json["target"] == "sim":
            raise ServiceUnreachable("cannot reach the ascrun service", kind="unavailable")
        return httpx.Response(202, json=queued())

    with pytest.raises(ServiceUnreachable) as e:
        run(api().submit_launch(launched(np.zeros(4, np.float32)), 0.0, compare="sim"), send_one)
    assert (e.value.kind, str(e.value)) == ("unavailable", "the comparison run on 'sim' failed: cannot reach the "
                                                           "ascrun service")
    assert isinstance(e.value, ConnectionError) and isinstance(e.value, ascrun.KernelError)


def test_a_benchmark_is_launched_as_a_launch_and_reads_its_statistics():
    policy = {"max_repeats": 3}
    measured = {"statistics": {"mean": 2e-3, "std": None, "stderr": None, "rel_error": None, "median": 2e-3,
                               "min": 2e-3, "max": 2e-3}, "repeats": 1, "warmup": 0, "stopped_by": "max_repeats",
                "measure": "wall", "cycles": 4181, "clock_ghz": 1.85, "policy": policy}
    job = launched(np.zeros(4, np.float32))
    job.body["benchmark"] = policy
    batches, bench = converse(api().benchmark(job, 0.0, no_fetch),
                              httpx.Response(200, json=ran(kernel="k", core_num=8, benchmark=measured)))
    assert batches == [[submitted(POLL_S, job.body)]]
    assert (bench.kernel, bench.core_num, bench.cycles, bench.median, bench.job_id) == ("k", 8, 4181, 2e-3, JOB)


# -- both shells, the same requests ----------------------------------------------------------------------

def shell_launch(shell, answers):
    """A launch of ops.spin_kernel by the shell against made-up `answers`: the requests it made (method,
    path, query) and the caller's output tensor after."""
    made = []

    def answer(request):
        made.append((request.method, request.url.path, dict(request.url.params)))
        return answers.pop(0)

    x, z = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    if shell == "sync":
        with ascrun.Client("http://ascrun.test") as client:
            client._http.close()
            client._http = httpx.Client(base_url=client.url, transport=httpx.MockTransport(answer))
            client.launch(ops.spin_kernel, 1, x, z, 1)
    else:
        async def launch():
            async with ascrun.AsyncClient("http://ascrun.test") as client:
                await client._http.aclose()
                client._http = httpx.AsyncClient(base_url=client.url, transport=httpx.MockTransport(answer))
                await client.launch(ops.spin_kernel, 1, x, z, 1)
        asyncio.run(launch())
    return made, z


@pytest.mark.parametrize("shell", ["sync", "async"])
def test_both_shells_launch_with_the_same_requests(shell):
    out = np.arange(64, dtype=np.float32) + 1
    made, z = shell_launch(shell, [httpx.Response(200, json=ran({"z": inline(out)}))])
    assert made == [("POST", "/v1/jobs", {"wait": "25.000"})]  # a cached launch: one request
    np.testing.assert_array_equal(z, out)
    in_a_blob = ran({"z": {"dtype": "float32", "shape": [64], "blob": "d1"}})
    made, z = shell_launch(shell, [httpx.Response(200, json=record("started")), httpx.Response(200, json=in_a_blob),
                                   httpx.Response(200, content=out.tobytes())])
    assert made == [("POST", "/v1/jobs", {"wait": "25.000"}), ("GET", f"/v1/jobs/{JOB}", {"wait": "25.000"}),
                    ("GET", "/v1/blobs/d1", {})]
    np.testing.assert_array_equal(z, out)


# -- both shells, one service --------------------------------------------------------------------------

def opened(shell, url):
    """The client and how to get a call's value: as it is (Client), or awaited on one loop (AsyncClient)."""
    if shell == "sync":
        client = ascrun.Client(url)
        return client, lambda value: value, client.close
    loop = asyncio.new_event_loop()
    client = ascrun.AsyncClient(url)
    return client, loop.run_until_complete, lambda: (loop.run_until_complete(client.aclose()), loop.close())


@pytest.mark.service
@pytest.mark.parametrize("shell", ["sync", "async"])
def test_client_and_async_client_see_the_same(service, shell):
    x = np.random.default_rng().random(32768, dtype=np.float32)  # new bytes: the 409 path, a blob each way
    z = np.zeros_like(x)
    digest = hashlib.sha256(x.tobytes()).hexdigest()
    client, value, close = opened(shell, service.url)
    progress = []
    try:
        handle = value(client.submit(ops.spin_kernel, 1, x, z, 1, on_upload=lambda *sent: progress.append(sent)))
        result = value(handle.result(timeout=120))
        job = value(client.job(handle.id))
        seen = (job["status"], handle.id in [j["id"] for j in value(client.jobs(limit=5))],
                [t["name"] for t in value(client.targets())], value(client.missing_blobs([digest, "0" * 64])),
                value(client.blob(digest)) == x.tobytes(), value(client.wait(handle.id, 5))["id"])
        source, ir = value(client.source(handle.id)), value(client.ir(handle.id))
        assert result.source == source  # fetched on first use
    finally:
        close()
    np.testing.assert_array_equal(z[:64], x[:64] + 1)
    assert progress[0] == (0, x.nbytes) and progress[-1] == (x.nbytes, x.nbytes)
    assert seen == ("finished", True, seen[2], ["0" * 64], True, handle.id) and "cpu" in seen[2]
    assert result.job_id == handle.id and "spin_kernel" in source and ir.strip()


def test_a_503_the_service_says_no_retry_changes_is_not_retried():
    from ascrun.service.http import may_pass_on_retry
    request = httpx.Request("POST", "http://pool/v1/jobs")
    unserved = {"error": {"kind": "unavailable", "message": "no worker serves target 'sim' right now",
                          "retryable": False}}
    assert not may_pass_on_retry(httpx.Response(503, json=unserved, request=request))
    assert may_pass_on_retry(httpx.Response(503, json={"error": {"kind": "unavailable", "message": "busy"}},
                                            request=request))
    assert may_pass_on_retry(httpx.Response(502, text="<html>bad gateway</html>", request=request))
    assert may_pass_on_retry(httpx.Response(504, json=[1], request=request))
    assert not may_pass_on_retry(httpx.Response(429, json={"error": {}}, request=request))

"""The client's side of the service's HTTP API, without I/O: Client and AsyncClient are shells that
send what it asks for (as httpx's BaseClient is to httpx.Client and httpx.AsyncClient).

Each call is an exchange: a generator that yields a batch of Requests, is sent back their
httpx.Responses in the same order, and returns what the caller gets (a record, the jobs, bytes)
or raises KernelError. A batch's requests do not depend on each other: the sync shell sends them
one after the other, the async shell at once (asyncio.gather). Exchanges compose with
`yield from`, so the flows of several requests (submit, upload what the service lacks, submit
again; long-poll until the job ends) are written once, here, for both shells, and tests drive
them with made-up responses (tests/test_client_core.py). Build and parse methods alone, as
httpx's, would leave each of those loops to be written in both shells.

The launch is one flow here too (submit_launch, launch_result; launch and benchmark compose
them): both shells make the same requests, and a cached launch is one request (the submission
waits for the job, and small outputs come inside its record).

The shells keep the I/O: the connection pool, tenacity's retries and blob streams (http.py),
and a connection failure turned into ServiceUnreachable.
"""
from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generator, Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import httpx

from ..bench import Benchmark, from_record
from ..compare import compare_outputs
from ..compiler.errors import KernelError, Kind
from ..job_status import TERMINAL, JobStatus
from ..result import LaunchResult
from .launch import QueuedLaunch, second_run
from .submission import Submission, compared_on

__tracebackhide__ = True  # pytest: a failed launch's traceback ends at the line that launched
POLL_S = 25  # one long-poll request; below the server's cap and common proxy idle timeouts
LONG_POLL_MARGIN_S = 30  # a long-poll's HTTP timeout: what the service may hold it, plus this

T = TypeVar("T")
Exchange = Generator[List["Request"], List[httpx.Response], T]
OnUpload = Callable[[int, int], None]  # (bytes sent so far, bytes to send)
Runner = Callable[[Exchange[Any]], Any]  # runs an exchange to its value, blocking: a LaunchResult's lazy fields use one


@dataclass(frozen=True)
class Request:
    """One HTTP request to make. `content`: a blob's bytes (the shell streams them in chunks,
    calling `on_progress(sent)`), or chunks to pass on as they come. `timeout`: None is the
    client's. `accept`: error statuses the exchange reads itself rather than raising."""
    method: str
    path: str
    params: Optional[Dict[str, Any]] = None
    json: Any = None
    content: Union[bytes, Iterable[bytes], None] = None
    headers: Optional[Dict[str, str]] = None
    timeout: Optional[float] = None
    accept: Tuple[int, ...] = ()
    on_progress: Optional[Callable[[int], None]] = field(default=None, compare=False)


def checked(response: httpx.Response, request: Request) -> httpx.Response:
    """The response if it succeeded or its status is one `request` accepts; else the service's error."""
    if response.is_success or response.status_code in request.accept:
        return response
    try:
        error = response.json()["error"]
        kind, message = error["kind"], error["message"]
    except (ValueError, KeyError, TypeError):
        kind = Kind.UNAVAILABLE if response.status_code >= 500 else Kind.BAD_REQUEST
        message = f"{request.method} {request.path} answered {response.status_code}: {response.text[:200]}"
    raise KernelError.of(kind, message)


def raise_failure(record: Dict[str, Any]) -> None:
    """A job that ended other than finished, as the KernelError `launch` raises."""
    if record["status"] != JobStatus.FINISHED:
        error = record.get("error") or {"kind": Kind.RUNTIME_ERROR, "message": f"job {record['id']} failed"}
        raise KernelError.of(error["kind"], error["message"], log=record.get("log") or "",
                             warnings=record.get("warnings"))


def inline_outputs(record: Dict[str, Any]) -> Dict[str, bytes]:
    """The outputs that came inside the job's record (small ones); the others are blobs to download."""
    return {name: base64.b64decode(ref["data"]) for name, ref in record["outputs"].items()
            if ref.get("data") is not None}


def wait_timeout(job_id: str, timeout: float, record: Dict[str, Any]) -> KernelError:
    return KernelError(f"job {job_id} did not end within {timeout:g} s (status {record['status']})",
                       kind=Kind.TIMEOUT)


class ServiceApi:
    """Every call the clients make, as an exchange (above). `clock` times the long-polls of a wait
    and a launch's timings, `new_key` makes each submission's Idempotency-Key: tests pass their own."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter,
                 new_key: Callable[[], str] = lambda: uuid.uuid4().hex):
        self.clock, self.new_key = clock, new_key

    # -- one batch, and one request --------------------------------------------------------------

    @staticmethod
    def exchange(*requests: Request) -> Exchange[List[httpx.Response]]:
        """The responses to `requests`, which go as one batch (none: no batch); a failed one is raised
        as KernelError."""
        responses = (yield list(requests)) if requests else []
        return [checked(response, request) for request, response in zip(requests, responses)]

    def answer(self, request: Request) -> Exchange[httpx.Response]:
        (response,) = yield from self.exchange(request)
        return response

    # -- the service's endpoints -----------------------------------------------------------------

    def jobs(self, limit: int = 20) -> Exchange[List[Dict[str, Any]]]:
        """The token's most recent jobs, newest first, as summaries (the API's JobSummary: no log,
        outputs or warnings; `job` has them)."""
        return (yield from self.answer(Request("GET", "/v1/jobs", params={"limit": limit}))).json()["jobs"]

    def job(self, job_id: str, wait: float = 0) -> Exchange[Dict[str, Any]]:
        """The job's record, once it has ended or after `wait` s, whichever comes first."""
        request = Request("GET", f"/v1/jobs/{job_id}", params={"wait": f"{wait:.3f}"},
                          timeout=wait + LONG_POLL_MARGIN_S)
        return (yield from self.answer(request)).json()

    def targets(self) -> Exchange[List[Dict[str, Any]]]:
        """The live pool: each target's workers by SOC, what they run, its queue."""
        return (yield from self.answer(Request("GET", "/v1/targets"))).json()["targets"]

    def source(self, job_id: str) -> Exchange[str]:
        """The Ascend C pyasc generated for the job."""
        return (yield from self.answer(Request("GET", f"/v1/jobs/{job_id}/source"))).text

    def trace(self, job_id: str) -> Exchange[str]:
        """A finished cpu job's modeled timeline as a Chrome/Perfetto trace (JSON text)."""
        return (yield from self.answer(Request("GET", f"/v1/jobs/{job_id}/trace"))).text

    def ir(self, job_id: str) -> Exchange[str]:
        """The job's ASC-IR after pyasc's pass pipeline."""
        return (yield from self.answer(Request("GET", f"/v1/jobs/{job_id}/ir"))).text

    def missing_blobs(self, digests: Sequence[str]) -> Exchange[List[str]]:
        """Those of `digests` the service does not hold for this token."""
        request = Request("POST", "/v1/blobs/missing", json={"digests": list(digests)})
        return (yield from self.answer(request)).json()["missing"]

    def blob(self, digest: str) -> Exchange[bytes]:
        return (yield from self.answer(self.blob_get(digest))).content

    @staticmethod
    def blob_get(digest: str) -> Request:
        return Request("GET", f"/v1/blobs/{digest}")

    def upload_blob(self, digest: str, data: Union[bytes, Iterable[bytes]]) -> Exchange[None]:
        yield from self.exchange(self.blob_put(digest, data))

    @staticmethod
    def blob_put(digest: str, data: Union[bytes, Iterable[bytes]],
                 on_progress: Optional[Callable[[int], None]] = None) -> Request:
        """The PUT of a blob: `data` whole (sent with its length), or chunks (sent as they come)."""
        headers = {"Content-Type": "application/octet-stream"}
        if isinstance(data, bytes):
            headers["Content-Length"] = str(len(data))
        return Request("PUT", f"/v1/blobs/{digest}", content=data, headers=headers, on_progress=on_progress)

    def upload(self, digests: Sequence[str], blobs: Dict[str, bytes],
               on_upload: Optional[OnUpload] = None) -> Exchange[None]:
        """PUT these of `blobs`, as one batch; `on_upload(sent, total)` follows the bytes of all of them."""
        total, sent = sum(len(blobs[d]) for d in digests), dict.fromkeys(digests, 0)

        def reporter(digest: str) -> Callable[[int], None]:
            def on_progress(n: int) -> None:  # each blob's own count: right whatever order they go in
                sent[digest] = n
                on_upload(sum(sent.values()), total)
            return on_progress

        if on_upload is not None:
            on_upload(0, total)
        yield from self.exchange(*(self.blob_put(d, blobs[d], reporter(d) if on_upload else None) for d in digests))

    # -- the flows of several requests -----------------------------------------------------------

    def submit(self, body: Dict[str, Any], blobs: Dict[str, bytes], wait: float = 0,
               on_upload: Optional[OnUpload] = None) -> Exchange[Dict[str, Any]]:
        """Submit the job and return its record (after up to `wait` s). If the service lacks some of
        its blobs (409), upload just those and submit again: a re-run with the same inputs uploads
        nothing and costs one request. With `on_upload`, ask first which blobs the service lacks and
        upload them following the bytes; the 409 still catches a blob that expired meanwhile."""
        if on_upload is not None:
            missing = yield from self.missing_blobs(list(blobs))
            yield from self.upload(missing, blobs, on_upload)
        request = Request("POST", "/v1/jobs", params={"wait": f"{wait:.3f}"}, json=body,
                          headers={"Idempotency-Key": self.new_key()},  # a retried submit never runs the job twice
                          timeout=wait + LONG_POLL_MARGIN_S, accept=(409,))
        for _ in range(2):
            response = yield from self.answer(request)
            if response.status_code != 409:
                return response.json()
            yield from self.upload(response.json()["error"]["missing"], blobs)
        raise KernelError("the server kept asking for blobs that were just uploaded (are they expiring "
                          "immediately? check ASCRUN_BLOB_TTL)", kind=Kind.UNAVAILABLE)

    def poll_waits(self, timeout: float, poll: float = POLL_S) -> Iterator[Tuple[float, bool]]:
        """For each long-poll of a job: how long the service may hold it, and whether it is the last
        before `timeout` runs out."""
        deadline = self.clock() + timeout
        while True:
            remaining = deadline - self.clock()
            yield max(0.0, min(poll, remaining)), remaining <= 0

    def wait(self, job_id: str, timeout: float, poll: float = POLL_S,
             on_poll: Optional[Callable[[Dict[str, Any]], None]] = None) -> Exchange[Dict[str, Any]]:
        """Long-poll until the job ends (no busy polling) and return its record; KernelError kind
        timeout after `timeout` s. `on_poll(record)` sees each record of a job still running."""
        for wait, last in self.poll_waits(timeout, poll):
            record = yield from self.job(job_id, wait)
            if record["status"] in TERMINAL:
                return record
            if on_poll is not None:
                on_poll(record)
            if last:
                raise wait_timeout(job_id, timeout, record)

    def outputs(self, record: Dict[str, Any]) -> Exchange[Dict[str, bytes]]:
        """The bytes of a finished job's outputs by name: those in its record, the others downloaded
        as one batch."""
        outputs = inline_outputs(record)
        blobs = {name: ref["blob"] for name, ref in record["outputs"].items() if name not in outputs}
        responses = yield from self.exchange(*map(self.blob_get, blobs.values()))
        outputs.update((name, response.content) for name, response in zip(blobs, responses))
        return outputs

    # -- the launch ------------------------------------------------------------------------------

    def submit_launch(self, job: Submission, started: float, wait: float = 0, on_upload: Optional[OnUpload] = None,
                      compare: Optional[str] = None) -> Exchange[QueuedLaunch]:
        """Submit the launch (its record after up to `wait` s) and, with `compare`, the same launch on
        that target, queued at once so that both run at the same time. `started`: the clock when the
        caller began to prepare `job` (its timings count the tensors' hashing and encoding)."""
        record = yield from self.submit(job.body, job.blobs, wait, on_upload)
        # the client's share of the submission: without the time the job itself took while it was waited for
        worker_s = record["ended_at"] - record["created_at"] if record["status"] in TERMINAL else 0.0
        launch = QueuedLaunch(record, job.host, started, max(0.0, self.clock() - started - worker_s), job.max_wait)
        if compare is not None:
            with second_run(compare):
                other = yield from self.submit(compared_on(job.body, compare), job.blobs)
            launch.against = QueuedLaunch(other, job.host.detached(), started, 0.0, job.max_wait)
        return launch

    def launch_result(self, launch: QueuedLaunch, fetch: Runner, timeout: Optional[float] = None,
                      poll: float = POLL_S, on_poll: Optional[Callable[[QueuedLaunch], None]] = None
                      ) -> Exchange[LaunchResult]:
        """The launch's LaunchResult, its outputs written back into the caller's tensors: long-polls
        until its job ends (up to `timeout` s, default its max_wait; KernelError timeout after, the
        job goes on) unless it has, raises its failure, downloads the outputs its record lacks. With
        a comparison, the same for the second run, then the diff. `on_poll(launch)` sees each poll
        of a job still running (`launch.record` updated). `fetch` runs the exchanges of the result's
        `source` and `trace` when they are first read."""
        if launch.result is None:
            if launch.status not in TERMINAL:
                def seen(record: Dict[str, Any]) -> None:
                    launch.record = record
                    if on_poll is not None:
                        on_poll(launch)
                launch.record = yield from self.wait(launch.id, launch.max_wait if timeout is None else timeout,
                                                     poll, seen)
            raise_failure(launch.record)
            download_start = self.clock()
            outputs = yield from self.outputs(launch.record)
            now, job_id = self.clock(), launch.id
            launch.result = launch.written_back(outputs, now - download_start, now - launch.started,
                                                lambda: fetch(self.source(job_id)), lambda: fetch(self.trace(job_id)))
        if launch.against is not None and launch.result.comparison is None:
            other = launch.against
            with second_run(other.record["target"]):
                other_result = yield from self.launch_result(other, fetch, timeout)
            launch.result.comparison = compare_outputs(launch.result.outputs, other_result.outputs,
                                                       launch.record["target"], other.record["target"])
        return launch.result

    def launch(self, job: Submission, started: float, fetch: Runner,
               compare: Optional[str] = None) -> Exchange[LaunchResult]:
        """Submit the launch and return its LaunchResult (launch_result). Without `compare` the
        submission waits for the job: a cached launch is then one request. With it, the submission
        does not wait, so that the comparison run is queued while the first one runs."""
        launch = yield from self.submit_launch(job, started, wait=POLL_S if compare is None else 0, compare=compare)
        return (yield from self.launch_result(launch, fetch))

    def benchmark(self, job: Submission, started: float, fetch: Runner) -> Exchange[Benchmark]:
        """A benchmark job (`job` carries its policy, submission.with_benchmark) launched as `launch`
        does, and its Benchmark."""
        launch = yield from self.submit_launch(job, started, wait=POLL_S)
        result = yield from self.launch_result(launch, fetch)
        return from_record(launch.record, result)

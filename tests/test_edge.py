"""The HTTP edge as a hostile client meets it (issue 25, items 7 and 10): a body is counted as its bytes
arrive (chunked too), a token is asked for before any body byte is read, every submission is charged to
its tenant's rate before its bundle is checked, and the check has bounds and runs in a pool of processes
where one tenant's heavy bundles neither stall the API nor queue in front of another tenant's."""
import concurrent.futures
import hashlib
import json
import select
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

from conftest import Service

pytestmark = pytest.mark.service

TOKENS = {"capped": "capped-secret-token", "metered": "metered-secret-token", "heavy": "heavy-secret-token",
          "other": "other-secret-token", "parsed": "parsed-secret-token", "checked": "checked-secret-token"}
MiB = 1 << 20
LIMITS = {"capped": {"max_request_bytes": 1 << 20}, "metered": {"launches_per_minute": 1},
          "parsed": {"request_bytes_per_second": 64 << 10, "max_request_bytes": MiB},  # a bucket of 1 MiB
          "checked": {"check_seconds_per_minute": 1}}


@pytest.fixture(scope="module")
def pool(redis_url):
    """An API server with tenants (no worker: every submission here is refused before it would queue)."""
    config = {"tenants": [{"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
                           "limits": LIMITS.get(name, {})} for name, token in TOKENS.items()]}
    svc = Service(redis_url, {"ASCRUN_TENANTS": json.dumps(config)})
    svc.wait_for_workers(None)
    yield svc
    svc.stop()


def _auth(name):
    return {"Authorization": f"Bearer {TOKENS[name]}"}


def _rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) * 1024


def _cpu_s(pid: int) -> float:
    """User + system CPU of the process itself (not of its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:13]) / 100


def _send_chunked(url: str, path: str, headers: dict, total: int):
    """POST `total` bytes as a chunked body (in 64 KiB chunks) until the answer comes: (its text, the
    body bytes sent by then)."""
    address = urlparse(url)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    sent, answer = 0, b""
    with socket.create_connection((address.hostname, address.port), timeout=30) as conn:
        conn.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\n{head}Transfer-Encoding: chunked\r\n\r\n".encode())
        while not answer.endswith(b"}"):
            readable, writable, _ = select.select([conn], [conn] if sent < total else [], [], 30)
            if readable:
                try:
                    data = conn.recv(65536)
                except ConnectionResetError:  # the answer, if any, came before
                    break
                if not data:
                    break
                answer += data
            elif writable:
                try:
                    conn.sendall(chunk)
                    sent += 0x10000
                except (BrokenPipeError, ConnectionResetError):
                    total = sent  # the server closed: read its answer
            else:
                break
    return answer.decode("latin-1"), sent


def test_a_chunked_body_without_a_token_is_refused_before_it_is_read(pool):
    rss = _rss(pool.server.pid)
    answer, sent = _send_chunked(pool.url, "/v1/jobs", {}, 64 * MiB)
    assert answer.startswith("HTTP/1.1 401"), answer
    assert "no token: this service needs a bearer token (Authorization: Bearer <token>" in answer
    assert sent < 16 * MiB  # the answer came while the client was still sending
    assert _rss(pool.server.pid) - rss < 16 * MiB


def test_a_chunked_body_over_the_tenants_cap_is_refused_as_it_arrives(pool):
    rss = _rss(pool.server.pid)
    for path in ("/v1/jobs", "/v1/blobs/missing"):
        answer, sent = _send_chunked(pool.url, path, _auth("capped"), 64 * MiB)
        assert answer.startswith("HTTP/1.1 413"), answer
        assert "request body exceeds your 1048576-byte limit (max_request_bytes)" in answer
        assert sent < 16 * MiB
    assert _rss(pool.server.pid) - rss < 16 * MiB
    # a declared length over the cap: refused on the headers alone
    answer = httpx.post(f"{pool.url}/v1/blobs/missing", content=b"x" * (MiB + 1), headers=_auth("capped"))
    assert answer.status_code == 413
    assert answer.json()["error"]["message"] == ("request body of 1048577 bytes exceeds your 1048576-byte limit "
                                                 "(max_request_bytes)")


def test_an_answer_before_the_body_closes_the_connection(pool):
    """A route that answers before reading its body (a chunked blob upload's 411) closed nothing:
    uvicorn kept the connection alive and so read and parsed the rest of the body to find the next
    request; 100 MiB chunked uploads, refused and sent on, took the API's one core."""
    address = urlparse(pool.url)
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    with socket.create_connection((address.hostname, address.port), timeout=10) as conn:
        conn.sendall(f"PUT /v1/blobs/{'0' * 64} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKENS['other']}\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode() + chunk)
        answer = b""
        while b"}" not in answer:
            answer += conn.recv(65536) or b"}"
        assert answer.startswith(b"HTTP/1.1 411"), answer
        assert b"connection: close" in answer.lower()
        sent, closed = 0, False
        while sent < 64 * MiB and not closed:  # the body goes on: a drained connection takes it all
            try:
                conn.sendall(chunk)
                sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                closed = True
        assert closed and sent < 16 * MiB, f"{sent} bytes of body taken after the answer"


def _job(source: str, entry: str = "k") -> dict:
    return {"bundle": {"entry": entry, "functions": [{"name": entry, "source": source, "filename": "k.py",
                                                      "lineno": 1}], "constants": {}, "modules": {"asc": "asc"}},
            "core_num": 1, "args": [{"kind": "scalar", "dtype": "int", "value": 1}]}


HEAD = "@asc.jit\ndef k(n: int):\n"
# issue 25's: 40 000 assignments and one undefined name, 0.9 MiB
ATTACK = HEAD + "".join(f"    v{i} = v{i - 1} + 1\n" for i in range(1, 40_000)) + "    v0 = undefined_name\n"


def _heavy(salt: int) -> str:
    """Within every bound of the gate, refused by its last check (an undefined name) after all the others."""
    return (HEAD + f"    v0 = {salt}\n" + "".join(f"    v{i} = v{i - 1} + v{i - 1} + n\n" for i in range(1, 1400))
            + "    v0 = undefined_name\n")


def _await_a_fresh_minute():
    """The rate is counted per minute: start with 5 s of this minute left at least."""
    if time.time() % 60 > 55:
        time.sleep(60 - time.time() % 60)


def test_a_tenants_body_bytes_are_rated_before_they_are_parsed(pool):
    """Megabytes of junk options are refused (422) only once parsed: past its request_bytes_per_second,
    a tenant's next body is refused on its declared length, a chunked one as it arrives; another
    tenant's body of the same weight is parsed meanwhile."""
    rate = LIMITS["parsed"]["request_bytes_per_second"]
    junk = json.dumps({**_job(HEAD + "    pass\n"), "options": {"junk": "x" * (300 << 10)}}).encode()
    headers = {"Content-Type": "application/json"}
    start, answers = time.monotonic(), []
    while len(answers) < 10 and (not answers or answers[-1].status_code == 422):
        answers.append(httpx.post(f"{pool.url}/v1/jobs", content=junk, headers={**headers, **_auth("parsed")}))
    parsed = len(answers) - 1
    assert parsed * len(junk) <= MiB + rate * (time.monotonic() - start)  # the bucket, and what came into it
    refused = answers[-1]
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"] == {"kind": "limit", "message": (
        f"request body of {len(junk)} bytes is more than your request_bytes_per_second ({rate} bytes a second, "
        "in bursts of 5 s) leaves now")}
    assert int(refused.headers["Retry-After"]) >= 1
    other = httpx.post(f"{pool.url}/v1/jobs", content=junk, headers={**headers, **_auth("other")})
    assert other.status_code == 422 and "options.junk: Extra inputs are not permitted" in other.text
    answer, sent = _send_chunked(pool.url, "/v1/jobs", _auth("parsed"), 64 * MiB)
    assert answer.startswith("HTTP/1.1 429"), answer
    assert f"request body is more than your request_bytes_per_second ({rate} bytes a second" in answer
    assert sent < 16 * MiB


def test_a_default_tenants_body_is_capped_at_what_a_submission_needs(pool):
    """12 MiB of junk options, parsed on the API's one core, stopped its event loop for 130-160 ms
    under the soak's load: a tenant's default cap is 4 MiB, refused on the headers."""
    junk = json.dumps({**_job(HEAD + "    pass\n"), "options": {"junk": "x" * (5 * MiB)}}).encode()
    answer = httpx.post(f"{pool.url}/v1/jobs", content=junk, headers={"Content-Type": "application/json",
                                                                      **_auth("other")})
    assert answer.status_code == 413
    assert answer.json()["error"]["message"] == (f"request body of {len(junk)} bytes exceeds your 4194304-byte limit "
                                                 "(max_request_bytes)")


def test_a_refused_submission_counts_against_the_rate(pool):
    _await_a_fresh_minute()
    refused = httpx.post(f"{pool.url}/v1/jobs", json=_job(ATTACK), headers=_auth("metered"), timeout=60)
    assert refused.status_code == 422
    assert refused.json()["error"] == {"kind": "bundle_rejected", "message": (
        "the bundle's sources have 937808 characters, more than 100000 (MAX_SOURCE_CHARS)")}
    again = httpx.post(f"{pool.url}/v1/jobs", json=_job(HEAD + "    pass\n"), headers=_auth("metered"))
    assert again.status_code == 429
    assert again.json()["error"]["message"] == ("more than 1 launches this minute (launches_per_minute; refused "
                                                "ones count too)")


def test_heavy_checks_run_outside_the_api_and_behind_their_tenants_own(pool):
    """A tenant's heavy bundles cost the API process little CPU (the pool's processes spend it), and
    another tenant's check does not wait behind them."""
    from ascrun.compiler import gate
    from ascrun.compiler.bundle import KernelBundle
    from ascrun.compiler.errors import BundleRejected
    start = time.process_time()
    with pytest.raises(BundleRejected, match="reads 'undefined_name'"):
        gate.validate(KernelBundle.from_json(_job(_heavy(0))["bundle"]))
    cost = time.process_time() - start  # what one check costs where it runs

    def submit(name, source):
        answer = httpx.post(f"{pool.url}/v1/jobs", json=_job(source), headers=_auth(name), timeout=120)
        return answer, time.monotonic()

    with concurrent.futures.ThreadPoolExecutor(9) as threads:
        warm = [threads.submit(submit, name, HEAD + "    v = undefined_name\n") for name in ("heavy", "other")]
        assert [f.result()[0].status_code for f in warm] == [422, 422]  # the pool's two processes are up
        count, cpu = 8, _cpu_s(pool.server.pid)
        heavy = [threads.submit(submit, "heavy", _heavy(i + 1)) for i in range(count)]
        time.sleep(cost)  # they are in
        other, other_done = submit("other", HEAD + "    v = also_undefined\n")
        done = sorted(f.result()[1] for f in heavy)
        cpu = _cpu_s(pool.server.pid) - cpu
    assert other.status_code == 422 and "reads 'also_undefined'" in other.json()["error"]["message"]
    for answer, _ in (f.result() for f in heavy):
        assert answer.status_code == 422 and "reads 'undefined_name'" in answer.json()["error"]["message"]
    assert other_done < done[count // 2]  # not behind the heavy tenant's queue: beside its one check at a time
    assert cpu < count * cost / 2  # the checks ran elsewhere


def test_a_tenants_bundle_checks_are_charged_their_cpu(pool):
    """Heavy bundles cost the check pool's CPU, which every tenant's checks share: past its
    check_seconds_per_minute, a tenant's next check is refused before it runs (429, with when to come
    back), while another tenant's heavy bundle is checked."""
    answers = []
    while len(answers) < 60 and (not answers or answers[-1].status_code == 422):
        answers.append(httpx.post(f"{pool.url}/v1/jobs", json=_job(_heavy(1000 + len(answers))),
                                  headers=_auth("checked"), timeout=60))
    refused = answers[-1]
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"] == {"kind": "limit", "message": (
        "your bundle checks took more than 1 s of CPU this minute (check_seconds_per_minute)")}
    assert int(refused.headers["Retry-After"]) >= 1
    other = httpx.post(f"{pool.url}/v1/jobs", json=_job(_heavy(999)), headers=_auth("other"), timeout=60)
    assert other.status_code == 422 and "reads 'undefined_name'" in other.json()["error"]["message"]

"""The HTTP edge against slow and many connections (issue 25, item 8): a request head not complete
within ASCRUN_HEAD_TIMEOUT or past MAX_HEAD_BYTES, a body that stalls or an answer left unread for
ASCRUN_STALL_TIMEOUT closes its connection; one client address holds at most
ASCRUN_MAX_CONNECTIONS_PER_CLIENT connections; requests without a valid token are limited per
address (ASCRUN_ANONYMOUS_RATE) and each tenant's to its requests_per_second. A long-poll is not a
stall. The real `ascrun server` (server/connections.py's build_server), its timeouts a second."""
import hashlib
import json
import resource
import socket
import struct
import time
from urllib.parse import urlparse

import httpx
import pytest

from conftest import ghost_worker, own_service

pytestmark = pytest.mark.service

TOKENS = {"flooder": "flooder-secret-token", "quiet": "quiet-secret-token", "lister": "lister-secret-token"}
LIMITS = {"flooder": {"requests_per_second": 5}, "lister": {"requests_per_second": 40}}
LIST_ROWS_PER_REQUEST = 20  # edge.LIST_ROWS_PER_REQUEST
PER_CLIENT = 16
ANONYMOUS_RATE = 5
BURST_S = 5  # edge.BURST_S: a bucket holds this many seconds of its rate
TIMEOUT_S = 1  # the head and stall timeouts of this module's server
DEADLINE_S = 15  # what a test waits for at most for something that takes about TIMEOUT_S
MiB = 1 << 20


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    """An API server with its own Redis (the queued job of the long-poll test stays there)."""
    config = {"tenants": [{"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
                           "limits": LIMITS.get(name, {})} for name, token in TOKENS.items()]}
    with own_service(tmp_path_factory.mktemp("edge-redis"), {
            "ASCRUN_TENANTS": json.dumps(config), "ASCRUN_HEAD_TIMEOUT": str(TIMEOUT_S),
            "ASCRUN_STALL_TIMEOUT": str(TIMEOUT_S), "ASCRUN_MAX_CONNECTIONS_PER_CLIENT": str(PER_CLIENT),
            "ASCRUN_ANONYMOUS_RATE": str(ANONYMOUS_RATE)}) as svc:
        yield svc


def _auth(name):
    return {"Authorization": f"Bearer {TOKENS[name]}"}


def _connect(url: str, receive_buffer: int = 0) -> socket.socket:
    address = urlparse(url)
    conn = socket.socket()
    if receive_buffer:  # before connecting: the window the server may fill
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    conn.settimeout(DEADLINE_S)
    conn.connect((address.hostname, address.port))
    return conn


def _closed_by_server(conn: socket.socket) -> bool:
    """Whether the server closed the connection by now, read without taking what it sent."""
    conn.setblocking(False)
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        conn.settimeout(DEADLINE_S)


def _tcp_state(conn: socket.socket) -> int:
    """Linux's TCP state of our end (1 ESTABLISHED; a reset from the server moves it to 7, CLOSE)."""
    return struct.unpack("B", conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1))[0]


def _until(condition, what: str):
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {DEADLINE_S} s: {what}"
        time.sleep(0.05)


def _head(path: str, name: str = "quiet") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKENS[name]}\r\n\r\n".encode()


def _served(edge_url: str) -> bool:
    try:
        return httpx.get(f"{edge_url}/v1/health", headers=_auth("quiet")).status_code == 200
    except httpx.HTTPError:
        return False


def test_half_sent_heads_are_closed_after_the_head_timeout(edge):
    silent = _connect(edge.url)  # connects and sends nothing
    half = [_connect(edge.url) for _ in range(4)]
    for conn in half:
        conn.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")  # no blank line: the head never ends
    trickle = _connect(edge.url)
    trickle.sendall(b"GET /v1/health HTTP/1.1\r\n")
    started = time.monotonic()
    while not _closed_by_server(trickle):  # a byte at a time keeps no idle timer from firing: the head's still does
        assert time.monotonic() - started < DEADLINE_S, "a trickled head was never closed"
        try:
            trickle.sendall(b"X")
        except (BrokenPipeError, ConnectionResetError):
            break
        time.sleep(0.1)
    for conn in [silent] + half:
        _until(lambda: _closed_by_server(conn), "a half-sent head closed")
        conn.close()
    trickle.close()
    assert _served(edge.url)  # a whole head on a fresh connection is still answered


def test_a_head_is_cut_at_its_cap_however_fast_it_comes(edge):
    conn = _connect(edge.url)
    conn.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
    line, sent = b"X-Filler: " + b"y" * 1000 + b"\r\n", 0
    try:
        while sent < 64 * MiB:  # within the head timeout: fast, not slow
            conn.sendall(line * 64)
            sent += len(line) * 64
    except (BrokenPipeError, ConnectionResetError):
        pass
    conn.close()
    assert sent < 4 * MiB


def _answer(conn: socket.socket) -> bytes:
    """All the server sends until it closes (a reset may cut it short: it closed with our request unread)."""
    answer = b""
    try:
        while chunk := conn.recv(65536):
            answer += chunk
    except ConnectionResetError:
        pass
    return answer


def test_the_connection_past_the_per_client_cap_is_refused_at_once(edge):
    held = []
    try:
        while len(held) <= PER_CLIENT:  # each answered and kept alive: held past the head timeout
            conn = _connect(edge.url)
            conn.sendall(_head("/v1/health"))
            if not _answer_starts(conn, b"HTTP/1.1 200"):
                conn.close()
                break
            held.append(conn)
        # a connection of an earlier test may not be counted out yet: one or two fewer then
        assert PER_CLIENT - 2 <= len(held) <= PER_CLIENT
        with _connect(edge.url) as extra:  # sends nothing: the refusal is read whole
            answer = _answer(extra)
        assert answer.startswith(b"HTTP/1.1 503"), answer
        assert answer.endswith(b"your address holds %d connections, the most one client may "
                               b"(ASCRUN_MAX_CONNECTIONS_PER_CLIENT)\"}}" % len(held))
    finally:
        for conn in held:
            conn.close()
    _until(lambda: _served(edge.url), "a connection accepted once the held ones closed")


def _answer_starts(conn: socket.socket, start: bytes) -> bool:
    try:
        return conn.recv(65536).startswith(start)
    except ConnectionResetError:
        return False


def test_a_stalled_body_is_closed(edge):
    conn = _connect(edge.url)
    conn.sendall(f"PUT /v1/blobs/{'0' * 64} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKENS['quiet']}\r\n"
                 "Content-Length: 100000\r\n\r\n".encode() + b"x" * 1000)  # then nothing more
    _until(lambda: _closed_by_server(conn), "a stalled body's connection closed")
    conn.close()


def test_an_answer_left_unread_is_closed(edge):
    blob = bytes(range(256)) * (32 * MiB // 256)  # past the sockets' buffers on both ends
    digest = hashlib.sha256(blob).hexdigest()
    assert httpx.put(f"{edge.url}/v1/blobs/{digest}", content=blob, headers=_auth("quiet"),
                     timeout=60).status_code == 201
    conn = _connect(edge.url, receive_buffer=4096)
    conn.sendall(_head(f"/v1/blobs/{digest}"))  # and never read
    _until(lambda: _tcp_state(conn) != 1, "an unread download's connection closed")
    received = 0
    try:
        while chunk := conn.recv(MiB):
            received += len(chunk)
    except ConnectionResetError:
        pass
    conn.close()
    assert received < len(blob)


def test_an_anonymous_flood_gets_429_while_a_tenant_is_served(edge):
    statuses, started = [], time.monotonic()
    with httpx.Client(base_url=edge.url) as anonymous, httpx.Client(base_url=edge.url, headers=_auth("quiet")) as quiet:
        for i in range(4 * ANONYMOUS_RATE * BURST_S):
            answer = anonymous.get("/v1/health")
            statuses.append(answer.status_code)
            if answer.status_code == 429:
                refusal = answer.json()["error"]
            if i % 10 == 0:
                assert quiet.get("/v1/health").status_code == 200
        elapsed = time.monotonic() - started
        limited = [anonymous.get("/v1/jobs").status_code for _ in range(10)]  # limited before its 401
    assert 429 in statuses and 429 in limited
    assert statuses.count(200) <= ANONYMOUS_RATE * (BURST_S + elapsed) + 1
    assert refusal == {"kind": "limit", "message": f"more than {ANONYMOUS_RATE} requests a second without a valid "
                                                   "token from your address (ASCRUN_ANONYMOUS_RATE)"}


def test_a_tenant_over_its_requests_per_second_gets_429_while_another_is_served(edge):
    rate = LIMITS["flooder"]["requests_per_second"]
    statuses, started = [], time.monotonic()
    with httpx.Client(base_url=edge.url, headers=_auth("flooder")) as flooder, \
            httpx.Client(base_url=edge.url, headers=_auth("quiet")) as quiet:
        for i in range(4 * rate * BURST_S):
            answer = flooder.get("/v1/jobs/unknown")  # refused (404) or not, every request counts
            statuses.append(answer.status_code)
            if answer.status_code == 429:
                refusal = answer
            if i % 10 == 0:
                assert quiet.get("/v1/health").status_code == 200
        elapsed = time.monotonic() - started
    assert set(statuses) == {404, 429}
    assert statuses.count(404) <= rate * (BURST_S + elapsed) + 1
    assert refusal.headers["Retry-After"] == "1"
    assert refusal.json()["error"] == {"kind": "limit",
                                       "message": f"more than {rate} requests a second (requests_per_second)"}


def test_a_list_is_charged_by_the_jobs_it_reads(edge):
    """A list of 500 jobs takes the API's core as 25 lists of 20 do (issue 25, 6: 8 lists at a time held the
    core from every other tenant): it is charged 25 requests, a list of 20 one."""
    rate, limit = LIMITS["lister"]["requests_per_second"], 500
    cost = limit // LIST_ROWS_PER_REQUEST
    over = f"more than {rate} requests a second (requests_per_second)"
    by_list = ("limit", f"a list of {limit} jobs counts as {cost} requests (one per {LIST_ROWS_PER_REQUEST} "
                        f"jobs): {over}", "1")
    statuses, refusals, started = [], set(), time.monotonic()
    with httpx.Client(base_url=edge.url, headers=_auth("lister")) as lister:
        # until the list's own charge refuses one: right after the burst the bucket may hold less than
        # the edge's one request, and the edge refuses first until it refills
        while by_list not in refusals and len(statuses) < 60:
            answer = lister.get("/v1/jobs", params={"limit": limit})
            statuses.append(answer.status_code)
            if answer.status_code == 429:
                refusals.add((answer.json()["error"]["kind"], answer.json()["error"]["message"],
                              answer.headers["Retry-After"]))
                time.sleep(0.01)
        elapsed = time.monotonic() - started
        # charged by the bucket a request at a time, the lists would all pass (its burst is 200)
        assert 0 < statuses.count(200) <= (rate * (BURST_S + elapsed)) / cost + 1
        assert by_list in refusals, (statuses, refusals)
        # refused by the list's charge, or by the edge's when the bucket is below one request
        assert refusals <= {by_list, ("limit", over, "1")}
        time.sleep(1.5)  # a list of 20 is one request: the refill of a second and a half passes some
        assert lister.get("/v1/jobs", params={"limit": LIST_ROWS_PER_REQUEST}).status_code == 200


def test_a_long_poll_longer_than_the_stall_timeout_gets_its_answer(edge):
    job = {"bundle": {"entry": "k", "functions": [{"name": "k", "source": "@asc.jit\ndef k(n: int):\n    pass\n",
                                                   "filename": "k.py", "lineno": 1}],
                      "constants": {}, "modules": {"asc": "asc"}},
           "core_num": 1, "args": [{"kind": "scalar", "dtype": "int", "value": 1}]}
    wait = 2 * TIMEOUT_S
    with ghost_worker(edge.redis, {"cpu": {}}, "test-edge-ghost"):  # the job is admitted and stays queued
        submitted = httpx.post(f"{edge.url}/v1/jobs", json=job, headers=_auth("quiet"))
        assert submitted.status_code == 202, submitted.text
        started = time.monotonic()
        answer = httpx.get(f"{edge.url}/v1/jobs/{submitted.json()['id']}", params={"wait": wait},
                           headers=_auth("quiet"), timeout=DEADLINE_S)
    assert answer.status_code == 200 and answer.json()["status"] == "queued"
    assert time.monotonic() - started >= wait - 0.5  # it waited: held longer than the stall timeout


@pytest.mark.unit
def test_connections_are_counted_by_client_and_in_all_below_the_open_file_limit():
    from ascrun.compiler.settings import ServiceSettings
    from ascrun.server.connections import FD_RESERVE, ConnectionLimits, client_key, connection_cap
    limits = ConnectionLimits(per_client=2, total=3)
    assert [limits.admit("a"), limits.admit("a")] == [None, None]
    assert limits.admit("a") == "your address holds 2 connections, the most one client may " \
                                "(ASCRUN_MAX_CONNECTIONS_PER_CLIENT)"
    assert limits.admit("b") is None
    assert limits.admit("c") == "the service holds the most connections it takes (3, ASCRUN_MAX_CONNECTIONS)"
    limits.release("a")
    assert limits.admit("c") is None and limits.by_client == {"a": 1, "b": 1, "c": 1}
    # one host's IPv6 /64 is one client; an IPv4 address seen through IPv6 is itself
    assert client_key("2001:db8::1") == client_key("2001:db8::ffff:1") != client_key("2001:db8:0:1::1")
    assert client_key("::ffff:10.0.0.1") == client_key("10.0.0.1") == "10.0.0.1"
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert connection_cap(ServiceSettings()) == soft - FD_RESERVE
    assert connection_cap(ServiceSettings(max_connections=100)) == 100
    with pytest.raises(SystemExit, match=f"ASCRUN_MAX_CONNECTIONS must be 0 .* or 1 to {soft - FD_RESERVE}"):
        connection_cap(ServiceSettings(max_connections=soft))

"""Blob transfers through the API are bounded and charged before they cost (issue 25, items 4 and 8):
an upload declares its size, which is reserved against the tenant's max_stored_bytes before a byte
is stored; a tenant has at most max_concurrent_uploads (4) and max_concurrent_downloads (8) under
way; an upload that sends nothing for ASCRUN_UPLOAD_STALL is closed and freed, a download whose
reader takes nothing for ASCRUN_DOWNLOAD_STALL is closed and its lease freed. A server of its own
(stalls of 1 s) on a Redis of its own, so that every upload key in it is these tests'."""
import asyncio
import contextlib
import hashlib
import json
import socket
import threading
import time
from urllib.parse import urlparse

import httpx
import pytest
import redis.asyncio as aioredis

import ascrun
from ascrun.compiler.settings import ServiceSettings
from ascrun.server.store.blobs import AsyncBlobStore
from ascrun.server.store.keys import PREFIX, blob_chunk_key, tenant_key, upload_key
from ascrun.server.tenants import Limits
from conftest import own_service

pytestmark = pytest.mark.service

MiB = 1 << 20
CAP = 8 * MiB
TENANTS = ("reserve", "stall", "many", "reader")


def _token(name: str) -> str:
    return f"{name}-secret-token"


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    config = {"tenants": [{"name": name, "token_sha256": hashlib.sha256(_token(name).encode()).hexdigest(),
                           "limits": {"max_stored_bytes": CAP if name != "reader" else 64 * MiB,
                                      "max_blob_bytes": 32 * MiB}} for name in TENANTS]}
    with own_service(tmp_path_factory.mktemp("transfers-redis"), {
            "ASCRUN_TENANTS": json.dumps(config), "ASCRUN_UPLOAD_STALL": "1", "ASCRUN_DOWNLOAD_STALL": "1"}) as svc:
        yield svc


def _auth(name: str) -> dict:
    return {"Authorization": f"Bearer {_token(name)}"}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stored(pool, name: str) -> int:
    return int(pool.redis.get(tenant_key(name, "stored")) or 0)


def _upload_keys(pool) -> list:
    return list(pool.redis.scan_iter(f"{PREFIX}upload:*"))


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) << 10 for line in status if line.startswith("VmRSS:"))


def _until(condition, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.01)


@contextlib.contextmanager
def _request(pool, head: str, body: bytes = b"", receive_buffer: int = 0):
    """A connection that sent `head` (and `body`) and then nothing: what a stalled client does."""
    url = urlparse(pool.url)
    conn = socket.socket()
    if receive_buffer:  # before connect: the window the server may fill
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    conn.settimeout(30)
    conn.connect((url.hostname, url.port))
    try:
        conn.sendall(f"{head}Host: x\r\n\r\n".encode() + body)
        yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def _kept_moving(step, *conns):
    """`step(conn)` for each of `conns` every 50 ms until the block ends, then nothing: a transfer
    that moves is never closed as stalled, whatever the machine's load makes of the stall's 1 s."""
    done = threading.Event()

    def run():
        while not done.wait(0.05):
            for conn in conns:
                step(conn)

    mover = threading.Thread(target=run, daemon=True)
    mover.start()
    try:
        yield
    finally:
        done.set()
        mover.join()


class Trickle:
    """An upload's body, a byte per step."""

    def __init__(self, body: bytes):
        self.body, self.sent = body, 0

    def __call__(self, conn) -> None:
        conn.sendall(self.body[self.sent:self.sent + 1])
        self.sent += 1

    def rest(self) -> bytes:
        return self.body[self.sent:]


def _put(pool, name: str, digest: str, length: int, body: bytes = b""):
    return _request(pool, f"PUT /v1/blobs/{digest} HTTP/1.1\r\nAuthorization: Bearer {_token(name)}\r\n"
                          f"Content-Length: {length}\r\n", body)


def _answer(conn) -> tuple:
    """The status and the JSON body of the answer on `conn`."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536) or pytest.fail(f"closed before an answer: {data!r}")
    head, body = data.split(b"\r\n\r\n", 1)
    fields = dict(line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:])
    length = int(fields[b"content-length"])
    while len(body) < length:
        body += conn.recv(65536) or pytest.fail("closed mid-answer")
    return int(head.split()[1]), json.loads(body)


def test_an_upload_must_declare_its_size(pool):
    data = b"x" * 1000
    answer = httpx.put(f"{pool.url}/v1/blobs/{_digest(data)}", content=iter([data]), headers=_auth("reserve"))
    assert answer.status_code == 411
    assert answer.json()["error"] == {"kind": "bad_request", "message": (
        "a blob upload must declare its size in Content-Length (a chunked body is not taken): it is reserved against "
        "max_stored_bytes before any byte is stored")}
    assert _stored(pool, "reserve") == 0 and not _upload_keys(pool)


def test_the_declared_size_is_reserved_before_a_byte_is_stored(pool):
    """Chunks were charged only at commit, and parallel uploads never summed: nine stalled uploads
    held 940 MiB of a 1 GiB Redis while the tenant's stored bytes read 0."""
    data, other = b"r" * (3 * MiB), b"o" * (6 * MiB)
    trickle = Trickle(data)
    with _put(pool, "reserve", _digest(data), len(data)) as conn:
        with _kept_moving(trickle, conn):
            _until(lambda: _stored(pool, "reserve") == len(data))
            assert not _upload_keys(pool)  # nothing stored yet (a piece is 1 MiB)
            over = httpx.put(f"{pool.url}/v1/blobs/{_digest(other)}", content=other, headers=_auth("reserve"))
        assert over.status_code == 429
        assert over.json()["error"]["message"] == (
            f"storing this blob of {len(other)} bytes would take your stored blobs (with your uploads under way, "
            f"your ended jobs' records and the bytes your queued and running jobs reserve for their outputs) from "
            f"{len(data)} to {len(data) + len(other)} bytes, over {CAP} (max_stored_bytes); blobs and records are "
            "released as they expire (ASCRUN_BLOB_TTL, ASCRUN_RESULT_TTL), reservations when their jobs end")
        conn.sendall(trickle.rest())
        assert _answer(conn) == (201, {"blob": _digest(data), "bytes": len(data)})
    assert _stored(pool, "reserve") == len(data)  # the reservation became the blob
    assert httpx.get(f"{pool.url}/v1/blobs/{_digest(data)}", headers=_auth("reserve")).content == data
    assert not _upload_keys(pool) and pool.redis.zcard(tenant_key("reserve", "uploads")) == 0


def test_a_stalled_upload_is_closed_and_its_bytes_freed(pool):
    data = bytes(range(256)) * (3 * MiB // 256)
    trickle = Trickle(data)
    trickle.sent = 3 * MiB // 2
    with _put(pool, "stall", _digest(data), len(data), data[:trickle.sent]) as conn:
        with _kept_moving(trickle, conn):
            _until(lambda: _upload_keys(pool))  # its first piece is stored
            assert _stored(pool, "stall") == len(data)
        status, answer = _answer(conn)  # then it stalls
        assert conn.recv(1) == b""  # and the connection closed
    assert status == 408 and answer["error"] == {"kind": "timeout", "message": (
        "no byte of this upload came for 1 s (ASCRUN_UPLOAD_STALL): it is closed, and what it stored freed")}
    assert _stored(pool, "stall") == 0 and not _upload_keys(pool)
    assert pool.redis.zcard(tenant_key("stall", "uploads")) == 0


def test_a_fifth_concurrent_upload_is_refused(pool):
    blobs = [b"%d" % i * 1000 for i in range(5)]
    with contextlib.ExitStack() as stack:
        stalled = [stack.enter_context(_put(pool, "many", _digest(data), len(data))) for data in blobs[:4]]
        with _kept_moving(lambda conn: conn.sendall(b"x"), *stalled):
            _until(lambda: pool.redis.zcard(tenant_key("many", "uploads")) == 4)
            fifth = httpx.put(f"{pool.url}/v1/blobs/{_digest(blobs[4])}", content=blobs[4], headers=_auth("many"))
        assert fifth.status_code == 429
        assert fifth.json()["error"]["message"] == ("you have 4 blob uploads under way, the most at once "
                                                    "(max_concurrent_uploads); upload this one when one of them ends")
        assert fifth.headers["Retry-After"] == "1"
        # then they stall
        assert [_answer(conn)[0] for conn in stalled] == [408] * 4
    assert httpx.put(f"{pool.url}/v1/blobs/{_digest(blobs[4])}", content=blobs[4],
                     headers=_auth("many")).status_code == 201


def test_the_client_waits_for_its_turn(pool):
    """A client with more blobs to move than its tenant may at once (AsyncClient sends a batch at
    once) tries again when told to, and gets through once the others end."""
    statuses = []
    data = b"turn" * 1000
    with contextlib.ExitStack() as stack:
        for i in range(4):
            stack.enter_context(_put(pool, "many", _digest(b"%d" % i), 1))  # stall, then end
        _until(lambda: pool.redis.zcard(tenant_key("many", "uploads")) == 4)
        with ascrun.Client(pool.url, token=_token("many")) as client:
            client._http.event_hooks["response"].append(lambda r: statuses.append(r.status_code))
            client.upload_blob(_digest(data), data)
    assert statuses[0] == 429 and statuses[-1] == 201
    assert httpx.get(f"{pool.url}/v1/blobs/{_digest(data)}", headers=_auth("many")).content == data


def test_a_ninth_concurrent_download_is_refused_and_an_unread_one_is_closed(pool):
    """30 unread downloads of a 60 MiB blob held 1.5 GiB in the API (a whole 64 MiB chunk each)."""
    data = bytes(range(256)) * (24 * MiB // 256)  # more than a reader's and the server's socket buffers
    digest = _digest(data)
    assert httpx.put(f"{pool.url}/v1/blobs/{digest}", content=data, headers=_auth("reader")).status_code == 201
    downloads, before = tenant_key("reader", "downloads"), _rss(pool.server.pid)
    get = f"GET /v1/blobs/{digest} HTTP/1.1\r\nAuthorization: Bearer {_token('reader')}\r\n"
    received = {}

    def read_some(conn):  # 2.5 MiB/s: each piece goes within the stall
        with contextlib.suppress(BlockingIOError):
            received[conn] = received.get(conn, 0) + len(conn.recv(128 << 10, socket.MSG_DONTWAIT))

    with contextlib.ExitStack() as stack:
        readers = [stack.enter_context(_request(pool, get, receive_buffer=64 << 10)) for _ in range(8)]
        with _kept_moving(read_some, *readers):
            _until(lambda: pool.redis.zcard(downloads) == 8)
            ninth = httpx.get(f"{pool.url}/v1/blobs/{digest}", headers=_auth("reader"))
        assert ninth.status_code == 429
        assert ninth.json()["error"]["message"] == ("you have 8 blob downloads under way, the most at once "
                                                    "(max_concurrent_downloads); download this one when one of "
                                                    "them ends")
        # then nothing is read: each is closed after its stall, its lease freed; meanwhile the API
        # held a piece (1 MiB) of each, or two (a whole 64 MiB chunk, here the 24 MiB blob, before)
        held, deadline = 0, time.monotonic() + 20
        while pool.redis.zcard(downloads) and time.monotonic() < deadline:
            held = max(held, _rss(pool.server.pid) - before)
            time.sleep(0.01)
        assert pool.redis.zcard(downloads) == 0
        assert held < 64 * MiB, held
        for conn in readers:
            while chunk := conn.recv(1 << 20):
                received[conn] = received.get(conn, 0) + len(chunk)
            assert received[conn] < len(data) + 1000  # cut short (the head is some 200 bytes): left
    assert httpx.get(f"{pool.url}/v1/blobs/{digest}", headers=_auth("reader")).content == data


def test_a_killed_servers_upload_frees_itself(pool):
    """An API server killed mid-upload ends nothing: its lease, its reservation and its chunks
    expire (here after half a second) and the next look at the tenant's account releases them."""
    async def abandon_one_then_upload():
        connection = aioredis.Redis.from_url(pool.env["REDIS_URL"])
        store = AsyncBlobStore(connection, ServiceSettings())
        abandoned = store.upload("killed", "a" * 64, 2 * MiB)
        abandoned.lease.seconds = 0.5
        assert await abandoned.reserve(Limits()) == ("reserved", 2 * MiB)
        await abandoned.add(b"k" * MiB)  # its first piece is stored, then the server dies
        chunk = upload_key(abandoned.lease.id, 0)
        assert pool.redis.exists(chunk) and _stored(pool, "killed") == 2 * MiB
        await asyncio.sleep(1)
        assert not pool.redis.exists(chunk)
        later = store.upload("killed", "b" * 64, 1000)
        assert await later.reserve(Limits()) == ("reserved", 1000)
        assert pool.redis.zrange(tenant_key("killed", "uploads"), 0, -1) == [later.lease.id.encode()]
        await later.end()
        await connection.aclose()

    asyncio.run(abandon_one_then_upload())
    assert _stored(pool, "killed") == 0 and not _upload_keys(pool)


def test_a_long_upload_keeps_its_lease(pool):
    """An upload that takes longer than its lease's life renews it (and its reservation and chunks)
    as its bytes come; here a lease of 1 s, an upload of 1.8 s with a piece every 0.3 s."""
    data = bytes(range(256)) * (3 * MiB // 256)

    async def upload_slowly():
        connection = aioredis.Redis.from_url(pool.env["REDIS_URL"])
        store = AsyncBlobStore(connection, ServiceSettings())
        upload = store.upload("slow", _digest(data), len(data))
        upload.lease.seconds = 1
        assert await upload.reserve(Limits()) == ("reserved", len(data))
        for start in range(0, len(data), MiB // 2):
            await upload.add(data[start:start + MiB // 2])
            await asyncio.sleep(0.3)
        committed = await upload.commit(Limits().max_stored_bytes)
        await upload.end()
        await connection.aclose()
        return committed

    assert asyncio.run(upload_slowly()) == (True, len(data))
    assert pool.redis.get(blob_chunk_key("slow", _digest(data), 0)) == data
    assert _stored(pool, "slow") == len(data) and not _upload_keys(pool)
    assert pool.redis.zcard(tenant_key("slow", "uploads")) == 0

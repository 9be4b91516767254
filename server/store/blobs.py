"""Blobs in Redis: a tensor's bytes named by their sha256, per tenant, accounted against its
max_stored_bytes (key layout: keys.py). BlobStore is the workers' and the API's
blocking side, AsyncBlobStore the API's streaming uploads and downloads."""
from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from typing import AsyncIterator, List, Optional, Sequence, Tuple

import redis
import redis.asyncio as aioredis

from ...compiler.settings import ServiceSettings
from .account import ACCOUNT_LUA
from .keys import blob_chunk_key, blob_key, tenant_key, upload_key
from .transfers import PIECE_BYTES, Lease, Transfers, upload_member

BLOB_CHUNK_BYTES = 64 << 20


def blob_chunks(size: int) -> int:
    return math.ceil(size / BLOB_CHUNK_BYTES)


# Blobs are accounted per tenant: expired ones are released, then the blob's upload (chunks under
# upload:<id>:<i>) becomes the blob, unless that would take the tenant past its cap (ARGV[4], -1:
# none). All at once, so a reader sees the whole blob or none of it.
# The bytes the tenant's active jobs reserved for their outputs count as stored (jobs.ADMIT_LUA).
# An upload's reservation (ARGV[7], its member of the account: transfers.py) becomes the blob: the
# bytes it admitted are not checked against the cap again.
# KEYS: header, blobs zset, sizes hash, stored total, n upload keys, n chunk keys, active jobs hash.
# ARGV: size, ttl, now, cap, n, digest, reservation (''). Returns {ok, stored after}.
COMMIT_BLOB = ACCOUNT_LUA + """
local size, ttl, now, cap, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local digest = ARGV[6]
release_expired(KEYS[2], KEYS[3], KEYS[4], now)
local old = tonumber(redis.call('HGET', KEYS[3], digest) or '0')
local total = tonumber(redis.call('GET', KEYS[4]) or '0') - old
for _, b in ipairs(redis.call('HVALS', KEYS[5 + 2 * n])) do total = total + tonumber(b) end
local reserved = ARGV[7] ~= '' and redis.call('HGET', KEYS[3], ARGV[7])
if reserved then
  redis.call('HDEL', KEYS[3], ARGV[7])
  redis.call('ZREM', KEYS[2], ARGV[7])
  redis.call('DECRBY', KEYS[4], reserved)
  total, cap = total - tonumber(reserved), -1
end
if cap >= 0 and total + size > cap then
  for i = 1, n do redis.call('DEL', KEYS[4 + i]) end
  return {0, total}
end
for i = 1, n do
  redis.call('RENAME', KEYS[4 + i], KEYS[4 + n + i])
  redis.call('EXPIRE', KEYS[4 + n + i], ttl)
end
redis.call('SET', KEYS[1], size, 'EX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, digest)
redis.call('HSET', KEYS[3], digest, size)
redis.call('INCRBY', KEYS[4], size - old)
return {1, total + size}
"""


def commit_blob_args(tenant: str, digest: str, upload_id: str, size: int, ttl: int, cap: int, reservation: str = ""):
    """KEYS and ARGV of COMMIT_BLOB."""
    n = blob_chunks(size)
    keys = ([blob_key(tenant, digest), tenant_key(tenant, "blobs"), tenant_key(tenant, "blob-bytes"),
             tenant_key(tenant, "stored")] + [upload_key(upload_id, i) for i in range(n)]
            + [blob_chunk_key(tenant, digest, i) for i in range(n)] + [tenant_key(tenant, "active")])
    return keys, [size, ttl, time.time(), cap, n, digest, reservation]


class BlobStore:
    def __init__(self, connection: redis.Redis, settings: ServiceSettings):
        self.connection = connection
        self.settings = settings

    def sizes(self, tenant: str, digests: Sequence[str]) -> List[Optional[int]]:
        """Each blob's size, None if it is not stored (an empty tensor's blob has size 0)."""
        with self.connection.pipeline(transaction=False) as pipe:
            for digest in digests:
                pipe.get(blob_key(tenant, digest))
            return [None if raw is None else int(raw) for raw in pipe.execute()]


class ReservationLost(Exception):
    """An upload's reservation expired before it ended (its lease went unrenewed: the API stalled)."""


class Upload:
    """A blob arriving piece by piece: its declared size reserved in its tenant's account before any
    byte is stored (transfers.py), its bytes written to Redis as they come, a piece at a time (what
    the API holds of it), a blob only once committed. `end` frees whatever it still holds."""

    def __init__(self, store: "AsyncBlobStore", tenant: str, digest: str, size: int):
        self.store, self.tenant, self.digest, self.size = store, tenant, digest, size
        self.lease = Lease(tenant, "uploads", store.settings.upload_stall_s)
        self.buffer = bytearray()
        self.written = 0

    async def reserve(self, limits) -> Tuple[str, int]:
        """The upload's lease and reservation: transfers.Transfers.reserve_upload."""
        return await self.store.transfers.reserve_upload(self.lease, self.tenant, self.digest, self.size, limits)

    async def add(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= PIECE_BYTES:
            await self._write(PIECE_BYTES)
        if self.lease.due:
            await self._renew()

    async def commit(self, cap: int) -> Tuple[bool, int]:
        """Make the upload blob `digest` (its reservation becomes the blob; without one, unless the
        tenant's stored bytes would pass `cap`). Returns (stored, the tenant's stored bytes)."""
        if self.buffer:
            await self._write(len(self.buffer))
        await self._renew()  # the reservation and the chunks outlive the commit's round trip
        keys, args = commit_blob_args(self.tenant, self.digest, self.lease.id, self.size,
                                      self.store.settings.blob_ttl_s, cap, upload_member(self.lease))
        stored_ok, stored = await self.store.commit_blob(keys=keys, args=args)
        return bool(stored_ok), stored

    async def end(self) -> None:
        """Free what the upload still holds: its lease, and unless it was committed its reservation
        and chunks; if Redis is away, they expire with the lease."""
        with contextlib.suppress(redis.RedisError, aioredis.RedisError):
            await self.store.transfers.end_upload(self.lease, self.tenant, self._chunks())

    def _chunks(self) -> List[str]:
        """The keys of the chunks written so far."""
        return [upload_key(self.lease.id, index) for index in range(blob_chunks(self.written))]

    async def _renew(self) -> None:
        if not await self.store.transfers.renew_upload(self.lease, self.tenant, self._chunks()):
            raise ReservationLost()

    async def _write(self, count: int) -> None:
        """The buffer's first `count` bytes, into their chunk (pieces never straddle two: a chunk is
        a whole number of pieces)."""
        index, offset = divmod(self.written, BLOB_CHUNK_BYTES)
        if not await self.store.transfers.write_piece(self.lease, upload_key(self.lease.id, index), offset,
                                                      min(BLOB_CHUNK_BYTES, self.size - index * BLOB_CHUNK_BYTES),
                                                      bytes(self.buffer[:count])):
            raise ReservationLost()
        del self.buffer[:count]
        self.written += count


@dataclasses.dataclass
class OpenedDownload:
    """What AsyncBlobStore.open_download found: the blob's size (None: no such blob), the download's
    lease (None: refused, the tenant having `live` downloads under way) and the blob's first piece."""
    size: Optional[int]
    lease: Optional[Lease]
    live: int = 0
    first: bytes = b""


class AsyncBlobStore:
    def __init__(self, connection: aioredis.Redis, settings: ServiceSettings):
        self.connection = connection
        self.settings = settings
        self.commit_blob = connection.register_script(COMMIT_BLOB)
        self.transfers = Transfers(connection)

    def upload(self, tenant: str, digest: str, size: int) -> Upload:
        return Upload(self, tenant, digest, size)

    async def open_download(self, tenant: str, digest: str, limits) -> "OpenedDownload":
        """The blob's size, the download's lease and the blob's first piece, in one round trip; or
        why not: no such blob (size None), or the tenant has its most downloads (lease None, `live`)."""
        lease = Lease(tenant, "downloads", self.settings.download_stall_s)
        answer = await self.transfers.open_download(lease, blob_key(tenant, digest),
                                                    blob_chunk_key(tenant, digest, 0), limits)
        if not answer:
            return OpenedDownload(None, None)
        if len(answer) == 1:
            return OpenedDownload(None, None, live=int(answer[0]))
        return OpenedDownload(int(answer[0]), lease, first=answer[1])

    async def end_download(self, lease: Lease) -> None:
        with contextlib.suppress(redis.RedisError, aioredis.RedisError):  # else it expires
            await self.transfers.end_download(lease)

    async def pieces(self, tenant: str, digest: str, opened: "OpenedDownload") -> AsyncIterator[bytes]:
        """The blob's bytes a piece at a time, read from Redis as the reader takes them (the first
        came with the download's lease): what the API holds of a download; short if the blob expires
        under us (the short body tells the client)."""
        size, lease = opened.size, opened.lease
        if opened.first:
            yield opened.first
        for start in range(PIECE_BYTES, size, PIECE_BYTES):
            index, offset = divmod(start, BLOB_CHUNK_BYTES)
            if lease.due:
                await self.transfers.renew_download(lease)
            piece = await self.connection.getrange(blob_chunk_key(tenant, digest, index), offset,
                                                   min(offset + PIECE_BYTES, size - index * BLOB_CHUNK_BYTES) - 1)
            if not piece:
                return
            yield piece

"""Blobs in Redis: a tensor's bytes named by their sha256, per tenant, accounted against its
max_stored_bytes (key layout: keys.py). BlobStore is the workers' and the API's
blocking side, AsyncBlobStore the API's streaming uploads and downloads."""
from __future__ import annotations

import contextlib
import math
import mmap
import time
import uuid
from typing import AsyncIterator, List, Optional, Sequence, Tuple

import redis
import redis.asyncio as aioredis

from ...compiler.settings import ServiceSettings
from .keys import blob_chunk_key, blob_key, tenant_key, upload_key

BLOB_CHUNK_BYTES = 64 << 20


def blob_chunks(size: int) -> int:
    return math.ceil(size / BLOB_CHUNK_BYTES)


# Blobs are accounted per tenant: expired ones are released, then the blob's upload (chunks under
# upload:<id>:<i>) becomes the blob, unless that would take the tenant past its cap (ARGV[4], -1:
# none). All at once, so a reader sees the whole blob or none of it.
# The bytes the tenant's active jobs reserved for their outputs count as stored (jobs.ADMIT_LUA).
# KEYS: header, blobs zset, sizes hash, stored total, n upload keys, n chunk keys, active jobs hash.
# ARGV: size, ttl, now, cap, n, digest, dry (1: only release and answer). Returns {ok, stored after}.
COMMIT_BLOB = """
local size, ttl, now, cap, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local digest = ARGV[6]
for _, d in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  local b = redis.call('HGET', KEYS[3], d)
  if b then redis.call('DECRBY', KEYS[4], b) redis.call('HDEL', KEYS[3], d) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local old = tonumber(redis.call('HGET', KEYS[3], digest) or '0')
local total = tonumber(redis.call('GET', KEYS[4]) or '0') - old
for _, b in ipairs(redis.call('HVALS', KEYS[5 + 2 * n])) do total = total + tonumber(b) end
if ARGV[7] == '1' then return {1, total} end
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


def commit_blob_args(tenant: str, digest: str, upload_id: str, size: int, ttl: int, cap: int, dry: bool = False):
    """KEYS and ARGV of COMMIT_BLOB."""
    n = blob_chunks(size)
    keys = ([blob_key(tenant, digest), tenant_key(tenant, "blobs"), tenant_key(tenant, "blob-bytes"),
             tenant_key(tenant, "stored")] + [upload_key(upload_id, i) for i in range(n)]
            + [blob_chunk_key(tenant, digest, i) for i in range(n)] + [tenant_key(tenant, "active")])
    return keys, [size, ttl, time.time(), cap, n, digest, int(dry)]


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

    def get(self, tenant: str, digest: str) -> Optional[memoryview]:
        """A writable copy (the kernel's buffer), or None if it expired."""
        size, first = self.connection.mget(blob_key(tenant, digest), blob_chunk_key(tenant, digest, 0))
        if size is None or (first is None and int(size) > 0):
            return None
        if int(size) <= BLOB_CHUNK_BYTES:
            return memoryview(bytearray(first or b""))
        # filled chunk by chunk: one copy of the blob, no 1 GiB reply buffer; an anonymous mapping,
        # not a bytearray, whose zero-filling of 1 GiB would hold the GIL for seconds
        data = memoryview(mmap.mmap(-1, int(size)))
        data[:len(first)] = first
        for index in range(1, blob_chunks(int(size))):
            chunk = self.connection.get(blob_chunk_key(tenant, digest, index))
            if chunk is None:
                return None  # expired while we read
            data[index * BLOB_CHUNK_BYTES:index * BLOB_CHUNK_BYTES + len(chunk)] = chunk
        return data

    def put(self, tenant: str, digest: str, data: bytes) -> None:
        """Store a job's output; accounted to the tenant but never refused (the job was accepted)."""
        upload_id = uuid.uuid4().hex
        view = memoryview(data)
        for index in range(blob_chunks(len(data))):
            self.connection.set(upload_key(upload_id, index), view[index * BLOB_CHUNK_BYTES:(index + 1) * BLOB_CHUNK_BYTES],
                                ex=self.settings.blob_ttl_s)
        keys, args = commit_blob_args(tenant, digest, upload_id, len(data), self.settings.blob_ttl_s, -1)
        self.connection.eval(COMMIT_BLOB, len(keys), *keys, *args)


class Upload:
    """A blob arriving chunk by chunk: stored as it comes (the server holds at most one chunk),
    a blob only once committed."""

    def __init__(self, store: "AsyncBlobStore"):
        self.store = store
        self.id = uuid.uuid4().hex
        self.buffer = bytearray()
        self.parts = 0

    async def add(self, data: bytes) -> None:
        self.buffer += data
        await self._flush(final=False)

    async def commit(self, tenant: str, digest: str, size: int, cap: int) -> Tuple[bool, int]:
        """Make the upload blob `digest`, unless the tenant's stored bytes would pass `cap`.
        Returns (stored, the tenant's stored bytes)."""
        await self._flush(final=True)
        keys, args = commit_blob_args(tenant, digest, self.id, size, self.store.settings.blob_ttl_s, cap)
        stored_ok, stored = await self.store.commit_blob(keys=keys, args=args)
        return bool(stored_ok), stored

    async def discard(self) -> None:
        """Drop what was stored of a failed upload; if Redis is away, its chunks expire by themselves."""
        with contextlib.suppress(redis.RedisError, aioredis.RedisError):
            if self.parts:
                await self.store.connection.delete(*(upload_key(self.id, i) for i in range(self.parts)))

    async def _flush(self, final: bool) -> None:
        while len(self.buffer) >= BLOB_CHUNK_BYTES or (final and self.buffer):
            await self.store.connection.set(upload_key(self.id, self.parts), bytes(self.buffer[:BLOB_CHUNK_BYTES]),
                                            ex=self.store.settings.blob_ttl_s)
            del self.buffer[:BLOB_CHUNK_BYTES]
            self.parts += 1


class AsyncBlobStore:
    def __init__(self, connection: aioredis.Redis, settings: ServiceSettings):
        self.connection = connection
        self.settings = settings
        self.commit_blob = connection.register_script(COMMIT_BLOB)

    async def stored_bytes(self, tenant: str, digest: str) -> int:
        """The tenant's stored blob bytes but blob `digest`'s, once expired blobs are released."""
        keys, args = commit_blob_args(tenant, digest, "", 0, self.settings.blob_ttl_s, -1, dry=True)
        return (await self.commit_blob(keys=keys, args=args))[1]

    def upload(self) -> Upload:
        return Upload(self)

    async def size(self, tenant: str, digest: str) -> Optional[int]:
        size = await self.connection.get(blob_key(tenant, digest))
        return None if size is None else int(size)

    async def chunks(self, tenant: str, digest: str, size: int) -> AsyncIterator[bytes]:
        """The blob's bytes, one chunk in memory at a time; short if it expires under us (the
        short body tells the client)."""
        for index in range(blob_chunks(size)):
            chunk = await self.connection.get(blob_chunk_key(tenant, digest, index))
            if chunk is None:
                return
            yield chunk

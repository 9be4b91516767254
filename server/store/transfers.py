"""A tenant's blob transfers through the API, bounded and charged before they cost (issue 25, items
4 and 8): each holds a lease in Redis (tenant:<t>:uploads or tenant:<t>:downloads, sorted sets
lease id -> expiry), at most max_concurrent_uploads and max_concurrent_downloads at once. An upload's
lease also reserves its declared size in the tenant's stored-bytes account (account.py) as the
member upload:<id>, before any of its bytes is stored: commit turns the reservation into the blob
(blobs.COMMIT_BLOB), the upload's end (refused, stalled, disconnected) releases it with its chunks.

A lease expires unless its transfer renews it as bytes move (every quarter of its life at most): an
API server killed mid-transfer frees its leases, reservations (released as expired members of the
account) and upload chunks (which expire with the lease) by themselves."""
from __future__ import annotations

import time
import uuid
from typing import List, Tuple

import redis.asyncio as aioredis

from .account import ACCOUNT_LUA, account_keys
from .keys import tenant_key

PIECE_BYTES = 1 << 20  # what a transfer moves between the API and Redis at a time: what the API holds of it
LEASE_MARGIN_S = 5  # a lease outlives the stall that closes its transfer by this much (and twice the stall)

# take_lease: the transfer's lease, unless the tenant has `most` live ones; expired ones are dropped
LEASES_LUA = """
local function take_lease(leases, now, expiry, most, id)
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  local count = redis.call('ZCARD', leases)
  if count >= most then return count end
  redis.call('ZADD', leases, expiry, id)
  return nil
end
"""

# KEYS: leases, the account (account_keys), the tenant's active jobs hash.
# ARGV: now, expiry, most, lease id, account member, declared size, cap, digest.
# Returns {'uploads', live uploads} or {'stored', the tenant's stored bytes} (refused), or {'reserved', stored after}.
# The account counts as in blobs.COMMIT_BLOB: a blob already stored under `digest` is replaced, and
# the bytes the tenant's active jobs reserved for their outputs count as stored.
RESERVE_UPLOAD = ACCOUNT_LUA + LEASES_LUA + """
local now, expiry, size, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[6]), tonumber(ARGV[7])
release_expired(KEYS[2], KEYS[3], KEYS[4], now)
local total = tonumber(redis.call('GET', KEYS[4]) or '0') - tonumber(redis.call('HGET', KEYS[3], ARGV[8]) or '0')
for _, b in ipairs(redis.call('HVALS', KEYS[5])) do total = total + tonumber(b) end
if total + size > cap then return {'stored', total} end
local live = take_lease(KEYS[1], now, expiry, tonumber(ARGV[3]), ARGV[4])
if live then return {'uploads', live} end
redis.call('ZADD', KEYS[2], expiry, ARGV[5])
redis.call('HSET', KEYS[3], ARGV[5], size)
redis.call('INCRBY', KEYS[4], size)
return {'reserved', total + size}
"""

# KEYS: leases, the account's expiries, the upload's chunks so far. ARGV: lease id, member, expiry, its ms.
# Returns 0 if the reservation was released or a chunk expired meanwhile (the lease expired: the
# server stalled).
RENEW_UPLOAD = """
if not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 0 end
for i = 3, #KEYS do
  if redis.call('PEXPIREAT', KEYS[i], ARGV[4]) == 0 then return 0 end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', ARGV[3], ARGV[2])
return 1
"""

# KEYS: an upload's chunk. ARGV: the piece's offset in it, the chunk's size, the lease's expiry (ms),
# the piece. A chunk takes its whole room with its first piece (grown piece by piece, Redis would
# copy it over and over) and expires with the lease. Returns 0 if the chunk expired since (the lease
# went unrenewed: the server stalled): the piece is not written into a new, zero-filled chunk. On a
# full Redis, the OOM error itself, as a plain SETRANGE's (redis.call's would come back as the
# script's error; Redis 6's pcall puts the script's line before it).
WRITE_PIECE = """
local function as_is(reply)
  if type(reply) ~= 'table' then return reply end
  return {err = string.gsub(reply.err, '^@user_script:%s*%d+:%s*%-', '')}
end
local offset = tonumber(ARGV[1])
if offset == 0 then
  local room = redis.pcall('SETRANGE', KEYS[1], tonumber(ARGV[2]) - 1, string.char(0))
  if type(room) ~= 'number' then return as_is(room) end
  redis.call('PEXPIREAT', KEYS[1], ARGV[3])
elseif redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
return as_is(redis.pcall('SETRANGE', KEYS[1], offset, ARGV[4]))
"""

# KEYS: leases, the account, the upload's chunks. ARGV: lease id, member. Whatever the upload still
# holds (after a commit: only its lease). Deletions first: on a full Redis a script may go on
# writing once it has written (DECRBY alone would be refused as a write that may grow memory).
END_UPLOAD = """
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
local size = redis.call('HGET', KEYS[3], ARGV[2])
if size then
  redis.call('HDEL', KEYS[3], ARGV[2])
  redis.call('DECRBY', KEYS[4], size)
end
"""

# KEYS: leases. ARGV: now, expiry, most, lease id. Returns the live downloads if refused, else nil.
# A download's start in one round trip. KEYS: leases, the blob's size key, its first chunk.
# ARGV: now, expiry, most, lease id, the first piece's bytes. Returns {} (no such blob), {live}
# (refused: the tenant's live downloads) or {size, the first piece} (its lease taken).
OPEN_DOWNLOAD = LEASES_LUA + """
local size = redis.call('GET', KEYS[2])
if not size then return {} end
local live = take_lease(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
if live then return {live} end
return {size, redis.call('GETRANGE', KEYS[3], 0, tonumber(ARGV[5]) - 1)}
"""


def lease_seconds(stall_s: float) -> float:
    """How long a lease lives unrenewed: a live transfer renews it before, a stalled one is closed before."""
    return 2 * stall_s + LEASE_MARGIN_S


class Lease:
    """One transfer's hold: its id, and when it expires (wall clock, as the account's expiries)."""

    def __init__(self, tenant: str, kind: str, stall_s: float):
        self.id = uuid.uuid4().hex
        self.leases = tenant_key(tenant, kind)
        self.seconds = lease_seconds(stall_s)
        self.expiry, self.renewed = 0.0, 0.0

    def extend(self) -> float:
        """The next expiry, from now."""
        self.renewed = time.monotonic()
        self.expiry = time.time() + self.seconds
        return self.expiry

    @property
    def due(self) -> bool:
        return time.monotonic() - self.renewed >= self.seconds / 4


class Transfers:
    """The leases' scripts, on the API's connection."""

    def __init__(self, connection: aioredis.Redis):
        self.connection = connection
        self._reserve = connection.register_script(RESERVE_UPLOAD)
        self._renew_upload = connection.register_script(RENEW_UPLOAD)
        self._write_piece = connection.register_script(WRITE_PIECE)
        self._end_upload = connection.register_script(END_UPLOAD)
        self._open_download = connection.register_script(OPEN_DOWNLOAD)

    async def reserve_upload(self, lease: Lease, tenant: str, digest: str, size: int, limits) -> Tuple[str, int]:
        """The upload's lease and reservation, or the refusal: ("uploads", the tenant's live uploads)
        or ("stored", its stored bytes); ("reserved", its stored bytes with this upload's)."""
        keys = [lease.leases, *account_keys(tenant), tenant_key(tenant, "active")]
        args = [time.time(), lease.extend(), limits.max_concurrent_uploads, lease.id, upload_member(lease),
                size, limits.max_stored_bytes, digest]
        verdict, figure = await self._reserve(keys=keys, args=args)
        return verdict.decode(), int(figure)

    async def renew_upload(self, lease: Lease, tenant: str, chunks: List[str]) -> bool:
        """Extend the upload's lease, reservation and chunks; False if its reservation was lost."""
        expiry = lease.extend()
        keys = [lease.leases, account_keys(tenant)[0], *chunks]
        return bool(await self._renew_upload(keys=keys, args=[lease.id, upload_member(lease), expiry,
                                                                int(expiry * 1000)]))

    async def write_piece(self, lease: Lease, chunk: str, offset: int, chunk_size: int, piece: bytes) -> bool:
        """Write an upload's piece into its chunk; False if the chunk expired since its first piece
        (OutOfMemoryError if Redis is full)."""
        return bool(await self._write_piece(keys=[chunk], args=[offset, chunk_size, int(lease.expiry * 1000), piece]))

    async def end_upload(self, lease: Lease, tenant: str, chunks: List[str]) -> None:
        await self._end_upload(keys=[lease.leases, *account_keys(tenant), *chunks],
                               args=[lease.id, upload_member(lease)])

    async def open_download(self, lease: Lease, size_key: str, first_chunk: str, limits) -> List:
        """OPEN_DOWNLOAD's answer: [] (no such blob), [live downloads] (refused) or [size, first piece]."""
        return await self._open_download(keys=[lease.leases, size_key, first_chunk],
                                         args=[time.time(), lease.extend(), limits.max_concurrent_downloads, lease.id,
                                               PIECE_BYTES])

    async def renew_download(self, lease: Lease) -> None:
        await self.connection.zadd(lease.leases, {lease.id: lease.extend()}, xx=True)

    async def end_download(self, lease: Lease) -> None:
        await self.connection.zrem(lease.leases, lease.id)


def upload_member(lease: Lease) -> str:
    """The upload's reservation in its tenant's account."""
    return f"upload:{lease.id}"

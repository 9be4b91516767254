"""A job's tensors in the broker, never whole in its memory: each streams to the run jail from where
it is (an uploaded blob's chunks in Redis, the submission's inline bytes, zeros), and what the
kernel wrote streams back into Redis as the job's output, framing.PIECE_BYTES at a time, hashed as
it comes (its digest names the blob). An output that fails on its way (Redis full, the jail gone,
the job failed after) leaves none of its chunks behind.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import mmap
import uuid
from typing import Any, Callable, Dict, Iterator, Optional

import numpy as np
import redis

from ...compiler.errors import KernelError, Kind
from ...compiler.sandbox.framing import PIECE_BYTES, Sink, Streamed
from ...compiler.sandbox.tensors import BrokerTensor
from ...compiler.settings import ServiceSettings
from ...launch_checks import storage_dtype
from ..store.blobs import BLOB_CHUNK_BYTES, COMMIT_BLOB, blob_chunks, commit_blob_args
from ..store.jobs import INLINE_BYTES
from ..store.keys import blob_chunk_key, upload_key

ZEROS = memoryview(bytes(PIECE_BYTES))

Pieces = Callable[[], Iterator[memoryview]]


def expired(name: str) -> KernelError:
    return KernelError(f"the input of '{name}' expired before the job ran: submit again", kind=Kind.BAD_REQUEST)


def zeros(nbytes: int) -> Pieces:
    def pieces():
        for start in range(0, nbytes, PIECE_BYTES):
            yield ZEROS[:min(PIECE_BYTES, nbytes - start)]
    return pieces


def inline(data: bytes) -> Pieces:
    view = memoryview(data)
    return lambda: (view[start:start + PIECE_BYTES] for start in range(0, len(view), PIECE_BYTES))


def blob(connection: redis.Redis, tenant: str, digest: str, size: int, name: str) -> Pieces:
    """An uploaded blob's bytes, read from its chunks a piece at a time (GETRANGE)."""
    def pieces():
        for index in range(blob_chunks(size)):
            key = blob_chunk_key(tenant, digest, index)
            chunk_bytes = min(BLOB_CHUNK_BYTES, size - index * BLOB_CHUNK_BYTES)
            for start in range(0, chunk_bytes, PIECE_BYTES):
                end = min(start + PIECE_BYTES, chunk_bytes)
                piece = connection.getrange(key, start, end - 1)
                if len(piece) != end - start:
                    raise expired(name)  # while the job ran
                yield memoryview(piece)
    return pieces


class Output:
    """The kernel's written copy of a tensor on its way to Redis: kept in the record if small, else
    appended to an upload's chunks (the blob layout: BLOB_CHUNK_BYTES a key), a blob once
    committed, its chunks deleted if discarded. A sink (framing.Sink)."""

    def __init__(self, connection: redis.Redis, settings: ServiceSettings, nbytes: int):
        self.connection, self.ttl_s, self.nbytes = connection, settings.blob_ttl_s, nbytes
        self.hash = hashlib.sha256()
        self.received = 0
        self.inline = bytearray() if nbytes <= INLINE_BYTES else None
        self.upload_id = uuid.uuid4().hex
        self.chunks = 0  # upload chunk keys written to, whole or in part
        self.committed = False

    def __call__(self, piece: memoryview) -> None:
        self.hash.update(piece)
        if self.inline is not None:
            self.inline += piece
            self.received += len(piece)
            return
        while piece:
            index, offset = divmod(self.received, BLOB_CHUNK_BYTES)
            part, piece = piece[:BLOB_CHUNK_BYTES - offset], piece[BLOB_CHUNK_BYTES - offset:]
            key = upload_key(self.upload_id, index)
            # a full Redis's refusal goes up as it is: the job fails with `limit` (job._redis_failed)
            if offset == 0:
                self.chunks = index + 1  # counted before the write: a write that fails part way is deleted too
                self.connection.set(key, part, ex=self.ttl_s)
            else:
                self.connection.append(key, part)
            self.received += len(part)

    def commit(self, tenant: str, described: Dict[str, Any]) -> Dict[str, Any]:
        """The job record's entry for it (`described`: its dtype and shape): inline, or the blob it
        becomes, accounted to the tenant (never refused: its bytes were reserved at admission)."""
        if self.received != self.nbytes:
            raise KernelError("an output came back short", kind=Kind.RUNTIME_ERROR)
        if self.inline is not None:
            return {"data": base64.b64encode(self.inline).decode(), **described}
        digest = self.hash.hexdigest()
        keys, args = commit_blob_args(tenant, digest, self.upload_id, self.nbytes, self.ttl_s, -1)
        self.connection.eval(COMMIT_BLOB, len(keys), *keys, *args)
        self.committed = True
        return {"blob": digest, **described}

    def discard(self) -> None:
        """Delete what was written of it; if Redis is away, the chunks expire by themselves."""
        if self.chunks and not self.committed:
            with contextlib.suppress(redis.RedisError):
                self.connection.delete(*(upload_key(self.upload_id, i) for i in range(self.chunks)))
            self.chunks = 0


class Digest:
    """A sink that only hashes: a benchmark repeat's output, compared with the first run's."""

    def __init__(self):
        self.hash = hashlib.sha256()

    def __call__(self, piece: memoryview) -> None:
        self.hash.update(piece)


class JobTensor(BrokerTensor):
    """A tensor argument of a job. Every launch is sent it from its source (a benchmark's repeats
    start from the same inputs); the first launch's written copy is the output (`output`), a
    repeat's is only hashed (`repeat`)."""

    def __init__(self, name: str, dtype: str, shape, pieces: Pieces, connection: redis.Redis,
                 settings: ServiceSettings):
        # dtype: what the job names it; self.dtype: the numpy dtype it is held in (bfloat16: its bits)
        self.name, self.declared, self.dtype, self.shape = name, dtype, storage_dtype(dtype), tuple(shape)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.pieces, self.connection, self.settings = pieces, connection, settings
        self.output: Optional[Output] = None
        self.repeat: Optional[Digest] = None

    def frame(self) -> Streamed:
        return Streamed(self.nbytes, self.pieces)

    def receive(self) -> Sink:
        if self.output is None:
            self.output = Output(self.connection, self.settings, self.nbytes)
            return self.output
        self.repeat = Digest()
        return self.repeat

    def array(self) -> np.ndarray:
        """The whole tensor in memory, for a runner that takes arrays (CANN's device process): an
        anonymous mapping, filled from its source."""
        data = memoryview(mmap.mmap(-1, self.nbytes)) if self.nbytes else memoryview(bytearray())
        at = 0
        for piece in self.pieces():
            data[at:at + len(piece)] = piece
            at += len(piece)
        return np.frombuffer(data, dtype=self.dtype).reshape(self.shape)

    def received(self, array: np.ndarray) -> None:
        """A runner that takes arrays wrote `array`: its bytes go out as a streamed copy's would."""
        sink, flat = self.receive(), memoryview(np.ascontiguousarray(array)).cast("B")
        for start in range(0, len(flat), PIECE_BYTES):
            sink(flat[start:start + PIECE_BYTES])

    def commit(self, tenant: str) -> Dict[str, Any]:
        """Its output (the kernel wrote it) as the job record says it."""
        return self.output.commit(tenant, {"dtype": self.declared, "shape": list(self.shape)})

    def repeat_differs(self) -> bool:
        """Whether a benchmark's last repeat wrote other bytes than its first run."""
        return self.repeat is not None and self.output is not None \
            and self.repeat.hash.digest() != self.output.hash.digest()

    def discard(self) -> None:
        if self.output is not None:
            self.output.discard()

"""The broker's pipes to a jail, both sides: frames of an 8-byte big-endian length then that many
bytes. A message is its frame count (8 bytes), a JSON header frame, then byte frames (artifacts,
tensors). Nothing is ever pickled. Every read is capped, and with a deadline a jail that stops
reading or writing cannot block the broker past it.

The broker moves tensors piece by piece (PIECE_BYTES at most in its hands at a time): a frame it
writes may be a Streamed (its length, then pieces from a source), and read_streamed hands each byte
frame of an answer to a sink as it arrives. On the wire a frame is a frame: the jail's side reads
and writes whole frames as before.
"""
from __future__ import annotations

import json
import mmap
import os
import selectors
import time
from typing import Callable, Dict, Iterable, List, Sequence, Tuple

LENGTH = 8
MAX_HEADER_BYTES = 16 << 20
MAX_BLOB_BYTES = 2 << 30
MAX_FRAMES = 4096
BIG_FRAME_BYTES = 1 << 20  # frames from this size are read into an anonymous mapping
PIECE_BYTES = 8 << 20  # what the broker holds of a tensor at a time, on its way in or out of a jail


class Streamed:
    """A frame of `size` bytes written piece by piece: `pieces()` gives them (each at most
    PIECE_BYTES). A source that gives more or fewer bytes than it said breaks off the message
    (ValueError): the frame's length is on the wire already."""

    def __init__(self, size: int, pieces: Callable[[], Iterable[bytes]]):
        self.size, self.pieces = size, pieces

    def __len__(self) -> int:
        return self.size


# a sink takes a byte frame of an answer piece by piece (each piece valid only during the call)
Sink = Callable[[memoryview], None]


def write_message(fd: int, header: Dict, blobs: Sequence[bytes] = (), deadline: float | None = None) -> None:
    write_frames(fd, [json.dumps(header).encode(), *blobs], deadline)


def write_frames(fd: int, frames: Sequence[bytes], deadline: float | None = None) -> None:
    write_all(fd, len(frames).to_bytes(LENGTH, "big"), deadline)
    for frame in frames:
        write_all(fd, len(frame).to_bytes(LENGTH, "big"), deadline)
        if isinstance(frame, Streamed):
            _write_streamed(fd, frame, deadline)
        else:
            write_all(fd, frame, deadline)


def _write_streamed(fd: int, frame: Streamed, deadline: float | None) -> None:
    left = frame.size
    for piece in frame.pieces():
        if len(piece) > left:
            raise ValueError(f"a streamed frame gave more than its {frame.size} bytes")
        write_all(fd, piece, deadline)
        left -= len(piece)
    if left:
        raise ValueError(f"a streamed frame gave {frame.size - left} of its {frame.size} bytes")


def read_frames(fd: int, deadline: float | None = None, cap: int = MAX_BLOB_BYTES) -> List[bytes]:
    """One message's frames, unparsed. Raises EOFError if the other side closed, TimeoutError
    past `deadline` (time.monotonic), ValueError over the caps (`cap`: the whole message's bytes)."""
    count = int.from_bytes(_read_exact(fd, LENGTH, deadline), "big")
    if not 1 <= count <= MAX_FRAMES:
        raise ValueError(f"a message of {count} frames")
    frames = []
    for _ in range(count):
        frames.append(_read_frame(fd, cap, deadline))
        cap -= len(frames[-1])
    return frames


def parse_message(frames: Sequence[bytes]) -> Tuple[Dict, List[bytes]]:
    if len(frames[0]) > MAX_HEADER_BYTES:
        raise ValueError("a header over its cap")
    try:
        header = json.loads(bytes(frames[0]))
    except RecursionError:  # nested past the parser's depth: as malformed as any other bad header
        raise ValueError("a header nested too deep") from None
    if not isinstance(header, dict):
        raise ValueError("a header that is not an object")
    return header, list(frames[1:])


def read_message(fd: int, deadline: float | None = None, cap: int = MAX_BLOB_BYTES) -> Tuple[Dict, List[bytes]]:
    return parse_message(read_frames(fd, deadline, cap))


def read_streamed(fd: int, sink_for: Callable[[Dict, int, int], Sink], deadline: float | None = None,
                  cap: int = MAX_BLOB_BYTES) -> Dict:
    """One message read as read_message reads it, but its byte frames are never whole in memory:
    frame i (after the header) of n bytes goes to `sink_for(header, i, n)` in pieces of at most
    PIECE_BYTES, read into one buffer. Returns the header. The same errors as read_frames, and
    whatever a sink raises (the message is then left half read: the caller closes the pipe)."""
    count = int.from_bytes(_read_exact(fd, LENGTH, deadline), "big")
    if not 1 <= count <= MAX_FRAMES:
        raise ValueError(f"a message of {count} frames")
    header_frame = _read_frame(fd, min(cap, MAX_HEADER_BYTES), deadline)
    header, _ = parse_message([header_frame])
    cap -= len(header_frame)
    buffer = None
    for index in range(count - 1):
        size = int.from_bytes(_read_exact(fd, LENGTH, deadline), "big")
        if size > cap:
            raise ValueError(f"a frame of {size} bytes is over the cap of {cap}")
        cap -= size
        sink = sink_for(header, index, size)
        buffer = buffer or memoryview(bytearray(PIECE_BYTES))
        while size:
            piece = buffer[:min(size, PIECE_BYTES)]
            _read_into(fd, piece, deadline)
            sink(piece)
            size -= len(piece)
    return header



def write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """With a deadline, a jail that stops reading cannot block the broker past it."""
    view = memoryview(data)
    if deadline is not None:
        os.set_blocking(fd, False)  # the broker's own end: a write takes what the pipe has room for
    while view:
        if deadline is not None:
            _wait(fd, selectors.EVENT_WRITE, deadline)
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            pass


def _read_frame(fd: int, cap: int, deadline: float | None) -> bytes:
    size = int.from_bytes(_read_exact(fd, LENGTH, deadline), "big")
    if size > cap:
        raise ValueError(f"a frame of {size} bytes is over the cap of {cap}")
    return _read_exact(fd, size, deadline)


def _read_exact(fd: int, size: int, deadline: float | None) -> memoryview:
    """Read into one buffer of the final size. A big one is an anonymous mapping: its pages are
    first touched inside readv, without the GIL (zero-filling or copying 1 GiB under the GIL
    starves the job's heartbeat thread for seconds)."""
    # private: a zygote's child that writes into a request's pages does not write into the zygote's
    view = memoryview(bytearray(size) if size < BIG_FRAME_BYTES else mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE))
    _read_into(fd, view, deadline)
    return view


def _read_into(fd: int, view: memoryview, deadline: float | None) -> None:
    done = 0
    while done < len(view):
        if deadline is not None:
            _wait(fd, selectors.EVENT_READ, deadline)
        got = os.readv(fd, [view[done:done + (1 << 20)]])
        if not got:
            raise EOFError("the other side closed its pipe")
        done += got


def _wait(fd: int, event: int, deadline: float) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, event)
        if not selector.select(max(0.0, deadline - time.monotonic())):
            raise TimeoutError


def frames_of(data: bytes) -> List[bytes]:
    """The frames of one message held in `data` (a zygote child's answer, relayed as bytes)."""
    count, pos, frames = int.from_bytes(data[:LENGTH], "big"), LENGTH, []
    if not 1 <= count <= MAX_FRAMES:
        raise ValueError(f"a message of {count} frames")
    for _ in range(count):
        size = int.from_bytes(data[pos:pos + LENGTH], "big")
        pos += LENGTH
        if pos + size > len(data):
            raise ValueError("a truncated message")
        frames.append(data[pos:pos + size])
        pos += size
    return frames


"""A tensor as the broker moves it to and from a run jail (JailedRunners): sent as one frame,
written back by the kernel as one frame read piece by piece into a sink (framing.Streamed,
framing.read_streamed). A numpy array is one (ArrayTensor); the worker's tensors stream from and to
Redis and are never whole in its memory (server/workers/tensors.py)."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from .framing import Sink, Streamed


class BrokerTensor:
    dtype: np.dtype
    shape: Tuple[int, ...]
    nbytes: int

    def frame(self) -> "Streamed | memoryview":
        """Its bytes, as the jail gets them."""
        raise NotImplementedError

    def receive(self) -> Sink:
        """Where the kernel's written copy of it goes, piece by piece, in order (nbytes in all)."""
        raise NotImplementedError


class ArrayTensor(BrokerTensor):
    """A numpy array: sent as it is (no copy), written back in place."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.dtype, self.shape, self.nbytes = array.dtype, array.shape, array.nbytes

    def frame(self) -> memoryview:
        return memoryview(np.ascontiguousarray(self.array)).cast("B")

    def receive(self) -> Sink:
        flat = self.array.reshape(-1).view(np.uint8)
        at = [0]

        def sink(piece: memoryview) -> None:
            flat[at[0]:at[0] + len(piece)] = np.frombuffer(piece, np.uint8)
            at[0] += len(piece)
        return sink

"""Caches of the pipeline: a bytes store by key. Workers share one in Redis; run_local keeps one on disk."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from collections import OrderedDict
from typing import Optional, Protocol

from .settings import ClientSettings


class Cache(Protocol):
    def get(self, key: str) -> Optional[bytes]: ...

    def put(self, key: str, value: bytes) -> None: ...


class DiskCache:
    """One file per key; written to a temporary name and renamed, so a reader never sees half an entry."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    @classmethod
    def default(cls) -> "DiskCache":
        return cls(ClientSettings.from_env().cache_dir)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> Optional[bytes]:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def put(self, key: str, value: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(value)
        os.replace(tmp, path)


class MemoryCache:
    """A bounded in-process LRU in front of another cache. Entries are content-keyed (a key names
    exactly one value), so a copy held here is never stale: a worker's cached launch then skips
    the round trips and the transfer of the Ascend C and the binary. Single-threaded use."""

    def __init__(self, backing: Cache, max_bytes: int):
        self.backing = backing
        self.max_bytes = max_bytes
        self.entries: "OrderedDict[str, bytes]" = OrderedDict()
        self.size = 0

    def get(self, key: str) -> Optional[bytes]:
        value = self.entries.get(key)
        if value is not None:
            self.entries.move_to_end(key)
            return value
        value = self.backing.get(key)
        if value is not None:
            self._keep(key, value)
        return value

    def put(self, key: str, value: bytes) -> None:
        self.backing.put(key, value)
        self._keep(key, value)

    def _keep(self, key: str, value: bytes) -> None:
        if len(value) > self.max_bytes or key in self.entries:
            return
        self.entries[key] = value
        self.size += len(value)
        while self.size > self.max_bytes:
            _, dropped = self.entries.popitem(last=False)
            self.size -= len(dropped)

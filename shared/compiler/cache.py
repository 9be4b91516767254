"""Caches of the pipeline: a bytes store by key. Workers share one in Redis; run_local keeps one on disk."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional, Protocol


class Cache(Protocol):
    def get(self, key: str) -> Optional[bytes]: ...

    def put(self, key: str, value: bytes) -> None: ...


class DiskCache:
    """One file per key; written to a temporary name and renamed, so a reader never sees half an entry."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    @classmethod
    def default(cls) -> "DiskCache":
        root = os.environ.get("ASCRUN_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                          Path.home() / ".cache") / "ascrun"
        return cls(root)

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

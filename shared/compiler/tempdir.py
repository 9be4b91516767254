"""This user's folder in the system temp dir, for what ascrun compiles and loads: code that gets
linked into kernels or loaded into the process must not come from a place another user can write."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import BuildError


def private_temp_dir() -> Path:
    return _own_folder(f"ascrun-{os.getuid()}", 0o700, 0o077,
                       f"private to this user (mode 700, owned by uid {os.getuid()})")


def runtime_temp_dir() -> Path:
    """Where the prebuilt runtime lives: built from ascrun's own sources by this user, so nobody
    else may write it, but readable by all, for the build jails (uid 65534 under a root worker)."""
    return _own_folder(f"ascrun-runtime-{os.getuid()}", 0o755, 0o022,
                       f"only this user can write (owned by uid {os.getuid()}, not group- or world-writable)")


def _own_folder(name: str, mode: int, forbidden: int, what: str) -> Path:
    """The folder `name` in the system temp dir, made with `mode`; refused unless it is a folder
    of this user with none of the `forbidden` mode bits."""
    folder = Path(tempfile.gettempdir()) / name
    folder.mkdir(mode=mode, exist_ok=True)
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & forbidden:
        raise BuildError(f"{folder} is not a folder {what}: remove it, ascrun makes it anew")
    return folder

"""This user's folder in the system temp dir, for what ascrun compiles and loads: code that gets
linked into kernels or loaded into the process must not come from a place another user can write."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import BuildError


def private_temp_dir() -> Path:
    folder = Path(tempfile.gettempdir()) / f"ascrun-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise BuildError(f"{folder} is not a folder private to this user (mode 700, owned by uid {os.getuid()}): "
                         "remove it, ascrun makes it anew")
    return folder

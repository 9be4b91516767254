"""Stand-in for pyasc's asc.lib: its `runtime` and `host` (the Matmul host tiling) modules."""
from ascrun.compat.script import MissingName, not_in_standin

from . import host, runtime  # noqa: F401


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.lib.{name}"))

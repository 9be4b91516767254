"""Stand-in for pyasc's asc.lib: only its `runtime` module."""
from ascrun.script import MissingName, not_in_standin

from . import runtime  # noqa: F401


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.lib.{name}"))

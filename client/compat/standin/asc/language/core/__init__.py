"""Stand-in for pyasc's asc.language.core: only its `dtype` and `struct` modules."""
from ascrun.compat.script import MissingName, not_in_standin

from . import dtype, struct  # noqa: F401


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.language.core.{name}"))

"""Stand-in for pyasc's asc.language: only `core.dtype` and `core.struct`, which host code uses to
build Struct kernel arguments, and `adv`'s tiling structs."""
from ascrun.compat.script import MissingName, not_in_standin

from . import adv, core  # noqa: F401


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.language.{name}"))

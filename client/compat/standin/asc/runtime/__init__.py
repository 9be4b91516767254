"""Stand-in for pyasc's asc.runtime: only its `config` module."""
from ascrun.compat.script import MissingName, not_in_standin

from . import config  # noqa: F401 - `asc.runtime.config` works after `import asc`, as in pyasc


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.runtime.{name}"))

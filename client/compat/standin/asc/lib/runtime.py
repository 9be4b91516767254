"""Stand-in for pyasc's asc.lib.runtime: the stream a launch names (meaningless remotely)."""
from ascrun.compat.script import MissingName, active, not_in_standin


def current_stream():
    return active().current_stream()


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.lib.runtime.{name}"))

"""The targets: every name a job may ask for, and the plug-in that serves it.

A target is a folder here (cpu/, cann/) whose package holds a contract.Target: a toolchain
(Ascend C -> artifact) and a runner (artifact + buffers -> written buffers, timings, log), as
Triton's backends pair a compiler with a driver. A new target is a new folder and a row of
REGISTRY. The CLI's choices, the API's schema, /v1/targets and the docs all read NAMES. Importing
this package imports no target (the API server has no pyasc and no CANN); `load` does, and says
why a host cannot serve one.
"""
from __future__ import annotations

import functools
from importlib import import_module
from typing import TYPE_CHECKING, Dict, NamedTuple, Sequence

from ..errors import KernelError

if TYPE_CHECKING:
    from .contract import Target

class Entry(NamedTuple):
    plugin: str  # module:class
    description: str  # what it runs on


REGISTRY: Dict[str, Entry] = {
    "cpu": Entry("ascrun.compiler.targets.cpu:CpuTarget",
                 "the Ascend C pyasc emits, on this host's CPU, against ascrun's Ascend C runtime (no CANN)"),
    "sim": Entry("ascrun.compiler.targets.cann:SimTarget",
                 "CANN's camodel simulator (bisheng build, pyasc's launcher)"),
    "npu": Entry("ascrun.compiler.targets.cann:NpuTarget", "an Ascend NPU (bisheng build, pyasc's launcher)"),
}
NAMES = tuple(REGISTRY)


def check_name(name: str) -> str:
    if name not in REGISTRY:
        raise KernelError(f"unknown target '{name}': choose one of {', '.join(NAMES)}", kind="bad_request")
    return name


def plugin(name: str) -> "type[Target]":
    module, _, cls = REGISTRY[check_name(name)].plugin.partition(":")
    return getattr(import_module(module), cls)


@functools.lru_cache(maxsize=None)
def load(name: str) -> "Target":
    """The plug-in for `name`, run in this process, one per process (so loaded artifacts are
    reused). KernelError kind unavailable if this host cannot serve it (no CANN, no device)."""
    return plugin(name)()


def jailed(name: str, limits: Dict[str, int], runs: bool = True, socs: Sequence[str] = ()) -> "Target":
    """The plug-in for `name` with its build and run in jails under `limits` (a worker's). `runs`
    False: a build-only worker's, which needs no device (a CANN one builds for its one SOC in `socs`)."""
    return plugin(name)(limits, runs=runs, socs=tuple(socs))

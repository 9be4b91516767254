"""What runs inside a jail: `main(stage, limits)`, the one dispatch of every jailed Python stage
(bwrap.python_command starts it). Each stage applies its rlimits and seccomp filter (confine.py)
before it reads a request, and talks to the broker only over stdin/stdout (framing.py).

A stage is named `<name>[:<arguments>]`; STAGES says which function serves each name, as
"module:function", so that this module imports no stage (nor the stages this package):
- frontend: the pyasc zygote (frontend.py);
- run: a cpu runner for one tenant's jobs (targets/cpu/jailed.py);
- cann-build:<soc>, device:<backend>:<soc>:<sync ms>: the CANN targets' build and device process.
"""
from __future__ import annotations

import json
import os
import sys
from importlib import import_module

STDIN, STDOUT, STDERR = 0, 1, 2
# What the broker sends is bounded by the tenant's limits, not by a jail's reply caps: a launch's
# tensors (several of up to max_blob_bytes) arrive in one message.
BROKER_REQUEST_CAP = 1 << 62

STAGES = {
    "frontend": "ascrun.compiler.sandbox.frontend:serve",
    "run": "ascrun.compiler.targets.cpu.jailed:serve",
    "cann-build": "ascrun.compiler.targets.cann.jailed:serve_build",
    "device": "ascrun.compiler.targets.cann.device:serve_jailed",
}


def announce_ready() -> None:
    """Tell the broker the stage is ready, and from then on write stderr to no one. Until then the
    broker keeps it, to say why a stage that died at start died (only our code and pyasc's have
    run); from then on it could carry a tenant's data."""
    from .framing import write_message
    os.dup2(_devnull, STDERR)  # before the broker hears of it: it may look at once
    os.close(_devnull)  # a stage holds no fd but its three
    write_message(STDOUT, {"ready": True})


_devnull = -1  # opened before the stage confines itself


def main(stage: str, limits_json: str) -> None:
    """Serve `stage` with `limits` (memory, cpu, files); its arguments follow its name."""
    name, *arguments = stage.split(":")
    if name not in STAGES:
        sys.exit(f"unknown stage {stage!r}")
    global _devnull
    _devnull = os.open(os.devnull, os.O_WRONLY)
    module, _, function = STAGES[name].partition(":")
    getattr(import_module(module), function)(json.loads(limits_json), *arguments)

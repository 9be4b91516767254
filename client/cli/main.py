"""The `ascrun` command: its parser, assembled from each command's module, and the exit codes of
the client commands' errors (ascrun.compiler.errors.KINDS says each kind's).

  ascrun up | server | worker                        the service's processes (stack.py)
  ascrun exec SCRIPT.py                              a pyasc script, its launches on the service (exec_script.py)
  ascrun launch | bench FILE.py::KERNEL              one kernel (launch.py, bench.py)
  ascrun jobs | show | trace                         the jobs (jobs.py)
  ascrun targets                                     the live pool (targets.py)
  ascrun token NAME                                  a new token and its tenants file entry (token.py)

A new command is a module here with an `add_parser`, called below.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import metadata
from typing import List, Optional

from ..compiler.errors import EXIT_USAGE, KernelError, exit_code
from . import bench, exec_script, jobs, launch, stack, targets, token
from .common import EXIT_CODES, EXIT_PIPE_CLOSED, UsageError, parent_parsers


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ascrun", description="Compile and run pyasc kernels without an NPU.",
                                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=installed_versions())
    sub = parser.add_subparsers(dest="command", required=True)
    stack.add_parsers(sub)
    common, launching = parent_parsers()
    exec_script.add_parser(sub, common, launching)
    launch.add_parser(sub, common, launching)
    bench.add_parser(sub, common, launching)
    jobs.add_parsers(sub, common)
    targets.add_parser(sub, common)
    token.add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    opts = build_parser().parse_args(argv)
    try:
        code = run(opts) if getattr(opts, "client_command", False) else opts.func(opts)
        sys.stdout.flush()  # a reader gone is met here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        return stdout_closed()


def stdout_closed() -> int:
    """The reader of stdout went away (`ascrun jobs | head -1`): the rest is dropped quietly, as a
    tool killed by SIGPIPE drops it, and the exit code says so (EXIT_PIPE_CLOSED)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush at exit goes nowhere, not to a traceback
    return EXIT_PIPE_CLOSED


def installed_versions() -> str:
    """ascrun's version, and pyasc's where it is installed (a thin client has none)."""
    said = f"ascrun {metadata.version('ascrun')}"
    for pyasc in ("pyasc", "pyasc-dev"):  # the release, or the nightly's distribution
        try:
            return f"{said} (pyasc {metadata.version(pyasc)})"
        except metadata.PackageNotFoundError:
            continue
    return f"{said} (pyasc not installed: the service compiles)"


def run(opts: argparse.Namespace) -> int:
    """Run a client command; errors become a message on stderr and the documented exit code."""
    try:
        return opts.func(opts)
    except UsageError as e:
        error, code = {"kind": "usage", "message": str(e)}, EXIT_USAGE
    except KernelError as e:
        error, code = {"kind": e.kind, "message": str(e)}, exit_code(e)
    print(f"ascrun: {error['kind']}: {error['message']}", file=sys.stderr)
    if opts.json:
        print(json.dumps({"error": error}))
    return code

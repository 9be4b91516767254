"""The `ascrun` command: its parser, assembled from each command's module, and the exit codes of
the client commands' errors (ascrun.compiler.errors.KINDS says each kind's).

  ascrun up | server | worker                        the service's processes (stack.py)
  ascrun exec SCRIPT.py                              a pyasc script, its launches on the service (exec_script.py)
  ascrun launch | bench FILE.py::KERNEL              one kernel (launch.py, bench.py)
  ascrun jobs | show | trace                         the jobs (jobs.py)
  ascrun targets                                     the live pool (targets.py)

A new command is a module here with an `add_parser`, called below.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from ..compiler.errors import EXIT_USAGE, KernelError, exit_code
from . import bench, exec_script, jobs, launch, stack, targets
from .common import EXIT_CODES, UsageError, parent_parsers


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="ascrun", description="Compile and run pyasc kernels without an NPU.",
                                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    stack.add_parsers(sub)
    common, launching = parent_parsers()
    exec_script.add_parser(sub, common, launching)
    launch.add_parser(sub, common, launching)
    bench.add_parser(sub, common, launching)
    jobs.add_parsers(sub, common)
    targets.add_parser(sub, common)
    opts = parser.parse_args(argv)
    return run(opts) if getattr(opts, "client_command", False) else opts.func(opts)


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

"""What the client commands (exec, launch, bench, jobs, show, trace, targets) share: their options,
the client they open, how they print a result, and the exit codes they document.

On a terminal (and with rich installed, the `cli` extra) launches show their progress on
stderr; otherwise nothing is shown but the result, and `--json` makes stdout machine-readable.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Sequence, Tuple

from ..compat.script import RemoteLaunches
from ..compiler.errors import EXIT_KERNEL, EXIT_OK
from ..compiler.settings import ClientSettings
from ..compiler.targets import NAMES as TARGETS
from ..compiler.targets.contract import BOUNDS, HAZARDS
from ..service.client import Client

EXIT_CODES = """exit codes:
  0  success
  1  kernel failure: an assert (or other error) in the script, or a kernel that did not bundle,
     compile, build or run (bundle_rejected, compile_error, build_error, runtime_error); with
     --compare, also outputs that differ between the two targets
  2  usage error or bad request (bad arguments, unknown job, unauthorized, over a limit,
     a pyasc name the stand-in lacks where pyasc is not installed)
  3  service unavailable, or timeout
  141  stdout closed before ascrun was done writing (e.g. `| head -1`): the rest is dropped, as by SIGPIPE"""
EXIT_PIPE_CLOSED = 128 + 13  # a shell's code for a process SIGPIPE killed


class UsageError(Exception):
    """Arguments the command cannot use: exit code 2 (EXIT_USAGE)."""


def parent_parsers() -> Tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The options of every client command (the service, the token, --json), and those of the
    commands that launch kernels (exec, launch, bench)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help="the service (default: $ASCRUN_URL, else http://127.0.0.1:8000)")
    common.add_argument("--token", default=ClientSettings.from_env().token,
                        help="bearer token (default: $ASCRUN_TOKEN)")
    common.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    common.add_argument("--retries", type=int, default=6, help="tries again when the service is briefly away")
    launching = argparse.ArgumentParser(add_help=False)
    launching.add_argument("--target", choices=TARGETS,
                           help="run every launch here (exec's default: from the script's backend, cpu while the "
                                "pool has no sim/npu worker; launch's: cpu)")
    launching.add_argument("--soc", help="run every launch on a worker serving this SOC, e.g. Ascend910B1 (exec's "
                                         "default on sim/npu: the script's config.set_platform SOC, its -v)")
    launching.add_argument("--timeout", type=float, help="seconds a job may run (default: the service's)")
    launching.add_argument("--bounds", choices=BOUNDS, default="fault",
                           help="fault (default): an access out of its operand fails the launch; warn: one the device "
                                "would perform silently (past a tensor argument, past a LocalTensor inside the "
                                "Unified Buffer) is a warning and the run goes on")
    launching.add_argument("--hazards", choices=HAZARDS, default="warn",
                           help="cpu target: races between a core's pipes (MTE2, V, MTE3, ...) that no "
                                "SetFlag/WaitFlag orders are warnings (warn, default), fail the launch (fault) or "
                                "go unchecked (off)")
    launching.add_argument("--compare", choices=TARGETS, metavar="TARGET",
                           help="run every launch on TARGET too and diff the outputs (integers exactly, floats "
                                "within a tolerance per dtype); the script gets --target's outputs; differing "
                                "outputs make the exit code 1")
    return common, launching


def add_no_model(parser: argparse.ArgumentParser) -> None:
    """--no-model, of the commands that launch (exec, launch): bench's cycle gates need the model."""
    parser.add_argument("--no-model", dest="model", action="store_false",
                        help="cpu target: no modeled timeline (no cycles in the result, no trace), for a faster run")


def add_command(sub: Any, name: str, func: Callable[[argparse.Namespace], int], help: str,
                parents: Sequence[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """A client command's parser; main.run runs `func` and turns its errors into exit codes."""
    parser = sub.add_parser(name, help=help, description=help, parents=list(parents), epilog=EXIT_CODES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(func=func, client_command=True)
    return parser


def client_for(opts: argparse.Namespace) -> Client:
    return Client(opts.url, token=opts.token, retries=opts.retries)


def emit(opts: argparse.Namespace, data: Any, text: str) -> None:
    """The command's result on stdout: `data` as JSON with --json, else `text`."""
    print(json.dumps(data) if opts.json else text)


def compared_code(session: RemoteLaunches, code: int) -> int:
    """`code`, unless it is success and --compare found outputs that differ: then 1, said on stderr."""
    mismatched = [launch.kernel for launch in session.launches if launch.mismatched]
    if code != EXIT_OK or not mismatched:
        return code
    print(f"ascrun: --compare {session.compare}: the outputs of {', '.join(mismatched)} differ", file=sys.stderr)
    return EXIT_KERNEL

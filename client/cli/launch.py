"""`ascrun launch FILE.py::KERNEL --cores N --arg NAME=VALUE ... --out NAME=FILE.npy`: one kernel of a
file launched on the service with arguments from the command line (`ascrun bench` takes them too)."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..compat.script import QuietProgress, RemoteLaunches, install
from ..compiler.bundle import collect
from ..compiler.errors import EXIT_OK, KernelError, exit_code
from ..compiler.frontend import param_names
from .common import UsageError, add_command, add_no_model, client_for, compared_code, emit
from .progress import progress_for


def add_kernel_arguments(parser: argparse.ArgumentParser, out_help: str) -> None:
    """FILE.py::KERNEL, --cores, --arg and --out (launch, bench)."""
    parser.add_argument("kernel", metavar="FILE.py::KERNEL")
    parser.add_argument("--cores", type=int, required=True, help="core_num of the launch")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a kernel argument: NAME=@FILE.npy (a tensor), NAME=2048, NAME=0.5, NAME=true")
    parser.add_argument("--out", action="append", default=[], metavar="NAME=FILE.npy", help=out_help)


def add_parser(sub: Any, common: argparse.ArgumentParser, launching: argparse.ArgumentParser) -> None:
    parser = add_command(sub, "launch", cmd_launch, "launch one kernel of a file with arguments from the command line",
                         (common, launching))
    add_no_model(parser)
    add_kernel_arguments(parser, "save tensor argument NAME after the launch")


def _load_kernel(spec: str) -> Any:
    file, sep, name = spec.rpartition("::")
    path = Path(file)
    if not sep or not name:
        raise UsageError(f"KERNEL must be FILE.py::NAME, not {spec!r}")
    if not path.is_file():
        raise UsageError(f"no kernel file {file}")
    module_name = f"ascrun_kernels_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path.resolve())
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.resolve().parent))
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:  # the user's file: its error in one line, as a compiler says one
        raise UsageError(import_error(e, file)) from None
    kernel = getattr(module, name, None)
    if not hasattr(kernel, "fn"):
        raise UsageError(f"{file} has no @asc.jit function {name}")
    return kernel


def import_error(error: Exception, file: str) -> str:
    """`file:line: Error: message` for an error importing the kernel file `file`: its line in that
    file (the file as the user named it), not a traceback through ascrun's and the libraries'."""
    mine = Path(file).resolve()
    if isinstance(error, SyntaxError):
        where, line, column, message = error.filename or file, error.lineno, error.offset, error.msg
    else:
        frames = traceback.extract_tb(error.__traceback__)
        frame = next((f for f in reversed(frames) if Path(f.filename).resolve() == mine), frames[-1])
        where, line, column, message = frame.filename, frame.lineno, None, str(error)
    if Path(where).resolve() == mine:
        where = file
    place = ":".join(str(part) for part in (where, line, column) if part)
    return f"{place}: {type(error).__name__}: {message}"


def _value(text: str) -> Any:
    """@FILE.npy -> its array; else an int, a float, true/false, or (for ConstExpr[str]) the text."""
    if text.startswith("@"):
        try:
            return np.load(text[1:], allow_pickle=False)
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read {text[1:]}: {e}") from None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def _pairs(items: List[str], option: str) -> Dict[str, str]:
    pairs = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{option} takes NAME=VALUE, not {item!r}")
        pairs[name] = value
    return pairs


def kernel_arguments(opts: argparse.Namespace) -> Tuple[Any, List[str], Dict[str, Any], Dict[str, str]]:
    """`FILE.py::KERNEL` with its `--arg NAME=VALUE`s and `--out NAME=FILE.npy`s (launch, bench):
    the kernel, its parameter names, their values and the outputs to save; UsageError if they do
    not fit the kernel. Run with the launch redirection installed (the file may `import asc`)."""
    kernel = _load_kernel(opts.kernel)
    params = param_names(collect(kernel))
    values = {name: _value(text) for name, text in _pairs(opts.arg, "--arg").items()}
    outs = _pairs(opts.out, "--out")
    unknown = [n for n in [*values, *outs] if n not in params]
    missing = [n for n in params if n not in values]
    if unknown or missing:
        raise UsageError(f"kernel {kernel.fn.__name__}({', '.join(params)}): " + "; ".join(
            ([f"no parameter {', '.join(unknown)}"] if unknown else [])
            + ([f"missing --arg {', '.join(missing)}"] if missing else [])))
    scalars = [n for n in outs if not isinstance(values[n], np.ndarray)]
    if scalars:
        raise UsageError(f"--out {', '.join(scalars)}: only tensor arguments (@FILE.npy) can be written")
    return kernel, params, values, outs


def launch_once(opts: argparse.Namespace, session: RemoteLaunches,
                progress: Any) -> Tuple[Optional[int], Dict[str, Any], Dict[str, str]]:
    """The kernel `opts` names launched once in `session`: (None, its values, its --out files), or
    the exit code of its failure (said on stderr, and as JSON with --json) in place of None."""
    uninstall = install(session)
    try:
        kernel, params, values, outs = kernel_arguments(opts)
        try:
            session.launch(kernel, opts.cores, *(values[name] for name in params))
        except KernelError as e:
            print(f"ascrun: {session.launches[-1].summary()}", file=sys.stderr)
            if opts.json:
                print(json.dumps(session.launches[-1].to_json()))
            return exit_code(e), values, outs
    finally:
        uninstall()
        progress.close()
    return None, values, outs


def cmd_launch(opts: argparse.Namespace) -> int:
    progress = QuietProgress() if opts.json else progress_for(sys.stderr, summaries=False)
    with client_for(opts) as client:
        session = RemoteLaunches(client, target=opts.target or "cpu", timeout=opts.timeout, progress=progress,
                                 bounds=opts.bounds, echo=not opts.json, soc=opts.soc, compare=opts.compare,
                                 hazards=opts.hazards, model=opts.model)
        failed, values, outs = launch_once(opts, session, progress)
    if failed is not None:
        return failed
    launch = session.launches[-1]
    for name, path in outs.items():
        np.save(path, values[name])  # written back in place by the launch
    report = dict(launch.to_json(), outputs={n: {"dtype": values[n].dtype.name, "shape": list(values[n].shape),
                                                 "file": p} for n, p in outs.items()})
    emit(opts, report, "\n".join([launch.summary()] + [
        f"{n}: {values[n].dtype.name}{list(values[n].shape)} -> {p}" for n, p in outs.items()]))
    return compared_code(session, EXIT_OK)

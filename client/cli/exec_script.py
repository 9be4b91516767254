"""`ascrun exec SCRIPT.py -- ARGS`: a pyasc script run unmodified, each of its kernel launches a job
on the service (compat/script.py redirects them), its outputs written back for the script's asserts."""
from __future__ import annotations

import argparse
import contextlib
import json
import runpy
import sys
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..compat import npu_host
from ..compat.script import QuietProgress, RemoteLaunches, install, standin_gap
from ..compiler.errors import EXIT_KERNEL, EXIT_OK, EXIT_USAGE, KernelError, exit_code
from .common import UsageError, add_command, add_no_model, client_for, compared_code
from .progress import progress_for

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the ascrun package: its frames are not the user's


def add_parser(sub: Any, common: argparse.ArgumentParser, launching: argparse.ArgumentParser) -> None:
    parser = add_command(sub, "exec", cmd_exec, "run a pyasc script unmodified, its kernel launches on the service",
                         (common, launching))
    add_no_model(parser)
    parser.add_argument("--no-npu-host", action="store_true", help=npu_host.OPTION_HELP)
    parser.add_argument("script", metavar="SCRIPT.py")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="-- SCRIPT_ARGS")


def cmd_exec(opts: argparse.Namespace) -> int:
    script = Path(opts.script)
    if not script.is_file():
        raise UsageError(f"no script {opts.script}")
    args = opts.script_args[1:] if opts.script_args[:1] == ["--"] else opts.script_args
    progress = QuietProgress() if opts.json else progress_for(sys.stderr)
    with client_for(opts) as client:
        session = RemoteLaunches(client, target=opts.target, timeout=opts.timeout, progress=progress,
                                 bounds=opts.bounds, echo=True, soc=opts.soc, compare=opts.compare,
                                 hazards=opts.hazards, model=opts.model)
        uninstall = install(session, npu_is_host=not opts.no_npu_host)
        try:
            # with --json, stdout carries only ascrun's report: the script's prints go to stderr
            with contextlib.redirect_stdout(sys.stderr) if opts.json else contextlib.nullcontext():
                code, error = _run_script(script, args)
        finally:
            uninstall()
            progress.close()
    code = compared_code(session, code)
    if opts.json:
        print(json.dumps({"script": str(script), "exit_code": code, "backend": session.backend,
                          "platform": session.platform, "launches": [launch.to_json() for launch in session.launches],
                          "error": error}))
    return code


def _is_ours(filename: str) -> bool:
    return filename.startswith("<frozen ") or Path(filename).resolve().is_relative_to(PACKAGE_DIR)


def _user_traceback(error: BaseException):
    """The traceback from its first frame outside ascrun and runpy: the user's own code."""
    tb = error.__traceback__
    while tb is not None and _is_ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _run_script(path: Path, args: List[str]) -> Tuple[int, Optional[Dict[str, str]]]:
    """Run `path` as __main__ (as `python path args` would); its exit code and error, if any."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    try:
        runpy.run_path(str(path.resolve()), run_name="__main__")
        return EXIT_OK, None
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or EXIT_OK, None
        print(e.code, file=sys.stderr)
        return EXIT_KERNEL, {"kind": "exit", "message": str(e.code)}
    except KernelError as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if not _is_ours(f.filename)]
        where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        print(f"ascrun: launch{where} failed: {e.kind}: {e}", file=sys.stderr)
        return exit_code(e), {"kind": e.kind, "message": str(e)}
    except Exception as e:
        gap = standin_gap(e)
        if gap:
            print(f"ascrun: {gap}", file=sys.stderr)
            return EXIT_USAGE, {"kind": "not_in_standin", "message": gap}
        traceback.print_exception(type(e), e, _user_traceback(e))
        return EXIT_KERNEL, {"kind": type(e).__name__, "message": str(e)}
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path

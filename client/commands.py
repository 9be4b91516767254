"""The client side of the `ascrun` command: exec, launch, bench (bench_cli.py), jobs, show, trace, targets.

On a terminal (and with rich installed, the `cli` extra) launches show their progress on
stderr; otherwise nothing is shown but the result, and `--json` makes stdout machine-readable.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import runpy
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import npu_host
from .bench import describe as describe_benchmark
from .client import Client
from .compiler.bundle import collect
from .compiler.errors import KernelError
from .compiler.frontend import param_names
from .compiler.targets import NAMES as TARGETS
from .compiler.targets.contract import BOUNDS, HAZARDS
from .progress import QuietProgress, progress_for
from .script import RemoteLaunches, install, standin_gap

EXIT_OK, EXIT_KERNEL, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 1, 2, 3
EXIT_CODES = """exit codes:
  0  success
  1  kernel failure: an assert (or other error) in the script, or a kernel that did not bundle,
     compile, build or run (bundle_rejected, compile_error, build_error, runtime_error); with
     --compare, also outputs that differ between the two targets
  2  usage error or bad request (bad arguments, unknown job, unauthorized, over a limit,
     a pyasc name the stand-in lacks where pyasc is not installed)
  3  service unavailable, or timeout"""
KIND_EXITS = {"bad_request": EXIT_USAGE, "not_found": EXIT_USAGE, "unauthorized": EXIT_USAGE, "limit": EXIT_USAGE,
              "unavailable": EXIT_UNAVAILABLE, "timeout": EXIT_UNAVAILABLE}
PACKAGE_DIR = Path(__file__).resolve().parent


class UsageError(Exception):
    pass


def exit_code(error: KernelError) -> int:
    return KIND_EXITS.get(error.kind, EXIT_KERNEL)


def _client(opts: argparse.Namespace) -> Client:
    return Client(opts.url, token=opts.token, retries=opts.retries)


def _emit(opts: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data) if opts.json else text)


def _compared_code(session: RemoteLaunches, code: int) -> int:
    """`code`, unless it is success and --compare found outputs that differ: then 1, said on stderr."""
    mismatched = [launch.kernel for launch in session.launches if launch.mismatched]
    if code != EXIT_OK or not mismatched:
        return code
    print(f"ascrun: --compare {session.compare}: the outputs of {', '.join(mismatched)} differ", file=sys.stderr)
    return EXIT_KERNEL


# -- exec ----------------------------------------------------------------------------------------

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


def cmd_exec(opts: argparse.Namespace) -> int:
    script = Path(opts.script)
    if not script.is_file():
        raise UsageError(f"no script {opts.script}")
    args = opts.script_args[1:] if opts.script_args[:1] == ["--"] else opts.script_args
    progress = QuietProgress() if opts.json else progress_for(sys.stderr)
    with _client(opts) as client:
        session = RemoteLaunches(client, target=opts.target, timeout=opts.timeout, progress=progress,
                                 bounds=opts.bounds, echo=True, soc=opts.soc, compare=opts.compare,
                                 hazards=opts.hazards)
        uninstall = install(session, npu_is_host=not opts.no_npu_host)
        try:
            # with --json, stdout carries only ascrun's report: the script's prints go to stderr
            with contextlib.redirect_stdout(sys.stderr) if opts.json else contextlib.nullcontext():
                code, error = _run_script(script, args)
        finally:
            uninstall()
            progress.close()
    code = _compared_code(session, code)
    if opts.json:
        print(json.dumps({"script": str(script), "exit_code": code, "backend": session.backend,
                          "platform": session.platform, "launches": [launch.to_json() for launch in session.launches],
                          "error": error}))
    return code


# -- launch --------------------------------------------------------------------------------------

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
    module_spec.loader.exec_module(module)
    kernel = getattr(module, name, None)
    if not hasattr(kernel, "fn"):
        raise UsageError(f"{file} has no @asc.jit function {name}")
    return kernel


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


def cmd_launch(opts: argparse.Namespace) -> int:
    progress = QuietProgress() if opts.json else progress_for(sys.stderr, summaries=False)
    with _client(opts) as client:
        session = RemoteLaunches(client, target=opts.target or "cpu", timeout=opts.timeout, progress=progress,
                                 bounds=opts.bounds, echo=not opts.json, soc=opts.soc, compare=opts.compare,
                                 hazards=opts.hazards)
        uninstall = install(session)
        try:
            kernel, params, values, outs = kernel_arguments(opts)
            try:
                session.launch(kernel, opts.cores, *(values[name] for name in params))
            except KernelError as e:
                print(f"ascrun: {session.launches[-1].summary()}", file=sys.stderr)
                if opts.json:
                    print(json.dumps(session.launches[-1].to_json()))
                return exit_code(e)
        finally:
            uninstall()
            progress.close()
    launch = session.launches[-1]
    for name, path in outs.items():
        np.save(path, values[name])  # written back in place by the launch
    report = dict(launch.to_json(), outputs={n: {"dtype": values[n].dtype.name, "shape": list(values[n].shape),
                                                 "file": p} for n, p in outs.items()})
    _emit(opts, report, "\n".join([launch.summary()] + [
        f"{n}: {values[n].dtype.name}{list(values[n].shape)} -> {p}" for n, p in outs.items()]))
    return _compared_code(session, EXIT_OK)


# -- jobs, show, targets -------------------------------------------------------------------------

def _when(stamp: Optional[float]) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else "-"


def cmd_jobs(opts: argparse.Namespace) -> int:
    with _client(opts) as client:
        jobs = client.jobs(limit=opts.limit)
    rows = [f"{'JOB':32}  {'KERNEL':24} {'TARGET':6} {'CORES':>5}  {'STATUS':9} {'CREATED':19} {'SECONDS':>8}  ERROR"]
    for job in jobs:
        took = f"{job['ended_at'] - job['created_at']:.2f}" if job.get("ended_at") else "-"
        error = (job.get("error") or {}).get("kind", "")
        rows.append(f"{job['id']:32}  {job['kernel'][:24]:24} {job['target']:6} {job['core_num']:>5}  "
                    f"{job['status']:9} {_when(job['created_at']):19} {took:>8}  {error}")
    _emit(opts, {"jobs": jobs}, "\n".join(rows))
    return EXIT_OK


def cmd_show(opts: argparse.Namespace) -> int:
    with _client(opts) as client:
        job = client.job(opts.job)
        if opts.source:
            print(client.source(opts.job), end="")
            return EXIT_OK
    lines = [f"job       {job['id']}", f"kernel    {job['kernel']} x{job['core_num']} on {job['target']}",
             f"status    {job['status']}" + (f" (worker {job['worker']})" if job.get("worker") else ""),
             f"created   {_when(job['created_at'])}"]
    if job.get("bounds", "fault") != "fault":
        lines.append(f"bounds    {job['bounds']}")
    if job.get("hazards", "warn") != "warn":
        lines.append(f"hazards   {job['hazards']}")
    if job.get("timings"):
        lines.append("timings   " + ", ".join(f"{k} {v:.3f} s" for k, v in job["timings"].items()))
    if len({s["worker"] for s in (job.get("stages") or {}).values()}) > 1:  # a compile/run split
        lines.append("stages    " + ", ".join(f"{k} on {s['worker']} ({s['seconds']:.3f} s)"
                                              for k, s in job["stages"].items()))
    if job.get("cache"):
        lines.append("cache     " + ", ".join(f"{k} {v}" for k, v in job["cache"].items()))
    if job.get("ir_hash"):
        lines.append(f"ir_hash   {job['ir_hash']}")
    if job.get("model"):
        lines += model_lines(job["model"])
    if job.get("benchmark"):
        lines.append(f"benchmark {describe_benchmark(job['benchmark'])}")
    for name, ref in (job.get("outputs") or {}).items():
        lines.append(f"output    {name}: {ref['dtype']}{ref['shape']}")
    lines += [f"warning   {w}" for w in job.get("warnings") or []]
    if job.get("error"):
        lines.append(f"error     {job['error']['kind']}: {job['error']['message']}")
    if job.get("log"):
        lines += ["log", job["log"].rstrip("\n")]
    _emit(opts, job, "\n".join(lines))
    return EXIT_OK


MODEL_CORES_SHOWN = 8


def model_lines(model: Dict[str, Any]) -> List[str]:
    """The modeled timeline: the slowest core's cycles, then a line per core (busy and critical
    path cycles per pipe), at most MODEL_CORES_SHOWN of them."""
    lines = [f"model     {model['cycles']} cycles (slowest core) at {model['clock_ghz']:g} GHz = "
             f"{model['cycles'] / model['clock_ghz'] / 1000:.2f} us; `ascrun trace` for the timeline"]
    cores = model.get("cores") or []
    for core in cores[:MODEL_CORES_SHOWN]:
        busy = " ".join(f"{pipe} {n}" for pipe, n in core.get("busy", {}).items())
        path = " ".join(f"{pipe} {n}" for pipe, n in core.get("critical_path", {}).items())
        lines.append(f"  {core['core']}: {core['cycles']} cycles, {core['instructions']} instructions; "
                     f"busy {busy or '-'}; critical path {path or '-'}")
    more = max(0, len(cores) - MODEL_CORES_SHOWN) + model.get("unlisted_cores", 0)  # some the service left out
    if more:
        lines.append(f"  ... {more} more")
    return lines


def cmd_trace(opts: argparse.Namespace) -> int:
    with _client(opts) as client:
        trace = client.trace(opts.job)
    if opts.output in (None, "-"):
        sys.stdout.write(trace)
        sys.stdout.write("\n")
    else:
        Path(opts.output).write_text(trace)
    return EXIT_OK


def cmd_targets(opts: argparse.Namespace) -> int:
    with _client(opts) as client:
        targets = client.targets()
    _emit(opts, {"targets": targets}, "\n".join(targets_table(targets)))
    return EXIT_OK


def targets_table(targets: List[Dict[str, Any]]) -> List[str]:
    """The live pool: a line per target (workers, by SOC, queue), a line per live worker."""
    lines = [f"{'target':8} {'workers':>7}  {'queued':>6}  {'oldest':>7}  socs"]
    for t in targets:
        oldest = "-" if t["oldest_queued_s"] is None else f"{t['oldest_queued_s']:.1f}s"
        socs = ", ".join(f"{soc} ({n})" for soc, n in sorted(t["socs"].items())) or "-"
        lines.append(f"{t['name']:8} {t['workers']:>7}  {t['queued']:>6}  {oldest:>7}  {socs}")
        for w in t["live"]:
            lines.append(f"  {w['name']}: {' + '.join(w.get('stages') or ['build', 'run'])}; "
                         f"socs {', '.join(w['socs']) or '-'}; kernel types "
                         f"{', '.join(w['kernel_types']) or '-'}; cores {w.get('cores') or '-'}; "
                         f"pyasc {w.get('pyasc') or '-'}; CANN {w.get('cann') or '-'}")
    return lines


# -- the parsers ---------------------------------------------------------------------------------

def add_parsers(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help="the service (default: $ASCRUN_URL, else http://127.0.0.1:8000)")
    common.add_argument("--token", default=os.environ.get("ASCRUN_TOKEN"), help="bearer token (default: $ASCRUN_TOKEN)")
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

    def add(name: str, func, help: str, parents=(common,)) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help, description=help, parents=list(parents), epilog=EXIT_CODES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.set_defaults(func=func, client_command=True)
        return parser

    exec_ = add("exec", cmd_exec, "run a pyasc script unmodified, its kernel launches on the service",
                (common, launching))
    exec_.add_argument("--no-npu-host", action="store_true", help=npu_host.OPTION_HELP)
    exec_.add_argument("script", metavar="SCRIPT.py")
    exec_.add_argument("script_args", nargs=argparse.REMAINDER, metavar="-- SCRIPT_ARGS")
    launch = add("launch", cmd_launch, "launch one kernel of a file with arguments from the command line",
                 (common, launching))
    launch.add_argument("kernel", metavar="FILE.py::KERNEL")
    launch.add_argument("--cores", type=int, required=True, help="core_num of the launch")
    launch.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a kernel argument: NAME=@FILE.npy (a tensor), NAME=2048, NAME=0.5, NAME=true")
    launch.add_argument("--out", action="append", default=[], metavar="NAME=FILE.npy",
                        help="save tensor argument NAME after the launch")
    from . import bench_cli  # `ascrun bench` (imports this module)
    bench_cli.add_parser(add, common, launching)
    jobs = add("jobs", cmd_jobs, "list this token's recent jobs, newest first")
    jobs.add_argument("--limit", type=int, default=20)
    show = add("show", cmd_show, "a job's status, timings, cache, warnings, error and what the kernel printed")
    show.add_argument("job", metavar="JOB")
    show.add_argument("--source", action="store_true", help="print the Ascend C that pyasc generated instead")
    trace = add("trace", cmd_trace, "a finished cpu job's modeled per-pipe timeline as Chrome/Perfetto trace JSON "
                                    "(open it in https://ui.perfetto.dev or chrome://tracing)")
    trace.add_argument("job", metavar="JOB")
    trace.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (default: stdout)")
    add("targets", cmd_targets, "the live pool: workers per target and SOC, what they run, queue depth")


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

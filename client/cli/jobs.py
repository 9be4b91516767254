"""`ascrun jobs | show | trace`: the token's recent jobs, one job's record (or its Ascend C), and a cpu
job's modeled timeline as trace JSON."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..bench import describe as describe_benchmark
from ..compiler.errors import EXIT_OK
from .common import add_command, client_for, emit


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    jobs = add_command(sub, "jobs", cmd_jobs, "list this token's recent jobs, newest first", (common,))
    jobs.add_argument("--limit", type=int, default=20, help="at most this many jobs (default 20)")
    show = add_command(sub, "show", cmd_show, "a job's status, timings, cache, warnings, error and what the kernel "
                                              "printed", (common,))
    show.add_argument("job", metavar="JOB")
    show.add_argument("--source", action="store_true", help="print the Ascend C that pyasc generated instead")
    trace = add_command(sub, "trace", cmd_trace, "a finished cpu job's modeled per-pipe timeline as Chrome/Perfetto "
                                                 "trace JSON (open it in https://ui.perfetto.dev or chrome://tracing)",
                        (common,))
    trace.add_argument("job", metavar="JOB")
    trace.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (default: stdout)")


def _when(stamp: Optional[float]) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else "-"


def cmd_jobs(opts: argparse.Namespace) -> int:
    with client_for(opts) as client:
        jobs = client.jobs(limit=opts.limit)
    rows = [f"{'JOB':32}  {'KERNEL':24} {'TARGET':6} {'CORES':>5}  {'STATUS':9} {'CREATED':19} {'SECONDS':>8}  ERROR"]
    for job in jobs:
        took = f"{job['ended_at'] - job['created_at']:.2f}" if job.get("ended_at") else "-"
        error = (job.get("error") or {}).get("kind", "")
        rows.append(f"{job['id']:32}  {job['kernel'][:24]:24} {job['target']:6} {job['core_num']:>5}  "
                    f"{job['status']:9} {_when(job['created_at']):19} {took:>8}  {error}")
    emit(opts, {"jobs": jobs}, "\n".join(rows))
    return EXIT_OK


def cmd_show(opts: argparse.Namespace) -> int:
    with client_for(opts) as client:
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
    emit(opts, job, "\n".join(lines))
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
    with client_for(opts) as client:
        trace = client.trace(opts.job)
    if opts.output in (None, "-"):
        sys.stdout.write(trace)
        sys.stdout.write("\n")
    else:
        Path(opts.output).write_text(trace)
    return EXIT_OK

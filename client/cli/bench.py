"""`ascrun bench FILE.py::KERNEL`: one kernel benchmarked in one job, with CI gates on its cycles.

    ascrun bench kernels.py::vadd --cores 8 --arg x=@x.npy --arg y=@y.npy --arg z=@z.npy --arg n=2048 \
        --max-cycles 40000 --baseline bench.json --tolerance 2%

Arguments and policies (--hazards, --bounds) as `ascrun launch` takes them, and a failed launch
says so and exits as launch does; the statistics go to stdout (--json: one document); a failed
gate is exit code 1 with a message on stderr naming the kernel, its cycles, the limit or baseline
and by how much. A run with hazard findings passes no gate and records no baseline (its modeled
cycles time a race), nor does one whose hazards were not checked record one.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict

import numpy as np

from ..bench import Gates, GateFailed, from_record, parse_tolerance, policy_json
from ..compat.script import QuietProgress, RemoteLaunches
from ..compiler import benchmark
from ..compiler.errors import EXIT_KERNEL, EXIT_OK
from .common import EXIT_CODES, UsageError, add_command, client_for, emit
from .launch import add_kernel_arguments, launch_once
from .progress import progress_for


def _percentage(text: str) -> float:
    try:
        return parse_tolerance(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(sub: Any, common: argparse.ArgumentParser, launching: argparse.ArgumentParser) -> None:
    parser = add_command(sub, "bench", cmd_bench, "benchmark one kernel of a file: warm-up and repeats in one job, "
                                                  "their statistics and modeled cycles; CI gates on the cycles",
                         (common, launching))
    parser.epilog = EXIT_CODES + "\n  bench: a failed gate (--max-cycles, --baseline) is 1 too"
    add_kernel_arguments(parser, "save tensor argument NAME as the last repeat left it")
    policy = parser.add_argument_group("when to stop (the first rule met; unset: the service's defaults)")
    default = benchmark.Policy()
    policy.add_argument("--warmup", type=int, help=f"untimed runs first (default {default.warmup})")
    policy.add_argument("--min-repeats", type=int,
                        help=f"repeats before the relative-error rule may stop (default {default.min_repeats})")
    policy.add_argument("--max-repeats", type=int, help=f"at most this many repeats (default {default.max_repeats})")
    policy.add_argument("--target-rel-error", type=_percentage, metavar="PCT",
                        help=f"stop once stderr/mean is at or under this, e.g. 1%% or 0.01 (default "
                             f"{default.target_rel_error * 100:g}%%)")
    policy.add_argument("--budget", type=float, metavar="SECONDS",
                        help=f"stop once this much time is spent (default {default.budget_seconds:g}, at most half "
                             "the job's timeout; one given must be under it)")
    gates = parser.add_argument_group("CI gates on the modeled cycles (cpu target; exit code 1 when one fails)")
    gates.add_argument("--max-cycles", type=int, metavar="N", help="fail when the modeled cycles exceed N")
    gates.add_argument("--baseline", metavar="FILE.json",
                       help="fail when the cycles regress from the kernel's entry in FILE beyond --tolerance")
    gates.add_argument("--tolerance", type=_percentage, default=0.0, metavar="PCT",
                       help="regression allowed against --baseline, e.g. 2%% (default 0: cpu cycles are exact)")
    gates.add_argument("--update-baseline", action="store_true",
                       help="write (or refresh) the kernel's entry in --baseline instead of comparing")
    gates.add_argument("--key", help="the baseline entry's name (default: the kernel's name)")


class _Measuring:
    """What a session asks of its benchmark launches (compat/script.py): their policy, and each
    launch's Benchmark from its job's record (gates are checked after, by cmd_bench)."""

    def __init__(self, policy: Dict[str, Any]):
        self.policy = policy

    def checked(self, launch: Any, record: Dict[str, Any]) -> Any:
        launch.benchmark = from_record(record, launch.result)
        return launch.benchmark


def cmd_bench(opts: argparse.Namespace) -> int:
    if opts.compare:
        raise UsageError("bench does not take --compare: benchmark each target on its own")
    if opts.update_baseline and not opts.baseline:
        raise UsageError("--update-baseline needs --baseline FILE")
    gates = Gates(max_cycles=opts.max_cycles, baseline=opts.baseline, tolerance=opts.tolerance,
                  update=opts.update_baseline)
    policy = policy_json(warmup=opts.warmup, min_repeats=opts.min_repeats, max_repeats=opts.max_repeats,
                         target_rel_error=opts.target_rel_error, budget_seconds=opts.budget)
    progress = QuietProgress() if opts.json else progress_for(sys.stderr, summaries=False)
    with client_for(opts) as client:
        # launched as `ascrun launch` launches (its hazards, bounds, warnings and failure), as one benchmark job
        session = RemoteLaunches(client, target=opts.target or "cpu", timeout=opts.timeout, progress=progress,
                                 bounds=opts.bounds, echo=not opts.json, soc=opts.soc, hazards=opts.hazards)
        session.benchmark = _Measuring(policy)
        failed, values, outs = launch_once(opts, session, progress)
    if failed is not None:
        return failed
    launch = session.launches[-1]
    bench = launch.benchmark
    for name, path in outs.items():
        np.save(path, values[name])
    code, failures, notes = EXIT_OK, [], []
    try:
        notes = gates.enforce(bench, opts.key)
    except GateFailed as e:
        code, failures = EXIT_KERNEL, str(e).splitlines()
    report: Dict[str, Any] = dict(bench.to_json(), warnings=launch.warnings,
                                  gates={"failed": failures, "passed": notes})
    emit(opts, report, "\n".join([f"job {bench.job_id}: {bench.summary()}"] + [f"gate: {note}" for note in notes]))
    for failure in failures:
        print(f"ascrun: gate failed: {failure}", file=sys.stderr)
    return code

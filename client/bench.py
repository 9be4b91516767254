"""Benchmarks: a launch repeated in one job (compiler/benchmark.py), its statistics, and CI gates on
the modeled cycles.

    bench = ascrun.benchmark_local(kernel, 8, x, y, z, n)        # in this process
    bench = client.benchmark(kernel, 8, x, y, z, n)               # on the service, one job
    bench.median, bench.stderr, bench.cycles, bench.stopped_by    # the figures
    Gates(max_cycles=40_000, baseline="bench.json", tolerance=0.02).enforce(bench)   # raises GateFailed

The gates compare the cpu target's modeled cycles: exact and the same on every machine, so a gate
never flakes on a shared CI host. A baseline file is small JSON keyed by kernel (or any key).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from .compiler import benchmark
from .compiler.cache import Cache
from .compiler.errors import KernelError, Kind
from .local import launch_here
from .result import LaunchResult

BASELINE_FORMAT = 1
POLICY_KEYS = ("warmup", "min_repeats", "max_repeats", "target_rel_error", "budget_seconds")


def policy_json(**settings: Any) -> Dict[str, Any]:
    """A job's `benchmark` object: the settings given (None: the service's default), checked here."""
    given = {k: v for k, v in settings.items() if v is not None}
    benchmark.Policy.from_json(given)  # KernelError bad_request before anything is sent
    return given


@dataclass
class Benchmark:
    """A benchmark's outcome. Seconds are per repeat: the launch's wall time on cpu (`measure`
    "wall"), the device's kernel time on sim/npu ("kernel"). std is the sample deviation (None
    with one repeat), stderr = std/sqrt(repeats), rel_error = stderr/mean. `cycles`: the cpu
    target's modeled cycles of the slowest core (None elsewhere); `hazards`: the hazard check's
    findings in a run (cpu; None where nothing checked them). `result`: the last repeat's
    LaunchResult (its outputs were also copied into the caller's arrays)."""
    kernel: str
    target: str
    core_num: int
    mean: float
    std: Optional[float]
    stderr: Optional[float]
    rel_error: Optional[float]
    median: float
    min: float
    max: float
    repeats: int
    warmup: int
    stopped_by: str  # target_rel_error, max_repeats or budget
    measure: str
    cycles: Optional[int]
    clock_ghz: Optional[float]
    samples: List[float]
    seconds: float  # the whole benchmark, warm-up included
    policy: Dict[str, Any]
    result: LaunchResult = field(repr=False)
    hazards: Optional[int] = None

    @property
    def job_id(self) -> Optional[str]:
        return self.result.job_id

    @classmethod
    def from_json(cls, kernel: str, target: str, core_num: int, data: Dict[str, Any],
                  result: LaunchResult) -> "Benchmark":
        """From a job record's `benchmark` (Measured.to_json)."""
        stats = data["statistics"]
        return cls(kernel=kernel, target=target, core_num=core_num, mean=stats["mean"], std=stats["std"],
                   stderr=stats["stderr"], rel_error=stats["rel_error"], median=stats["median"], min=stats["min"],
                   max=stats["max"], repeats=data["repeats"], warmup=data["warmup"], stopped_by=data["stopped_by"],
                   measure=data["measure"], cycles=data.get("cycles"), clock_ghz=data.get("clock_ghz"),
                   samples=list(data.get("samples") or []), seconds=data.get("seconds", 0.0),
                   policy=dict(data.get("policy") or {}), result=result, hazards=data.get("hazards"))

    def to_json(self) -> Dict[str, Any]:
        return {"kernel": self.kernel, "target": self.target, "core_num": self.core_num, "job_id": self.job_id,
                "statistics": {"n": self.repeats, "mean": self.mean, "std": self.std, "stderr": self.stderr,
                               "rel_error": self.rel_error, "median": self.median, "min": self.min, "max": self.max},
                "repeats": self.repeats, "warmup": self.warmup, "stopped_by": self.stopped_by,
                "measure": self.measure, "cycles": self.cycles, "clock_ghz": self.clock_ghz, "hazards": self.hazards,
                "samples": self.samples, "seconds": self.seconds, "policy": self.policy}

    def summary(self) -> str:
        return f"{self.kernel} x{self.core_num} on {self.target}: " + describe(self.to_json())


def _us(seconds: Optional[float]) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def describe(data: Dict[str, Any]) -> str:
    """A record's `benchmark` in one line (`ascrun show`, the CLI, the pytest report)."""
    s = data["statistics"]
    rel = "-" if s.get("rel_error") is None else f"{s['rel_error'] * 100:.2f}%"
    what = "wall" if data.get("measure") == "wall" else "device kernel"
    cycles = f"; {data['cycles']} modeled cycles" if data.get("cycles") is not None else ""
    return (f"{what} time median {_us(s['median'])} us, mean {_us(s['mean'])} us ± {_us(s['stderr'])} "
            f"(std {_us(s['std'])}, rel. error {rel}), min {_us(s['min'])}, max {_us(s['max'])}; "
            f"{data['repeats']} repeats after {data['warmup']} warm-up, stopped by {data['stopped_by']}{cycles}")


def from_record(record: Dict[str, Any], result: LaunchResult) -> Benchmark:
    """The Benchmark of a finished benchmark job."""
    if record.get("benchmark") is None:
        raise KernelError(f"job {record['id']} ran, but the service recorded no benchmark: it predates benchmark "
                          "jobs", kind=Kind.UNAVAILABLE)
    return Benchmark.from_json(record["kernel"], record["target"], record["core_num"], record["benchmark"], result)


# -- gates ---------------------------------------------------------------------------------------

class GateFailed(AssertionError):
    """A benchmark gate failed (an AssertionError, so that pytest reports it as a test failure)."""


def parse_tolerance(text: Any) -> float:
    """"2%" -> 0.02, "0.02" -> 0.02 (a fraction); ValueError otherwise or below 0."""
    raw = str(text).strip()
    value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"tolerance must be a fraction or a percentage at or above 0, not {text!r}")
    return value


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.4g}%"


def max_cycles_problem(key: str, cycles: int, limit: int) -> Optional[str]:
    """Why `cycles` fails the max-cycles gate, or None."""
    if cycles <= limit:
        return None
    return (f"{key}: {cycles} modeled cycles exceed the limit of {limit} (max cycles) by {cycles - limit} "
            f"({_percent((cycles - limit) / limit) if limit else 'inf'})")


def baseline_problem(key: str, cycles: int, base: int, tolerance: float, where: str) -> Optional[str]:
    """Why `cycles` regresses beyond `tolerance` from the baseline `base`, or None."""
    if cycles <= base * (1 + tolerance):
        return None
    return (f"{key}: {cycles} modeled cycles regress from the baseline {base} in {where} by {cycles - base} "
            f"({_percent((cycles - base) / base) if base else 'inf'}; tolerance {_percent(tolerance)})")


def versus(cycles: int, base: int) -> str:
    """How `cycles` compares with `base`, for a passing gate's note."""
    change = (cycles - base) / base if base else 0.0
    return f"{cycles} vs baseline {base} ({'+' if change >= 0 else ''}{_percent(change)})"


class Baseline:
    """A baseline file: {"ascrun_baseline": 1, "kernels": {key: {"cycles", "target", "core_num"}}}."""

    def __init__(self, path: os.PathLike | str):
        self.path = Path(path)
        self.entries: Dict[str, Dict[str, Any]] = {}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text())
                self.entries = dict(data["kernels"])
            except (ValueError, KeyError, TypeError) as e:
                raise KernelError(f"{self.path} is not an ascrun baseline file ({e})", kind=Kind.BAD_REQUEST) from None

    def cycles(self, key: str) -> Optional[int]:
        entry = self.entries.get(key)
        return None if entry is None else int(entry["cycles"])

    def record(self, bench: Benchmark, key: str) -> None:
        """Write (or refresh) `key`'s entry; the file is rewritten at once, keys sorted (stable diffs)."""
        self.entries[key] = {"cycles": bench.cycles, "target": bench.target, "core_num": bench.core_num}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"ascrun_baseline": BASELINE_FORMAT, "kernels": dict(sorted(self.entries.items()))}
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text(json.dumps(data, indent=2) + "\n")
        temp.replace(self.path)


@dataclass
class Gates:
    """The CI gates on modeled cycles. `max_cycles`: a ceiling; `baseline`: a baseline file whose
    entry (`key`, default the kernel's name) the cycles may exceed by at most `tolerance` (a
    fraction); `update`: write the entry instead of comparing."""
    max_cycles: Optional[int] = None
    baseline: Optional[os.PathLike | str] = None
    tolerance: float = 0.0
    update: bool = False

    @property
    def active(self) -> bool:
        return self.max_cycles is not None or self.baseline is not None

    def check(self, bench: Benchmark, key: Optional[str] = None) -> tuple:
        """(failures, notes): what failed and what passed or was recorded, a line each. KernelError
        bad_request if a gate is set and the target models no cycles."""
        key = key or bench.kernel
        failures: List[str] = []
        notes: List[str] = []
        if not self.active:
            return failures, notes
        if bench.cycles is None:
            raise KernelError(f"{key}: the cycle gates need modeled cycles, which only the cpu target gives "
                              f"(this ran on {bench.target})", kind=Kind.BAD_REQUEST)
        if bench.hazards:  # a race shortens the modeled timeline: 594 cycles "within tolerance" of 1897 is a lie
            return [f"{key}: the run has {bench.hazards} hazard finding{'s' if bench.hazards > 1 else ''} (races "
                    f"between pipes that no flag orders, or a SetFlag never waited for: see its warnings), so its "
                    f"{bench.cycles} modeled cycles are not the kernel's: no gate compares them"
                    + (" and no baseline is recorded" if self.update else "")], notes
        if self.update and bench.hazards is None:
            failures.append(f"{key}: no baseline is recorded from a run whose hazards were not checked (hazards "
                            "\"off\"): record it with hazards \"warn\" or \"fault\"")
            return failures, notes
        if self.max_cycles is not None:
            problem = max_cycles_problem(key, bench.cycles, self.max_cycles)
            (failures if problem else notes).append(problem or f"{key}: {bench.cycles} modeled cycles, within the "
                                                                f"limit of {self.max_cycles}")
        if self.baseline is not None:
            stored = Baseline(self.baseline)
            base = stored.cycles(key)
            if self.update:
                stored.record(bench, key)
                notes.append(f"{key}: baseline {bench.cycles} modeled cycles recorded in {stored.path}"
                             + (f" (was {base})" if base is not None else ""))
            elif base is None:
                failures.append(f"{key}: no baseline in {stored.path}: record one with --update-baseline (pytest: "
                                "--ascrun-update-baseline)")
            else:
                problem = baseline_problem(key, bench.cycles, base, self.tolerance, str(stored.path))
                (failures if problem else notes).append(
                    problem or f"{key}: {versus(bench.cycles, base)} modeled cycles, within tolerance "
                               f"{_percent(self.tolerance)}")
        return failures, notes

    def enforce(self, bench: Benchmark, key: Optional[str] = None) -> List[str]:
        """The notes of passing gates; GateFailed with every failure if one fails."""
        __tracebackhide__ = True  # pytest: a failed gate's traceback ends at the launch
        failures, notes = self.check(bench, key)
        if failures:
            raise GateFailed("\n".join(failures))
        return notes


# -- in this process -----------------------------------------------------------------------------

def benchmark_local(kernel: Any, core_num: int, *args: Any, target: str = "cpu", bounds: str = "fault",
                    hazards: str = "warn", cache: Optional[Cache] = None, warmup: Optional[int] = None,
                    min_repeats: Optional[int] = None, max_repeats: Optional[int] = None,
                    target_rel_error: Optional[float] = None, budget_seconds: Optional[float] = None) -> Benchmark:
    """`run_local`, repeated: build once, then warm-up and timed repeats until the stopping rule
    (compiler/benchmark.py) says so. The last repeat's outputs are copied into the caller's arrays.
    Raises KernelError as run_local does, and runtime_error if the last repeat's outputs differ
    from the first run's."""
    policy = benchmark.Policy.from_json(policy_json(warmup=warmup, min_repeats=min_repeats, max_repeats=max_repeats,
                                                    target_rel_error=target_rel_error, budget_seconds=budget_seconds))

    def repeat(run, tensors):
        measured = benchmark.measure(run, tensors, policy)
        return measured.last, measured

    result, measured = launch_here(kernel, core_num, args, target, bounds, hazards, cache, repeat)
    result.timings["run"] = measured.seconds
    return Benchmark.from_json(getattr(kernel, "fn", kernel).__name__, target, core_num, measured.to_json(), result)


# -- the pytest marker ----------------------------------------------------------------------------

MARKER = "ascrun_benchmark"
MARKER_HELP = (f"{MARKER}(max_cycles=None, baseline=None, tolerance=0, key=None, warmup=, min_repeats=, max_repeats=, "
               "target_rel_error=, budget_seconds=): with --ascrun-url, each kernel launch of the test is a benchmark "
               "job, and the test fails if its modeled cycles exceed max_cycles or regress from its entry in the "
               "baseline file (relative to the rootdir) beyond tolerance (a fraction, or a string like '2%')")
GATE_KEYS = ("max_cycles", "baseline", "tolerance", "key")


class MarkedBenchmark:
    """A test marked `ascrun_benchmark`, while it runs: the policy its launches are benchmarked
    with and its gates. Each launch's baseline entry is `key` (default: the test's node id and
    `::KERNEL`), with `#N` after it for the test's N-th launch (N >= 2) of one key."""

    def __init__(self, kwargs: Dict[str, Any], nodeid: str, rootdir: Path, update: bool = False):
        unknown = sorted(set(kwargs) - set(GATE_KEYS) - set(POLICY_KEYS))
        if unknown:
            raise TypeError(f"{MARKER}: unknown argument(s) {', '.join(unknown)}; it takes "
                            f"{', '.join(GATE_KEYS + POLICY_KEYS)}")
        self.policy = policy_json(**{k: kwargs.get(k) for k in POLICY_KEYS})
        baseline = kwargs.get("baseline")
        self.gates = Gates(max_cycles=kwargs.get("max_cycles"),
                           baseline=None if baseline is None else rootdir / baseline,
                           tolerance=parse_tolerance(kwargs.get("tolerance", 0.0)), update=update)
        self.key, self.nodeid = kwargs.get("key"), nodeid
        self.seen: Dict[str, int] = {}
        self.notes: List[str] = []

    def launch_key(self, kernel: str) -> str:
        base = self.key or f"{self.nodeid}::{kernel}"
        self.seen[base] = self.seen.get(base, 0) + 1
        return base if self.seen[base] == 1 else f"{base}#{self.seen[base]}"

    def checked(self, launch: Any, record: Dict[str, Any]) -> Benchmark:
        """The launch's Benchmark (set as `launch.benchmark`), its gates enforced (GateFailed)."""
        __tracebackhide__ = True
        launch.benchmark = from_record(record, launch.result)
        self.notes += self.gates.enforce(launch.benchmark, self.launch_key(launch.benchmark.kernel))
        return launch.benchmark

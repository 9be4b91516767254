"""Benchmark: one launch repeated within one job, the artifact loaded once.

    measured = benchmark.measure(launch, tensors, Policy(...))   # launch() -> RunResult

Data in, data out: the worker (server/workers/job.py) and `ascrun.benchmark_local` both pass a
`launch` that runs the built kernel once on `tensors` (the arrays it reads and writes, in place).

- Warm-up runs first (not timed), then timed repeats. Every run starts from the same inputs: each
  tensor the kernel wrote is restored from a snapshot between runs, outside the timed part.
- A repeat's time is the runner's: the launch's wall time on cpu, the device's kernel time
  (`timings["kernel"]`) on sim/npu. Statistics: mean, std (sample, n-1), stderr = std/sqrt(n),
  median, min, max.
- Stopping (KernelBot's rule): after each repeat, stop at the first of: the relative standard
  error (stderr/mean) at or under `target_rel_error` (once `min_repeats` repeats are in),
  `max_repeats` repeats, or `budget_seconds` spent (warm-up, repeats and restores counted; at
  least one repeat runs). `stopped_by` says which.
- The last repeat's written tensors must equal the first run's bit for bit, else KernelError
  runtime_error naming the tensor (a nondeterministic kernel or a race). They stay in `tensors`.
- cpu: the modeled cycles (RunResult.model["cycles"]) are deterministic; a repeat that models a
  different count is a bug of the runtime, raised as BenchmarkBug (not the kernel's error). The
  hazard check's findings (model["hazards"], absent with hazards "off") are the first run's: a
  racing kernel's cycles are not the kernel's, and the gates (client/bench.py) say so.
"""
from __future__ import annotations

import math
import statistics as _stats
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import numpy as np

from .errors import KernelError
from .targets.contract import RunResult

# The service's ceilings (models.BenchmarkPolicy); a job's budget is further bounded by its timeout.
MAX_WARMUP = 100
MAX_REPEATS = 1000
MIN_TARGET_REL_ERROR = 1e-6
MAX_BUDGET_S = 3600.0
STOP_RULES = ("target_rel_error", "max_repeats", "budget")


class BenchmarkBug(RuntimeError):
    """The runtime contradicted itself (modeled cycles that differ between identical runs)."""


@dataclass(frozen=True)
class Policy:
    """How long to measure. `min_repeats`: the relative-error rule waits for this many repeats."""
    warmup: int = 3
    min_repeats: int = 3
    max_repeats: int = 100
    target_rel_error: float = 0.01
    budget_seconds: float = 10.0

    @classmethod
    def from_json(cls, data: Optional[Mapping[str, Any]]) -> "Policy":
        """The policy of a job or a call: unset keys take the defaults; checked (KernelError bad_request)."""
        data = dict(data or {})
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise KernelError(f"benchmark: unknown setting(s) {', '.join(unknown)}; the settings are "
                              f"{', '.join(cls.__dataclass_fields__)}", kind="bad_request")
        data = {k: v for k, v in data.items() if v is not None}
        if "min_repeats" not in data and isinstance(data.get("max_repeats"), int):  # max_repeats=2 alone is fine
            data["min_repeats"] = max(1, min(cls.min_repeats, data["max_repeats"]))
        return cls(**data).checked()

    def checked(self) -> "Policy":
        problem = policy_problem(asdict(self))
        if problem:
            raise KernelError(f"benchmark: {problem}", kind="bad_request")
        return self

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)


def job_policy(given: Mapping[str, Any], timeout_s: float) -> Dict[str, Any]:
    """A service job's whole policy (defaults filled in), its budget tied to the job's timeout: a
    budget given must be under it, the default is at most half of it. KernelError bad_request."""
    given = dict(given)
    if given.get("budget_seconds") is not None and given["budget_seconds"] >= timeout_s:
        raise KernelError(f"benchmark budget_seconds {given['budget_seconds']:g} must be under the job's timeout of "
                          f"{timeout_s:g} s", kind="bad_request")
    if given.get("budget_seconds") is None:
        given["budget_seconds"] = min(Policy.budget_seconds, timeout_s / 2)
    return Policy.from_json(given).to_json()


def policy_problem(p: Mapping[str, Any]) -> Optional[str]:
    """What is wrong with a policy's values, or None (the API's model checks the same bounds)."""
    def integer(name, low, high):
        v = p[name]
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
            return f"{name} must be an integer from {low} to {high}, got {v!r}"
    def number(name, low, high, open_low=False):
        v = p[name]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or not (low < v if open_low else low <= v) or v > high:
            return f"{name} must be a number {'over' if open_low else 'from'} {low:g} up to {high:g}, got {v!r}"
    problem = (integer("warmup", 0, MAX_WARMUP) or integer("max_repeats", 1, MAX_REPEATS)
               or integer("min_repeats", 1, MAX_REPEATS)
               or number("target_rel_error", MIN_TARGET_REL_ERROR, 1.0)
               or number("budget_seconds", 0.0, MAX_BUDGET_S, open_low=True))
    if problem is None and p["min_repeats"] > p["max_repeats"]:
        problem = f"min_repeats ({p['min_repeats']}) exceeds max_repeats ({p['max_repeats']})"
    return problem


@dataclass(frozen=True)
class Statistics:
    n: int
    mean: float
    std: Optional[float]  # sample standard deviation (n-1); None with one repeat
    stderr: Optional[float]  # std / sqrt(n)
    rel_error: Optional[float]  # stderr / mean
    median: float
    min: float
    max: float


def summarize(samples: Sequence[float]) -> Statistics:
    """The statistics of the repeats' seconds (at least one)."""
    if not samples:
        raise ValueError("no samples")
    n = len(samples)
    mean = math.fsum(samples) / n
    std = _stats.stdev(samples) if n > 1 else None
    stderr = std / math.sqrt(n) if std is not None else None
    rel = (stderr / mean if mean > 0 else math.inf) if stderr is not None else None
    return Statistics(n, mean, std, stderr, rel, _stats.median(samples), min(samples), max(samples))


def stop_rule(samples: Sequence[float], policy: Policy, elapsed: float) -> Optional[str]:
    """Which rule stops the benchmark after these repeats, `elapsed` s into it; None: go on."""
    n = len(samples)
    if n >= max(2, policy.min_repeats):
        rel = summarize(samples).rel_error
        if rel is not None and rel <= policy.target_rel_error:
            return "target_rel_error"
    if n >= policy.max_repeats:
        return "max_repeats"
    if n >= 1 and elapsed >= policy.budget_seconds:
        return "budget"
    return None


@dataclass
class Measured:
    """A benchmark's outcome: `last` is the last repeat's RunResult (its outputs are in the tensors)."""
    policy: Policy
    samples: List[float]
    stopped_by: str
    warmup: int  # warm-up runs done (fewer than asked if the budget ran out)
    measure: str  # "wall" (cpu: the launch's wall time) or "kernel" (sim/npu: the device's kernel time)
    cycles: Optional[int] = None  # cpu: modeled cycles of the slowest core, the same every repeat
    clock_ghz: Optional[float] = None
    hazards: Optional[int] = None  # cpu: the hazard check's findings in a run (None: not checked)
    seconds: float = 0.0  # the whole benchmark: warm-up, repeats, restores
    last: Optional[RunResult] = field(default=None, repr=False)

    @property
    def statistics(self) -> Statistics:
        return summarize(self.samples)

    def to_json(self) -> Dict[str, Any]:
        """The job record's `benchmark`."""
        return {"statistics": asdict(self.statistics), "repeats": len(self.samples), "warmup": self.warmup,
                "stopped_by": self.stopped_by, "measure": self.measure, "cycles": self.cycles,
                "clock_ghz": self.clock_ghz, "hazards": self.hazards, "seconds": self.seconds,
                "samples": list(self.samples),
                "policy": self.policy.to_json()}


def _sample(ran: RunResult) -> tuple:
    if ran.timings.get("kernel") is not None:
        return float(ran.timings["kernel"]), "kernel"
    return float(ran.seconds), "wall"


def measure(launch: Callable[[], RunResult], tensors: Mapping[str, np.ndarray], policy: Policy,
            clock: Callable[[], float] = time.monotonic, budget_cap: Optional[float] = None) -> Measured:
    """Run `launch` (warm-up, then timed repeats) until a stopping rule says so. `tensors`: the
    launch's tensor arguments by name, which it reads and writes in place. `budget_cap`: a ceiling
    on the budget (the worker's: what is left of the job's timeout)."""
    budget = policy.budget_seconds if budget_cap is None else max(0.0, min(policy.budget_seconds, budget_cap))
    effective = Policy(policy.warmup, policy.min_repeats, policy.max_repeats, policy.target_rel_error, budget) \
        if budget != policy.budget_seconds else policy
    pristine = {name: np.array(a, copy=True) for name, a in tensors.items()}  # what every run starts from
    reference: Optional[Dict[str, np.ndarray]] = None  # the first run's outputs
    first_written: List[str] = []
    samples: List[float] = []
    cycles: Optional[int] = None
    clock_ghz: Optional[float] = None
    hazards: Optional[int] = None
    kind = "wall"
    warm = 0
    start = clock()
    ran: Optional[RunResult] = None
    rule: Optional[str] = None
    while rule is None:
        if ran is not None:  # restore what the last run wrote, untimed
            for name in ran.written:
                if name in pristine:
                    np.copyto(tensors[name], pristine[name])
        ran = launch()
        if reference is None:
            first_written = list(ran.written)
            reference = {name: np.array(tensors[name], copy=True) for name in ran.written if name in tensors}
        model_cycles = (ran.model or {}).get("cycles")
        if model_cycles is not None:
            if cycles is None:
                cycles, clock_ghz, hazards = int(model_cycles), ran.model.get("clock_ghz"), ran.model.get("hazards")
            elif int(model_cycles) != cycles:
                raise BenchmarkBug(f"the cpu runtime modeled {model_cycles} cycles on run {warm + len(samples) + 1} "
                                   f"and {cycles} on the first, from the same inputs: the model must be "
                                   "deterministic (a bug of ascrun's pipe model, not of the kernel)")
        # a warm-up run, unless the budget is spent: then it counts as the one timed repeat
        if warm < policy.warmup and not samples and clock() - start < budget:
            warm += 1
            continue
        value, kind = _sample(ran)
        samples.append(value)
        rule = stop_rule(samples, effective, clock() - start)
    _check_outputs(ran, tensors, reference, first_written, len(samples))
    return Measured(policy=effective, samples=samples, stopped_by=rule, warmup=warm, measure=kind, cycles=cycles,
                    clock_ghz=clock_ghz, hazards=hazards, seconds=clock() - start, last=ran)


def _check_outputs(ran: RunResult, tensors: Mapping[str, np.ndarray], reference: Dict[str, np.ndarray],
                   first_written: List[str], repeats: int) -> None:
    """The last repeat's written tensors against the first run's, bit for bit."""
    if sorted(ran.written) != sorted(first_written):
        raise KernelError(f"benchmark: the last repeat (#{repeats}) wrote {', '.join(sorted(ran.written)) or 'nothing'}"
                          f", the first run {', '.join(sorted(first_written)) or 'nothing'}: the kernel is "
                          "nondeterministic or races", kind="runtime_error", log=ran.log, warnings=ran.warnings)
    for name, expected in reference.items():
        got = np.ascontiguousarray(tensors[name]).reshape(-1).view(np.uint8)
        want = expected.reshape(-1).view(np.uint8)
        if not np.array_equal(got, want):
            item = expected.dtype.itemsize
            differ = np.flatnonzero((got != want).reshape(-1, item).any(axis=1)) if item else np.array([0])
            raise KernelError(f"benchmark: output '{name}' of the last repeat (#{repeats}) differs from the first "
                              f"run's in {differ.size} of {expected.size} elements (first at flat index "
                              f"{int(differ[0])}): the kernel is nondeterministic or races", kind="runtime_error",
                              log=ran.log, warnings=ran.warnings)

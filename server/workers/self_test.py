"""`ascrun worker --self-test`: what an operator runs when bringing up a host. Every kernel of
self_test_kernels.CASES is built and run on each target the worker would serve, in this process
through run_local with caches that start empty (so the toolchain really builds), and checked
against numpy exactly and, on a target other than cpu, against the cpu target with compare.py's
tolerances. Prints a table; all must pass. Each cpu row gives the modeled timeline's cycles (and
their time at the model's clock); a device row gives the device's kernel time next to the model's:
the calibration step of the cost model (shared/compiler/targets/cpu/runtime/ascrun/pipes/costs.h) on a CANN host."""
from __future__ import annotations

import time
from typing import Dict, List, Sequence, TextIO


from ...compare import compare_outputs
from ...local import run_local
from ...result import LaunchResult
from ...compiler import pipeline
from ...compiler.errors import KernelError, Kind
from .self_test_kernels import CASES


class EmptyCache(dict):
    """A cache (pipeline.Cache) that starts empty: nothing built earlier stands in for this build."""

    def put(self, key: str, value: bytes) -> None:
        self[key] = value


def run(case: str, target: str) -> LaunchResult:
    """`case` on `target`, its outputs checked against numpy; KernelError if it fails."""
    kernel, core_num, args, expected = CASES[case]()
    result = run_local(kernel, core_num, *args, target=target, cache=EmptyCache())
    # exactly: the references are exact (IEEE adds, whole-number sums, round-to-nearest-even casts)
    comparison = compare_outputs(result.outputs, expected, target, "numpy", tolerances={})
    if not comparison.matches:
        raise KernelError(comparison.summary(), kind=Kind.WRONG_RESULT)
    return result


def modeled_us(model: Dict) -> float:
    return model["cycles"] / (model["clock_ghz"] * 1e3)


def self_test(targets: Sequence[str], out: TextIO) -> bool:
    """Runs every case on every target, printing a row each; whether all passed."""
    print(f"{'KERNEL':14} {'TARGET':6} {'SECONDS':>8}  RESULT", file=out, flush=True)
    on_cpu: Dict[str, LaunchResult] = {}
    failed: List[str] = []
    for target in targets:
        try:
            pipeline.get_target(target)
        except KernelError as e:  # this host cannot serve it at all: one row, every case failed
            failed += list(CASES)
            print(f"{'(all)':14} {target:6} {'-':>8}  FAIL {e.kind}: {e}", file=out, flush=True)
            continue
        for case in CASES:
            start = time.perf_counter()
            try:
                ran = run(case, target)
                if target == "cpu":
                    on_cpu[case] = ran
                    result = f"ok (model: {ran.model['cycles']} cycles = {modeled_us(ran.model):.2f} us)"
                else:
                    if case not in on_cpu:
                        on_cpu[case] = run(case, "cpu")
                    comparison = compare_outputs(ran.outputs, on_cpu[case].outputs, target, "cpu")
                    if not comparison.matches:
                        raise KernelError(comparison.summary(), kind=Kind.WRONG_RESULT)
                    device_us, model_us = ran.timings["kernel"] * 1e6, modeled_us(on_cpu[case].model)
                    result = f"ok (device {device_us:.2f} us, model {model_us:.2f} us: x{device_us / model_us:.2f})"
            except KernelError as e:
                failed.append(case)
                result = f"FAIL {e.kind}: {e}"
            print(f"{case:14} {target:6} {time.perf_counter() - start:8.2f}  {result}", file=out, flush=True)
    print(f"{len(failed)} of {len(targets) * len(CASES)} failed" if failed else "all passed", file=out)
    return not failed

"""`ascrun worker --self-test`: what an operator runs when bringing up a host. Every kernel of
self_test_kernels.CASES is built and run on each target the worker would serve, in this process
through run_local with caches that start empty (so the toolchain really builds), and checked
against numpy exactly and, on a target other than cpu, against the cpu target with compare.py's
tolerances. Prints a table; all must pass."""
from __future__ import annotations

import time
from typing import Dict, List, Sequence, TextIO

import numpy as np

from ...compare import compare_outputs
from ...local import run_local
from ...compiler import pipeline
from ...compiler.errors import KernelError
from .self_test_kernels import CASES


class EmptyCache(dict):
    """A cache (pipeline.Cache) that starts empty: nothing built earlier stands in for this build."""

    def put(self, key: str, value: bytes) -> None:
        self[key] = value


def run(case: str, target: str) -> Dict[str, np.ndarray]:
    """The outputs of `case` on `target`, with its numpy reference checked; KernelError if it fails."""
    kernel, core_num, args, expected = CASES[case]()
    outputs = run_local(kernel, core_num, *args, target=target, cache=EmptyCache()).outputs
    # exactly: the references are exact (IEEE adds, whole-number sums, round-to-nearest-even casts)
    comparison = compare_outputs(outputs, expected, target, "numpy", tolerances={})
    if not comparison.matches:
        raise KernelError(comparison.summary(), kind="wrong_result")
    return outputs


def self_test(targets: Sequence[str], out: TextIO) -> bool:
    """Runs every case on every target, printing a row each; whether all passed."""
    print(f"{'KERNEL':14} {'TARGET':6} {'SECONDS':>8}  RESULT", file=out, flush=True)
    on_cpu: Dict[str, Dict[str, np.ndarray]] = {}
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
                outputs = run(case, target)
                if target == "cpu":
                    on_cpu[case] = outputs
                else:
                    if case not in on_cpu:
                        on_cpu[case] = run(case, "cpu")
                    comparison = compare_outputs(outputs, on_cpu[case], target, "cpu")
                    if not comparison.matches:
                        raise KernelError(comparison.summary(), kind="wrong_result")
                result = "ok"
            except KernelError as e:
                failed.append(case)
                result = f"FAIL {e.kind}: {e}"
            print(f"{case:14} {target:6} {time.perf_counter() - start:8.2f}  {result}", file=out, flush=True)
    print(f"{len(failed)} of {len(targets) * len(CASES)} failed" if failed else "all passed", file=out)
    return not failed

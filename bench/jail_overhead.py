"""What the jails cost: a frontend miss and a build miss, jailed (as the worker runs them) and
in this process (as run_local does), side by side, medians of N runs.

Each frontend run gets a bundle no cache has seen (a comment line with a counter), so both sides
run pyasc for real; the jailed side forks a child of the warm zygote per run. Each build compiles
the same source afresh (no artifact cache) in a new bwrap.

    .venv/bin/python bench/jail_overhead.py [--runs 7]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from conftest import load_module  # noqa: E402

from ascrun.compiler import pipeline  # noqa: E402
from ascrun.compiler.sandbox.frontend import JailedFrontend  # noqa: E402
from ascrun.compiler.targets.cpu.jailed import JailedCpuToolchain  # noqa: E402
from ascrun.compiler.bundle import collect  # noqa: E402
from ascrun.compiler.frontend import ArgSpec  # noqa: E402

LIMITS = {"memory": 8 << 30, "cpu": 300, "files": 256}
SPECS = [ArgSpec("tensor", "float32")] * 3 + [ArgSpec("scalar", "int", 2048)]


def fresh(bundle, n: int):
    function = bundle.functions[0]
    changed = dataclasses.replace(function, source=function.source + f"\n# bench run {n}\n")
    return dataclasses.replace(bundle, functions=(changed, *bundle.functions[1:]))


def median_ms(action, runs: int) -> float:
    times = []
    for n in range(runs):
        start = time.perf_counter()
        action(n)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    opts = parser.parse_args()
    add = load_module(Path(__file__).resolve().parent.parent / "examples" / "add.py", "example_add")
    bundle = collect(add.vadd_kernel)
    target = pipeline.get_target("cpu")
    jailed_frontend = JailedFrontend(LIMITS)
    jailed_frontend.start()
    target.frontend(fresh(bundle, -1), SPECS, {})  # warm pyasc here too
    result = target.frontend(bundle, SPECS, {})
    jailed_build = JailedCpuToolchain(target.toolchain, LIMITS)
    target.toolchain.read_only_paths()  # the prebuilt runtime, once
    try:
        rows = [
            ("frontend miss", median_ms(lambda n: target.frontend(fresh(bundle, n), SPECS, {}), opts.runs),
             median_ms(lambda n: jailed_frontend(fresh(bundle, 1000 + n), SPECS, {}), opts.runs)),
            ("build miss", median_ms(lambda n: target.toolchain.build(result.source, result.kernel_name), opts.runs),
             median_ms(lambda n: jailed_build.build(result.source, result.kernel_name), opts.runs)),
        ]
    finally:
        jailed_frontend.close()
    print(f"medians of {opts.runs} runs, examples/add.py vadd_kernel")
    print(f"{'stage':<16}{'in-process ms':>15}{'jailed ms':>12}{'overhead ms':>14}")
    for name, inproc, jailed in rows:
        print(f"{name:<16}{inproc:>15.1f}{jailed:>12.1f}{jailed - inproc:>14.1f}")


if __name__ == "__main__":
    main()

"""Benchmark: a build miss of small kernels on the cpu target against a reference C++ compile, same run.

    python bench/build_time.py [--kernels 6] [--rounds 3] [--baseline RUNTIME_DIR]

Issue 27's goal: the build miss of a small kernel at most 0.8x the reference compile (a file
using <vector>, <map> and <string>, `-O2 -fPIC -shared`). The kernels are pyasc's tutorial
02_add_framework (examples/add_framework.py, each with its own tile length) and a masked Abs
(tests/kernels/vector_masked.py, each with its own mask), so every build is a miss. Their Ascend C
comes from the frontend once; then each round builds every kernel through the real toolchain
(CpuToolchain.build: the compiler with the precompiled header and the prebuilt runtime objects,
built once before the first timing) and the reference, alternating, so all see the same machine
load. Prints median and min of wall time and of the compiler's CPU time (user + sys of the child
processes: steadier on a shared machine) and the ratios of the medians.

--baseline DIR also builds every kernel against another copy of the runtime folder (e.g. main's:
`git archive main shared/compiler/targets/cpu/runtime | tar -x -C /tmp/main_rt`), interleaved
with the others, so a runtime change is measured against its base in one run.
"""
import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "kernels"))
sys.path.insert(0, str(ROOT / "examples"))

import add_framework
import numpy as np
import vector_masked
from ascrun.args import launch_args
from ascrun.compiler import pipeline
from ascrun.compiler.targets.cpu import toolchain as cpu_toolchain

REFERENCE = """#include <map>
#include <string>
#include <vector>

std::map<std::string, std::vector<int>> index_words(const std::vector<std::string>& words) {
    std::map<std::string, std::vector<int>> index;
    for (size_t i = 0; i < words.size(); ++i) index[words[i]].push_back(static_cast<int>(i));
    return index;
}
"""
REFERENCE_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared")


def kernel_sources(count: int) -> list:
    """(source, kernel name, kernel type) of `count` distinct small kernels, half of each kind."""
    target = pipeline.get_target("cpu")
    n = 2048
    x, y, z = (np.zeros(n, np.float32) for _ in range(3))
    calls = []
    for i in range(count):
        if i % 2 == 0:  # tile lengths 128, 256, ...: block 2048 = 8 tiles x 2 buffers x 128
            calls.append((add_framework.vadd_framework_kernel, (x, y, z, n, 128 * (1 + i // 2))))
        else:
            calls.append((vector_masked.masked_kernel,
                          (x, y, z, n, "abs", False, True, False, 33 + i, 0, 3, 1, 2, 0, 8, 16, 0, 0.0)))
    sources = []
    for kernel, args in calls:
        bundle, host = launch_args(kernel, args)
        result = target.frontend(bundle, host.specs, {})
        sources.append((result.source, result.kernel_name, result.kernel_type))
    return sources


def timed(fn) -> tuple:
    """(wall seconds, CPU seconds of the child processes) of fn()."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def summary(name: str, runs: list, reference: list) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    ratio_wall = statistics.median(walls) / statistics.median([w for w, _ in reference])
    ratio_cpu = statistics.median(cpus) / statistics.median([c for _, c in reference])
    return (f"  {name:22s} wall median {statistics.median(walls):6.3f} s min {min(walls):6.3f} s | "
            f"cpu median {statistics.median(cpus):6.3f} s min {min(cpus):6.3f} s | "
            f"ratio to reference: wall {ratio_wall:5.2f}x cpu {ratio_cpu:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=6, help="distinct kernels per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another runtime folder to build every kernel against")
    opts = parser.parse_args()

    sources = kernel_sources(opts.kernels)
    toolchains = {"build miss": cpu_toolchain.CpuToolchain()}
    toolchains["build miss"].warm()
    if opts.baseline:
        toolchains["build miss (baseline)"] = cpu_toolchain.CpuToolchain(runtime=opts.baseline.resolve())
        toolchains["build miss (baseline)"].warm()
    runs = {name: [] for name in [*toolchains, "reference compile"]}
    with tempfile.TemporaryDirectory(prefix="build_time_") as tmp:
        reference = Path(tmp) / "reference.cpp"
        reference.write_text(REFERENCE)
        compile_reference = [toolchains["build miss"].cxx, *REFERENCE_FLAGS, str(reference), "-o",
                             str(Path(tmp) / "reference.so")]
        for _ in range(opts.rounds):
            for source, kernel_name, kernel_type in sources:
                for name, toolchain in toolchains.items():
                    runs[name].append(timed(partial(toolchain.build, source, kernel_name, kernel_type)))
                runs["reference compile"].append(timed(partial(subprocess.run, compile_reference, check=True)))
    print(f"{opts.kernels} distinct kernels x {opts.rounds} rounds ({toolchains['build miss'].compiler_version})")
    for name, timings in runs.items():
        print(summary(name, timings, runs["reference compile"]))


if __name__ == "__main__":
    main()

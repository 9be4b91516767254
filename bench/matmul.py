"""Benchmark: the cpu runtime's Matmul high-level API against numpy's float32 matmul, same run.

    python bench/matmul.py [--size 512] [--cores 24] [--repeats 7]

The kernel is examples/matmul.py's: IterateAll of half A (M x K) times half B (K x N) into float C
over --cores AICs (AIC_ONLY, the host tiling's split), default launch (hazard check and timeline
on). numpy's reference is np.matmul(a, b, out=c) of the same values as float32. Both are timed
interleaved, so both see the same machine load; prints the medians of their wall times and their
ratio, the ratio of their best runs, and the medians of the CPU time each takes on all its threads
(figures a loaded machine disturbs less).
The kernel's result is checked against numpy exactly (small integers) and, for the order of its
float sums, against a sequential float32 sum over K on non-integer data.
"""
import argparse
import importlib.util
import resource
import statistics
import time
from pathlib import Path

import numpy as np

from ascrun.args import launch_args
from ascrun.compiler import pipeline
from ascrun.compiler.cache import DiskCache

ROOT = Path(__file__).resolve().parents[1]


def load_example():
    spec = importlib.util.spec_from_file_location("matmul_example", ROOT / "examples" / "matmul.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def sequential_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B as L0C accumulates it: float32 products added in K's order, each step rounded."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        c += np.outer(a32[:, p], b32[p, :])
    return c


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="M = N = K")
    parser.add_argument("--cores", type=int, default=24, help="set_dim of the host tiling")
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()
    example = load_example()
    m = n = k = opts.size
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c, tiling, first = example.matmul(a, b, None, opts.cores)  # compiles, or loads the cache
    assert np.array_equal(c, sequential_sum(a, b)), "kernel result differs from the sequential float sum"
    a = rng.integers(-4, 4, (m, k)).astype(np.float16)
    b = rng.integers(-4, 4, (k, n)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    assert np.array_equal(example.matmul(a, b, None, opts.cores)[0], a32 @ b32), "kernel result differs from numpy"
    c = np.zeros((m, n), np.float32)
    args = (a, b, c, np.zeros((1, n), np.float32), tiling, np.zeros(1024, np.uint8), False, False)
    bundle, host = launch_args(example.matmul_kernel, args)
    target = pipeline.get_target("cpu")
    built = pipeline.build(bundle, host.specs, target, frontend_cache=DiskCache.default(),
                           artifact_cache=DiskCache.default())
    cn = np.empty((m, n), np.float32)
    wall = {"kernel": [], "numpy": []}
    cpu = {"kernel": [], "numpy": []}
    for _ in range(opts.repeats):  # interleaved, so both see the same machine load
        before = cpu_seconds()
        ran = pipeline.run(built, target, tiling.used_core_num, host.values)  # hazard check on, timeline on
        cpu["kernel"].append(cpu_seconds() - before)
        wall["kernel"].append(ran.seconds)
        before, start = cpu_seconds(), time.perf_counter()
        np.matmul(a32, b32, out=cn)
        wall["numpy"].append(time.perf_counter() - start)
        cpu["numpy"].append(cpu_seconds() - before)
    assert np.array_equal(host.values["c"], cn), "the timed launches' result differs from numpy"
    kt, nt = statistics.median(wall["kernel"]), statistics.median(wall["numpy"])
    kc, nc = statistics.median(cpu["kernel"]), statistics.median(cpu["numpy"])
    gflop = 2 * m * n * k / 1e9
    print(f"Matmul IterateAll {m}x{k}x{n} half -> float, {tiling.used_core_num} AICs, pieces "
          f"{tiling.single_core_m} x {tiling.single_core_n}, base {tiling.base_m} x {tiling.base_n} x {tiling.base_k} "
          f"(first launch: build {first.cache['build']}, {first.timings['build'] * 1e3:.0f} ms)")
    print(f"  cpu runtime kernel run: {kt * 1e3:8.1f} ms  ({gflop / kt:5.1f} GFLOP/s)")
    print(f"  numpy float32 matmul:   {nt * 1e3:8.1f} ms  ({gflop / nt:5.1f} GFLOP/s)")
    print(f"  ratio kernel / numpy:   {kt / nt:8.2f}x  (best runs: {min(wall['kernel']) * 1e3:.1f} ms / "
          f"{min(wall['numpy']) * 1e3:.1f} ms = {min(wall['kernel']) / min(wall['numpy']):.2f}x)")
    print(f"  cpu time, all threads:  kernel {kc * 1e3:.1f} ms, numpy {nc * 1e3:.1f} ms, ratio {kc / nc:.2f}x")


if __name__ == "__main__":
    main()

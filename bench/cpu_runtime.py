"""Benchmark: the cpu runtime's vadd on 2^26 float32 against numpy's np.add(x, y, out=z), same run.

    python bench/cpu_runtime.py [--log2-size 26] [--cores 8] [--repeats 5] [--form count|mask|both]
                                [--matmul-size 512] [--matmul-cores 24]

Prints the median run time of each and their ratio. The kernel is pyasc's TPipe/TQue vadd with
a runtime tile loop, so any size fits the 192 KiB Unified Buffer; the build is cached. --form mask
runs the same kernel with Add in its mask + repeat form (mask 64, TILE / 64 repeats,
BinaryRepeatParams(1, 1, 1, 8, 8, 8)), which goes through the mask planner and its runs.
Then a reduction row: WholeReduceSum of every 64 floats (one repeat each) against numpy's
np.add.reduce(x.reshape(-1, 64), axis=1, out=...); the kernel's result is checked bit for bit
against the reference's binary tree. Then a matmul row: the Matmul high-level API's IterateAll of
half A (M x K) times half B (K x N) into float C over --matmul-cores AICs (AIC_ONLY, the host
tiling's split), against numpy's float32 np.matmul(a, b, out=c); checked exactly (small
integers); the kernel is examples/matmul.py's.
For the vadd (count form) and reduction rows, also the pipe model's cost: the same launch with
the hazard check and the modeled timeline each on and off (the default runs both; "hazard check"
is a launch with model=False), interleaved with the numpy reference, as multiples of both.
"""
import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np

import asc
import ascrun
from ascrun.args import launch_args
from ascrun.compiler import pipeline
from ascrun.compiler.cache import DiskCache

ROOT = Path(__file__).resolve().parents[1]

BUFFER_NUM = 2
TILE = 4096  # float32 elements per tile: 3 queues x 2 buffers x 16 KiB = 96 KiB of UB
# (mask form: TILE / 64 = 64 repeats, within pyasc's int8 repeat_times)


@asc.jit
def vadd_tiled(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int,
               tile_length: asc.ConstExpr[int], masked: asc.ConstExpr[bool]):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_y = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_z = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(in_x, BUFFER_NUM, tile_length * x.dtype.sizeof())
    pipe.init_buffer(in_y, BUFFER_NUM, tile_length * y.dtype.sizeof())
    pipe.init_buffer(out_z, BUFFER_NUM, tile_length * z.dtype.sizeof())
    for i in range(block_length // tile_length):
        x_local = in_x.alloc_tensor(x.dtype)
        y_local = in_y.alloc_tensor(y.dtype)
        asc.data_copy(x_local, x_gm[i * tile_length:], tile_length)
        asc.data_copy(y_local, y_gm[i * tile_length:], tile_length)
        in_x.enque(x_local)
        in_y.enque(y_local)
        xs = in_x.deque(x.dtype)
        ys = in_y.deque(y.dtype)
        zs = out_z.alloc_tensor(z.dtype)
        if masked:
            asc.add(zs, xs, ys, 64, tile_length // 64, asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8))
        else:
            asc.add(zs, xs, ys, tile_length)
        out_z.enque(zs)
        in_x.free_tensor(xs)
        in_y.free_tensor(ys)
        zo = out_z.deque(z.dtype)
        asc.data_copy(z_gm[i * tile_length:], zo, tile_length)
        out_z.free_tensor(zo)


@asc.jit
def wsum_tiled(x: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int, tile_length: asc.ConstExpr[int]):
    """z[k] = WholeReduceSum of x[64 k : 64 k + 64]: TILE / 64 repeats per tile."""
    out_tile = tile_length // 64
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + asc.get_block_idx() * block_length, block_length)
    z_gm.set_global_buffer(z + asc.get_block_idx() * (block_length // 64), block_length // 64)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_z = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(in_x, BUFFER_NUM, tile_length * x.dtype.sizeof())
    pipe.init_buffer(out_z, BUFFER_NUM, out_tile * z.dtype.sizeof())
    for i in range(block_length // tile_length):
        x_local = in_x.alloc_tensor(x.dtype)
        asc.data_copy(x_local, x_gm[i * tile_length:], tile_length)
        in_x.enque(x_local)
        xs = in_x.deque(x.dtype)
        zs = out_z.alloc_tensor(z.dtype)
        asc.whole_reduce_sum(zs, xs, 64, out_tile, 1, 1, 8)
        out_z.enque(zs)
        in_x.free_tensor(xs)
        zo = out_z.deque(z.dtype)
        asc.data_copy(z_gm[i * out_tile:], zo, out_tile)
        out_z.free_tensor(zo)


def pipe_model_overhead(opts, reference, kernel, *args) -> None:
    """Run times of one launch with the hazard check and the modeled timeline each off and on, and
    of `reference()` (numpy) between them."""
    bundle, host = launch_args(kernel, args)
    target = pipeline.get_target("cpu")
    built = pipeline.build(bundle, host.specs, target, frontend_cache=DiskCache.default(),
                           artifact_cache=DiskCache.default())
    values = [host.values[p["name"]] for p in built.frontend.params]
    settings = {"neither": ("off", False), "hazard check": ("warn", False), "timeline": ("off", True),
                "both (default)": ("warn", True)}
    seconds = {name: [] for name in settings}
    numpy_s = []
    for _ in range(opts.repeats):  # interleaved, so all see the same machine load
        start = time.perf_counter()
        reference()
        numpy_s.append(time.perf_counter() - start)
        for name, (hazards, model) in settings.items():
            ran = target.runner.run(built.artifact, opts.cores, built.frontend.params, built.frontend.kernel_args,
                                    values, hazards=hazards, model=model)
            assert ran.warnings == [], ran.warnings
            seconds[name].append(ran.seconds)
    bare, reference_t = statistics.median(seconds["neither"]), statistics.median(numpy_s)
    print(f"  pipe model, numpy:          {reference_t * 1e3:8.1f} ms")
    for name, runs in seconds.items():
        t = statistics.median(runs)
        print(f"  pipe model: {name:15s} {t * 1e3:8.1f} ms  ({t / bare:5.2f}x of neither, "
              f"{t / reference_t:5.2f}x numpy)")


def bench_matmul(opts) -> None:
    spec = importlib.util.spec_from_file_location("matmul_example", ROOT / "examples" / "matmul.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    m = n = k = opts.matmul_size
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 4, (m, k)).astype(np.float16)
    b = rng.integers(-4, 4, (k, n)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c, tiling, first = example.matmul(a, b, None, opts.matmul_cores)  # compiles, or loads the cache
    assert np.array_equal(c, a32 @ b32), "kernel result differs from numpy"
    cn = np.empty_like(c)
    kernel_s, numpy_s = [], []
    for _ in range(opts.repeats):  # interleaved, so both see the same machine load
        kernel_s.append(example.matmul(a, b, None, opts.matmul_cores)[2].timings["run"])
        start = time.perf_counter()
        np.matmul(a32, b32, out=cn)
        numpy_s.append(time.perf_counter() - start)
    kt, nt = statistics.median(kernel_s), statistics.median(numpy_s)
    gflop = 2 * m * n * k / 1e9
    print(f"Matmul IterateAll {m}x{k}x{n} half -> float, {tiling.used_core_num} AICs (first launch: build "
          f"{first.cache['build']}, {first.timings['build'] * 1e3:.0f} ms)")
    print(f"  cpu runtime kernel run: {kt * 1e3:8.1f} ms  ({gflop / kt:5.1f} GFLOP/s)")
    print(f"  numpy float32 matmul:   {nt * 1e3:8.1f} ms  ({gflop / nt:5.1f} GFLOP/s)")
    print(f"  ratio kernel / numpy:   {kt / nt:8.2f}x")


def bench_whole_reduce_sum(opts, x: np.ndarray) -> None:
    block = x.size // opts.cores
    z = np.zeros(x.size // 64, np.float32)
    zn = np.empty_like(z)
    first = ascrun.run_local(wsum_tiled, opts.cores, x, z, block, TILE)  # compiles, or loads the cache
    tree = x.reshape(-1, 64)
    while tree.shape[1] > 1:  # the reference's order: lanes (0,1), (2,3), ..., then pairwise again
        tree = tree[:, 0::2] + tree[:, 1::2]
    assert np.array_equal(z, tree[:, 0]), "kernel result differs from the binary-tree model"
    kernel_s, numpy_s = [], []
    for _ in range(opts.repeats):  # interleaved, so both see the same machine load
        kernel_s.append(ascrun.run_local(wsum_tiled, opts.cores, x, z, block, TILE).timings["run"])
        start = time.perf_counter()
        np.add.reduce(x.reshape(-1, 64), axis=1, out=zn)
        numpy_s.append(time.perf_counter() - start)
    k, n = statistics.median(kernel_s), statistics.median(numpy_s)
    gbps = (x.nbytes + z.nbytes) / 1e9
    print(f"WholeReduceSum (64 per repeat) 2^{opts.log2_size} float32, {opts.cores} blocks (first launch: build "
          f"{first.cache['build']}, {first.timings['build'] * 1e3:.0f} ms)")
    print(f"  cpu runtime kernel run: {k * 1e3:8.1f} ms  ({gbps / k:5.1f} GB/s)")
    print(f"  numpy add.reduce(64):   {n * 1e3:8.1f} ms  ({gbps / n:5.1f} GB/s)")
    print(f"  ratio kernel / numpy:   {k / n:8.2f}x")
    pipe_model_overhead(opts, lambda: np.add.reduce(x.reshape(-1, 64), axis=1, out=zn), wsum_tiled, x, z, block,
                        TILE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2-size", type=int, default=26)
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--form", choices=["count", "mask", "both"], default="both")
    parser.add_argument("--matmul-size", type=int, default=512, help="M = N = K of the matmul row")
    parser.add_argument("--matmul-cores", type=int, default=24, help="set_dim of its host tiling")
    opts = parser.parse_args()
    size = 1 << opts.log2_size
    block = size // opts.cores
    assert block % TILE == 0, "size / cores must be a multiple of the tile"
    rng = np.random.default_rng(0)
    x = rng.random(size, dtype=np.float32)
    y = rng.random(size, dtype=np.float32)
    z = np.zeros_like(x)

    forms = ["count", "mask"] if opts.form == "both" else [opts.form]
    for form in forms:
        masked = form == "mask"
        first = ascrun.run_local(vadd_tiled, opts.cores, x, y, z, block, TILE, masked)  # compiles, or loads the cache
        assert np.array_equal(z, x + y), "kernel result differs from numpy"
        kernel_s, numpy_s = [], []
        for _ in range(opts.repeats):  # interleaved, so both see the same machine load
            kernel_s.append(ascrun.run_local(vadd_tiled, opts.cores, x, y, z, block, TILE, masked).timings["run"])
            start = time.perf_counter()
            np.add(x, y, out=z)
            numpy_s.append(time.perf_counter() - start)
        k, n = statistics.median(kernel_s), statistics.median(numpy_s)
        gbps = 3 * x.nbytes / 1e9
        print(f"vadd ({form} form) 2^{opts.log2_size} float32, {opts.cores} blocks (first launch: build "
              f"{first.cache['build']}, {first.timings['build'] * 1e3:.0f} ms)")
        print(f"  cpu runtime kernel run: {k * 1e3:8.1f} ms  ({gbps / k:5.1f} GB/s)")
        print(f"  numpy np.add(out=z):    {n * 1e3:8.1f} ms  ({gbps / n:5.1f} GB/s)")
        print(f"  ratio kernel / numpy:   {k / n:8.2f}x")
        if not masked:
            pipe_model_overhead(opts, lambda: np.add(x, y, out=z), vadd_tiled, x, y, z, block, TILE, masked)
    bench_whole_reduce_sum(opts, x)
    bench_matmul(opts)

if __name__ == "__main__":
    main()

"""The Matmul high-level API on the cpu target (Matmul-Kernel侧接口: Init/REGIST_MATMUL_OBJ, SetTensorA/B
with transposes, SetBias, SetTail, Iterate/GetTensorC, IterateAll, End) against numpy: products of
half (or bfloat16) inputs accumulated in float, int8 in int32. The tilings are written out here;
test_host_tiling.py checks the host's; the last test runs examples/matmul.py with it."""
import subprocess

import numpy as np
import pytest

import asc
import ascrun
import cube
from ascrun.compiler.socs import DEFAULT_NPU_ARCH
from ascrun.compiler.targets.cpu.toolchain import CPU_FLAGS, CpuToolchain, arch_flags
from conftest import ROOT, load_module, unsited

pytestmark = pytest.mark.kernel

example = load_module(ROOT / "examples" / "matmul.py", "matmul_example")

WORKSPACE = np.zeros(1024, np.uint8)


def tiling(m, n, k, single_m, single_n, base_m, base_n, base_k, cores, bias=False, order=0, **more):
    t = asc.adv.TCubeTiling()
    fields = dict(used_core_num=cores, m=m, n=n, k_a=k, k_b=k, single_core_m=single_m, single_core_n=single_n,
                  single_core_k=k, base_m=base_m, base_n=base_n, base_k=base_k, depth_a1=2, depth_b1=2, step_m=1,
                  step_n=1, is_bias=int(bias), iterate_order=order, step_k_a=1, step_k_b=1, db_l0a=2, db_l0b=2,
                  db_l0c=1)
    for name, value in {**fields, **more}.items():
        setattr(t, name, value)
    return t


def operands(m, n, k, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-8, 8, (m, k)).astype(dtype), rng.integers(-8, 8, (k, n)).astype(dtype),
            rng.integers(-8, 8, (1, n)).astype(np.float32))


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_iterate_all_over_cores_with_tails_transposes_and_bias(trans_a, trans_b):
    # 100 x 90 over 2 x 2 cores of 64 x 48: the last row and column of cores get tails (36, 42)
    m, n, k = 100, 90, 40
    a, b, bias = operands(m, n, k, np.float16)
    c = np.full((m, n), -1, np.float32)
    t = tiling(m, n, k, 64, 48, 32, 32, 16, cores=4, bias=True)
    ascrun.run_local(example.matmul_kernel, 4, np.ascontiguousarray(a.T) if trans_a else a,
                     np.ascontiguousarray(b.T) if trans_b else b, c, bias, t, WORKSPACE, trans_a, trans_b)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32) + bias)


def test_half_products_accumulate_in_float():
    # 2049 + 1 is not a half but is a float: the accumulation must not round to half on the way
    m, n, k = 16, 16, 32
    a = np.ones((m, k), np.float16)
    b = np.full((k, n), 1 / 32, np.float16)
    a[:, 0] = 2048
    b[0, :] = 1
    c = np.zeros((m, n), np.float32)
    ascrun.run_local(example.matmul_kernel, 1, a, b, c, np.zeros((1, n), np.float32),
                     tiling(m, n, k, m, n, 16, 16, 16, cores=1), WORKSPACE, False, False)
    assert (c == 2048 + 31 / 32).all()


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_float_sums_run_over_k_in_order(trans_a, trans_b):
    # non-integer halves, whose sums round: each C element is the bias plus the float products
    # added one by one in K's order. 45 x 50 in base blocks of 32 x 32: tails of 13 rows, 18 columns
    m, n, k = 45, 50, 72
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal((1, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    ascrun.run_local(example.matmul_kernel, 1, np.ascontiguousarray(a.T) if trans_a else a,
                     np.ascontiguousarray(b.T) if trans_b else b, c, bias,
                     tiling(m, n, k, m, n, 32, 32, 16, cores=1, bias=True), WORKSPACE, trans_a, trans_b)
    expected = np.repeat(bias, m, axis=0)
    for p in range(k):
        expected += np.outer(a[:, p].astype(np.float32), b[p, :].astype(np.float32))
    assert not np.array_equal(expected, a.astype(np.float32) @ b.astype(np.float32) + bias)  # numpy's order differs
    np.testing.assert_array_equal(c, expected)


def test_blockwise_iterate_into_the_unified_buffer_in_a_mixed_launch():
    # one block: two AIVs, each its 64 rows, base blocks 32 x 32 taken in M order
    m, n, k = 128, 96, 64
    a, b, _ = operands(m, n, k, np.float16, seed=1)
    c = np.zeros((m, n), np.float32)
    ascrun.run_local(cube.blockwise_matmul_kernel, 1, a, b, c, tiling(m, n, k, 64, n, 32, 32, 32, cores=2),
                     WORKSPACE)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_int8_accumulates_in_int32():
    m, n, k = 32, 32, 64
    a = np.full((m, k), 127, np.int8)
    b = np.full((k, n), -128, np.int8)
    c = np.zeros((m, n), np.int32)
    ascrun.run_local(example.matmul_kernel, 1, a, b, c, np.zeros((1, n), np.int32),
                     tiling(m, n, k, m, n, 32, 32, 32, cores=1), WORKSPACE, False, False)
    assert (c == 127 * -128 * 64).all()


def test_a_tiling_that_does_not_fit_l0a_faults():
    m, n, k = 256, 32, 256
    a, b, bias = operands(m, n, k, np.float16)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(example.matmul_kernel, 1, a, b, np.zeros((m, n), np.float32), bias,
                         tiling(m, n, k, m, n, 256, 32, 128, cores=1), WORKSPACE, False, False)
    message = unsited(str(e.value))
    assert message == ("block 0: Matmul::Init: the tiling needs 128.0 KiB of L0A (baseM x baseK x dbL0A) but "
                       "L0A has 64.0 KiB")


def test_an_empty_tiling_faults():
    a, b, _ = operands(16, 16, 16, np.float16)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(cube.matmul_kernel, 1, a, b, np.zeros((16, 16), np.float32), asc.adv.TCubeTiling(),
                         WORKSPACE)
    message = unsited(str(e.value))
    assert message == ("block 0: Matmul::Init: the tiling's usedCoreNum is 0; it must be positive (fill the "
                       "TCubeTiling with the host's MultiCoreMatmulTiling.get_tiling)")


def test_the_example_over_24_cores_with_the_host_tiling():
    a, b, bias = operands(300, 200, 96, np.float16, seed=3)
    c, tiling, _ = example.matmul(a, b, bias, 24, trans_a=True)
    assert tiling.used_core_num > 1
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32) + bias)


# Both vector widths of the Matmul's tiles (the 16-byte one runs only where the CPU lacks AVX, so
# kernels here never reach it) against multiply_add's scalar loop, bit for bit: every tile height,
# float from a normal distribution (sums that round) and int32 over its whole range (sums that wrap).
TILES_CPP = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
using namespace ascrun::matmul;

template <typename Acc, typename Draw>
int check(const char* name, Draw draw, void (*accumulate)(const Acc*, int64_t, const Acc*, int64_t,
                                                          Acc (&)[kTileRows][kPanel], int64_t)) {
    const int64_t k = 37, lda = 41;
    std::mt19937 rng(7);
    std::vector<Acc> a(kTileRows * lda), panel(k * kPanel);
    for (auto& v : a) v = draw(rng);
    for (auto& v : panel) v = draw(rng);
    for (int64_t rows = 1; rows <= kTileRows; ++rows) {
        Acc tile[kTileRows][kPanel], want[kTileRows][kPanel];
        for (auto& row : tile) for (auto& v : row) v = draw(rng);
        std::memcpy(want, tile, sizeof(tile));
        accumulate(a.data(), lda, panel.data(), k, tile, rows);
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < kPanel; ++j) {
                for (int64_t p = 0; p < k; ++p) {
                    want[r][j] = multiply_add(want[r][j], a[r * lda + p], panel[p * kPanel + j]);
                }
            }
        }
        if (std::memcmp(tile, want, sizeof(tile)) != 0) {
            std::printf("%s, %lld rows: differs\n", name, (long long)rows);
            return 1;
        }
    }
    return 0;
}

int main() {
    auto real = [](std::mt19937& g) { return std::normal_distribution<float>()(g); };
    auto integer = [](std::mt19937& g) { return static_cast<int32_t>(g()); };
    int bad = check<float>("16-byte float", real, accumulate_tile_16<float>) +
              check<int32_t>("16-byte int32", integer, accumulate_tile_16<int32_t>);
    if (__builtin_cpu_supports("avx")) {
        bad += check<float>("32-byte float", real, accumulate_tile_32<float>) +
               check<int32_t>("32-byte int32", integer, accumulate_tile_32<int32_t>);
    } else {
        std::puts("no AVX: 32-byte tiles not checked");
    }
    std::puts(bad ? "differs" : "equal");
    return bad;
}
"""


def test_vector_tiles_sum_as_the_scalar_loop(tmp_path):
    toolchain = CpuToolchain()
    (tmp_path / "tiles.cpp").write_text(TILES_CPP)
    flags = [f for f in CPU_FLAGS if f != "-shared"] + list(arch_flags(DEFAULT_NPU_ARCH))
    subprocess.run([toolchain.cxx, *flags, "-I", str(toolchain.runtime), "tiles.cpp", "-o", "tiles"], cwd=tmp_path,
                   check=True, timeout=300)
    out = subprocess.run([str(tmp_path / "tiles")], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout.splitlines()[-1]) == (0, "equal"), out.stdout

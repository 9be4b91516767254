"""The Ascend C APIs asc2's ported tests (tests/asc2_port) found the cpu runtime lacking, each made by
pyasc's nightly from an asctile kernel (tests/kernels/vector_math_ext.py) and run through run_local for
Ascend910B1 and, where it exists, Ascend950PR_9599: the high-level unary math (Sin, Cos, Tan, Sinh, Cosh,
Ceil, Floor: 高阶API/数学计算/<Op>接口/<Op>.md), the 950's Subs/Divs (基础算术/Subs（灵活标量位置）.md,
Divs（灵活标量位置）.md), ReduceProd and ReduceMax/Min/Sum<T, Pattern::Reduce::AR|RA> (高阶API/归约操作),
SetAtomicAdd/Max/Min with SetAtomicNone (基础API/原子操作) and the 950's Broadcast with its tiling
(高阶API/张量变换/Broadcast.md). Outputs against numpy (computed in float and rounded once to the dtype,
which the pages state no precision for: tight tolerances), refusals against their messages, a few from
kernels written in Ascend C. On pyasc 1.1.1, which has no asctile, these skip."""
import re

import numpy as np
import pytest

import ascrun
from ascrun.compiler import pipeline
from ascrun.compiler.errors import BuildError
from conftest import unsited
from test_asctile import needs_asctile

pytestmark = [pytest.mark.kernel, needs_asctile]

SOC_910B, SOC_950 = "Ascend910B1", "Ascend950PR_9599"
N = 64


@pytest.fixture(scope="module")
def kernels():
    import vector_math_ext
    return vector_math_ext


UNARY = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "ceil": np.ceil,
         "floor": np.floor}


def _unary_input(op: str, dtype) -> np.ndarray:
    x = np.linspace(-6.0, 6.0, N)
    if op == "tan":  # away from the poles, where one rounding of x moves tan(x) by far more than an ulp
        x = np.linspace(-1.4, 1.4, N)
    if op in ("ceil", "floor"):
        x = np.concatenate([np.linspace(-40.25, 40.25, N - 4), [0.0, 0.5, -0.5, 3.0]])
    return x.astype(dtype)


@pytest.mark.parametrize("soc, dtype", [(SOC_910B, np.float32), (SOC_910B, np.float16), (SOC_950, np.float32)],
                         ids=["910B-float32", "910B-float16", "950-float32"])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_math(kernels, op, soc, dtype):
    x = _unary_input(op, dtype)
    z = np.zeros_like(x)
    result = ascrun.run_local(kernels.unary, 1, x, z, N, op, soc=soc)
    api = op.capitalize()
    assert re.search(rf"AscendC::{api}<(float|half), \w+>\(\w+, \w+, \w+\)", result.source)
    expected = UNARY[op](x.astype(np.float64)).astype(np.float32).astype(dtype)
    if op in ("ceil", "floor"):
        np.testing.assert_array_equal(z, expected)
    elif dtype == np.float32:  # the host's float function: within an ulp or two of the exact value
        np.testing.assert_allclose(z, expected, rtol=3e-7, atol=1e-7)
    else:  # half: the float result rounded once, as the reference rounded
        np.testing.assert_allclose(z.astype(np.float32), expected.astype(np.float32), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("soc", [SOC_910B, SOC_950])
def test_sin_outside_its_documented_range_faults(kernels, soc):
    x = np.zeros(N, np.float32)
    x[5] = 70000.0
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernels.unary, 1, x, np.zeros_like(x), N, "sin", soc=soc)
    assert unsited(str(e.value)) == ("block 0: Sin: srcTensor[5] = 70000 is outside [-65504, 65504], the input range "
                                     "the reference defines (Sin.md)")


def test_tan_range_is_open(kernels):
    x = np.zeros(N, np.float32)
    x[0] = -65504.0
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernels.unary, 1, x, np.zeros_like(x), N, "tan")
    assert unsited(str(e.value)) == ("block 0: Tan: srcTensor[0] = -65504 is outside (-65504, 65504), the input range "
                                     "the reference defines (Tan.md)")


# ---- Subs, Divs: the Ascend 950's tensor-scalar forms ---------------------------------------------

@pytest.mark.parametrize("op, dtype, scalar", [("sub", np.float32, 2.5), ("sub", np.int32, 7), ("sub", np.int16, -3),
                                               ("sub", np.float16, 0.375), ("div", np.float32, 3.0),
                                               ("div", np.float16, -0.5)], ids=str)
def test_subs_divs_on_950(kernels, op, dtype, scalar):
    rng = np.random.default_rng(3)
    x = (rng.integers(-100, 100, N) if np.dtype(dtype).kind == "i" else rng.standard_normal(N) * 10).astype(dtype)
    z = np.zeros_like(x)
    result = ascrun.run_local(kernels.tile_scalar, 1, x, scalar, z, N, op, False, soc=SOC_950)
    assert re.search(rf"AscendC::{op.capitalize()}s<\w+, 0>\(\w+, \w+, \w+, \w+\)", result.source)
    s = np.array(scalar, dtype)
    expected = x - s if op == "sub" else (x.astype(np.float32) / np.float32(s)).astype(dtype)
    np.testing.assert_array_equal(z, expected)


# ---- ReduceProd, ReduceMax/Min/Sum<T, Pattern::Reduce::AR|RA> (高阶API/归约操作) on the 950 ------------
# (for Ascend910B1 the nightly gives the sharedTmpBuffer a TBuf of 0 bytes, which InitBuffer refuses)
REDUCE = {"prod": np.prod, "sum": np.sum, "max": np.max, "min": np.min}


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("op, dtype", [(op, dtype) for op in sorted(REDUCE) for dtype in (np.float32, np.int32)
                                       if op != "prod" or dtype == np.float32], ids=str)  # ReduceProd: float only
def test_pattern_reductions_on_950(kernels, op, dim, dtype):
    rows, cols = 16, 40  # 40 floats: an inner axis of 160 bytes, not a multiple of 32 (the 950 takes it)
    rng = np.random.default_rng(4)
    if dtype == np.float32:
        x = (rng.uniform(0.8, 1.25, (rows, cols)) * rng.choice([-1, 1], (rows, cols))).astype(dtype)
    else:
        x = rng.integers(-1000, 1000, (rows, cols)).astype(dtype)
    z = np.zeros(cols if dim == 0 else rows, dtype)
    result = ascrun.run_local(kernels.reduce, 1, x, z, rows, cols, dim, op, soc=SOC_950)
    pattern = "RA" if dim == 0 else "AR"
    assert re.search(rf"AscendC::Reduce{op.capitalize()}<\w+, AscendC::Pattern::Reduce::{pattern}, \w+>"
                     r"\(\w+, \w+, \w+, shape, \w+\)", result.source)
    expected = REDUCE[op](x.astype(np.float64), axis=dim).astype(dtype)
    if op in ("max", "min") or dtype == np.int32:
        np.testing.assert_array_equal(z, expected)
    else:  # float32 accumulated in index order: a few roundings of 16 or 40 terms
        np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)


# ---- SetAtomicAdd/Max/Min and SetAtomicNone (基础API/原子操作): 4 cores store into the same GM ----------
ATOMIC = {"add": np.add, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("soc", [SOC_910B, SOC_950])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=str)
@pytest.mark.parametrize("op", sorted(ATOMIC))
def test_atomic_stores_combine_every_cores_tile(kernels, op, dtype, soc):
    cores, tile = 4, 32
    rng = np.random.default_rng(5)
    x = rng.integers(-50, 50, cores * tile).astype(dtype)  # integral values: a float sum is exact in any order
    z = rng.integers(-50, 50, tile).astype(dtype)
    expected = z.copy()
    for c in range(cores):
        expected = ATOMIC[op](expected, x[c * tile:(c + 1) * tile])
    result = ascrun.run_local(kernels.atomic, cores, x, z, tile, op, soc=soc)
    assert re.search(rf"AscendC::SetAtomic{op.capitalize()}<\w+>\(\);", result.source)
    assert "AscendC::SetAtomicNone();" in result.source
    np.testing.assert_array_equal(z, expected)


# ---- Broadcast with GetBroadcastTilingInfo (高阶API/张量变换/Broadcast.md): the Ascend 950's dynamic shapes --

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=str)
@pytest.mark.parametrize("rows, cols", [(4, 32), (50, 32), (3, 48)])
def test_broadcast_to_rows_on_950(kernels, rows, cols, dtype):
    x = (np.arange(cols) * 3 - 17).astype(dtype).reshape(1, cols)
    z = np.zeros((rows, cols), dtype)
    result = ascrun.run_local(kernels.broadcast_rows, 1, x, z, rows, cols, soc=SOC_950)
    assert re.search(r"AscendC::GetBroadcastTilingInfo<\w+, 3>\(3, dstShape, srcShape, false, \w+\);", result.source)
    assert re.search(r"AscendC::Broadcast\(\w+, \w+, dstShape, srcShape, &\w+\);", result.source)
    np.testing.assert_array_equal(z, np.broadcast_to(x, (rows, cols)))


# ---- refusals of written kernels (what asctile does not emit) -----------------------------------------
ARCH_910B, ARCH_950 = 2201, 3510  # the cpu toolchain's npu_arch for each (socs.py)


def run_written(body: str, npu_arch: int):
    """Builds a kernel `k(__gm__ float* unused)` of `body` for `npu_arch` and runs it on one block."""
    source = ('#include "kernel_operator.h"\n'
              f'extern "C" __global__ __aicore__ void k(__gm__ float* unused) {{\n{body}}}\n')
    target = pipeline.get_target("cpu")
    artifact = target.toolchain.build(source, "k", "AIV_ONLY", npu_arch)
    params = [{"name": "unused", "kind": "tensor", "dtype": "float32"}]
    target.runner.run(artifact, 1, params, ["explicit"], [np.zeros(8, np.float32)])


REDUCE_PROD = """  AscendC::LocalTensor<float> src{AscendC::TPosition::VECCALC, 0, 512};
  AscendC::LocalTensor<float> dst{AscendC::TPosition::VECCALC, 4096, 64};
  const uint32_t shape[2] = {SHAPE};
  AscendC::ReduceProd<float, AscendC::Pattern::Reduce::AR>(dst, src, shape, PAD);
"""


@pytest.mark.parametrize("shape, pad, message", [
    ("4, 32", "false", 'ReduceProd: srcInnerPad must be true on Atlas A2/A3 (ReduceProd.md: "当前只支持true")'),
    ("4, 10", "true", "ReduceProd: the inner axis of srcShape {4, 10} is 40 bytes, not a multiple of 32 (with "
                      "srcInnerPad the caller pads it: ReduceProd.md)"),
])
def test_pattern_reductions_keep_atlas_a2s_inner_axis_rules(shape, pad, message):
    with pytest.raises(ascrun.KernelError) as e:
        run_written(REDUCE_PROD.replace("SHAPE", shape).replace("PAD", pad), ARCH_910B)
    assert str(e.value) == f"block 0: {message}"


BROADCAST = """  AscendC::LocalTensor<float> src{AscendC::TPosition::VECCALC, 0, 64};
  AscendC::LocalTensor<float> dst{AscendC::TPosition::VECCALC, 4096, 512};
  const uint32_t dstShape[2] = {4, 32};
  const uint32_t srcShape[2] = {SRC};
  const uint32_t otherShape[2] = {8, 32};
  AscendC::BroadcastTiling tiling;
  AscendC::GetBroadcastTilingInfo<float>(2, dstShape, srcShape, false, tiling);
  AscendC::Broadcast(dst, src, DST, srcShape, &tiling);
"""


@pytest.mark.parametrize("src, dst, message", [
    ("2, 32", "dstShape", "GetBroadcastTilingInfo: srcShape[0] = 2 cannot broadcast to dstShape[0] = 4 (an axis is "
                          "either equal or 1 in srcShape)"),
    ("1, 32", "otherShape", "Broadcast: axis 0 of dstShape/srcShape is 8/1, the tiling's 4/1 (GetBroadcastTilingInfo "
                            "with these shapes first)"),
])
def test_broadcast_refuses_shapes_that_do_not_broadcast_or_match_the_tiling(src, dst, message):
    with pytest.raises(ascrun.KernelError) as e:
        run_written(BROADCAST.replace("SRC", src).replace("DST", dst), ARCH_950)
    assert str(e.value) == f"block 0: {message}"


HUGE_BROADCAST = """  AscendC::LocalTensor<float> src{AscendC::TPosition::VECCALC, 0, 64};
  AscendC::LocalTensor<float> dst{AscendC::TPosition::VECCALC, 4096, 512};
  const uint32_t dstShape[5] = {2, 1152, 571, 174763, 160465489};
  const uint32_t srcShape[5] = {1, 1152, 571, 174763, 160465489};
  AscendC::BroadcastTiling tiling;
  AscendC::GetBroadcastTilingInfo<float>(RANK, dstShape, srcShape, false, tiling);
  FORGE
  AscendC::Broadcast(dst, src, dstShape, srcShape, &tiling);
"""


@pytest.mark.parametrize("rank, forge, message", [
    # the shapes' products wrapped past 2^64 to 256 and 128 elements: 128 read past src (review)
    (5, "", "GetBroadcastTilingInfo: dstShape holds more than the 253952 elements a Unified Buffer could"),
    # a tiling's rank is the kernel's to write: 40 read dstShape[9..39] past the tiling
    (1, "tiling.rank = 40;", "Broadcast: the tiling's rank is 40, outside [1, 9] (GetBroadcastTilingInfo computes it)"),
], ids=["wrapping-shapes", "forged-rank"])
def test_broadcast_refuses_shapes_past_the_ub_and_a_forged_tiling(rank, forge, message):
    with pytest.raises(ascrun.KernelError) as e:
        run_written(HUGE_BROADCAST.replace("RANK", str(rank)).replace("FORGE", forge), ARCH_950)
    assert str(e.value) == f"block 0: {message}"


SUBS = """  AscendC::LocalTensor<float> src{AscendC::TPosition::VECCALC, 0, 64};
  AscendC::LocalTensor<float> dst{AscendC::TPosition::VECCALC, 4096, 64};
  AscendC::Subs(dst, 2.0f, src, 64);
"""


def test_subs_is_the_950s_only():
    with pytest.raises(BuildError) as e:
        run_written(SUBS, ARCH_910B)
    assert "static assertion failed: Subs: Ascend 950 only (Subs（灵活标量位置）.md)" in str(e.value)


SIN_CONFIG = """  AscendC::LocalTensor<float> src{AscendC::TPosition::VECCALC, 0, 64};
  AscendC::LocalTensor<float> dst{AscendC::TPosition::VECCALC, 4096, 64};
  AscendC::Duplicate(src, 70000.0f, 64);
  constexpr static AscendC::SinConfig config = {AscendC::SinAlgo::ALGO};
  AscendC::Sin<float, false, config>(dst, src, 64);
"""


def test_sins_radian_reduction_on_950_takes_any_input():
    """Sin.md: on the 950, RADIAN_REDUCTION "支持输入全值域"; the default polynomial takes [-65504, 65504]."""
    run_written(SIN_CONFIG.replace("ALGO", "RADIAN_REDUCTION"), ARCH_950)
    with pytest.raises(ascrun.KernelError) as e:
        run_written(SIN_CONFIG.replace("ALGO", "POLYNOMIAL_APPROXIMATION"), ARCH_950)
    assert str(e.value) == ("block 0: Sin: srcTensor[0] = 70000 is outside [-65504, 65504], the input range the "
                            "reference defines (Sin.md)")

"""bfloat16_t in the instructions the Atlas A2/A3 reference lists it for among those modelled: Cast
(float <-> bfloat16_t, bfloat16_t -> int32_t, every listed round mode), Duplicate and Copy, against
numpy models of bfloat16 (8-bit significand, float's exponent range).

pyasc 1.1.1 has no bfloat16 dtype: the kernel (kernels/vector_bf16.py) goes through pyasc's real
frontend with half in bfloat16_t's place, `half` becomes `bfloat16_t` in the Ascend C, and that
source is built by the cpu toolchain and run by the cpu runner, as run_local would. One build."""
import functools
import re

import numpy as np
import pytest

import ascrun
import vector_bf16 as vb
from ascrun.compiler import frontend, pipeline
from ascrun.compiler.bundle import collect
from ascrun.compiler.frontend import ArgSpec

pytestmark = pytest.mark.kernel

N = 2048
RINT, FLOOR, CEIL, ROUND, TRUNC = 1, 2, 3, 4, 5
SPECS = [ArgSpec("tensor", d) for d in ("float32", "uint16", "float32", "int32", "uint16")] + \
    [ArgSpec("scalar", "int", N)] + [ArgSpec("scalar", "int", 0)] * 3 + [ArgSpec("scalar", "uint64", 0)] * 2 + \
    [ArgSpec("scalar", "int", 0)] * 5 + [ArgSpec("scalar", "float", 0.0)]  # lo, hi: 64-bit masks


@functools.lru_cache(maxsize=None)
def build():
    result = frontend.run(collect(vb.bf16_kernel), SPECS, {})
    source = re.sub(r"\bhalf\b", "bfloat16_t", result.source)
    assert "bfloat16_t" in source and not re.search(r"\bhalf\b", source)
    target = pipeline.get_target("cpu")
    return result, target.toolchain.build(source, result.kernel_name, result.kernel_type), target.runner


def launch(xf, xb, zf, zi, zb, op, mode=RINT, form=0, lo=0, hi=0, repeat=1, strides=(1, 1, 8, 8), scalar=0.0):
    result, artifact, runner = build()
    values = {"xf": xf, "xb": xb, "zf": zf, "zi": zi, "zb": zb, "op": op, "mode": mode, "form": form, "lo": lo,
              "hi": hi, "repeat": repeat, "dbs": strides[0], "sbs": strides[1], "drs": strides[2], "srs": strides[3],
              "scalar": scalar}
    runner.run(artifact, 1, result.params, result.kernel_args, [values[p["name"]] for p in result.params])


# ---- numpy bfloat16 (as uint16 bits) ---------------------------------------------------------

def bf_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def bf_next(bits, up):
    b = bits.astype(np.int64)
    zero = (b & 0x7FFF) == 0
    step = np.where((b >= 0x8000) == up, b - 1, b + 1)
    return np.where(zero, 0x0001 if up else 0x8001, step).astype(np.uint16)


def f32_to_bf(x, mode):
    """float32 -> bfloat16 bits under a round mode (precision_conversion.md), overflow saturating."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    n = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # nearest even (no NaN here)
    xv, nv = x.astype(np.float64), bf_to_f32(n).astype(np.float64)
    lo = np.where(nv < xv, n, bf_next(n, False))
    hi = np.where(nv > xv, n, bf_next(n, True))
    lov, hiv = bf_to_f32(lo).astype(np.float64), bf_to_f32(hi).astype(np.float64)
    out = {RINT: n, FLOOR: lo, CEIL: hi, TRUNC: np.where(xv > 0, lo, hi),
           ROUND: np.where(xv - lov == hiv - xv, np.where(xv > 0, hi, lo), n)}[mode]
    out = np.where(nv == xv, n, out)
    inf = (out & 0x7FFF) == 0x7F80
    return np.where(inf, (out & 0x8000) | 0x7F7F, out).astype(np.uint16)  # x is finite: saturate


def to_integral(x, mode):
    return {RINT: np.rint, FLOOR: np.floor, CEIL: np.ceil, TRUNC: np.trunc,
            ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[mode](x.astype(np.float64))


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    xf = (rng.uniform(-300, 300, N) * rng.choice([1, 1e-30, 1e30], N)).astype(np.float32)
    xf[:8] = [1 + 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -(1 + 2 ** -8), 1 + 3 * 2 ** -8, 3.0e38, np.finfo(np.float32).max,
              2 ** -130, -0.0]  # ties, beyond a tie, the largest floats, a subnormal
    xb = f32_to_bf(rng.uniform(-1000, 1000, N).astype(np.float32), RINT)
    xb[:6] = f32_to_bf(np.array([0.5, 1.5, 2.5, -2.5, 64.5, -0.5], np.float32), RINT)
    return xf, xb, np.full(N, 7, np.float32), np.full(N, 7, np.int32), np.full(N, 0x1234, np.uint16)


@pytest.mark.parametrize("mode", [RINT, FLOOR, CEIL, ROUND, TRUNC])
def test_cast_float_to_bf16(mode):
    xf, xb, zf, zi, zb = arrays()
    expected = zb.copy()
    expected[:1000] = f32_to_bf(xf[:1000], mode)
    launch(xf, xb, zf, zi, zb, 0, mode, lo=1000)
    np.testing.assert_array_equal(zb, expected)
    if mode == RINT:
        assert list(zb[:6]) == [0x3F80, 0x3F81, 0xBF80, 0x3F82, 0x7F62, 0x7F7F]  # FLT_MAX saturates


def test_cast_float_to_bf16_masked():
    xf, xb, zf, zi, zb = arrays(1)
    expected = zb.copy()
    # float sets the repeat (64); bf16 holds them in 4 blocks; dst every other block
    for r in range(3):
        for j in range(40):
            expected[r * 64 + (j // 16) * 32 + j % 16] = f32_to_bf(xf[r * 64 + j:r * 64 + j + 1], RINT)[0]
    launch(xf, xb, zf, zi, zb, 0, RINT, form=1, lo=40, repeat=3, strides=(2, 1, 4, 8))
    np.testing.assert_array_equal(zb, expected)


def test_cast_float_to_bf16_round_mode_none_is_not_listed():
    xf, xb, zf, zi, zb = arrays()
    with pytest.raises(ascrun.KernelError) as e:
        launch(xf, xb, zf, zi, zb, 0, 0, lo=64)
    assert "Cast<bfloat16_t, float>: roundMode CAST_NONE is not supported for float -> bfloat16_t" in str(e.value)


def test_cast_bf16_to_float_is_exact():
    xf, xb, zf, zi, zb = arrays()
    expected = zf.copy()
    expected[:999] = bf_to_f32(xb[:999])
    launch(xf, xb, zf, zi, zb, 1, form=0, lo=999)
    np.testing.assert_array_equal(zf, expected)
    xf, xb, zf, zi, zb = arrays()
    expected = zf.copy()
    expected[:64 * 5] = bf_to_f32(xb[:64 * 5])
    launch(xf, xb, zf, zi, zb, 1, form=1, lo=64, repeat=5, strides=(1, 1, 8, 4))
    np.testing.assert_array_equal(zf, expected)


@pytest.mark.parametrize("mode", [RINT, FLOOR, CEIL, ROUND, TRUNC])
def test_cast_bf16_to_int32(mode):
    xf, xb, zf, zi, zb = arrays()
    expected = zi.copy()
    expected[:1000] = to_integral(bf_to_f32(xb[:1000]), mode).astype(np.int32)
    launch(xf, xb, zf, zi, zb, 2, mode, lo=1000)
    np.testing.assert_array_equal(zi, expected)


def test_duplicate_rounds_the_scalar_to_bf16():
    for scalar, bits in ((1 + 2 ** -8, 0x3F80), (1 + 2 ** -8 + 2 ** -10, 0x3F81), (-3.0, 0xC040)):
        xf, xb, zf, zi, zb = arrays()
        expected = zb.copy()
        expected[:100] = bits  # scalar (a float parameter) -> bfloat16_t, nearest even
        launch(xf, xb, zf, zi, zb, 3, form=0, lo=100, scalar=scalar)
        np.testing.assert_array_equal(zb, expected)
    xf, xb, zf, zi, zb = arrays()
    expected = zb.copy()
    for r in range(2):
        expected[r * 256 + np.arange(16)] = 0x3F81  # 16 per repeat, dst repeats 16 blocks apart
    launch(xf, xb, zf, zi, zb, 3, form=1, lo=16, repeat=2, strides=(1, 1, 16, 8), scalar=1 + 3 * 2 ** -9)
    np.testing.assert_array_equal(zb, expected)


def test_copy_moves_bf16_bits():
    xf, xb, zf, zi, zb = arrays()
    expected = zb.copy()
    sel = [j for j in range(128) if (0x00FF_0000_0000_F00F >> j) & 1 if j < 64] + \
        [j for j in range(64, 128) if (0x8000_0000_0000_0001 >> (j - 64)) & 1]
    for r in range(3):
        expected[r * 128 + np.array(sel)] = xb[r * 128 + np.array(sel)]
    launch(xf, xb, zf, zi, zb, 4, lo=0x00FF_0000_0000_F00F, hi=0x8000_0000_0000_0001, repeat=3)
    np.testing.assert_array_equal(zb, expected)

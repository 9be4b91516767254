"""Cast (count form) with its round modes, through run_local, against numpy models of 类型转换/Cast.md."""
import numpy as np
import pytest

import asc
import ascrun
import vector_cast as vk

N = 1024
RM = asc.RoundMode


def to_integral(x, mode):
    x = x.astype(np.float64)
    return {RM.CAST_RINT: np.rint, RM.CAST_NONE: np.rint, RM.CAST_FLOOR: np.floor, RM.CAST_CEIL: np.ceil,
            RM.CAST_TRUNC: np.trunc, RM.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[mode](x)


def to_half(x, mode):
    """float32 -> float16 under a round mode, from the neighbours of the nearest-even result."""
    x = x.astype(np.float64)
    n = x.astype(np.float16)
    nv = n.astype(np.float64)
    up = np.nextafter(n, np.float16(np.inf))
    down = np.nextafter(n, np.float16(-np.inf))
    lo = np.where(nv < x, n, down)
    hi = np.where(nv > x, n, up)
    if mode in (RM.CAST_RINT, RM.CAST_NONE):
        out = n
    elif mode == RM.CAST_FLOOR:
        out = lo
    elif mode == RM.CAST_CEIL:
        out = hi
    elif mode == RM.CAST_TRUNC:
        out = np.where(x > 0, lo, hi)
    elif mode == RM.CAST_ODD:
        out = np.where(lo.view(np.uint16) & 1, lo, hi)
    else:  # CAST_ROUND: ties away from zero
        tie = (x - lo.astype(np.float64)) == (hi.astype(np.float64) - x)
        out = np.where(tie, np.where(x > 0, hi, lo), n)
    return np.where(nv == x, n, out).astype(np.float16)


def run(x, dst_dtype, mode, count=1000):
    z = np.full(N, 3, dst_dtype)
    ascrun.run_local(vk.cast_kernel, 1, x, z, N, count, int(mode))
    return z


MODES = [RM.CAST_NONE, RM.CAST_RINT, RM.CAST_FLOOR, RM.CAST_CEIL, RM.CAST_ROUND, RM.CAST_TRUNC]


def _values(dtype, scale):
    rng = np.random.default_rng(3)
    x = (rng.uniform(-scale, scale, N)).astype(dtype)
    x[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0, -0.0], dtype)  # ties and exact values
    return x


@pytest.mark.parametrize("mode", MODES[1:] + [RM.CAST_ODD, RM.CAST_NONE])
def test_float_to_half(mode):
    x = _values(np.float32, 70000.0 / 64)
    x[8:12] = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -12, -(1 + 2 ** -11), 2 ** -20], np.float32)  # half ties, subnormal
    z = run(x, np.float16, mode)
    expected = np.full(N, 3, np.float16)
    expected[:1000] = to_half(x[:1000], mode)
    np.testing.assert_array_equal(z.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("mode", MODES[1:])
@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float16, np.int32), (np.float32, np.int16),
                                     (np.float16, np.int8), (np.float32, np.float32)])
def test_to_integral(src, dst, mode):
    x = _values(src, 100.0)
    z = run(x, dst, mode)
    expected = np.full(N, 3, dst)
    expected[:1000] = to_integral(x[:1000], mode).astype(dst)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("mode", [RM.CAST_RINT, RM.CAST_FLOOR, RM.CAST_CEIL, RM.CAST_TRUNC])
def test_int32_to_float_rounds_large_values(mode):
    x = np.random.default_rng(4).integers(-2 ** 30, 2 ** 30, N).astype(np.int32)
    z = run(x, np.float32, mode)
    xd = x[:1000].astype(np.float64)
    n = xd.astype(np.float32)
    lo = np.where(n.astype(np.float64) <= xd, n, np.nextafter(n, np.float32(-np.inf)))
    hi = np.where(n.astype(np.float64) >= xd, n, np.nextafter(n, np.float32(np.inf)))
    pick = {RM.CAST_RINT: n, RM.CAST_FLOOR: lo, RM.CAST_CEIL: hi, RM.CAST_TRUNC: np.where(xd > 0, lo, hi)}[mode]
    np.testing.assert_array_equal(z[:1000], pick)
    assert (z[1000:] == 3).all()


@pytest.mark.parametrize("src,dst", [(np.float16, np.float32), (np.int16, np.float32), (np.int8, np.float16),
                                     (np.uint8, np.float16), (np.int32, np.int64)])
def test_exact_widening(src, dst):
    x = _values(src, 100.0) if np.issubdtype(src, np.floating) else \
        np.random.default_rng(5).integers(np.iinfo(src).min, np.iinfo(src).max, N).astype(src)
    z = run(x, dst, RM.CAST_NONE)
    np.testing.assert_array_equal(z[:1000], x[:1000].astype(dst))


def test_out_of_range_integer_result_fails():
    x = np.zeros(N, np.float32)
    x[17] = 40000.0
    with pytest.raises(ascrun.KernelError) as e:
        run(x, np.int16, RM.CAST_RINT)
    assert "Cast<int16_t, float>(CAST_RINT): element 17 (40000) is outside the range of int16_t" in str(e.value)


def test_unsupported_round_mode_fails():
    with pytest.raises(ascrun.KernelError) as e:
        run(np.zeros(N, np.float32), np.int32, RM.CAST_NONE)
    assert "Cast<int32_t, float>: roundMode CAST_NONE is not supported for float -> int32_t" in str(e.value)

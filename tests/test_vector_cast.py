"""Cast in its count and mask + repeat forms, with its round modes, through run_local, against numpy
models of 类型转换/Cast.md and 数据结构/precision_conversion.md (rounding, saturation, the mixed-width
repeat geometry, int32_t -> half with SetDeqScale). One build per dtype pair."""
import numpy as np
import pytest

import asc
import ascrun
import vector_cast as vk
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 1024
RM = asc.RoundMode
COUNT, CONT, BITS, REG = 0, 1, 2, 3
MODES = [RM.CAST_NONE, RM.CAST_RINT, RM.CAST_FLOOR, RM.CAST_CEIL, RM.CAST_ROUND, RM.CAST_TRUNC]


def to_integral(x, mode, dtype=None):
    """x rounded to an integral value under mode; saturated to dtype's range when given."""
    x = x.astype(np.float64)
    r = {RM.CAST_RINT: np.rint, RM.CAST_NONE: np.rint, RM.CAST_FLOOR: np.floor, RM.CAST_CEIL: np.ceil,
         RM.CAST_TRUNC: np.trunc, RM.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[mode](x)
    if dtype is None:
        return r
    info = np.iinfo(dtype)
    return np.clip(r, info.min, info.max).astype(dtype)


def to_half(x, mode):
    """float32 -> float16 under a round mode, from the neighbours of the nearest-even result; a
    finite value beyond the half range saturates to +-65504."""
    x = x.astype(np.float64)
    with np.errstate(over="ignore"):
        n = x.astype(np.float16)
        up = np.nextafter(n, np.float16(np.inf))
        down = np.nextafter(n, np.float16(-np.inf))
    nv = n.astype(np.float64)
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
    out = np.where(nv == x, n, out).astype(np.float16)
    return np.where(np.isinf(out) & np.isfinite(x), np.sign(x) * np.float16(65504), out).astype(np.float16)


def deq(x, scale):
    """int32_t -> half: half(float(x) * scale), nearest even, saturated."""
    return np.clip(x.astype(np.float32) * np.float32(np.float16(scale)), -65504, 65504).astype(np.float16)


def launch(x, z, mode, form=COUNT, counter=0, lo=1000, hi=0, repeat=1, strides=(1, 1, 8, 8), scale=1.0, deq_set=1):
    ascrun.run_local(vk.cast_kernel, 1, x, z, N, int(mode), form, counter, np.uint64(lo), np.uint64(hi), repeat,
                     *strides, scale, deq_set)


def run(x, dst_dtype, mode, count=1000):
    z = np.full(N, 3, dst_dtype)
    launch(x, z, mode, COUNT, lo=count)
    return z


def run_masked(x, dst_dtype, mode, model, form, counter=0, lo=0, hi=0, repeat=1, strides=(1, 1, 8, 8), scale=1.0):
    """(result, expected): model(source values) -> destination values at the touched positions."""
    z = np.full(N, 3, dst_dtype)
    sd, ss = np.dtype(dst_dtype).itemsize, x.dtype.itemsize
    pd, ps = masked_positions(max(sd, ss), counter, form in (BITS, REG), lo, hi, repeat, strides[:2], strides[2:],
                              itemsizes=(sd, ss))
    expected = z.copy()
    expected[pd] = model(x[ps])
    launch(x, z, mode, form, counter, lo, hi, repeat, strides, scale)
    return z, expected


def _values(dtype, scale):
    rng = np.random.default_rng(3)
    x = (rng.uniform(-scale, scale, N)).astype(dtype)
    x[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0, -0.0], dtype)  # ties and exact values
    return x


def equal(z, expected):
    if z.dtype == np.float16:
        np.testing.assert_array_equal(z.view(np.uint16), expected.view(np.uint16))
    else:
        np.testing.assert_array_equal(z, expected)


# ---- count form ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES[1:] + [RM.CAST_ODD, RM.CAST_NONE])
def test_float_to_half(mode):
    x = _values(np.float32, 70000.0 / 64)
    x[8:12] = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -12, -(1 + 2 ** -11), 2 ** -20], np.float32)  # half ties, subnormal
    z = run(x, np.float16, mode)
    expected = np.full(N, 3, np.float16)
    expected[:1000] = to_half(x[:1000], mode)
    equal(z, expected)


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


def test_out_of_range_results_saturate():
    # precision_conversion.md: overflow saturates (float -> int16_t: 2^22 + 0.5 gives 2^15 - 1).
    x = np.zeros(N, np.float32)
    x[:6] = [40000.0, -40000.0, 2 ** 22 + 0.5, np.inf, -np.inf, 32767.4]
    z = run(x, np.int16, RM.CAST_RINT)
    assert list(z[:6]) == [32767, -32768, 32767, 32767, -32768, 32767]
    x = _values(np.float32, 1.0)
    x[:5] = [70000.0, -70000.0, 65519.0, np.inf, 65504.0]
    for mode in (RM.CAST_RINT, RM.CAST_CEIL, RM.CAST_FLOOR):
        z = run(x, np.float16, mode)
        assert list(z[:5]) == [65504.0, -65504.0, 65504.0, np.inf, 65504.0]  # infinities stay infinite
        equal(z[:1000], to_half(x[:1000], mode))
    x = np.zeros(N, np.float16)
    x[:4] = [127.5, 300.0, -129.0, -300.0]
    assert list(run(x, np.int8, RM.CAST_RINT)[:4]) == [127, 127, -128, -128]  # 2^7 - 0.5 gives 2^7 - 1


def test_nan_to_an_integer_fails():
    x = np.zeros(N, np.float32)
    x[17] = np.nan
    with pytest.raises(ascrun.KernelError) as e:
        run(x, np.int16, RM.CAST_RINT)
    assert ("block 0: Cast<int16_t, float>(CAST_RINT): src element 17 (nan) is NaN, whose conversion to int16_t the "
            "reference does not define") in str(e.value)


def test_negative_to_uint8_fails():
    x = np.ones(N, np.float16)
    x[9] = -0.25
    with pytest.raises(ascrun.KernelError) as e:
        run(x, np.uint8, RM.CAST_RINT)
    assert ("Cast<uint8_t, half>(CAST_RINT): src element 9 (-0.25) is negative, which the reference treats as an "
            "exception for uint8_t") in str(e.value)


def test_unsupported_round_mode_fails():
    with pytest.raises(ascrun.KernelError) as e:
        run(np.zeros(N, np.float32), np.int32, RM.CAST_NONE)
    assert "Cast<int32_t, float>: roundMode CAST_NONE is not supported for float -> int32_t" in str(e.value)


# ---- int32_t -> half: SetDeqScale ------------------------------------------------------------

def test_int32_to_half_dequantizes_with_the_deq_scale():
    x = np.random.default_rng(6).integers(-5000, 5000, N).astype(np.int32)
    x[:3] = [2 ** 30, -2 ** 30, 7]
    for mode in (RM.CAST_NONE, RM.CAST_ODD):  # roundMode has no effect
        z = np.full(N, 3, np.float16)
        launch(x, z, mode, COUNT, lo=1000, scale=0.37)
        expected = np.full(N, 3, np.float16)
        expected[:1000] = deq(x[:1000], 0.37)
        equal(z, expected)
        assert list(z[:2]) == [65504.0, -65504.0]
    z, expected = run_masked(x, np.float16, RM.CAST_NONE, lambda v: deq(v, -3.0), CONT, lo=60, repeat=5,
                             strides=(1, 2, 4, 16), scale=-3.0)
    equal(z, expected)


def test_int32_to_half_without_a_deq_scale_fails():
    with pytest.raises(ascrun.KernelError) as e:
        launch(np.zeros(N, np.int32), np.zeros(N, np.float16), RM.CAST_NONE, deq_set=0)
    assert "Cast<half, int32_t>: the deq scale was never set" in str(e.value)


# ---- mask + repeat forms ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES + [RM.CAST_ODD])
def test_masked_float_to_half_every_mode(mode):
    # float sets the repeat (64 elements, 8 blocks); the half dst holds them in 4 blocks: dst
    # blocks every other block, src repeats with a gap.
    x = _values(np.float32, 70000.0 / 64)
    z, expected = run_masked(x, np.float16, mode, lambda v: to_half(v, mode), CONT, lo=50, repeat=6,
                             strides=(2, 1, 8, 10))
    equal(z, expected)


@pytest.mark.parametrize("mode", MODES[1:])
def test_masked_half_to_int32_widens(mode):
    # Cast.md's example: half -> int32_t, 64 elements a repeat, dstRepStride 8, srcRepStride 4.
    x = _values(np.float16, 300.0)
    for form, lo, hi in ((CONT, 64, 0), (BITS, 0x8000_0000_0F0F_F00F, 0)):
        z, expected = run_masked(x, np.int32, mode, lambda v: to_integral(v, mode, np.int32), form, lo=lo, hi=hi,
                                 repeat=8, strides=(1, 1, 8, 4))
        equal(z, expected)
    z, expected = run_masked(x, np.int32, mode, lambda v: to_integral(v, mode, np.int32), CONT, lo=33, repeat=3,
                             strides=(3, 2, 24, 8))
    equal(z, expected)


def test_masked_half_to_uint8_and_its_faults():
    # half sets the repeat (128); the uint8_t dst holds them in 4 blocks.
    x = np.abs(_values(np.float16, 400.0))
    z, expected = run_masked(x, np.uint8, RM.CAST_ROUND, lambda v: to_integral(v, RM.CAST_ROUND, np.uint8), BITS,
                             lo=0xFFFF_0000_FFFF_0001, hi=0x8000_0000_0000_00FF, repeat=3, strides=(1, 1, 4, 8))
    equal(z, expected)
    assert (z == 255).any()  # values above 255 saturate
    x[5] = -3
    with pytest.raises(ascrun.KernelError) as e:
        launch(x, np.zeros(N, np.uint8), RM.CAST_ROUND, CONT, lo=128, repeat=1, strides=(1, 1, 4, 8))
    assert "Cast<uint8_t, half>(CAST_ROUND): src element 5 (-3) is negative" in str(e.value)
    with pytest.raises(ascrun.KernelError) as e:
        launch(x, np.zeros(N, np.uint8), RM.CAST_ROUND, CONT, lo=129, repeat=1)
    assert "Cast<half>: mask 129 is outside [0, 128]" in str(e.value)


def test_masked_int32_to_int64_repeats_hold_32_elements():
    x = np.random.default_rng(7).integers(-2 ** 31, 2 ** 31 - 1, N).astype(np.int32)
    for form, lo in ((CONT, 32), (CONT, 17), (BITS, 0xF00F_0FF1)):
        z, expected = run_masked(x, np.int64, RM.CAST_NONE, lambda v: v.astype(np.int64), form, lo=lo, repeat=5,
                                 strides=(1, 1, 8, 4))
        equal(z, expected)
    with pytest.raises(ascrun.KernelError) as e:
        launch(x, np.zeros(N, np.int64), RM.CAST_NONE, CONT, lo=33, repeat=1)
    assert "Cast<int64_t>: mask 33 is outside [0, 32]" in str(e.value)
    # bits past the 32 elements of a repeat select nothing (Atlas A2/A3 take the mask as it is)
    z, expected = run_masked(x, np.int64, RM.CAST_NONE, lambda v: v.astype(np.int64), BITS,
                             lo=0xFFFF_FFFF_0000_0F0F, repeat=2, strides=(1, 1, 8, 4))
    equal(z, expected)
    z_low, _ = run_masked(x, np.int64, RM.CAST_NONE, lambda v: v.astype(np.int64), BITS, lo=0x0F0F, repeat=2,
                          strides=(1, 1, 8, 4))
    equal(z, z_low)


def test_masked_register_and_counter_mode():
    x = _values(np.float32, 70000.0 / 64)
    model = lambda v: to_half(v, RM.CAST_TRUNC)  # noqa: E731
    for form, counter, lo in ((REG, 0, 0xFFFF_0000_0000_FF0F), (CONT, 1, 300), (BITS, 1, 77), (REG, 1, 333)):
        z, expected = run_masked(x, np.float16, RM.CAST_TRUNC, model, form, counter=counter, lo=lo, repeat=3,
                                 strides=(1, 1, 4, 8))
        equal(z, expected)


def test_masked_zero_repeat_is_a_nop():
    z = np.full(N, 3, np.float16)
    launch(_values(np.float32, 10.0), z, RM.CAST_RINT, CONT, lo=64, repeat=0)
    assert (z == 3).all()

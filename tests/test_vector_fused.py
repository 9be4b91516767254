"""The compound instructions AddRelu, SubRelu, FusedMulAdd, FusedMulAddRelu, MulAddDst, MulCast,
AddReluCast, SubReluCast, AddDeqRelu and Axpy's (float, half) mask form, in every call form pyasc
emits, through run_local, against numpy models written from 复合计算/*.md. One build."""
import functools

import numpy as np
import pytest

import ascrun
import vector_fused as vf
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 2048
DTYPES = {"h": np.float16, "f": np.float32, "s": np.int16, "i": np.int32, "b": np.int8, "u": np.uint8}
NAMES = ["h0", "h1", "hz", "f0", "f1", "fz", "s0", "s1", "sz", "i0", "i1", "bz", "uz"]
COUNT, CONT, BITS, REG = 0, 1, 2, 3
FULL = 2**64 - 1


def op_index(fn, dst, src):
    return next(k for k, row in enumerate(vf.OPS) if row[0] == fn and row[1] == dst and row[2] == src)


def relu(v):
    return np.where(v > 0, v, np.zeros_like(v))  # +0 for -0 and negatives, as max(x, 0) with x first


def saturate(v, dtype):
    """Round to nearest even, then clamp to the integer dtype's range (precision_conversion.md)."""
    info = np.iinfo(dtype)
    return np.clip(np.rint(v.astype(np.float64)), info.min, info.max).astype(dtype)


def to_half(v):
    """float32 -> half, nearest even, finite overflow saturating to +-65504."""
    return np.clip(v, -65504, 65504).astype(np.float16)


def model(fn, d, a, b, z, scalar):
    """dst values from source values a, b and the old dst values z (all at the touched positions)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if fn == "add_relu":
            return relu(a + b)
        if fn == "sub_relu":
            return relu(a - b)
        if fn == "fused_mul_add":
            return (a * z) + b  # the product rounds to the dtype, then the sum
        if fn == "fused_mul_add_relu":
            return relu((a * z) + b)
        if fn == "mul_add_dst":
            return (a * b) + z
        if fn == "mul_cast":
            return saturate(a * b, DTYPES[d[0]])  # the half product, RINT, saturated
        if fn in ("add_relu_cast", "sub_relu_cast"):
            v = relu(a + b if fn == "add_relu_cast" else a - b)
            return to_half(v) if d == "hz" else saturate(v, np.int8)
        if fn == "add_deq_relu":
            scale = np.float32(np.float16(scalar))
            return relu(to_half((a + b).astype(np.float32) * scale))
        if fn == "axpy":
            return a.astype(np.float32) * np.float32(np.float16(scalar)) + z
    raise AssertionError(fn)


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    arrays = {
        "h0": rng.uniform(-4, 4, N).astype(np.float16), "h1": rng.uniform(-4, 4, N).astype(np.float16),
        "f0": rng.uniform(-4, 4, N).astype(np.float32), "f1": rng.uniform(-4, 4, N).astype(np.float32),
        "s0": rng.integers(-30000, 30000, N).astype(np.int16), "s1": rng.integers(-30000, 30000, N).astype(np.int16),
        "i0": rng.integers(-3000, 3000, N).astype(np.int32), "i1": rng.integers(-3000, 3000, N).astype(np.int32),
    }
    for name in ("hz", "fz", "sz", "bz", "uz"):
        arrays[name] = np.full(N, 7, DTYPES[name[0]])
    arrays["hz"] = rng.uniform(-2, 2, N).astype(np.float16)  # read by FusedMulAdd / MulAddDst
    arrays["fz"] = rng.uniform(-2, 2, N).astype(np.float32)
    return arrays


def itemsize(name):
    return np.dtype(DTYPES[name[0]]).itemsize


def launch(arrays, op, form, counter=0, lo=0, hi=0, repeat=1, strides=(1, 1, 1, 8, 8, 8), scalar=0.5, deq=1,
           alias=0):
    _, d, a, _ = vf.OPS[op]
    wide = max(itemsize(d), itemsize(a))
    return ascrun.run_local(vf.fused_kernel, 1, *(arrays[k] for k in NAMES), N, op, form, counter, wide, deq,
                            np.uint64(lo), np.uint64(hi), repeat, *strides, scalar, alias).source


@functools.cache
def mul_cast_mask_is_a_placeholder() -> bool:
    """pyasc's nightly writes asc.mul_cast's mask forms as MulCast<T, half, 0>: isSetMask = false, so
    the mask argument is a placeholder and the mask register applies (MulCast.md, isSetMask); pyasc
    1.1.1 writes MulCast(...), isSetMask = true. (The nightly's mul_cast has no is_set_mask to ask.)"""
    return "MulCast<int8_t, half, 0>(" in launch(inputs(), op_index("mul_cast", "bz", "h0"), COUNT, lo=64)


def positions(d, a, form, counter, lo, hi, repeat, strides):
    """Element indices of dst, src0, src1 touched, in hardware order."""
    if form == COUNT:
        return [np.arange(lo)] * 3
    sd, ss = itemsize(d), itemsize(a)
    # REG: SetVectorMask(hi, lo) put the bits in the register (in counter mode, the count)
    return masked_positions(max(sd, ss), counter, form in (BITS, REG), lo, hi, repeat, strides[:3], strides[3:],
                            itemsizes=(sd, ss, ss))


def run(fn, dst, src, form, counter=0, lo=0, hi=0, repeat=1, strides=(1, 1, 1, 8, 8, 8), scalar=0.5, arrays=None):
    """Runs one row of OPS; returns (the five destinations, their expected values)."""
    op = op_index(fn, dst, src)
    _, d, a, b = vf.OPS[op]
    arrays = arrays or inputs()
    expected = {k: arrays[k].copy() for k in ("hz", "fz", "sz", "bz", "uz")}
    if fn == "mul_cast" and form != COUNT and mul_cast_mask_is_a_placeholder():
        assert counter == 0 and form != REG, "modelled for normal mode and the mask forms only"
        # the register as ascrun starts a block: every bit (core.h's BlockContext, as ResetMask leaves it)
        pd, p0, p1 = positions(d, a, REG, counter, FULL, FULL, repeat, strides)
    else:
        pd, p0, p1 = positions(d, a, form, counter, lo, hi, repeat, strides)
    assert len(np.unique(pd)) == len(pd), "the model assumes each dst element is written once"
    expected[d][pd] = model(fn, d, arrays[a][p0], arrays[b][p1] if b else None, arrays[d][pd], scalar)
    launch(arrays, op, form, counter, lo, hi, repeat, strides, scalar)
    return {k: arrays[k] for k in expected}, expected


def contiguous(dst, src):
    """Repeat strides that keep every operand contiguous: a narrower operand's repeat is fewer blocks."""
    wide = max(itemsize(dst), itemsize(src))
    return (1, 1, 1, 8 * itemsize(dst) // wide, 8 * itemsize(src) // wide, 8 * itemsize(src) // wide)


def check(got, expected):
    for k in expected:
        if expected[k].dtype == np.float16:
            np.testing.assert_array_equal(got[k].view(np.uint16), expected[k].view(np.uint16), err_msg=k)
        else:
            np.testing.assert_array_equal(got[k], expected[k], err_msg=k)


SAME_TYPE = [(fn, d, s) for fn, d, s, _ in vf.OPS if d[0] == s[0] and fn != "axpy"]
MIXED = [(fn, d, s) for fn, d, s, _ in vf.OPS if d[0] != s[0]]


@pytest.mark.parametrize("fn,dst,src", SAME_TYPE + MIXED)
def test_count_form_with_a_tail(fn, dst, src):
    check(*run(fn, dst, src, COUNT, lo=1000 + 7))


@pytest.mark.parametrize("fn,dst,src", SAME_TYPE + MIXED)
def test_continuous_mask_with_strides(fn, dst, src):
    wide = max(np.dtype(DTYPES[dst[0]]).itemsize, np.dtype(DTYPES[src[0]]).itemsize)
    per = 256 // wide
    # dst every other block; src0 overlapping repeats (reads only); src1 with gaps; a partial mask.
    check(*run(fn, dst, src, CONT, lo=per - 5, repeat=3, strides=(2, 1, 3, 16, 4, 24)))


@pytest.mark.parametrize("fn,dst,src", SAME_TYPE + MIXED)
def test_bit_mask(fn, dst, src):
    wide = max(itemsize(dst), itemsize(src))
    hi = 0x0123_4567_89AB_CDEF if wide == 2 else 0
    check(*run(fn, dst, src, BITS, lo=0x5A5A_0F0F_FFFF_0001, hi=hi, repeat=4, strides=contiguous(dst, src)))


@pytest.mark.parametrize("fn,dst,src", [("add_relu", "hz", "h0"), ("fused_mul_add", "fz", "f0"),
                                        ("mul_add_dst", "hz", "h0"), ("add_relu_cast", "bz", "h0"),
                                        ("sub_relu_cast", "hz", "f0"), ("add_deq_relu", "hz", "i0"),
                                        ("axpy", "fz", "h0")])
def test_mask_register_and_counter_mode(fn, dst, src):
    wide = max(itemsize(dst), itemsize(src))
    strides = contiguous(dst, src)
    # normal mode, isSetMask = false: the register's bits
    check(*run(fn, dst, src, REG, lo=0xF0F0_F0F0_F0F0_F0F0, hi=0xFFFF_0000_0000_FFFF if wide == 2 else 0, repeat=2,
               strides=strides))
    # counter mode: the mask argument is the count: several repeats and a tail smaller than a block;
    # repeatTime is ignored
    check(*run(fn, dst, src, CONT, counter=1, lo=300, repeat=1, strides=strides))
    check(*run(fn, dst, src, BITS, counter=1, lo=77, repeat=9, strides=strides))
    check(*run(fn, dst, src, REG, counter=1, lo=333, repeat=9, strides=strides))


def test_add_relu_accumulates_into_dst_as_src1_with_zero_repeat_strides():
    # 通用地址重叠约束's exception for AddRelu/SubRelu on half/float: dst may be src1 when
    # dstRepStride or src1RepStride is 0; repeats run in order, each reading the last one's result.
    arrays = inputs()
    expected = arrays["hz"].copy()
    for r in range(3):
        expected[:100] = relu(arrays["h0"][r * 128:r * 128 + 100] + expected[:100])
    launch(arrays, 0, CONT, lo=100, repeat=3, strides=(1, 1, 1, 0, 8, 0), alias=1)
    np.testing.assert_array_equal(arrays["hz"].view(np.uint16), expected.view(np.uint16))


def test_dst_may_be_src0_when_they_coincide():
    arrays = inputs()
    expected = arrays["hz"].copy()
    expected[:256] = (expected[:256] * expected[:256]) + arrays["h1"][:256]  # src0 * dst + src1, src0 = dst
    launch(arrays, 0, CONT, lo=128, repeat=2, alias=2)
    np.testing.assert_array_equal(arrays["hz"].view(np.uint16), expected.view(np.uint16))


def test_overlap_outside_the_exception_fails():
    msg = _fails("add_relu", "hz", "h0", CONT, lo=128, repeat=2, strides=(1, 1, 1, 8, 8, 4), alias=1)
    assert "block 0: AddRelu: dst range [0x2000, 0x2200) overlaps src1 range [0x2000, 0x2180)" in msg
    msg = _fails("add_relu_cast", "hz", "f0", CONT, lo=64, repeat=1, strides=(1, 1, 1, 4, 8, 8), alias=3)
    assert ("AddReluCast: dst range [0x3000, 0x3080) overlaps src0 range [0x3000, 0x3100), whose element size "
            "differs") in msg


def test_cast_results_saturate_and_round_to_nearest_even():
    arrays = inputs()
    arrays["h0"][:6] = np.array([2.5, 3.5, -2.5, 100, -100, 0.5], np.float16)
    arrays["h1"][:6] = np.array([1, 1, 1, 3, 3, 1], np.float16)  # products 2.5 3.5 -2.5 300 -300 0.5
    got, expected = run("mul_cast", "bz", "h0", COUNT, lo=64, arrays=arrays)
    assert list(got["bz"][:6]) == [2, 4, -2, 127, -128, 0]
    check(got, expected)
    arrays = inputs()
    arrays["h0"][:6] = np.array([2.5, 3.5, -2.5, 100, -100, 0.5], np.float16)
    arrays["h1"][:6] = np.array([1, 1, 1, 3, 3, 1], np.float16)
    got, expected = run("mul_cast", "uz", "h0", COUNT, lo=64, arrays=arrays)
    assert list(got["uz"][:6]) == [2, 4, 0, 255, 0, 0]  # a negative product saturates to 0
    check(got, expected)
    arrays = inputs()
    arrays["f0"][:3] = [60000.0, 70000.0, 1.0]
    arrays["f1"][:3] = [10000.0, -1.0, 2 ** -30]
    got, expected = run("add_relu_cast", "hz", "f0", COUNT, lo=64, arrays=arrays)
    assert list(got["hz"][:3]) == [65504.0, 65504.0, 1.0]  # 70000 and 69999 saturate
    check(got, expected)


def test_add_deq_relu_scales_the_int32_sum():
    arrays = inputs()
    arrays["i0"][:4] = [70, 36, -43, 2 ** 30]
    arrays["i1"][:4] = [19, 33, 34, 2 ** 30]  # 2^31 wraps to -2^31: Relu gives 0
    got, expected = run("add_deq_relu", "hz", "i0", COUNT, lo=512, scalar=0.1, arrays=arrays)
    np.testing.assert_allclose(got["hz"][:3].astype(np.float64), [8.9, 6.9, 0.0], rtol=2e-3)
    assert got["hz"][3] == 0
    check(got, expected)


def test_zero_count_and_zero_repeat_are_nops():
    for form, lo, repeat in ((COUNT, 0, 1), (CONT, 64, 0), (CONT, 0, 3)):
        got, expected = run("fused_mul_add", "fz", "f0", form, lo=lo, repeat=repeat)
        check(got, expected)


def _fails(fn, dst, src, form, **kw):
    arrays = inputs()
    with pytest.raises(ascrun.KernelError) as e:
        launch(arrays, op_index(fn, dst, src), form, **kw)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_add_deq_relu_without_a_deq_scale_fails():
    msg = _fails("add_deq_relu", "hz", "i0", COUNT, lo=64, deq=0)
    assert "block 0: AddDeqRelu: the deq scale was never set" in msg and "SetDeqScale(half scale)" in msg


def test_mixed_width_mask_is_the_wider_types():
    if mul_cast_mask_is_a_placeholder():  # not checked: the register's 128 bits apply
        check(*run("mul_cast", "bz", "h0", CONT, lo=129, repeat=1))
    else:
        msg = _fails("mul_cast", "bz", "h0", CONT, lo=129, repeat=1)
        assert "MulCast<half>: mask 129 is outside [0, 128]" in msg
    msg = _fails("add_deq_relu", "hz", "i0", CONT, lo=65, repeat=1)
    assert "AddDeqRelu<int32_t>: mask 65 is outside [0, 64]" in msg


def test_high_mask_word_is_ignored_when_the_wider_type_is_32_bit():
    # int32 sets the repeat (64 elements): mask[1] selects none of them (Atlas A2/A3 do not check it).
    check(*run("add_deq_relu", "hz", "i0", BITS, lo=0x5A5A_0F0F_FFFF_0001, hi=0xFFFF_FFFF_FFFF_FFFF, repeat=2,
               strides=contiguous("hz", "i0")))


def test_repeats_rewriting_dst_they_read_fail():
    # FusedMulAdd reads dst: with dstRepStride 0, repeat 2 would read what repeat 1 wrote.
    msg = _fails("fused_mul_add", "hz", "h0", CONT, lo=128, repeat=2, strides=(1, 1, 1, 0, 8, 8))
    assert "block 0: FusedMulAdd: dst range" in msg and "overlaps dst (also read) range" in msg


def test_nan_cast_to_an_integer_fails():
    arrays = inputs()
    arrays["h0"][5] = np.inf
    arrays["h1"][5] = 0  # inf * 0 = NaN
    with pytest.raises(ascrun.KernelError) as e:
        launch(arrays, op_index("mul_cast", "bz", "h0"), COUNT, lo=64)
    assert ("block 0: MulCast<int8_t, half>: src0 element 5 and its src1 element give NaN before the cast to "
            "int8_t, which the reference does not define") in str(e.value)
    arrays = inputs()
    arrays["h0"][130] = np.inf
    arrays["h1"][130] = -np.inf  # inf + -inf = NaN, and Relu keeps it
    with pytest.raises(ascrun.KernelError) as e:
        launch(arrays, op_index("add_relu_cast", "bz", "h0"), CONT, lo=100, repeat=2, strides=(1, 1, 1, 4, 8, 8))
    assert "AddReluCast<int8_t, half>: src0 element 130 and its src1 element give NaN" in str(e.value)

"""Compare, CompareScalar, GetCmpMask/SetCmpMask and Select through run_local, against numpy models
written from the Ascend C reference (比较与选择/Compare.md, Compare（结果存入寄存器）.md, Compares.md,
GetCmpMask/SetCmpMask(ISASI).md, Select.md) for Atlas A2/A3. Builds: compare_kernel float/half,
compare_int32_kernel, select_kernel float/half, select_register_tensor_kernel (a build error)."""
import numpy as np
import pytest

import ascrun
import vector_cmpsel as vc
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 1024
POISON = 0xA5
SCRATCH = 184 * 1024
LT, GT, EQ, LE, GE, NE = range(6)


def cmp(mode, a, b):
    """The comparison of the reference; NaN compares false except under NE (IEEE)."""
    with np.errstate(invalid="ignore"):
        return {LT: a < b, GT: a > b, EQ: a == b, LE: a <= b, GE: a >= b, NE: a != b}[mode]


def bits_of(b):
    """Element k of a result is bit k % 8 of byte k / 8."""
    return np.unpackbits(np.asarray(b, np.uint8), bitorder="little").astype(bool)


def pack(bools):
    return np.packbits(np.asarray(bools, bool), bitorder="little")


def inputs(dtype, seed=0):
    """Small integers (many ties) with NaN, infinities and signed zeros among them."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 4, N).astype(dtype)
    y = rng.integers(-4, 4, N).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        for arr in (x, y):
            arr[rng.choice(N, 40, replace=False)] = np.nan
            arr[rng.choice(N, 20, replace=False)] = np.inf
            arr[rng.choice(N, 20, replace=False)] = -np.inf
        x[rng.choice(N, 30, replace=False)] = -0.0
        y[rng.choice(N, 30, replace=False)] = 0.0
    return x, y


# ---- Compare / CompareScalar with dst --------------------------------------------------------------

def run_compare(dtype, form, mode=GE, count=0, lo=0, hi=0, repeat=1, strides=(1, 1, 8, 8), dst=(1, 8), scalar=0.0,
                preset=0, counter=0, zaddr=None, goff=0, seed=0):
    x, y = inputs(dtype, seed)
    z = np.random.default_rng(seed + 1).integers(0, 256, 256).astype(np.uint8)
    z0 = z.copy()
    zaddr = 2 * N * np.dtype(dtype).itemsize if zaddr is None else zaddr
    ascrun.run_local(vc.compare_kernel, 1, x, y, z, N, form, mode, count, np.uint64(lo), np.uint64(hi), repeat,
                     *strides, *dst, scalar, preset, counter, zaddr, goff)
    return x, y, z0, z


def to_dst_model(dtype, mode, x, rhs, z0, repeat, s0b=1, s0r=8, s1b=1, s1r=8):
    """Compare/CompareScalar with dst: every element of each repeat; bits packed repeat after repeat.
    rhs: src1 array or a scalar."""
    per = 256 // np.dtype(dtype).itemsize
    p0, p1 = masked_positions(np.dtype(dtype).itemsize, False, False, per, 0, repeat, [s0b, s1b], [s0r, s1r])
    r = cmp(mode, x[p0], rhs[p1] if isinstance(rhs, np.ndarray) else rhs)
    expected = z0.copy()
    expected[:len(r) // 8] = pack(r)
    return expected


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [LT, GT, EQ, LE, GE, NE])
def test_compare_count_form_every_mode(dtype, mode):
    x, y, z0, z = run_compare(dtype, vc.COUNT, mode, count=N)
    np.testing.assert_array_equal(z, to_dst_model(dtype, mode, x, y, z0, N * np.dtype(dtype).itemsize // 256))


def test_compare_count_form_compares_whole_repeats_only():
    # 1000 floats: 15 whole repeats (960 elements, 120 bytes); the last 40 elements are not compared.
    x, y, z0, z = run_compare(np.float32, vc.COUNT, LT, count=1000)
    expected = to_dst_model(np.float32, LT, x, y, z0, 15)
    np.testing.assert_array_equal(z, expected)
    assert (z[120:] == z0[120:]).all()


def test_compare_examples_of_the_reference():
    # Compare.md: src0 = [2 3 5 7 11 13 17 19], src1 = [2 4 6 8 10 12 14 16] -> GT 0b11110000, GE
    # 0b11110001, LE 0b00001111, EQ 0b00000001, NE 0b11111110 (LSB = element 0).
    for mode, byte in ((GT, 0xF0), (GE, 0xF1), (LE, 0x0F), (EQ, 0x01), (NE, 0xFE), (LT, 0x0E)):
        x = np.resize(np.array([2, 3, 5, 7, 11, 13, 17, 19], np.float32), N)
        y = np.resize(np.array([2, 4, 6, 8, 10, 12, 14, 16], np.float32), N)
        z = np.zeros(256, np.uint8)
        ascrun.run_local(vc.compare_kernel, 1, x, y, z, N, vc.COUNT, mode, 64, np.uint64(0), np.uint64(0), 1, 1, 1, 8,
                         8, 1, 8, 0.0, 0, 0, 8192, 0)
        assert (z[:8] == byte).all(), (mode, z[:8])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [LT, GT, EQ, LE, GE, NE])
def test_compare_mask_form_ignores_the_mask_and_dst_strides(dtype, mode):
    # Atlas A2/A3: the mask is a reserved parameter, the dst strides are not used; src strides are.
    x, y, z0, z = run_compare(dtype, vc.MASK, mode, lo=5, repeat=3, strides=(2, 1, 16, 4), dst=(3, 1))
    np.testing.assert_array_equal(z, to_dst_model(dtype, mode, x, y, z0, 3, 2, 16, 1, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_compare_bit_mask_form(dtype):
    x, y, z0, z = run_compare(dtype, vc.BITS, GE, lo=0x0F, hi=0, repeat=4, strides=(1, 2, 8, 16))
    np.testing.assert_array_equal(z, to_dst_model(dtype, GE, x, y, z0, 4, 1, 8, 2, 16))


def test_compare_zero_repeat_is_a_nop():
    x, y, z0, z = run_compare(np.float32, vc.MASK, LT, lo=64, repeat=0)
    np.testing.assert_array_equal(z, z0)


def test_compare_int32_eq():
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 3, 512).astype(np.int32)
    y = rng.integers(-3, 3, 512).astype(np.int32)
    z = np.zeros(256, np.uint8)
    ascrun.run_local(vc.compare_int32_kernel, 1, x, y, z, 0, 1, 512, 0)
    np.testing.assert_array_equal(z[:64], pack(x == y))
    z = np.zeros(256, np.uint8)
    ascrun.run_local(vc.compare_int32_kernel, 1, x, y, z, 1, 1, 0, 3)  # src0 blocks 2 apart, repeats 16 blocks
    p0, p1 = masked_positions(4, False, False, 64, 0, 3, [2, 1], [16, 8])
    np.testing.assert_array_equal(z[:24], pack(x[p0] == y[p1]))
    z = np.zeros(256, np.uint8)
    ascrun.run_local(vc.compare_int32_kernel, 1, x, y, z, 2, 1, 512, 0)  # CompareScalar(x, 1, EQ)
    np.testing.assert_array_equal(z[:64], pack(x == 1))


# ---- CompareScalar -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [LT, GT, EQ, LE, GE, NE])
def test_compare_scalar_count_form(dtype, mode):
    x, y, z0, z = run_compare(dtype, vc.SCALAR_COUNT, mode, count=N, scalar=1.0)
    np.testing.assert_array_equal(z, to_dst_model(dtype, mode, x, dtype(1.0), z0, N * np.dtype(dtype).itemsize // 256))


@pytest.mark.parametrize("form", [vc.SCALAR_MASK, vc.SCALAR_BITS])
def test_compare_scalar_mask_forms(form):
    x, y, z0, z = run_compare(np.float16, form, GE, lo=3, hi=1, repeat=5, strides=(2, 1, 12, 8), scalar=-1.0)
    np.testing.assert_array_equal(z, to_dst_model(np.float16, GE, x, np.float16(-1.0), z0, 5, 2, 12))


def test_compare_scalar_nan():
    x, y, z0, z = run_compare(np.float32, vc.SCALAR_COUNT, NE, count=N, scalar=float("nan"))
    assert (z[:128] == 0xFF).all()
    x, y, z0, z = run_compare(np.float32, vc.SCALAR_COUNT, LE, count=N, scalar=float("nan"))
    assert (z[:128] == 0).all()


# ---- Compare without dst, GetCmpMask / SetCmpMask ----------------------------------------------

def register_model(dtype, mode, x, y, start, bits, lo, hi, s0b, s1b):
    """Compare into CmpMask: the selected elements of one repeat set or clear their bit; the rest keep."""
    itemsize = np.dtype(dtype).itemsize
    p0, p1, j = masked_positions(itemsize, False, bits, lo, hi, 1, [s0b, s1b, 1], [0, 0, 0])
    reg = bits_of(start)
    reg[j] = cmp(mode, x[p0], y[p1])
    return pack(reg)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [LT, GT, EQ, LE, GE, NE])
def test_compare_into_cmpmask_continuous_mask(dtype, mode):
    per = 256 // np.dtype(dtype).itemsize
    x, y, z0, z = run_compare(dtype, vc.REG, mode, lo=per - 9, strides=(2, 1, 0, 0), preset=1)
    expected = z0.copy()
    expected[:16] = register_model(dtype, mode, x, y, z0[:16], False, per - 9, 0, 2, 1)
    expected[16:128] = POISON  # GetCmpMask: the rest of its 128 bytes are undefined
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_compare_into_cmpmask_bit_mask_starts_from_the_undefined_register(dtype):
    hi = 0xF00F_0000_0000_0001 if dtype == np.float16 else 0
    x, y, z0, z = run_compare(dtype, vc.REG_BITS, GE, lo=0x8000_0000_FFFF_0003, hi=hi, strides=(1, 3, 0, 0), goff=16)
    expected = z0.copy()
    expected[16:32] = register_model(dtype, GE, x, y, np.full(16, POISON, np.uint8), True, 0x8000_0000_FFFF_0003,
                                     hi, 1, 3)
    expected[32:144] = POISON
    np.testing.assert_array_equal(z, expected)


def _fails(*args, **kwargs):
    with pytest.raises(ascrun.KernelError) as e:
        run_compare(*args, **kwargs)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_get_cmp_mask_needs_128_bytes():
    msg = _fails(np.float32, vc.REG, LT, lo=64, strides=(1, 1, 0, 0), goff=192)
    assert "block 0: GetCmpMask: dst holds 64 bytes; the reference requires at least 128" in msg


def test_get_cmp_mask_needs_16_byte_alignment():
    msg = _fails(np.float32, vc.REG, LT, lo=64, strides=(1, 1, 0, 0), goff=8)
    assert "GetCmpMask: dst LocalTensor starts at UB offset 0x2008, which is not 16-byte aligned" in msg


def test_compare_faults_in_counter_mode():
    msg = _fails(np.float32, vc.COUNT, LT, count=N, counter=1)
    assert "block 0: Compare: the reference does not define this form in counter mode" in msg
    msg = _fails(np.float16, vc.REG, LT, lo=8, counter=1)
    assert "Compare (CmpMask): the reference does not define this form in counter mode" in msg


def test_compare_dst_over_a_source_fails():
    msg = _fails(np.float32, vc.COUNT, LT, count=N, zaddr=4096 + 64)
    assert "Compare: dst range [0x1040, 0x10c0) overlaps src1 range [0x1000, 0x2000)" in msg
    msg = _fails(np.float16, vc.SCALAR_MASK, LT, lo=1, repeat=2, zaddr=0)
    assert "CompareScalar: dst range [0x0, 0x20) overlaps src0 range [0x0, 0x200)" in msg


def test_compare_int32_with_another_mode_than_eq_fails():
    x = np.zeros(512, np.int32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vc.compare_int32_kernel, 1, x, x, np.zeros(256, np.uint8), 0, 0, 512, 0)
    assert "Compare<int32_t>: CMPMODE::LT is not supported for int32_t (Atlas A2/A3 compare int32_t with EQ only" \
        in str(e.value)


# ---- Select --------------------------------------------------------------------------------------

BITS_LO = {np.float32: 0xFFFF_0000_F0F0_1234, np.float16: 0x0123_4567_89AB_CDEF}
BITS_HI = {np.float32: 0, np.float16: 0xFFFF_FFFF_0000_0001}
SPR, SCALAR_MODE, TENSOR_MODE = range(3)


def run_select(dtype, form, mode, count=0, lo=0, hi=0, repeat=1, strides=(1, 1, 1, 8, 8, 8), scalar=0.5, counter=0,
               wrong_src1=0, xaddr=0, saddr=None, zaddr=None, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, N).astype(dtype)
    y = rng.uniform(-8, 8, N).astype(dtype)
    s = rng.integers(0, 256, 256).astype(np.uint8)
    z = rng.uniform(-8, 8, N).astype(dtype)
    c = np.zeros(128, np.uint8)
    nb = N * np.dtype(dtype).itemsize
    saddr = 3 * nb if saddr is None else saddr
    zaddr = nb if zaddr is None else zaddr
    args = (x.copy(), y.copy(), s.copy(), z.copy(), c)
    ascrun.run_local(vc.select_kernel, 1, *args, N, BITS_LO[dtype], BITS_HI[dtype], form, mode, count, np.uint64(lo),
                     np.uint64(hi), repeat, *strides, scalar, counter, wrong_src1, xaddr, saddr, zaddr)
    return x, y, s, z, args[3], c, saddr


def select_model(dtype, mode, x, y, s, z0, scalar, counter, bits, lo, hi, repeat, strides):
    """dst = selection bit ? src0 : src1 on the elements the mask selects. Mode 0: the same first
    256/sizeof(T) bits every repeat; modes 1 and 2: the bits continuously, repeat after repeat."""
    itemsize = np.dtype(dtype).itemsize
    blk = list(strides[:3]) + [1]
    rep = list(strides[3:]) + [0 if mode == SPR else 8]
    d, p0, p1, k = masked_positions(itemsize, counter, bits, lo, hi, repeat, blk, rep)
    sel = bits_of(s)
    other = np.full(len(d), scalar, dtype) if mode == SCALAR_MODE else y[p1]
    expected = z0.copy()
    expected[d] = np.where(sel[k], x[p0], other)
    return expected


def cmp_mask_after(dtype, mode, s, scalar, saddr):
    reg = {SPR: s[:16], SCALAR_MODE: np.full(16 // np.dtype(dtype).itemsize, scalar, dtype).view(np.uint8),
           TENSOR_MODE: np.full(4, saddr, np.uint32).view(np.uint8)}[mode]
    return np.concatenate([reg, np.full(112, POISON, np.uint8)])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [SPR, SCALAR_MODE, TENSOR_MODE])
def test_select_count_form(dtype, mode):
    # 300 elements: whole repeats and a partial one; mode 0 reuses the first repeat's bits.
    x, y, s, z0, z, c, saddr = run_select(dtype, vc.S_COUNT, mode, count=300)
    np.testing.assert_array_equal(z, select_model(dtype, mode, x, y, s, z0, 0.5, True, False, 300, 0, 1,
                                                  (1, 1, 1, 8, 8, 8)))
    np.testing.assert_array_equal(c, cmp_mask_after(dtype, mode, s, 0.5, saddr))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [SPR, SCALAR_MODE, TENSOR_MODE])
def test_select_continuous_mask_with_strides(dtype, mode):
    per = 256 // np.dtype(dtype).itemsize
    strides = (2, 1, 3, 16, 8, 20)
    x, y, s, z0, z, c, saddr = run_select(dtype, vc.S_MASK, mode, lo=per - 5, repeat=3, strides=strides, scalar=-2.0)
    np.testing.assert_array_equal(z, select_model(dtype, mode, x, y, s, z0, -2.0, False, False, per - 5, 0, 3,
                                                  strides))
    np.testing.assert_array_equal(c, cmp_mask_after(dtype, mode, s, -2.0, saddr))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [SPR, SCALAR_MODE, TENSOR_MODE])
def test_select_bit_mask(dtype, mode):
    x, y, s, z0, z, c, saddr = run_select(dtype, vc.S_BITS, mode, repeat=4)
    np.testing.assert_array_equal(z, select_model(dtype, mode, x, y, s, z0, 0.5, False, True, BITS_LO[dtype] ^ mode,
                                                  BITS_HI[dtype], 4, (1, 1, 1, 8, 8, 8)))


@pytest.mark.parametrize("mode", [SPR, TENSOR_MODE])
def test_select_mask_form_in_counter_mode(mode):
    # In counter mode the mask argument is the element count of the whole instruction.
    x, y, s, z0, z, c, saddr = run_select(np.float32, vc.S_MASK, mode, lo=150, repeat=1, counter=1,
                                          strides=(1, 2, 1, 8, 16, 8))
    np.testing.assert_array_equal(z, select_model(np.float32, mode, x, y, s, z0, 0.5, True, False, 150, 0, 1,
                                                  (1, 2, 1, 8, 16, 8)))


def test_select_in_place_over_src0():
    # dst == src0 with the same strides: within a repeat they coincide, which the overlap rule allows.
    # The kernel loads z over x, so src0 holds z's values.
    x, y, s, z0, z, c, saddr = run_select(np.float16, vc.S_MASK, TENSOR_MODE, lo=128, repeat=4, zaddr=0)
    d, p0, p1, k = masked_positions(2, False, False, 128, 0, 4, [1, 1, 1, 1], [8, 8, 8, 8])
    expected = z0.copy()
    expected[d] = np.where(bits_of(s)[k], z0[p0], y[p1])
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_select_register_form_mode_1(dtype):
    # SetCmpMask(src1 tensor): the scalar is its first element; the mask register selects.
    x, y, s, z0, z, c, saddr = run_select(dtype, vc.S_REG, SCALAR_MODE, lo=0x00FF_0000_0000_FF0F, hi=0, repeat=3,
                                          strides=(1, 1, 1, 8, 8, 8))
    np.testing.assert_array_equal(z, select_model(dtype, SCALAR_MODE, x, y, s, z0, y[0], False, True,
                                                  0x00FF_0000_0000_FF0F, 0, 3, (1, 1, 1, 8, 8, 8)))
    np.testing.assert_array_equal(c[:16], y.view(np.uint8)[:16])


def test_select_register_form_mode_1_in_counter_mode():
    x, y, s, z0, z, c, saddr = run_select(np.float16, vc.S_REG, SCALAR_MODE, lo=200, repeat=1, counter=1)
    np.testing.assert_array_equal(z, select_model(np.float16, SCALAR_MODE, x, y, s, z0, y[0], True, False, 200, 0, 1,
                                                  (1, 1, 1, 8, 8, 8)))


def test_select_zero_repeat_is_a_nop_but_loads_cmpmask():
    x, y, s, z0, z, c, saddr = run_select(np.float32, vc.S_MASK, SPR, lo=64, repeat=0)
    np.testing.assert_array_equal(z, z0)
    np.testing.assert_array_equal(c[:16], s[:16])


def test_select_register_form_for_modes_0_and_2_does_not_build():
    # pyasc 1.1.1 drops the SELMODE template argument Ascend C needs for Select(dst, src0, src1, ...).
    x = np.zeros(64, np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vc.select_register_tensor_kernel, 1, x, x.copy())
    assert e.value.kind == "build_error"
    assert "needs Select<T, SELMODE>; pyasc 1.1.1 drops sel_mode there" in str(e.value)


def _select_fails(*args, **kwargs):
    with pytest.raises(ascrun.KernelError) as e:
        run_select(*args, **kwargs)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_select_mode_and_src1_form_must_match():
    msg = _select_fails(np.float32, vc.S_COUNT, SPR, count=64, wrong_src1=1)
    assert "block 0: Select: selMode 0 with a scalar src1: mode 1 (VSEL_TENSOR_SCALAR_MODE) takes a scalar src1" in msg
    msg = _select_fails(np.float32, vc.S_MASK, SPR, lo=64, wrong_src1=1)
    assert "Select: selMode 1 with a tensor src1" in msg


def test_select_sources_in_the_scratch_fail():
    msg = _select_fails(np.float32, vc.S_MASK, SCALAR_MODE, lo=64, repeat=2, xaddr=SCRATCH)
    assert ("Select: src0 range [0x2e000, 0x2e200) overlaps scratch range [0x2e000, 0x2e080) (Select modes 1 and 2 "
            "first fill this scratch") in msg


def test_select_mask_over_dst_fails():
    msg = _select_fails(np.float32, vc.S_MASK, TENSOR_MODE, lo=64, repeat=2, saddr=4096 + 256)
    assert "Select: dst range [0x1000, 0x1200) overlaps selMask range [0x1100, 0x1110)" in msg


def test_select_partial_overlap_of_dst_and_src0_fails():
    msg = _select_fails(np.float32, vc.S_MASK, SPR, lo=64, repeat=2, zaddr=32)
    assert "Select: dst range [0x20, 0x220) overlaps src0 range [0x0, 0x200) in a way the hardware does not define" \
        in msg

"""Gather, Gatherb, Scatter, Brcb and GatherMask through run_local, against numpy models written from
the Ascend C reference for Atlas A2/A3 (离散与聚合/Gather.md, Gatherb(ISASI).md, Scatter(ISASI).md,
数据填充/Brcb.md, 比较与选择/GatherMask.md). Builds: gather_kernel uint16/uint32, gather_mask_kernel
half/float."""
import numpy as np
import pytest

import ascrun
import vector_gather as vg
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 1024


def run_gather(dtype, op, off, count=0, base=0, lo=0, hi=0, repeat=1, blk=1, rep=8, counter=0, xaddr=None,
               oaddr=None, zaddr=None, seed=0):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    x = rng.integers(0, info.max, N, endpoint=True).astype(dtype)
    z = np.full(N, 7, dtype)
    nb = N * np.dtype(dtype).itemsize
    xaddr = 0 if xaddr is None else xaddr
    oaddr = nb if oaddr is None else oaddr
    zaddr = nb + 4 * N if zaddr is None else zaddr
    z0 = z.copy()
    ascrun.run_local(vg.gather_kernel, 1, x, np.asarray(off, np.uint32), z, N, op, count, base, np.uint64(lo),
                     np.uint64(hi), repeat, blk, rep, counter, xaddr, oaddr, zaddr)
    return x, z0, z


def reversed_offsets(dtype, extra=0):
    """Byte offsets of the elements of x in reverse order."""
    size = np.dtype(dtype).itemsize
    return ((N - 1 - np.arange(N) - extra) * size).astype(np.int64).clip(0)


# ---- Gather --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,count", [(np.uint16, 200), (np.uint32, 150), (np.uint32, 64)])
def test_gather_count_form(dtype, count):
    # Byte offsets relative to src + srcBaseAddr; whole repeats and a tail.
    size = np.dtype(dtype).itemsize
    off = reversed_offsets(dtype, extra=3)
    x, z0, z = run_gather(dtype, vg.G_COUNT, off, count=count, base=3 * size)
    expected = z0.copy()
    expected[:count] = x[(3 * size + off[:count]) // size]
    np.testing.assert_array_equal(z, expected)


def gather_model(dtype, x, z0, off, base, counter, bits, lo, hi, repeat, rep):
    """dst element j of repeat r (r * dstRepStride blocks + j) = src at byte base + off[r * per + j]."""
    size = np.dtype(dtype).itemsize
    d, k = masked_positions(size, counter, bits, lo, hi, repeat, [1, 1], [rep, 8])
    expected = z0.copy()
    expected[d] = x[(base + off[k]) // size]
    return expected


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
def test_gather_continuous_mask_with_dst_repeat_stride(dtype):
    per = 256 // np.dtype(dtype).itemsize
    off = np.random.default_rng(1).permutation(N) * np.dtype(dtype).itemsize
    x, z0, z = run_gather(dtype, vg.G_MASK, off, lo=per - 3, repeat=3, rep=16)
    np.testing.assert_array_equal(z, gather_model(dtype, x, z0, off, 0, False, False, per - 3, 0, 3, 16))


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
def test_gather_bit_mask(dtype):
    hi = 0x8000_0000_0000_FFFF if dtype == np.uint16 else 0
    off = reversed_offsets(dtype)
    x, z0, z = run_gather(dtype, vg.G_BITS, off, lo=0x0F0F_0000_1234_8001, hi=hi, repeat=2, rep=8)
    np.testing.assert_array_equal(z, gather_model(dtype, x, z0, off, 0, False, True, 0x0F0F_0000_1234_8001, hi, 2, 8))


def test_gather_in_counter_mode():
    off = reversed_offsets(np.uint32)
    x, z0, z = run_gather(np.uint32, vg.G_MASK, off, lo=150, repeat=1, rep=8, counter=1)
    np.testing.assert_array_equal(z, gather_model(np.uint32, x, z0, off, 0, True, False, 150, 0, 1, 8))


def test_gather_zero_repeat_is_a_nop():
    x, z0, z = run_gather(np.uint16, vg.G_MASK, reversed_offsets(np.uint16), lo=128, repeat=0)
    np.testing.assert_array_equal(z, z0)


def _fails(*args, **kwargs):
    with pytest.raises(ascrun.KernelError) as e:
        run_gather(*args, **kwargs)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_gather_offset_outside_src_fails_naming_it():
    off = reversed_offsets(np.uint16)
    off[37] = 2 * N
    msg = _fails(np.uint16, vg.G_COUNT, off, count=128)
    assert ("block 0: Gather<uint16_t>: srcOffset[37] = 2048 (+ base 0) addresses src byte 2048, which is outside "
            "src (src holds 1024 elements = 2048 bytes") in msg
    msg = _fails(np.uint16, vg.G_COUNT, reversed_offsets(np.uint16), count=128, base=2)  # offset 2046 + 2
    assert "srcOffset[0] = 2046 (+ base 2) addresses src byte 2048, which is outside src" in msg


def test_gather_unaligned_offset_fails():
    off = reversed_offsets(np.uint32)
    off[5] += 2
    msg = _fails(np.uint32, vg.G_MASK, off, lo=64, repeat=1)
    assert "Gather<uint32_t>: srcOffset[5] = 4074 (+ base 0) addresses src byte 4074, which is not aligned" in msg
    msg = _fails(np.uint32, vg.G_MASK, reversed_offsets(np.uint32), lo=64, repeat=1, base=6)
    assert "Gather<uint32_t>: srcBaseAddr 6 must be a multiple of 4 inside src's 4096 bytes" in msg


def test_gather_masked_off_offsets_are_not_read():
    off = reversed_offsets(np.uint32)
    off[1::2] = 0xFFFF_FFF0  # garbage where the mask is off
    x, z0, z = run_gather(np.uint32, vg.G_BITS, off, lo=0x5555_5555_5555_5555, repeat=2)
    np.testing.assert_array_equal(z, gather_model(np.uint32, x, z0, off, 0, False, True, 0x5555_5555_5555_5555, 0, 2,
                                                  8))


def test_gather_dst_over_src_fails():
    msg = _fails(np.uint16, vg.G_MASK, reversed_offsets(np.uint16), lo=128, repeat=1, zaddr=1024)
    assert "Gather: dst range [0x400, 0x500) overlaps src range [0x0, 0x800)" in msg


def test_gather_count_form_with_more_than_255_repeats_fails():
    msg = _fails(np.uint32, vg.G_COUNT, reversed_offsets(np.uint32), count=64 * 256)
    assert ("Gather<uint32_t>: count 16384 needs 256 repeats of 64 elements; the count form issues them as one "
            "instruction with an 8-bit repeat count") in msg


# ---- Gatherb -------------------------------------------------------------------------------------

def gatherb_model(dtype, x, z0, off, repeat, blk, rep):
    epb = 32 // np.dtype(dtype).itemsize
    expected = z0.copy()
    blk = blk or 1  # dstBlkStride 0 counts as 1 on Atlas A2/A3
    for r in range(repeat):
        for j in range(8):
            at = (r * rep + j * blk) * epb
            src = off[r * 8 + j] // np.dtype(dtype).itemsize
            expected[at:at + epb] = x[src:src + epb]
    return expected


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
@pytest.mark.parametrize("blk,rep", [(1, 8), (0, 8), (2, 20)])
def test_gatherb(dtype, blk, rep):
    nblocks = N * np.dtype(dtype).itemsize // 32
    off = np.random.default_rng(2).permutation(nblocks)[:N] * 32
    off = np.resize(off, N)
    x, z0, z = run_gather(dtype, vg.GATHERB, off, repeat=3, blk=blk, rep=rep)
    np.testing.assert_array_equal(z, gatherb_model(dtype, x, z0, off, 3, blk, rep))


def test_gatherb_offsets_must_be_whole_blocks_of_src():
    off = np.arange(N) * 32
    off[9] = 48
    msg = _fails(np.uint16, vg.GATHERB, off, repeat=2)
    assert "Gatherb<uint16_t>: offset[9] = 48 (+ base 0) addresses src byte 48, which is not aligned" in msg
    off[9] = 2048
    msg = _fails(np.uint16, vg.GATHERB, off, repeat=2)
    assert "Gatherb<uint16_t>: offset[9] = 2048 (+ base 0) addresses src byte 2048, which is outside src" in msg


def test_gatherb_in_counter_mode_fails():
    msg = _fails(np.uint32, vg.GATHERB, np.arange(N) * 32 % 4096, repeat=1, counter=1)
    assert "Gatherb: the reference does not define Gatherb in counter mode" in msg


# ---- Brcb ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
@pytest.mark.parametrize("blk,rep", [(1, 8), (2, 16), (1, 0)])
def test_brcb(dtype, blk, rep):
    x, z0, z = run_gather(dtype, vg.BRCB, np.zeros(N), repeat=4, blk=blk, rep=rep)
    epb = 32 // np.dtype(dtype).itemsize
    expected = z0.copy()
    for r in range(4):  # with rep 0 later repeats overwrite earlier ones, in order
        for j in range(8):
            at = (r * rep + j * blk) * epb
            expected[at:at + epb] = x[r * 8 + j]
    np.testing.assert_array_equal(z, expected)


def test_brcb_faults():
    msg = _fails(np.uint16, vg.BRCB, np.zeros(N), repeat=1, blk=0, rep=8)
    assert "block 0: Brcb: dstBlkStride 0 is undefined" in msg
    msg = _fails(np.uint16, vg.BRCB, np.zeros(N), repeat=2, blk=1, rep=8, zaddr=0)
    assert "Brcb: dst range [0x0, 0x200) overlaps src range [0x0, 0x20)" in msg
    msg = _fails(np.uint16, vg.BRCB, np.zeros(N), repeat=2, counter=1)
    assert "Brcb: the reference does not define Brcb in counter mode" in msg


# ---- Scatter -------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [vg.SCATTER_COUNT, vg.SCATTER_MASK, vg.SCATTER_BITS])
def test_scatter_is_not_supported_on_atlas_a2_a3(op):
    msg = _fails(np.uint16, op, reversed_offsets(np.uint16), count=128, lo=128, repeat=1)
    assert "block 0: Scatter: not supported on Atlas A2/A3" in msg


# ---- GatherMask ----------------------------------------------------------------------------------

def run_gather_mask(dtype, pattern=0, reduce=0, mask=0, blk=1, repeat=1, rep=8, s1rep=0, counter=0, xaddr=0,
                    paddr=None, zaddr=None, pat=None, z=None, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-100, 100, N).astype(dtype)
    u = np.uint16 if dtype == np.float16 else np.uint32
    p = rng.integers(0, np.iinfo(u).max, N // 2, endpoint=True).astype(u) if pat is None else pat.astype(u)
    z = np.full(N, 7, dtype) if z is None else z.copy()
    w = np.full(N, 5, dtype)
    cnt = np.zeros(4, np.uint64)
    nb = N * np.dtype(dtype).itemsize
    paddr = nb if paddr is None else paddr
    zaddr = 2 * nb if zaddr is None else zaddr
    z0 = z.copy()
    ascrun.run_local(vg.gather_mask_kernel, 1, x, p, z, w, cnt, N, pattern, reduce, mask, blk, repeat, rep, s1rep,
                     counter, xaddr, paddr, zaddr)
    return x, p, z0, z, w, cnt


BUILTIN = {1: lambda j: j % 2 == 0, 2: lambda j: j % 2 == 1, 3: lambda j: j % 4 == 0, 4: lambda j: j % 4 == 1,
           5: lambda j: j % 4 == 2, 6: lambda j: j % 4 == 3, 7: lambda j: True}


def gather_mask_model(dtype, x, p, pattern, reduce, mask, blk, repeat, rep, s1rep):
    """The kept src0 elements, in order: per repeat, those whose pattern bit is set. A repeat takes 256
    bytes (reduce false) or `mask` elements (reduce true); the pattern's bits run continuously within
    a repeat, repeat r's from byte r * 32 * src1RepeatStride."""
    size = np.dtype(dtype).itemsize
    per, epb = 256 // size, 32 // size
    n = mask if reduce else per
    bits = np.unpackbits(p.view(np.uint8), bitorder="little")
    out = []
    for r in range(repeat):
        for j in range(n):
            on = bits[r * s1rep * 256 + j] if pattern == 0 else BUILTIN[pattern](j)
            if on:
                out.append(x[r * rep * epb + (j // epb) * blk * epb + j % epb])
    return np.array(out, dtype)


def check_gather_mask(dtype, pattern=0, reduce=0, mask=0, blk=1, repeat=1, rep=8, s1rep=0, **kw):
    x, p, z0, z, w, cnt = run_gather_mask(dtype, pattern, reduce, mask, blk, repeat, rep, s1rep, **kw)
    kept = gather_mask_model(dtype, x, p, pattern, reduce, mask, blk, repeat, rep, s1rep)
    expected = z0.copy()
    expected[:len(kept)] = kept  # past the kept count dst keeps its values
    np.testing.assert_array_equal(z, expected)
    assert cnt[0] == cnt[1] == len(kept)
    return x, w


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("s1rep", [0, 1])
def test_gather_mask_pattern_tensor(dtype, s1rep):
    check_gather_mask(dtype, repeat=4, rep=8, s1rep=s1rep)


def test_gather_mask_strided_src0():
    check_gather_mask(np.float16, blk=2, repeat=3, rep=20, s1rep=2)


@pytest.mark.parametrize("pattern", range(1, 8))
def test_gather_mask_builtin_patterns(pattern):
    check_gather_mask(np.float32, pattern=pattern, repeat=3, rep=8, mask=0)


def test_gather_mask_counter_mode_example_of_the_reference():
    # GatherMask.md / the gather sample: mask = 70, repeatTimes = 2, src0RepeatStride = 4, pattern
    # 0x7E7C00A5 everywhere: each repeat takes 70 elements (more than one 256-byte repeat of floats).
    pat = np.full(N // 2, 0x7E7C00A5, np.uint32)
    check_gather_mask(np.float32, reduce=1, mask=70, repeat=2, rep=4, pat=pat)


def test_gather_mask_counter_mode_with_builtin_pattern():
    check_gather_mask(np.float16, pattern=5, reduce=1, mask=37, repeat=3, rep=8)


@pytest.mark.parametrize("reduce,mask", [(1, 70), (0, 0x0000_0F01)])
def test_gather_mask_leaves_normal_mode_and_the_mask_register_set_to_mask(reduce, mask):
    # Adds with isSetMask = false afterwards: the register holds (0, mask) as a normal-mode bit mask.
    x, w = check_gather_mask(np.float32, reduce=reduce, mask=mask, repeat=1, counter=1)
    expected = np.full(N, 5, np.float32)
    on = np.array([(mask >> j) & 1 for j in range(64)], bool)
    expected[:64][on] = x[:64][on] + np.float32(1)
    np.testing.assert_array_equal(w, expected)


def test_gather_mask_in_place_example_of_the_reference():
    # The gather sample, scenario 1: dst == src0, pattern 2 (odd elements), 4 repeats of 256 bytes.
    # The kernel loads z over x, so src0 holds z's values.
    src0 = np.arange(1, N + 1).astype(np.float32)
    x, p, z0, z, w, cnt = run_gather_mask(np.float32, pattern=2, repeat=4, rep=8, zaddr=0, z=src0)
    assert cnt[0] == cnt[1] == 128
    expected = src0.copy()
    expected[:128] = np.arange(2, 257, 2)
    np.testing.assert_array_equal(z, expected)


def _mask_fails(*args, **kwargs):
    with pytest.raises(ascrun.KernelError) as e:
        run_gather_mask(*args, **kwargs)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_gather_mask_faults():
    msg = _mask_fails(np.float32, repeat=0)
    assert "block 0: GatherMask<float>: repeatTimes is 0" in msg
    msg = _mask_fails(np.float32, reduce=1, mask=0, repeat=1)
    assert "GatherMask<float>: mask 0 with reduceMode = true" in msg
    msg = _mask_fails(np.float16, reduce=1, mask=129, blk=2, repeat=1)
    assert "GatherMask<half>: mask 129 spans more than one 256-byte repeat with src0BlockStride 2" in msg
    msg = _mask_fails(np.float32, pattern=7, repeat=2, rep=4, zaddr=0)
    assert ("GatherMask<float>: in place (dst == src0), the 64 elements kept by repeat 0 reach the src0 of repeat 1 "
            "(element 32 on)") in msg
    msg = _mask_fails(np.float32, pattern=0, repeat=1, zaddr=4096)
    assert "GatherMask: dst range [0x1000, 0x" in msg and "overlaps src1Pattern range [0x1000, 0x1008)" in msg
    msg = _mask_fails(np.float32, pattern=7, repeat=1, zaddr=128)
    assert "GatherMask: dst range [0x80, 0x180) overlaps src0 range [0x0, 0x100)" in msg

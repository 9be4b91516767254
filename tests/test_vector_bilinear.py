"""BilinearInterpolation (基础算术/BilinearInterpolation(ISASI).md) through run_local, against a numpy model
of its Atlas A2/A3 composition: Gatherb of src0 blocks by byte offsets, a weight per repeat (repeatMode
false) or per block (true), products summed over the horizontal repeats in half, written with the
mask, dstBlkStride and vROffset. One build."""
import numpy as np
import pytest

import ascrun
import vector_bilinear as vk

pytestmark = pytest.mark.kernel

CONT, BITS = 0, 1
TMP = 16384


def selected(form, mask, lo, hi):
    bits = np.array([(lo >> e) & 1 if e < 64 else (hi >> (e - 64)) & 1 for e in range(128)], bool)
    return np.arange(128) < mask if form == CONT else bits


def model(z, x0, offs, w, h, v, mode, dbs, vro, sel):
    out = z.copy()
    for i in range(v):
        for e in np.flatnonzero(sel):
            block = e // 16
            total = None
            for q in range(h):
                r = i * h + q
                product = x0[offs[r * 8 + block] // 2 + e % 16] * w[r * 8 + block if mode else r]
                total = product if total is None else product + total
            out[i * vro + block * dbs * 16 + e % 16] = total + np.float16(0)
    return out


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-10, 10, vk.N0).astype(np.float16)
    offs = (rng.integers(0, vk.N0 // 16, vk.NO) * 32).astype(np.uint32)  # scattered whole blocks
    w = rng.uniform(-4, 4, vk.N1).astype(np.float16)
    return x0, offs, w


def run(x0, offs, w, h=2, mode=0, dbs=1, vro=128, v=2, form=CONT, mask=128, lo=0, hi=0, w_size=vk.N1,
        tmp_addr=TMP, tmp_bytes=32768, counter=0):
    z = np.full(vk.ND, 7, np.float16)
    ascrun.run_local(vk.bilinear_kernel, 1, x0, offs, w, z, h, mode, dbs, vro, v, form, mask, np.uint64(lo),
                     np.uint64(hi), w_size, tmp_addr, tmp_bytes, counter)
    return z


def check(h, mode, dbs, vro, v, form=CONT, mask=128, lo=0, hi=0, seed=0):
    x0, offs, w = inputs(seed)
    z = run(x0, offs, w, h, mode, dbs, vro, v, form, mask, lo, hi)
    expected = model(np.full(vk.ND, 7, np.float16), x0, offs, w, h, v, mode, dbs, vro, selected(form, mask, lo, hi))
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("h, v", [(1, 1), (2, 2), (3, 1), (1, 4), (4, 3)])
def test_repeats_and_modes(mode, h, v):
    check(h, mode, 1, 128, v, seed=h * 10 + v)


@pytest.mark.parametrize("form, mask, lo, hi", [(CONT, 37, 0, 0), (CONT, 0, 0, 0), (CONT, 1, 0, 0),
                                                (BITS, 0, 0x8000_0000_0000_0001, 0xF0F0_0000_0000_00FF),
                                                (BITS, 0, 0, 1 << 63)])
def test_masks(form, mask, lo, hi):
    check(2, 1, 1, 128, 2, form, mask, lo, hi)


def test_dst_block_stride_and_vertical_offset():
    check(2, 0, 2, 384, 3)
    check(1, 1, 0, 128, 1)  # dstBlkStride 0: every block of a repeat lands on the same 16 elements, last wins


def test_negative_zero_becomes_positive_zero():
    x0, offs, w = inputs()
    x0[:] = 0
    w[:] = -1.0  # 0 * -1 = -0; + 0 in the final Adds gives +0
    z = run(x0, offs, w, h=1, v=1)
    assert (z[:128] == 0).all() and not np.signbit(z[:128]).any()


def test_faults():
    x0, offs, w = inputs()

    def fault(**kw):
        with pytest.raises(ascrun.KernelError) as e:
            run(x0, offs, w, **kw)
        return str(e.value)

    assert "BilinearInterpolation: hRepeat 0 and vRepeat 2 must both be in [1, 255]" in fault(h=0)
    assert ("BilinearInterpolation: vROffset 100 is outside [128, 65535) or not a whole number of 32-byte blocks "
            "(200 bytes)") in fault(vro=100)
    assert "vROffset 136 is outside [128, 65535) or not a whole number of 32-byte blocks (272 bytes)" in fault(vro=136)
    assert ("BilinearInterpolation: mask 129 is outside [0, 128] (continuous mask: the number of leading elements "
            "of each repeat)") in fault(mask=129)
    assert ("BilinearInterpolation: src1 holds 15 elements (Brcb broadcasts 8), but 4 repeats with repeatMode true "
            "take 32") in fault(mode=1, w_size=15)
    assert ("BilinearInterpolation: sharedTmpBuffer range [0x2000, 0x2200) overlaps dst range [0x2000, 0x2100) (the "
            "gathered products are written there)") in fault(h=1, v=1, w_size=8, tmp_addr=vk.DST, tmp_bytes=512)
    assert ("BilinearInterpolation: sharedTmpBuffer: 9216 elements from UB offset 0x4000 exceed the LocalTensor's "
            "1024 elements") in fault(tmp_bytes=1024)
    assert "BilinearInterpolation: called in counter mode, where its Gatherb step is not defined" in fault(counter=1)
    bad = offs.copy()
    bad[3] = 40
    with pytest.raises(ascrun.KernelError) as e:
        run(x0, bad, w)
    assert ("BilinearInterpolation: src0Offset[3] = 40 is not 32-byte aligned (offsets are bytes of 32-byte blocks "
            "inside src0, which holds 4096 bytes)") in str(e.value)
    bad[3] = 4096
    with pytest.raises(ascrun.KernelError) as e:
        run(x0, bad, w)
    assert "BilinearInterpolation: src0Offset[3] = 4096 addresses a block outside src0" in str(e.value)

"""TransDataTo5HD (数据排布转换/TransDataTo5HD.md, asc_transto5hd.md) through run_local, against a numpy
model of its per-repeat rule on the UB bytes: 16-bit transpose, 32-bit pairs of blocks, 8-bit half
blocks (dstHighHalf/srcHighHalf), the repeat strides and repeatTimes 1's offset start. One build per
dtype (address-tensor and uint64_t array forms) and one for the LocalTensor-list form."""
import numpy as np
import pytest

import ascrun
import vector_trans_5hd as vk

pytestmark = pytest.mark.kernel

REGION = vk.REGION
BLOCK = 32


def model(region: np.ndarray, dst, src, dst_high=0, src_high=0, repeat=1, dst_stride=0, src_stride=0):
    """The region after the instruction; dst/src: the 16 byte addresses of each list."""
    ub = region.view(np.uint8).copy()
    size = region.itemsize
    for r in range(repeat):
        step = 1 if repeat == 1 else r
        blocks = np.stack([ub[a + step * src_stride * BLOCK:][:BLOCK] for a in src])  # [16, 32] bytes
        for j, a in enumerate(dst):
            at = a + step * dst_stride * BLOCK
            if size == 1:
                ub[at + 16 * dst_high:][:16] = blocks[:, j + 16 * src_high]
            elif size == 2:
                ub[at:at + BLOCK] = np.ascontiguousarray(blocks.view(np.uint16)[:, j]).view(np.uint8)
            else:
                column = blocks.view(np.uint32)[8 * (j % 2):8 * (j % 2) + 8, j // 2]  # sources 8 (j % 2) + m
                ub[at:at + BLOCK] = np.ascontiguousarray(column).view(np.uint8)
    return ub.view(region.dtype)


def data(dtype, seed=0):
    n = REGION // np.dtype(dtype).itemsize
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)


def run(x, dst, src, dst_high=0, src_high=0, repeat=1, dst_stride=0, src_stride=0, uint_list=0):
    """dst/src: byte addresses (multiples of the element size)."""
    offsets = (np.concatenate([dst, src]) // x.itemsize).astype(np.int32)
    z = np.zeros_like(x)
    ascrun.run_local(vk.trans_5hd_addr_kernel, 1, x, offsets, z, x.size, dst_high, src_high, repeat, dst_stride,
                     src_stride, uint_list)
    return z


def fault(x, dst, src, **kw):
    with pytest.raises(ascrun.KernelError) as e:
        run(x, dst, src, **kw)
    return str(e.value)


def scattered(seed, first_block, last_block):
    """16 distinct block addresses in [first_block, last_block), in random order."""
    blocks = np.random.default_rng(seed).choice(np.arange(first_block, last_block), 16, replace=False)
    return (blocks * BLOCK).astype(np.int64)


CONSECUTIVE = np.arange(16) * BLOCK


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
def test_one_repeat_of_scattered_blocks(dtype):
    x = data(dtype)
    dst, src = 8192 + scattered(1, 0, 256), scattered(2, 0, 256)
    np.testing.assert_array_equal(run(x, dst, src, repeat=2), model(x, dst, src, repeat=2))


def test_16_bit_is_a_16_by_16_transpose():
    x = data(np.float16)
    z = run(x, 16384 + CONSECUTIVE, CONSECUTIVE, repeat=2)  # repeat 2, strides 0: the same blocks twice
    matrix = x[:256].reshape(16, 16)
    np.testing.assert_array_equal(z[8192:8192 + 256].reshape(16, 16), matrix.T)
    np.testing.assert_array_equal(z[:8192], x[:8192])


def test_32_bit_forms_pairs_of_blocks():
    x = data(np.float32)
    z = run(x, 16384 + CONSECUTIVE, CONSECUTIVE, repeat=2)
    matrix = x[:128].reshape(16, 8)  # 16 source blocks of 8 floats
    np.testing.assert_array_equal(z[4096:4096 + 128].reshape(8, 16), matrix.T)  # dst blocks 2k, 2k + 1: column k


@pytest.mark.parametrize("dst_high, src_high", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_8_bit_half_blocks(dst_high, src_high):
    x = data(np.int8)
    dst, src = 16384 + CONSECUTIVE, CONSECUTIVE
    z = run(x, dst, src, dst_high, src_high, repeat=3, dst_stride=16, src_stride=16)
    np.testing.assert_array_equal(z, model(x, dst, src, dst_high, src_high, 3, 16, 16))
    kept = z[16384 + 16 * (1 - dst_high)::32][:16]  # the other half of each dst block keeps its bytes
    np.testing.assert_array_equal(kept, x[16384 + 16 * (1 - dst_high)::32][:16])


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.float32])
def test_nchw_to_nc1hwc0(dtype):
    x = data(dtype)
    size = x.itemsize
    c0 = 32 if size == 1 else 16
    h_w = 256  # one HW plane of 256 elements; C = 16 channels (16 list entries)
    src = np.arange(16) * h_w * size
    per_block = BLOCK // size
    dst = 16384 + np.arange(16) * BLOCK
    repeat = h_w // per_block
    z = run(x, dst, src, repeat=repeat, dst_stride=16, src_stride=1)
    np.testing.assert_array_equal(z, model(x, dst, src, repeat=repeat, dst_stride=16, src_stride=1))
    if size == 2:
        out = z[8192:8192 + 16 * h_w].reshape(h_w, c0)  # HW x C0
        np.testing.assert_array_equal(out, x[:16 * h_w].reshape(16, h_w).T)


def test_repeat_one_starts_one_stride_in_and_repeat_zero_is_a_nop():
    x = data(np.float16)
    dst, src = 16384 + CONSECUTIVE, CONSECUTIVE
    z = run(x, dst, src, repeat=1, dst_stride=20, src_stride=40)
    np.testing.assert_array_equal(z, model(x, dst, src, repeat=1, dst_stride=20, src_stride=40))
    np.testing.assert_array_equal(z[8192:8192 + 256], x[8192:8192 + 256])  # the list's own blocks are untouched
    np.testing.assert_array_equal(run(x, dst, src, repeat=0, dst_stride=20, src_stride=40), x)


def test_uint16_and_int32_dtypes():
    for dtype in (np.uint16, np.int32):
        x = data(dtype)
        dst, src = 16384 + scattered(3, 0, 200), scattered(4, 0, 200)
        np.testing.assert_array_equal(run(x, dst, src, repeat=4, dst_stride=3, src_stride=2),
                                      model(x, dst, src, repeat=4, dst_stride=3, src_stride=2))


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32])
def test_uint64_array_form(dtype):
    x = data(dtype, 5)
    dst, src = 16384 + scattered(6, 0, 200), scattered(7, 0, 200)
    np.testing.assert_array_equal(run(x, dst, src, 1, 0, repeat=3, dst_stride=4, src_stride=5, uint_list=1),
                                  model(x, dst, src, 1, 0, repeat=3, dst_stride=4, src_stride=5))


def test_list_form_matches_the_address_form():
    x = data(np.float16)
    z = np.zeros_like(x)
    ascrun.run_local(vk.trans_5hd_list_kernel, 1, x, z, x.size, 8192, 16, 0, 256, x.size, 16, 16, 1)
    dst, src = 16384 + CONSECUTIVE, np.arange(16) * 512
    np.testing.assert_array_equal(z, model(x, dst, src, repeat=16, dst_stride=16, src_stride=1))


def test_faults():
    x = data(np.float16)
    dst, src = 16384 + CONSECUTIVE, CONSECUTIVE.copy()
    bad = src.copy()
    bad[3] += 2
    assert "TransDataTo5HD: srcList[3] address 0x62 is not 32-byte aligned" in fault(x, dst, bad)
    assert ("TransDataTo5HD: dstList[0]: blocks [0x4000, 0x30020) are outside the Unified Buffer (0x30000 bytes)"
            in fault(x, dst, src, repeat=2, dst_stride=5632))
    assert ("TransDataTo5HD: repeat 0 writes dstList[0]'s block at UB offset 0x0, which srcList reads in repeat 0 "
            "(dst blocks must not be read by the same or a later repeat)") in fault(x, src, src)
    assert ("TransDataTo5HD: repeat 0 writes dstList[0]'s block at UB offset 0x200, which srcList reads in repeat 1"
            in fault(x, src + 512, src, repeat=2, src_stride=16))
    twice = dst.copy()
    twice[7] = twice[2]
    assert ("TransDataTo5HD: repeat 0 writes the block at UB offset 0x4040 twice (dstList[7] and an earlier entry)"
            in fault(x, twice, src))
    z = np.zeros_like(x)
    with pytest.raises(ascrun.KernelError) as e:  # the last src tensor holds 512 - 496 = 16 elements, not 2 repeats'
        ascrun.run_local(vk.trans_5hd_list_kernel, 1, x, z, x.size, 0, 16, 256, 16, 512, 2, 0, 1)
    assert "TransDataTo5HD: srcList[15]: 32 elements from UB offset 0x3e0 exceed the LocalTensor's 16 elements" in str(
        e.value)

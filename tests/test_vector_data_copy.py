"""DataCopy with DataCopyParams and DataCopyPad with its params and pad values, through run_local,
against numpy models of the reference (GM与UB高维切分数据搬运, GMToUB/UBToGM非对齐数据搬运)."""
import numpy as np
import pytest

import ascrun
import vector_copy as vc

pytestmark = pytest.mark.kernel

N = 1024


def blocks(dst, src, count, length, src_gap, dst_gap, per_block):
    """count blocks of length data blocks; each side's gap in data blocks (per_block elements)."""
    for i in range(count):
        s = i * (length + src_gap) * per_block
        d = i * (length + dst_gap) * per_block
        dst[d:d + length * per_block] = src[s:s + length * per_block]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16])
@pytest.mark.parametrize("count,length,in_gap,ub_gap,ub_gap2,out_gap", [(1, 4, 0, 0, 0, 0), (3, 2, 1, 2, 0, 3),
                                                                         (5, 1, 3, 0, 1, 1)])
def test_data_copy_params(dtype, count, length, in_gap, ub_gap, ub_gap2, out_gap):
    per = 32 // np.dtype(dtype).itemsize
    x = np.arange(N).astype(dtype)
    z = np.full(N, 5, dtype)
    a = np.zeros(N, dtype)
    blocks(a, x, count, length, in_gap, ub_gap, per)
    b = np.zeros(N, dtype)
    blocks(b, a, count, length, ub_gap, ub_gap2, per)
    expected = z.copy()
    blocks(expected, b, count, length, ub_gap2, out_gap, per)
    ascrun.run_local(vc.strided_kernel, 1, x, z, N, count, length, in_gap, ub_gap, ub_gap2, out_gap)
    np.testing.assert_array_equal(z, expected)


def test_data_copy_params_past_the_gm_tensor_fails():
    x = np.zeros(N, np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vc.strided_kernel, 1, x, np.zeros(N, np.float32), N, 5, 4, 60, 0, 0, 0)
    assert "DataCopy(GM->UB, DataCopyParams): elements [0, 2080) of tensor argument 'x' are outside its 1024" \
        in str(e.value)


def pad_reference(x, count, nbytes, src_gap, ub_gap, out_gap, is_pad, left, right, value, z, u):
    size = x.dtype.itemsize
    xb, ub, zb = x.view(np.uint8), u.view(np.uint8), z.view(np.uint8)
    row = left * size + nbytes + right * size
    row32 = -(-row // 32) * 32
    pitch = row32 + ub_gap * 32
    pad = np.array([value], dtype=x.dtype).view(np.uint8)
    defined = np.ones(ub.size, bool)
    for i in range(count):
        r = i * pitch
        data = xb[i * (nbytes + src_gap):i * (nbytes + src_gap) + nbytes]
        seg = ub[r:r + row32]
        seg[left * size:left * size + nbytes] = data
        if is_pad:
            seg[:left * size] = np.tile(pad, left)
            seg[left * size + nbytes:row] = np.tile(pad, right)
        else:
            defined[r:r + left * size] = False
            defined[r + left * size + nbytes:r + row] = False
        dummy = (row32 - row) // size
        if left == 0 and right == 0:
            seg[row:] = np.tile(data[:size], dummy)
        elif is_pad:
            seg[row:] = np.tile(pad, dummy)
        else:
            defined[r + row:r + row32] = False
    ub[~defined] = 0xA5  # what the cpu target leaves in bytes the reference does not define
    for i in range(count):  # UB -> GM: UB rows 32-byte padded plus ub_gap blocks, GM rows out_gap bytes apart
        src = i * (-(-nbytes // 32) * 32 + ub_gap * 32)
        zb[i * (nbytes + out_gap):i * (nbytes + out_gap) + nbytes] = ub[src:src + nbytes]
    return defined


@pytest.mark.parametrize("ext", [True, False])
@pytest.mark.parametrize("dtype,count,nbytes,src_gap,ub_gap,out_gap,is_pad,left,right,value", [
    (np.float32, 3, 44, 4, 0, 8, True, 1, 2, 7.5),     # rows of 11 floats + pads: 14 -> 16 with dummy
    (np.float16, 2, 46, 2, 1, 0, True, 3, 0, -2.0),    # tail smaller than a block
    (np.int32, 4, 20, 0, 0, 4, False, 0, 0, 0),        # no pads: dummy is the row's first element
    (np.int16, 2, 64, 6, 2, 2, False, 2, 2, 0),        # pads without isPad: undefined
    (np.float32, 2, 32, 0, 0, 0, True, 0, 8, 1.0),     # right pad of exactly 32 bytes
])
def test_data_copy_pad(ext, dtype, count, nbytes, src_gap, ub_gap, out_gap, is_pad, left, right, value):
    x = (np.arange(N) + 1).astype(dtype)
    if not ext and np.issubdtype(dtype, np.floating):
        # DataCopyPadParams carries a uint64_t pad value: for floating T the reference leaves open
        # whether it is a value or a bit pattern, so the cpu target refuses it.
        value = int(abs(value))
        if is_pad:
            with pytest.raises(ascrun.KernelError) as e:
                ascrun.run_local(vc.pad_kernel, 1, x, np.zeros(N, dtype), np.zeros(N, dtype), N, count, nbytes,
                                 src_gap, ub_gap, out_gap, is_pad, left, right, value, ext)
            assert "DataCopyPadParams.paddingValue (uint64_t) with T = " in str(e.value)
            return
    z = np.full(N, 9, dtype)
    u = np.zeros(N, dtype)
    ez, eu = z.copy(), np.zeros(N, dtype)
    eu.view(np.uint8)[:] = 0
    defined = pad_reference(x, count, nbytes, src_gap, ub_gap, out_gap, is_pad, left, right, value, ez, eu)
    ascrun.run_local(vc.pad_kernel, 1, x, z, u, N, count, nbytes, src_gap, ub_gap, out_gap, is_pad, left, right,
                     value, ext)
    np.testing.assert_array_equal(u.view(np.uint8)[defined], eu.view(np.uint8)[defined])
    assert (u.view(np.uint8)[~defined] == 0xA5).all()  # undefined pads carry the UB poison byte
    np.testing.assert_array_equal(z.view(np.uint8), ez.view(np.uint8))


def test_data_copy_pad_rejects_padding_over_32_bytes():
    x = np.zeros(N, np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vc.pad_kernel, 1, x, np.zeros_like(x), np.zeros_like(x), N, 1, 32, 0, 0, 0, True, 9, 0, 1.0,
                         True)
    assert "DataCopyPad(GM->UB): leftPadding 9 / rightPadding 0 elements exceed 32 bytes" in str(e.value)


def test_data_copy_pad_block_len_not_a_multiple_of_the_element():
    x = np.zeros(N, np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vc.pad_kernel, 1, x, np.zeros_like(x), np.zeros_like(x), N, 1, 30, 0, 0, 0, True, 0, 0, 1.0,
                         True)
    assert "DataCopyPad(GM->UB): blockLen 30 bytes is not a multiple of sizeof(float) = 4" in str(e.value)

"""SoftMax (ND, 高阶API/激活函数/SoftMax接口/SoftMax.md) through run_local, against a numpy model of the
reference's definition: per row, max and sum over the original last axis, exp(x - max) / sum for every
column, in float; sum and max broadcast over one 32-byte block per row. The shape comes from the
source's ShapeInfo (pyasc passes no SoftMaxShapeInfo) with a default-constructed tiling, as pyasc's
test does. One build per (dtype, sum dtype), one with isBasicBlock."""
import numpy as np
import pytest

import ascrun
import vector_softmax as vk

pytestmark = pytest.mark.kernel

N = 4096
DST, SUM, MAX = 16384, 32768, 49152  # UB offsets; the source is at 0


def model(x, rows, k, ori_k, sum_dtype):
    """(dst, sum, max) of the first rows * k elements; sum/max rows of one 32-byte block."""
    v = x[:rows * k].reshape(rows, k).astype(np.float32)
    mx = v[:, :ori_k].max(axis=1, keepdims=True)
    e = np.exp(v - mx)
    s = e[:, :ori_k].sum(axis=1, keepdims=True, dtype=np.float32)
    per_block = 32 // np.dtype(sum_dtype).itemsize
    return ((e / s).astype(x.dtype).ravel(), np.repeat(s, per_block, axis=1).astype(sum_dtype).ravel(),
            np.repeat(mx, per_block, axis=1).astype(sum_dtype).ravel())


def run(x, rows, k, ori_k=None, sum_dtype=None, set_shape=1, dst=DST, sum_at=SUM, max_at=MAX, basic=False):
    sum_dtype = sum_dtype or x.dtype
    z, s, mx = np.full(N, 7, x.dtype), np.full(N, 7, sum_dtype), np.full(N, 7, sum_dtype)
    ascrun.run_local(vk.softmax_kernel, 1, x, z, s, mx, N, rows, k, ori_k or k, set_shape, dst, sum_at, max_at,
                     basic)
    return z, s, mx


def check(x, rows, k, ori_k=None, sum_dtype=None, **kw):
    z, s, mx = run(x, rows, k, ori_k, sum_dtype, **kw)
    dst_e, sum_e, max_e = model(x, rows, k, ori_k or k, sum_dtype or x.dtype)
    tol = dict(rtol=1e-5, atol=1e-7) if x.dtype == np.float32 else dict(rtol=1e-3, atol=1e-7)
    used = rows * k
    np.testing.assert_allclose(z[:used].astype(np.float32), dst_e.astype(np.float32), **tol)
    np.testing.assert_allclose(s[:len(sum_e)].astype(np.float32), sum_e.astype(np.float32), rtol=1e-5 if (
        sum_dtype or x.dtype) == np.float32 else 1e-3)
    np.testing.assert_array_equal(mx[:len(max_e)], max_e)
    assert (z[used:] == 7).all() and (s[len(sum_e):] == 7).all() and (mx[len(max_e):] == 7).all()
    return z


def values(dtype, seed=0, scale=5.0):
    return (np.random.default_rng(seed).standard_normal(N) * scale).astype(dtype)


CASES = [(np.float32, None), (np.float16, None), (np.float16, np.float32)]


@pytest.mark.parametrize("dtype, sum_dtype", CASES)
@pytest.mark.parametrize("rows, k", [(1, 64), (3, 16), (7, 128), (16, 256)])
def test_rows_and_widths(dtype, sum_dtype, rows, k):
    check(values(dtype), rows, k, sum_dtype=sum_dtype)


@pytest.mark.parametrize("dtype, sum_dtype", CASES)
def test_dst_reusing_src(dtype, sum_dtype):
    z, _, _ = run(values(dtype, 2), 5, 64, sum_dtype=sum_dtype, dst=0)  # dst is src
    np.testing.assert_allclose(z[:320].astype(np.float32),
                               model(values(dtype, 2), 5, 64, 64, sum_dtype or dtype)[0].astype(np.float32),
                               rtol=1e-3)


def test_padding_columns_take_no_part_in_the_reductions():
    x = values(np.float32, 3)
    x[:64].reshape(4, 16)[:, 12:] = 50.0  # padding far above the row: not the max, not in the sum
    z = check(x, 4, 16, ori_k=12)
    assert (z[:64].reshape(4, 16)[:, 12:] > 1).all()  # written all the same: exp(50 - max) / sum


def test_extreme_values():
    x = np.zeros(N, np.float32)
    x[:16] = [-100, -80, -60, -50, -30, -20, -15, -10, 80, 60, 50, 30, 20, 15, 10, 9]
    z = check(x, 2, 8)
    assert z[8] == pytest.approx(1.0, rel=1e-6) and z[0] < 1e-38  # exp(-90): below float's normal range
    x16 = np.full(N, -60000, np.float16)
    x16[:32] = 60000  # half extremes: computed in float, so no overflow
    check(x16, 2, 16)


def test_faults():
    x = values(np.float32)

    def fault(*args, **kw):
        with pytest.raises(ascrun.KernelError) as e:
            run(*args, **kw)
        return str(e.value)

    assert "SoftMax: srcK 12 (the last axis) is not 32-byte aligned (48 bytes of float)" in fault(x, 4, 12)
    assert ("SoftMax: srcTensor has no shape: softmaxShapeInfo is empty and srcTensor was given no ShapeInfo "
            "(SetShapeInfo)") in fault(x, 4, 16, set_shape=0)
    assert "SoftMax: the original last axis 24 is outside [1, srcK 16]" in fault(x, 4, 16, ori_k=24)
    assert ("SoftMax: sumTensor range [0x0, 0x80) overlaps srcTensor range [0x0, 0x400) (sum and max are separate "
            "outputs)") in fault(x, 4, 64, sum_at=0)
    assert ("SoftMax: dstTensor range [0x20, 0x420) overlaps srcTensor range [0x0, 0x400) (dst may reuse src only "
            "as the same tensor)") in fault(x, 4, 64, dst=32)
    assert ("SoftMax: sumTensor range [0xc000, 0xc080) overlaps maxTensor range [0xc000, 0xc080) (sum and max are "
            "separate outputs)") in fault(x, 4, 64, sum_at=MAX)
    assert ("SoftMax: srcTensor: 4160 elements from UB offset 0x0 exceed the LocalTensor's 4096 elements"
            in fault(x, 65, 64))
    assert ("SoftMax: isBasicBlock with shape [4, 64], which is not a basic block (the last axis a multiple of 64 "
            "in [64, 2048), the rows a multiple of 8)") in fault(x, 4, 64, basic=True)


def test_basic_block():
    check(values(np.float32, 4), 8, 128, basic=True)

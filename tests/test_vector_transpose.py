"""Transpose (数据排布转换/Transpose.md): the 16 x 16 form and TransposeParamsExt's
TRANSPOSE_ND2ND_B16 / NCHW2NHWC / NHWC2NCHW, through run_local against numpy. One build per dtype."""
import numpy as np
import pytest

import ascrun
import vector_transpose as vt

pytestmark = pytest.mark.kernel

N = 4096
TMP = 8192
NONE, ND2ND_ONLY, ND2ND_B16, NCHW2NHWC, NHWC2NCHW = 0, 7, 10, 11, 12


def arrays(dtype):
    x = (np.arange(N) % 251 - 100).astype(dtype)
    return x, np.full(N, 7, dtype), np.full(TMP, 0x11, np.uint8)


def launch(x, z, tmp, t=NONE, shape=(0, 0, 0, 0), tmp_len=TMP, alias=0):
    ascrun.run_local(vt.transpose_kernel, 1, x, z, tmp, N, TMP, t, *shape, tmp_len, alias)


def tmp_bytes(dtype, t, c):
    """sharedTmpBuffer's minimum: (c + 2) or (2c + 1) times h0 * w0 * sizeof(T) bytes."""
    fractal = (32 if np.dtype(dtype).itemsize == 1 else 16) * 32
    return (c + 2 if t == NCHW2NHWC else 2 * c + 1) * fractal


@pytest.mark.parametrize("dtype", [np.float16, np.uint16])
def test_transpose_16x16(dtype):
    x, z, tmp = arrays(dtype)
    launch(x, z, tmp, alias=2)
    np.testing.assert_array_equal(z[:256], x[:256].reshape(16, 16).T.reshape(-1))
    assert (z[256:] == 7).all()


def test_transpose_16x16_in_place():
    # "普通转置接口支持src和dst复用"; so does TRANSPOSE_ND2ND_B16 (uint16_t on Atlas A2/A3).
    for alias in (1, 3):
        x, z, tmp = arrays(np.uint16)
        before = x.copy()
        launch(x, z, tmp, ND2ND_B16, (0, 0, 16, 16), alias=alias)
        np.testing.assert_array_equal(x[:256], before[:256].reshape(16, 16).T.reshape(-1))
        np.testing.assert_array_equal(x[256:], before[256:])
        assert (tmp == 0x11).all()  # the 16 x 16 form takes no buffer


def test_nd2nd_b16_reads_no_sizes():
    x, z, tmp = arrays(np.uint16)
    launch(x, z, tmp, ND2ND_B16, (5, 7, 3, 2))  # nSize/cSize are ignored, hSize/wSize fixed
    np.testing.assert_array_equal(z[:256], x[:256].reshape(16, 16).T.reshape(-1))


@pytest.mark.parametrize("dtype", [np.float16, np.uint16, np.float32, np.int8])
@pytest.mark.parametrize("t", [NCHW2NHWC, NHWC2NCHW])
def test_nchw_nhwc(dtype, t):
    hw = 32 // np.dtype(dtype).itemsize * 3  # hSize * wSize * sizeof(T): a multiple of 32 bytes
    nn, c, h, w = 3, 5, 3, hw // 3
    x, z, tmp = arrays(dtype)
    need = tmp_bytes(dtype, t, c)
    launch(x, z, tmp, t, (nn, c, h, w), tmp_len=need)
    size = nn * c * h * w
    if t == NCHW2NHWC:
        expected = x[:size].reshape(nn, c, h, w).transpose(0, 2, 3, 1).reshape(-1)
    else:
        expected = x[:size].reshape(nn, h, w, c).transpose(0, 3, 1, 2).reshape(-1)
    np.testing.assert_array_equal(z[:size], expected)
    assert (z[size:] == 7).all()
    # the buffer is left undefined: the poison byte; beyond its required size it is untouched
    assert (tmp[:need] == 0xA5).all() and (tmp[need:] == 0x11).all()


def test_zero_size_and_transpose_type_none_are_nops():
    for t, shape in ((NCHW2NHWC, (2, 0, 4, 4)), (NHWC2NCHW, (0, 3, 4, 4)), (NONE, (1, 2, 4, 4))):
        x, z, tmp = arrays(np.float16)
        launch(x, z, tmp, t, shape, tmp_len=TMP)
        assert (z == 7).all() and (tmp == 0x11).all()


def _fails(dtype, *args, **kw):
    x, z, tmp = arrays(dtype)
    with pytest.raises(ascrun.KernelError) as e:
        launch(x, z, tmp, *args, **kw)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_faults():
    assert "block 0: Transpose<float>(TRANSPOSE_ND2ND_B16): Atlas A2/A3 takes uint16_t only" in \
        _fails(np.float32, ND2ND_B16, (0, 0, 16, 16))
    assert "Transpose: transposeType 7 is not supported" in _fails(np.float16, ND2ND_ONLY, (1, 1, 16, 16))
    assert ("Transpose<half>(TRANSPOSE_NCHW2NHWC): cSize 2 must be <= 4095 and hSize * wSize = 15 must be <= 4095 "
            "with hSize * wSize * sizeof(T) a multiple of 32 bytes") in _fails(np.float16, NCHW2NHWC, (1, 2, 3, 5))
    assert "cSize 4096 must be <= 4095" in _fails(np.float16, NCHW2NHWC, (1, 4096, 4, 4))
    assert "Transpose<float>(TRANSPOSE_NHWC2NCHW): sharedTmpBuffer holds 2559 bytes; cSize 2 needs 2560" in \
        _fails(np.float32, NHWC2NCHW, (1, 2, 2, 4), tmp_len=2559)
    assert "Transpose: dst range [0x20, 0xa0) overlaps src range [0x0, 0x80)" in \
        _fails(np.float16, NCHW2NHWC, (1, 4, 4, 4), alias=4)
    assert "Transpose: sharedTmpBuffer range [0x0, 0x600) overlaps src range [0x0, 0x40)" in \
        _fails(np.float16, NHWC2NCHW, (1, 1, 4, 8), alias=5)

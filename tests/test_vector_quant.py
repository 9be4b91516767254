"""AscendQuant (per tensor, 高阶API/量化操作/AscendQuant.md) through run_local, against a numpy model of
the Atlas A2/A3 computation: half(src) (nearest even, saturating), * half(scale) and + half(offset)
in half, then to int8_t with round-half-to-even and saturation. One build per (dtype, config)."""
import numpy as np
import pytest

import ascrun
import vector_quant as vk

pytestmark = pytest.mark.kernel

N = 1024  # elements of each operand's LocalTensor
SRC, DST, TMP = 0, 8192, 16384  # UB offsets
TMP_MIN = 512  # GetAscendQuantMaxMinTmpSize's minimum


def model(src, scale, offset):
    x = np.clip(src.astype(np.float64), -65504, 65504).astype(np.float16)  # float -> half saturates
    with np.errstate(over="ignore", invalid="ignore"):  # half overflows to +-inf, as on the device
        y = (x * np.float16(scale)).astype(np.float16)
        y = (y + np.float16(offset)).astype(np.float16)
    return np.clip(np.rint(y.astype(np.float64)), -128, 127).astype(np.int8)


def run(x, count, scale, offset, cfg=0, src=SRC, dst=DST, tmp=TMP, tmp_bytes=TMP_MIN, with_tmp=1, bounds="fault"):
    z = np.full(N, 7, np.int8)
    ascrun.run_local(vk.quant_kernel, 1, x, z, N, count, src, dst, tmp, tmp_bytes, scale, offset, with_tmp, cfg,
                     bounds=bounds)
    return z


def fault(x, **kw):
    with pytest.raises(ascrun.KernelError) as e:
        run(x, **kw)
    return str(e.value)


def values(dtype, seed=0):
    return (np.random.default_rng(seed).random(N) * 80.0 - 40.0).astype(dtype)


EDGES = [2.5, 3.5, -2.5, -0.5, 0.5, -0.0, 1.5, 200.0, -1000.0, np.inf, -np.inf, 127.4, -128.6, 65504.0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("count", [N, 1, 33, 1000])  # whole, one element, odd, partial
def test_values_and_partial_counts(dtype, count):
    x = values(dtype)
    x[:len(EDGES)] = EDGES
    z = run(x, count, 2.0, 0.9)
    expected = np.full(N, 7, np.int8)
    expected[:count] = model(x[:count], 2.0, 0.9)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_ties_round_to_even_and_saturate(dtype):
    x = np.zeros(N, dtype)
    x[:12] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 127.5, 128.0, -128.5, -129.0, 1e4]
    z = run(x, 12, 1.0, 0.0)
    np.testing.assert_array_equal(z[:12], [0, 2, 2, 0, -2, -2, 0, 127, 127, -128, -128, 127])


def test_float_source_is_rounded_to_half_first():
    # 2.5000002 is above the tie in float, but its half is 2.5: the device gives 2, not 3.
    x = np.zeros(N, np.float32)
    x[:3] = [2.5000002, 1e6, -1e6]  # beyond half's range: saturates to +-65504, then to int8
    z = run(x, 3, 1.0, 0.0)
    np.testing.assert_array_equal(z[:3], [2, 127, -128])


def test_scale_and_offset_are_rounded_to_half():
    x = np.full(N, 1000.0, np.float16)
    z = run(x, 4, 0.1, 0.0001)  # half(0.1) = 0.0999755859375; half(1000 * that) = 99.97...
    assert (z[:4] == model(x[:4], 0.1, 0.0001)).all() and z[0] == 100


def test_dst_may_reuse_src():
    x = values(np.float16, 1)
    z = run(x, N, 0.5, -1.0, dst=SRC)
    np.testing.assert_array_equal(z, model(x, 0.5, -1.0))


def test_a_larger_tmp_buffer_gives_the_same_result():
    x = values(np.float32, 2)
    np.testing.assert_array_equal(run(x, N, 3.0, 1.0, tmp_bytes=4096), model(x, 3.0, 1.0))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_form_without_sharedtmpbuffer(dtype):
    x = values(dtype, 4)
    z = run(x, 500, 2.0, 0.9, tmp_bytes=32, with_tmp=0)  # the tmp tensor is not an operand: its size does not matter
    np.testing.assert_array_equal(z[:500], model(x[:500], 2.0, 0.9))
    assert (z[500:] == 7).all()


def test_config_calc_count_replaces_the_argument():
    x = values(np.float16, 3)
    z = run(x, N, 2.0, 0.9, cfg=1)  # AscendQuantConfig{100, 0, 0, 512}: 100 elements, not N
    expected = np.full(N, 7, np.int8)
    expected[:100] = model(x[:100], 2.0, 0.9)
    np.testing.assert_array_equal(z, expected)


def test_faults():
    x16, x32 = values(np.float16), values(np.float32)
    assert ("AscendQuant: sharedTmpBuffer of 480 bytes is under the minimum temporary space of 512 bytes "
            "(GetAscendQuantMaxMinTmpSize)") in fault(x16, count=N, scale=2.0, offset=0.9, tmp_bytes=480)
    assert ("AscendQuant: config.workLocalSize 1024 is larger than sharedTmpBuffer's 512 bytes"
            in fault(x16, count=N, scale=2.0, offset=0.9, cfg=2))
    assert ("AscendQuant: sharedTmpBuffer range [0x2000, 0x2200) overlaps dstTensor range [0x2000, 0x2400) "
            "(the intermediates are written there)") in fault(x16, count=N, scale=2.0, offset=0.9, tmp=DST)
    assert ("AscendQuant: sharedTmpBuffer range [0x0, 0x200) overlaps srcTensor range [0x0, 0x800) "
            "(the intermediates are written there)") in fault(x16, count=N, scale=2.0, offset=0.9, tmp=SRC)
    assert ("AscendQuant: dstTensor range [0x20, 0x420) overlaps srcTensor range [0x0, 0x800) "
            "(dst may reuse src only from its start)") in fault(x16, count=N, scale=2.0, offset=0.9, dst=SRC + 32)
    assert ("AscendQuant: srcTensor: 1025 elements from UB offset 0x0 exceed the LocalTensor's 1024 elements"
            in fault(x16, count=N + 1, scale=2.0, offset=0.9))
    assert ("AscendQuant: scale 100000 is outside half's range (+-65504): the reference computes with half(scale)"
            in fault(x32, count=N, scale=1e5, offset=0.9))
    assert ("AscendQuant: offset -70000 is outside half's range (+-65504): the reference computes with "
            "half(offset)") in fault(x32, count=N, scale=1.0, offset=-7e4)
    x32[5] = np.nan
    assert ("AscendQuant: element 5: src nan gives NaN (half(src) * scale + offset), whose conversion to int8_t "
            "the reference does not define") in fault(x32, count=N, scale=1.0, offset=0.0)
    x16[0] = np.inf
    assert "element 0: src inf gives NaN" in fault(x16, count=N, scale=0.0, offset=0.0)  # inf * 0


def test_past_the_tensor_with_bounds_warn():
    x = values(np.float16)
    z = run(x, N + 16, 2.0, 0.9, bounds="warn")  # into the UB after the LocalTensors: the device's behaviour
    np.testing.assert_array_equal(z, model(x, 2.0, 0.9))

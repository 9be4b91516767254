"""Binary vector instructions (Add Sub Mul Div Max Min And Or) in the mask + repeat forms, through
run_local, against numpy models written from the Ascend C reference."""
import numpy as np
import pytest

import ascrun
import vector_masked as vm
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 2048
NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
         "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or}


def _inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -30000), min(info.max, 30000)
        x = rng.integers(lo, hi, N).astype(dtype)
        y = rng.integers(lo, hi, N).astype(dtype)
    else:
        x = rng.uniform(-4, 4, N).astype(dtype)
        y = (rng.uniform(0.5, 4, N) * rng.choice([-1, 1], N)).astype(dtype)
    z = np.full(N, 7, dtype=dtype)
    return x, y, z


def run_binary(op, dtype, counter=False, set_mask=True, bits=False, lo=0, hi=0, repeat=1,
               strides=(1, 1, 1, 8, 8, 8)):
    x, y, z = _inputs(dtype)
    expected = z.copy()
    d, s0, s1 = masked_positions(np.dtype(dtype).itemsize, counter, bits, lo, hi, repeat, strides[:3], strides[3:])
    with np.errstate(over="ignore"):
        expected[d] = NUMPY[op](x[s0], y[s1])
    ascrun.run_local(vm.masked_kernel, 1, x, y, z, N, op, counter, set_mask, bits, lo, hi, repeat, *strides, 0.0)
    return z, expected


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_ops_continuous_mask(op, dtype):
    per = 256 // np.dtype(dtype).itemsize
    z, expected = run_binary(op, dtype, lo=per - 3, repeat=3)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_integer_ops_bit_mask(op, dtype):
    z, expected = run_binary(op, dtype, bits=True, lo=0x5A5A_0F0F_FFFF_0001, hi=0x0123_4567_89AB_CDEF
                             if dtype == np.int16 else 0, repeat=2)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op", ["and", "or"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_and_or(op, dtype):
    z, expected = run_binary(op, dtype, lo=100, repeat=4, strides=(1, 2, 1, 8, 16, 8))
    np.testing.assert_array_equal(z, expected)


def test_block_and_repeat_strides_with_gaps():
    # dst blocks every other block, src0 repeats overlapping (repStride 4 < 8 blocks: reads only), src1 with gaps.
    z, expected = run_binary("add", np.float32, lo=64, repeat=5, strides=(2, 1, 3, 16, 4, 24))
    np.testing.assert_array_equal(z, expected)


def test_half_rounds_like_binary16():
    z, expected = run_binary("mul", np.float16, lo=128, repeat=8)
    assert expected.dtype == np.float16
    np.testing.assert_array_equal(z.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_counter_mode_count_with_a_tail_smaller_than_a_block(dtype):
    # 300 elements: two full float repeats + 44 (5 blocks and a 4-element tail); repeatTime is ignored.
    z, expected = run_binary("sub", dtype, counter=True, lo=300, repeat=1, strides=(1, 1, 1, 8, 8, 8))
    np.testing.assert_array_equal(z, expected)


def test_counter_mode_with_strides_and_bit_form():
    # In counter mode the bit form's mask[0] is the count.
    z, expected = run_binary("max", np.float32, counter=True, bits=True, lo=77, hi=0, repeat=9,
                             strides=(2, 2, 1, 16, 16, 8))
    np.testing.assert_array_equal(z, expected)


def test_mask_register_normal_mode():
    z, expected = run_binary("add", np.float16, set_mask=False, bits=True, lo=0xF0F0_F0F0_F0F0_F0F0,
                             hi=0xFFFF_0000_0000_FFFF, repeat=2)
    np.testing.assert_array_equal(z, expected)
    z, expected = run_binary("add", np.float32, set_mask=False, lo=10, repeat=3)
    np.testing.assert_array_equal(z, expected)


def test_mask_register_counter_mode():
    z, expected = run_binary("mul", np.float32, counter=True, set_mask=False, lo=333, repeat=1)
    np.testing.assert_array_equal(z, expected)


def test_zero_repeat_and_zero_mask_are_nops():
    for lo, repeat in ((0, 4), (64, 0)):
        x, y, z = _inputs(np.float32)
        ascrun.run_local(vm.masked_kernel, 1, x, y, z, N, "add", False, True, False, lo, 0, repeat, 1, 1, 1, 8, 8, 8,
                         0.0)
        assert (z == 7).all()


def _fails(*args):
    x, y, z = _inputs(args[1])
    with pytest.raises(ascrun.KernelError) as e:
        run_args = (args[0],) + args[2:]
        ascrun.run_local(vm.masked_kernel, 1, x, y, z, N, *run_args, 0.0)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_continuous_mask_larger_than_a_repeat_fails():
    msg = _fails("add", np.float32, False, True, False, 65, 0, 1, 1, 1, 1, 8, 8, 8)
    assert "block 0: Add<float>: mask 65 is outside [0, 64]" in msg


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_high_mask_word_is_ignored_for_32_bit_elements(dtype):
    # A repeat holds 64 elements: mask[1] selects none of them, and Atlas A2/A3 do not check it
    # (pyasc's test_vadd_bits passes [2^64 - 1, 2^64 - 1] for float32 and int32).
    z, expected = run_binary("add", dtype, bits=True, lo=0x5A5A_0F0F_FFFF_0001, hi=0xFFFF_FFFF_FFFF_FFFF, repeat=2)
    only_low, _ = run_binary("add", dtype, bits=True, lo=0x5A5A_0F0F_FFFF_0001, hi=0, repeat=2)
    np.testing.assert_array_equal(z, expected)
    np.testing.assert_array_equal(z, only_low)


def test_strides_past_the_tensor_fail():
    # 9 repeats of 64 floats every 32 blocks reach element 8*256+64 > 2048.
    msg = _fails("add", np.float32, False, True, False, 64, 0, 9, 1, 1, 1, 32, 8, 8)
    assert "Add: dst: 2112 elements from UB offset" in msg and "exceed the LocalTensor's 2048 elements" in msg


def test_count_form_without_set_mask_in_normal_mode_fails():
    x, y, z = _inputs(np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vm.count_no_mask_kernel, 1, x, z, 256)
    assert "Adds: the count form with isSetMask = false takes its element count" in str(e.value)


def test_counter_mode_count_beyond_2_to_32_fails():
    # The bit form's mask[0] is the count in counter mode; a huge one must fault, not wrap the plan's offsets.
    msg = _fails("add", np.float32, True, True, True, 2**40 + 5, 0, 1, 1, 1, 1, 8, 8, 8)
    assert "block 0: Add<float>: counter-mode element count 1099511627781 is larger than ascrun supports" in msg

"""Vector-scalar instructions (Adds Muls Maxs Mins LeakyRelu ShiftLeft ShiftRight) and Axpy, in the
count and mask + repeat forms, through run_local, against numpy models of the Ascend C reference."""
import numpy as np
import pytest

import ascrun
import vector_masked as vm
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 2048


def _inputs(dtype, seed=1):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -30000), min(info.max, 30000), N).astype(dtype)
    else:
        x = rng.uniform(-4, 4, N).astype(dtype)
    return x, np.zeros(N, dtype), np.full(N, 3, dtype=dtype)


def reference(op, x, s, z):
    """The instruction on elements x (with dst values z, for Axpy), rounded to x's dtype per op."""
    t = x.dtype.type
    s = t(s)
    with np.errstate(over="ignore"):
        if op == "adds":
            return x + s
        if op == "muls":
            return x * s
        if op == "maxs":
            return np.maximum(x, s)
        if op == "mins":
            return np.minimum(x, s)
        if op == "leaky_relu":
            return np.where(x >= 0, x, x * s)
        if op == "shift_left":
            return (x.astype(np.int64) << int(s)).astype(x.dtype)
        if op == "shift_right":
            return x >> s  # arithmetic for signed, logical for unsigned
        if op == "axpy":
            return (x * s) + z
    raise ValueError(op)


def run_masked(op, dtype, scalar, counter=False, set_mask=True, bits=False, lo=0, hi=0, repeat=1,
               strides=(1, 1, 0, 8, 8, 0)):
    x, y, z = _inputs(dtype)
    expected = z.copy()
    d, s = masked_positions(np.dtype(dtype).itemsize, counter, bits, lo, hi, repeat, (strides[0], strides[1]),
                            (strides[3], strides[4]))
    expected[d] = reference(op, x[s], scalar, z[d])
    ascrun.run_local(vm.masked_kernel, 1, x, y, z, N, op, counter, set_mask, bits, lo, hi, repeat, *strides, scalar)
    return z, expected


@pytest.mark.parametrize("op", ["adds", "muls", "maxs", "mins", "leaky_relu", "axpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_ops_mask_forms(op, dtype):
    z, expected = run_masked(op, dtype, -0.3, lo=50, repeat=3, strides=(1, 2, 0, 8, 16, 0))
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked(op, dtype, 1.7, bits=True, lo=0x8000_0000_0000_00F1, repeat=2)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op", ["adds", "muls", "maxs", "mins"])
@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_integer_ops_counter_mode(op, dtype):
    z, expected = run_masked(op, dtype, 5, counter=True, lo=200, repeat=1)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op", ["shift_left", "shift_right"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.uint32])
def test_shifts(op, dtype):
    z, expected = run_masked(op, dtype, 3, lo=40, repeat=2, strides=(2, 1, 0, 16, 8, 0))
    np.testing.assert_array_equal(z, expected)


def test_shift_count_outside_the_bit_width_fails():
    x, y, z = _inputs(np.int16)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vm.masked_kernel, 1, x, y, z, N, "shift_left", False, True, False, 128, 0, 1, 1, 1, 0, 8, 8,
                         0, 16)
    assert "ShiftLeft<int16_t>: shift count 16 is outside [0, 16)" in str(e.value)


def test_mask_register_with_placeholder():
    z, expected = run_masked("adds", np.float16, 2.5, set_mask=False, bits=True, lo=0xFFFF, hi=0xFFFF << 48,
                             repeat=4)
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked("muls", np.float32, 2.5, counter=True, set_mask=False, lo=129, repeat=1)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op,dtype,scalar", [("adds", np.float16, 0.1), ("muls", np.int32, -7),
                                             ("maxs", np.float32, 0.5), ("mins", np.int16, 9),
                                             ("leaky_relu", np.float16, 0.2), ("shift_right", np.int32, 2),
                                             ("shift_left", np.uint16, 1), ("axpy", np.float16, 1.3),
                                             ("axpy", np.float32, -0.7)])
def test_count_form(op, dtype, scalar):
    x, _, z = _inputs(dtype)
    count = 1000  # not a whole number of repeats
    expected = z.copy()
    expected[:count] = reference(op, x[:count], scalar, z[:count])
    ascrun.run_local(vm.count_kernel, 1, x, z, N, count, op, scalar)
    np.testing.assert_array_equal(z, expected)

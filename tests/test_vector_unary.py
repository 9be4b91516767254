"""Unary vector instructions (Abs Exp Ln Sqrt Rsqrt Reciprocal Relu Not), Duplicate and Copy (UB->UB),
in the count and mask + repeat forms, through run_local, against numpy models of the reference."""
import numpy as np
import pytest

import ascrun
import vector_masked as vm
from vector_ref import masked_positions

pytestmark = pytest.mark.kernel

N = 2048
EXACT = {"abs": np.abs, "relu": lambda a: np.maximum(a, a.dtype.type(0)), "not": np.invert}
# Evaluated in float32 and rounded once (the cpu target's definition; the hardware approximates).
APPROX = {"exp": np.exp, "ln": np.log, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a),
          "reciprocal": lambda a: 1 / a}


def _inputs(dtype, op, seed=2):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-30000, 30000, N).astype(dtype)
    elif op in ("ln", "sqrt", "rsqrt"):
        x = rng.uniform(0.01, 8, N).astype(dtype)
    else:
        x = rng.uniform(-4, 4, N).astype(dtype)
    return x, np.zeros(N, dtype), np.full(N, 3, dtype=dtype)


def reference(op, x):
    if op in EXACT:
        return EXACT[op](x)
    return APPROX[op](x.astype(np.float32)).astype(x.dtype)


def run_masked(op, dtype, counter=False, set_mask=True, bits=False, lo=0, hi=0, repeat=1, strides=(1, 1, 8, 8),
               scalar=0.0):
    x, y, z = _inputs(dtype, op)
    expected = z.copy()
    d, s = masked_positions(np.dtype(dtype).itemsize, counter, bits, lo, hi, repeat, strides[:2], strides[2:])
    if op == "duplicate":
        expected[d] = dtype(scalar)
    elif op == "copy":
        expected[d] = x[s]
    else:
        expected[d] = reference(op, x[s])
    a, b, c, e = strides
    ascrun.run_local(vm.masked_kernel, 1, x, y, z, N, op, counter, set_mask, bits, lo, hi, repeat, a, b, 0, c, e, 0,
                     scalar)
    return z, expected


def _check(op, z, expected):
    if op in APPROX:
        np.testing.assert_allclose(z.astype(np.float64), expected.astype(np.float64), rtol=2e-3 if
                                   z.dtype == np.float16 else 1e-6)
    else:
        np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op", ["abs", "exp", "ln", "sqrt", "rsqrt", "reciprocal", "relu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_ops_mask_forms(op, dtype):
    z, expected = run_masked(op, dtype, lo=33, repeat=3, strides=(1, 2, 8, 16))
    _check(op, z, expected)
    z, expected = run_masked(op, dtype, counter=True, lo=150, repeat=1)
    _check(op, z, expected)


def test_relu_int32_and_not_int16_bit_masks():
    z, expected = run_masked("relu", np.int32, bits=True, lo=0xFF00_FF00_0000_FFFF, repeat=2, strides=(2, 1, 16, 8))
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked("not", np.int16, bits=True, lo=0x1, hi=1 << 63, repeat=3)
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked("not", np.uint16, set_mask=False, lo=77, repeat=2)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op,dtype", [("abs", np.float16), ("exp", np.float32), ("ln", np.float16),
                                      ("sqrt", np.float32), ("rsqrt", np.float16), ("reciprocal", np.float32),
                                      ("relu", np.int32), ("not", np.uint16)])
def test_count_form(op, dtype):
    x, _, z = _inputs(dtype, op)
    count = 999
    expected = z.copy()
    expected[:count] = reference(op, x[:count])
    ascrun.run_local(vm.count_kernel, 1, x, z, N, count, op, 0.0)
    _check(op, z, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.uint32])
def test_duplicate(dtype):
    z, expected = run_masked("duplicate", dtype, lo=20, repeat=4, strides=(2, 0, 16, 0), scalar=5)
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked("duplicate", dtype, counter=True, lo=301, repeat=1, scalar=-1 if dtype != np.uint32
                             else 9)
    np.testing.assert_array_equal(z, expected)
    x, _, z = _inputs(dtype, "duplicate")
    expected = z.copy()
    expected[:500] = dtype(2)
    ascrun.run_local(vm.count_kernel, 1, x, z, N, 500, "duplicate", 2)
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_copy_ub_to_ub(dtype):
    z, expected = run_masked("copy", dtype, lo=40, repeat=3, strides=(1, 2, 8, 16))
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked("copy", dtype, bits=True, lo=0xF0F0, repeat=2, strides=(2, 1, 16, 4))
    np.testing.assert_array_equal(z, expected)
    z, expected = run_masked("copy", dtype, counter=True, lo=100, repeat=1)
    np.testing.assert_array_equal(z, expected)

"""Ascend 950 (__NPU_ARCH__ 3510) dtype tables and compare/select behaviour of the cpu runtime's vector
headers, against Atlas A2/A3's (Ascend910B1):
- the 950's dtype tables (基础算术/Add.md, Sub.md, Mul.md, Max.md, Min.md, Adds.md, Maxs.md, Mins.md,
  比较与选择/Compare.md, Compares.md, Select.md, "针对Ascend 950PR/Ascend 950DT"): asctile kernels
  (tests/kernels/c310_dtypes.py) run on Ascend950PR_9599 against numpy, and refused on Ascend910B1 with
  Atlas A2/A3's message;
- Compare / CompareScalar's count form on the 950 compares exactly `count` elements and stores whole
  repeats of result bits, the bits past `count` 0 (dav_3510 CompareLevel2 / CompareScalarLevel2), so
  Select reads bits CompareScalar wrote (where(x > s, 0, 1) on 32 elements gave the UB poison before);
- the 950's mask + repeat forms apply their mask ("针对Ascend 950PR/Ascend 950DT，设置有效"), unselected
  bits 0; Atlas A2/A3 ignore it.
The written-form checks use compare_count (tests/kernels/c310_dtypes.py, every dtype) and
tests/kernels/vector_cmpsel.py's compare_kernel (every call form on half and float), each with a 256-byte
dst read first. On pyasc 1.1.1, which has no asctile and no Ascend 950, these skip."""
import numpy as np
import pytest

import ascrun
from test_asctile import needs_asctile

pytestmark = [pytest.mark.kernel, needs_asctile]

SOC_950 = "Ascend950PR_9599"
SOC_910B = "Ascend910B1"
OPS = ["eq", "ne", "gt", "ge", "lt", "le"]
LT, GT, EQ, LE, GE, NE = range(6)


@pytest.fixture(scope="module")
def kernels():
    import c310_dtypes
    return c310_dtypes


@pytest.fixture(scope="module")
def cmpsel():
    import vector_cmpsel
    return vector_cmpsel


def bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


def dtype_of(name):
    return bf16() if name == "bfloat16" else np.dtype(name).type


def values(name, n, seed=0, lo=-6, hi=6):
    """Small integers (ties on purpose), halves in the float types."""
    rng = np.random.default_rng(seed)
    v = rng.integers(lo * 2, hi * 2, n)
    return (v / 2 if name in ("float16", "bfloat16", "float32") else v).astype(dtype_of(name))


def compare(op, a, b):
    return {"eq": a == b, "ne": a != b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[op]


def build_error(soc, kernel, *args):
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, *args, soc=soc)
    assert e.value.kind == "build_error"
    return str(e.value)


# ---- the 950's dtype tables: tile arithmetic -----------------------------------------------------------

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("op, dtype", [(op, "bfloat16") for op in BINARY] + [
    ("add", "int16"), ("max", "int16"), ("min", "int32"), ("sub", "float16")])
def test_tile_arithmetic_on_950(kernels, op, dtype):
    """bfloat16: the float result of two bfloat16 values rounded once to nearest even, as ml_dtypes does."""
    x, y = values(dtype, 256, 1), values(dtype, 256, 2)
    z = np.zeros(256, dtype_of(dtype))
    result = ascrun.run_local(kernels.tile_tile, 1, x, y, z, 256, op, soc=SOC_950)
    api = {"add": "Add", "sub": "Sub", "mul": "Mul", "max": "Max", "min": "Min"}[op]
    assert f"AscendC::{api}(" in result.source
    np.testing.assert_array_equal(z, BINARY[op](x, y).astype(dtype_of(dtype)))


@pytest.mark.parametrize("op, api", [("adds", "Adds"), ("maxs", "Maxs"), ("mins", "Mins")])
def test_tile_scalar_bfloat16_on_950(kernels, op, api):
    x = values("bfloat16", 256, 3)
    z = np.zeros(256, bf16())
    result = ascrun.run_local(kernels.tile_scalar, 1, x, 1.5, z, 256, op, soc=SOC_950)
    assert f"AscendC::{api}" in result.source
    s = np.asarray(1.5, bf16())
    reference = {"adds": x + s, "maxs": np.maximum(x, s), "mins": np.minimum(x, s)}[op]
    np.testing.assert_array_equal(z, reference.astype(bf16()))


@pytest.mark.parametrize("kernel, op, api", [("tile_tile", "add", "Add"), ("tile_tile", "mul", "Mul"),
                                             ("tile_tile", "max", "Max"), ("tile_scalar", "adds", "Adds")])
def test_bfloat16_arithmetic_is_refused_on_910B(kernels, kernel, op, api):
    x = values("bfloat16", 64)
    second = x if kernel == "tile_tile" else 1.5
    message = build_error(SOC_910B, getattr(kernels, kernel), x, second, np.zeros(64, bf16()), 64, op)
    assert f"static assertion failed: {api}: T must be one of half, float, int16_t, int32_t (Atlas A2/A3)" \
        in message


# ---- where(cmp(x, s), 0, 1): CompareScalar's count form, then Select ------------------------------------

@pytest.mark.parametrize("dtype, op", [(d, op) for d in ("float32", "bfloat16") for op in OPS] + [
    (d, op) for d in ("float16", "int16", "int32") for op in ("gt", "le")])
def test_where_scalar_on_32_elements_on_950(kernels, dtype, op):
    """CompareScalar(dst, x, s, mode, 32) then Select(..., VSEL_TENSOR_TENSOR_MODE, 32): the compare
    writes the 32 bits Select reads (before, 32 float elements were no whole repeat and nothing was
    written: Select read the UB poison 0xA5)."""
    x = values(dtype, 32, 4, -3, 3)
    s = 0.5 if dtype in ("float16", "bfloat16", "float32") else 1
    z = np.full(32, 7, dtype_of(dtype))
    result = ascrun.run_local(kernels.where_scalar, 1, x, s, z, 32, op, soc=SOC_950)
    assert "AscendC::CompareScalar(" in result.source and "VSEL_TENSOR_TENSOR_MODE, c32_i64)" in result.source
    s_t = np.asarray(s, dtype_of(dtype))
    np.testing.assert_array_equal(z, np.where(compare(op, x, s_t), 0, 1).astype(dtype_of(dtype)))


def test_int16_select_is_refused_on_910B(kernels):
    """For Ascend910B1 pyasc-dev compares int16 as half (Cast, CompareScalar) but selects int16_t, which
    Atlas A2/A3's Select does not take (Select.md)."""
    message = build_error(SOC_910B, kernels.where_scalar, values("int16", 32), 1, np.zeros(32, np.int16), 32, "gt")
    assert "static assertion failed: Select: T must be half or float (Atlas A2/A3)" in message


# ---- where(cmp(x, y), x, y): Compare's mask + repeat form, then Select ----------------------------------

@pytest.mark.parametrize("dtype, op, n", [("bfloat16", op, 256) for op in OPS] + [
    ("int16", "gt", 128), ("int16", "lt", 256), ("int32", "ge", 64), ("int32", "lt", 256), ("float32", "le", 256)])
def test_where_tiles_on_950(kernels, dtype, op, n):
    """pyasc-dev emits Compare(dst, x, y, mode, a repeat's elements, n / per repeats, params): whole repeats."""
    x, y = values(dtype, n, 5, -3, 3), values(dtype, n, 6, -3, 3)
    z = np.zeros(n, dtype_of(dtype))
    result = ascrun.run_local(kernels.where_tiles, 1, x, y, z, n, op, soc=SOC_950)
    per = 256 // np.dtype(dtype_of(dtype)).itemsize
    assert f"AscendC::CMPMODE::{op.upper()}, c{per}_i64, c{n // per}_i64," in result.source
    np.testing.assert_array_equal(z, np.where(compare(op, x, y), x, y))


@pytest.mark.parametrize("dtype, per", [("float32", 64), ("float16", 128)])
def test_where_tiles_of_32_elements_reads_a_whole_repeat_past_them(kernels, dtype, per):
    """On 32-element tiles pyasc-dev passes Compare a mask of a whole repeat (64 float / 128 half) and one
    repeat; on the 950 the mask applies (Compare.md "设置有效"), so the device compares `per` elements,
    reading past both tiles: the runtime stops there (bounds="warn" lets it through, as the device does)."""
    x = values(dtype, 32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernels.where_tiles, 1, x, x, np.zeros(32, dtype_of(dtype)), 32, "gt", soc=SOC_950)
    assert str(e.value).endswith(
        f"block 0: Compare: src0: {per} elements from UB offset 0x0 exceed the LocalTensor's 32 elements")


# ---- the result bytes of Compare / CompareScalar on the 950 (written forms) ------------------------------

N = 1024


def run_compare(cmpsel, soc, dtype, form, mode, count=0, lo=0, hi=0, repeat=1, counter=0, scalar=0.5, seed=0):
    """compare_kernel (half, float): x, y of N elements at UB 0 and N * size; z, 256 bytes, read in first and
    written back."""
    x, y = values(dtype, N, seed, -3, 3), values(dtype, N, seed + 1, -3, 3)
    z = np.random.default_rng(seed + 2).integers(0, 256, 256).astype(np.uint8)
    z0 = z.copy()
    size = np.dtype(dtype_of(dtype)).itemsize
    ascrun.run_local(cmpsel.compare_kernel, 1, x, y, z, N, form, mode, count, np.uint64(lo), np.uint64(hi), repeat,
                     1, 1, 8, 8, 1, 8, scalar, 0, counter, 2 * N * size, 0, soc=soc)
    return x, y, z0, z


def run_count(kernels, dtype, count, scalar_form, mode, seed=0):
    """kernels.compare_count on the 950, every dtype, the scalar 1: (x, y, z before, z after)."""
    s = 1.0 if dtype in ("float16", "bfloat16", "float32") else 1
    x, y = values(dtype, N, seed, -3, 3), values(dtype, N, seed + 1, -3, 3)
    z = np.random.default_rng(seed + 2).integers(0, 256, 256).astype(np.uint8)
    z0 = z.copy()
    ascrun.run_local(kernels.compare_count, 1, x, y, z, s, N, count, int(scalar_form), mode, soc=SOC_950)
    return x, y, z0, z


def packed(bools):
    return np.packbits(np.asarray(bools, bool), bitorder="little")


MODES = {LT: "lt", GT: "gt", EQ: "eq", LE: "le", GE: "ge", NE: "ne"}


@pytest.mark.parametrize("dtype, count", [("float32", 32), ("float32", 100), ("float16", 32), ("float16", 300),
                                          ("int16", 200), ("int32", 64), ("bfloat16", 130)])
@pytest.mark.parametrize("scalar_form", [False, True], ids=["Compare", "CompareScalar"])
def test_count_form_compares_count_elements_in_whole_repeats_of_bits(kernels, dtype, count, scalar_form):
    """Ascend 950: ceil(count / per) repeats; each stores per / 8 bytes (StoreUnAlign of the MaskReg), the
    bits past count 0; the bytes after them untouched."""
    per = 256 // np.dtype(dtype_of(dtype)).itemsize
    x, y, z0, z = run_count(kernels, dtype, count, scalar_form, GT)
    rhs = np.asarray(1, dtype_of(dtype)) if scalar_form else y[:count]
    written = -(-count // per) * per // 8
    bits = np.zeros(written * 8, bool)
    bits[:count] = compare("gt", x[:count], rhs)
    np.testing.assert_array_equal(z[:written], packed(bits))
    np.testing.assert_array_equal(z[written:], z0[written:])


@pytest.mark.parametrize("mode", list(MODES))
def test_int32_compares_every_mode_on_950(kernels, mode):
    """Atlas A2/A3 compare int32_t with EQ only (Compare.md); the 950 every CMPMODE."""
    x, y, _, z = run_count(kernels, "int32", 128, False, mode)
    np.testing.assert_array_equal(z[:16], packed(compare(MODES[mode], x[:128], y[:128])))


def test_count_form_runs_in_counter_mode_on_950(cmpsel):
    """The 950's count form does not depend on the mask mode (CompareLevel2 runs under UpdateMask);
    Atlas A2/A3 leave it undefined in counter mode, and the runtime stops there."""
    x, y, _, z = run_compare(cmpsel, SOC_950, "float32", cmpsel.COUNT, LE, count=64, counter=1)
    np.testing.assert_array_equal(z[:8], packed(x[:64] <= y[:64]))
    with pytest.raises(ascrun.KernelError) as e:
        run_compare(cmpsel, SOC_910B, "float32", cmpsel.COUNT, LE, count=64, counter=1)
    assert "Compare: the reference does not define this form in counter mode" in str(e.value)


@pytest.mark.parametrize("soc", [SOC_950, SOC_910B])
def test_mask_form_applies_the_mask_on_950_only(cmpsel, soc):
    """Continuous mask 20, two repeats of float: the 950 compares the first 20 elements of each repeat, the
    other bits 0; Atlas A2/A3 ignore the mask (reserved) and compare all 64."""
    x, y, z0, z = run_compare(cmpsel, soc, "float32", cmpsel.MASK, GE, lo=20, repeat=2)
    full = x[:128] >= y[:128]
    if soc == SOC_950:
        full = full & np.tile(np.arange(64) < 20, 2)
    np.testing.assert_array_equal(z[:16], packed(full))
    np.testing.assert_array_equal(z[16:], z0[16:])


def test_mask_form_in_counter_mode_on_950(cmpsel):
    """Counter mode: the mask is the element count (CompareLevel0CounterMode): 100 floats, two repeats."""
    x, y, z0, z = run_compare(cmpsel, SOC_950, "float32", cmpsel.MASK, NE, lo=100, repeat=1, counter=1)
    bits = np.zeros(128, bool)
    bits[:100] = x[:100] != y[:100]
    np.testing.assert_array_equal(z[:16], packed(bits))
    np.testing.assert_array_equal(z[16:], z0[16:])

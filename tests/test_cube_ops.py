"""The cube instructions on the cpu target (kernels/cube_ops.py): GM -> L1 by ND2NZ, L1 -> L0A/L0B by
LoadData (with and without ifTranspose), Mmad (Zz x Zn = Nz, partial m/n/k, GEMV, init vs
accumulate), Fixpipe L0C -> GM (NZ2ND and NZ, NoQuant/F322F16/F322BF16, ReLU), against numpy, and
their faults. Integer-valued data make every result exact (products summed in double, rounded once).

Builds: half x half -> float, half -> half, int8 -> int32, float -> float, bfloat16 -> bfloat16 (the
half -> half kernel with `half` read as `bfloat16_t`, as test_vector_bf16.py does: pyasc 1.1.1 has no
bfloat16 dtype), and the fault kernel."""
import functools
import re

import numpy as np
import pytest

import ascrun
from conftest import unsited
import cube_ops
from ascrun.compiler import frontend, pipeline
from ascrun.compiler.errors import KernelRuntimeError

pytestmark = pytest.mark.kernel

NOQUANT, F322F16, F322BF16 = 0, 1, 2  # the kernel's `quant` branches (pyasc's asc.QuantModes numbering)
K0 = {np.float16: 16, np.float32: 8, np.int8: 32}


def operands(a, b, a_trans, b_trans):
    """What the kernel reads for A and B (see cube_ops.py: a_trans/b_trans)."""
    return (np.ascontiguousarray(a.T) if a_trans == 1 else a), (np.ascontiguousarray(b.T) if b_trans else b)


def matmul(a, b, c, a_trans=0, b_trans=1, rounds=1, init_all=0, quant=NOQUANT, relu=0, nz=0, dst_stride=None):
    (m, k), n = a.shape, b.shape[1]
    x, y = operands(a, b, a_trans, b_trans)
    ascrun.run_local(cube_ops.matmul_kernel, 1, x, y, c, m, n, k, K0[a.dtype.type], a_trans, b_trans, rounds,
                     init_all, quant, relu, nz, n if dst_stride is None else dst_stride)


def ints(shape, dtype, lo=-8, hi=8, seed=0):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def exact(a, b, dtype=np.float64):
    return a.astype(dtype) @ b.astype(dtype)


@pytest.mark.parametrize("a_trans,b_trans", [(0, 1), (0, 0), (1, 0), (1, 1)])
@pytest.mark.parametrize("m,n,k", [(32, 48, 64), (30, 40, 70), (1, 17, 5), (16, 16, 16)])
def test_half_layouts_partial_tiles_and_transposes(m, n, k, a_trans, b_trans):
    """Zz/Zn/Nz fractals, m/n/k not multiples of 16 (the padding is ignored), A and B through either
    LoadData path. m = 1 with k <= 16 is GEMV mode reading the same bytes."""
    a, b = ints((m, k), np.float16, seed=1), ints((k, n), np.float16, seed=2)
    c = np.full((m, n), 7, np.float32)
    matmul(a, b, c, a_trans, b_trans)
    np.testing.assert_array_equal(c, exact(a, b).astype(np.float32))


def test_half_non_integer_data_is_the_exactly_rounded_sum():
    a = np.random.default_rng(3).standard_normal((48, 80)).astype(np.float16)
    b = np.random.default_rng(4).standard_normal((80, 33)).astype(np.float16)
    c = np.zeros((48, 33), np.float32)
    matmul(a, b, c)
    np.testing.assert_array_equal(c, exact(a, b).astype(np.float32))


def test_accumulate_vs_init():
    a, b = ints((20, 24), np.float16), ints((24, 36), np.float16, seed=5)
    c = np.zeros((20, 36), np.float32)
    matmul(a, b, c, rounds=3)  # cmatrixInitVal only on the first Mmad: C = 3 AB
    np.testing.assert_array_equal(c, 3 * exact(a, b).astype(np.float32))
    matmul(a, b, c, rounds=3, init_all=1)  # every Mmad starts C at 0
    np.testing.assert_array_equal(c, exact(a, b).astype(np.float32))


def test_gemv_reads_a_as_contiguous_elements():
    """m = 1: A is k contiguous elements in L0A (GEMV.md), here k = 48 over three 16-element rows of
    one fractal, which the Zz layout would read from three fractals."""
    a, b = ints((1, 48), np.float16), ints((48, 20), np.float16, seed=6)
    c = np.zeros((1, 20), np.float32)
    matmul(a, b, c, a_trans=2)
    np.testing.assert_array_equal(c, exact(a, b).astype(np.float32))


def test_fixpipe_relu_and_dst_stride():
    a, b = ints((18, 40), np.float16), ints((40, 20), np.float16, seed=7)
    c = np.full((18, 32), -1, np.float32)
    matmul(a, b, c, relu=1, dst_stride=32)  # rows 32 elements apart; columns 20..31 untouched
    np.testing.assert_array_equal(c[:, :20], np.maximum(exact(a, b), 0).astype(np.float32))
    assert (c[:, 20:] == -1).all()


def aligned_32(buffer, size):
    """`size` elements of `buffer` from a 32-byte aligned address (NZ dst GM addresses must be)."""
    start = (-buffer.ctypes.data % 32) // buffer.itemsize
    return buffer[start:start + size]


def test_fixpipe_nz_output():
    """CFG_NZ: column block j of C is mSize rows x 16 elements, dstStride x 32 bytes apart."""
    m, n, k = 20, 48, 24
    a, b = ints((m, k), np.float16), ints((k, n), np.float16, seed=8)
    c = aligned_32(np.full(3 * 24 * 16 + 8, -1, np.float32), 3 * 24 * 16)  # blocks 24 rows apart: dstStride 48
    matmul(a, b, c, nz=1, dst_stride=48)
    blocks = c.reshape(3, 24, 16)
    expected = exact(a, b).astype(np.float32).reshape(m, 3, 16).transpose(1, 0, 2)
    np.testing.assert_array_equal(blocks[:, :m], expected)
    assert (blocks[:, m:] == -1).all()


def test_int8_to_int32():
    a, b = ints((20, 70), np.int8, -128, 128), ints((70, 24), np.int8, -128, 128, seed=9)
    c = np.zeros((20, 24), np.int32)
    matmul(a, b, c)
    np.testing.assert_array_equal(c, exact(a, b, np.int64).astype(np.int32))


def test_float_to_float():
    a, b = ints((17, 13), np.float32, -100, 100), ints((13, 33), np.float32, -100, 100, seed=10)
    c = np.zeros((17, 33), np.float32)
    matmul(a, b, c, rounds=2)
    np.testing.assert_array_equal(c, 2 * exact(a, b).astype(np.float32))


def test_half_out_f322f16_rounds_to_nearest_even():
    a = np.array([[1.0, 1.0]], np.float16).repeat(16, 0)
    b = np.array([[1024.0, 2048.0, 2048.0, -1.0], [0.5, 1.0, 3.0, -2.0]], np.float16)
    c = np.zeros((16, 4), np.float16)
    matmul(a, b, c, quant=F322F16, relu=1)  # 1024.5 -> 1024, 2049 -> 2048, 2051 -> 2052 (ties to even), ReLU
    np.testing.assert_array_equal(c, np.tile(np.array([1024, 2048, 2052, 0], np.float16), (16, 1)))


# ---- bfloat16 (bits as uint16) ----------------------------------------------------------------------

def bf16_bits(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # nearest even (no NaN here)


@functools.lru_cache(maxsize=None)
def bf16_build():
    """The half kernel with every `half` read as `bfloat16_t`; its GM parameters take the bits as
    uint16_t (numpy has no bfloat16), viewed as bfloat16_t at the top of the body."""
    from ascrun.args import launch_args
    probe = np.zeros((16, 16), np.float16)
    bundle, host = launch_args(cube_ops.matmul_kernel, (probe, probe, probe) + (0,) * 12)
    result = frontend.run(bundle, host.specs)
    params = re.findall(r"__gm__ half\* (\w+)", result.source)
    source = re.sub(r"__gm__ half\* (\w+)", r"__gm__ uint16_t* \1_bits", result.source)
    views = "".join(f"  __gm__ half* {p} = reinterpret_cast<__gm__ half*>({p}_bits);\n" for p in params)
    source = re.sub(r"(void matmul_kernel\([^)]*\) \{\n)", lambda mo: mo.group(1) + views, source)
    source = re.sub(r"\bhalf\b", "bfloat16_t", source)
    # pyasc writes asc.QuantModes.F322BF16 as 2, the compiler's VQF322HIF8_PRE (test_fixpipe_quant_pre.py)
    pyasc_f322bf16 = "static_cast<QuantMode_t>(c2_i32)"
    assert len(params) == 3 and "reinterpret_cast<__gm__ bfloat16_t*>" in source and source.count(pyasc_f322bf16) == 1
    source = source.replace(pyasc_f322bf16, "QuantMode_t::F322BF16")
    target = pipeline.get_target("cpu")
    return result, target.toolchain.build(source, result.kernel_name, result.kernel_type), target.runner


def test_bfloat16_in_f322bf16_out():
    result, artifact, runner = bf16_build()
    m, n, k = 24, 20, 40
    a, b = ints((m, k), np.float32, -64, 64), ints((k, n), np.float32, -64, 64, seed=11)
    b[0, 0] = 1 / 256  # C[:, 0] gets fractions past bfloat16's 8-bit significand, which F322BF16 rounds
    c = np.zeros((m, n), np.uint16)
    values = [bf16_bits(a), np.ascontiguousarray(bf16_bits(b).T), c, m, n, k, 16, 0, 1, 1, 0, F322BF16, 0, 0, n]
    runner.run(artifact, 1, result.params, result.kernel_args, values)
    np.testing.assert_array_equal(c, bf16_bits(exact(a, b).astype(np.float32)))


# ---- faults -------------------------------------------------------------------------------------------

def fault_arrays():
    a = (np.arange(512) % 7 - 3).astype(np.float16).reshape(16, 32)
    return a, np.zeros((16, 16), np.float32)


@pytest.mark.parametrize("case", [0, 10])
def test_fault_kernel_runs_clean_without_a_fault(case):
    a, c = fault_arrays()
    ascrun.run_local(cube_ops.fault_kernel, 1, a, c, case)
    x = a.reshape(-1)[:256].reshape(16, 16)
    np.testing.assert_array_equal(c, exact(x, x).astype(np.float32))


LOAD = "LoadData(L1->L0, LoadData2DParams)"
FAULTS = [
    (1, f"{LOAD}: dst LocalTensor is in TPosition A1; this operand must be in A2 (L0A Buffer) or B2 (L0B Buffer)"),
    (2, "TPipe::InitBuffer(TQue<A2, 1>, 1, 65568): 1 x 65568 bytes from L0A offset 0x0 do not fit in the L0A "
        "Buffer (0x10000 bytes, 0x10000 left)"),
    (3, f"{LOAD}: dst: 2560 bytes from L0A offset 0x0 exceed the LocalTensor's 2048 bytes (1024 elements)"),
    (4, "Mmad: fm LocalTensor starts at L0A offset 0x20, which is not 512-byte aligned (this operand must start on "
        "a 512-byte boundary)"),
    (5, "Mmad: filter: 1024 bytes from L0B offset 0x0 exceed the LocalTensor's 512 bytes (256 elements)"),
    (6, "DataCopy(GM->UB): dst LocalTensor is in TPosition A2; this instruction takes Unified Buffer tensors "
        "(VECIN, VECOUT, VECCALC)"),
    (8, "Fixpipe(L0C->GM, CFG_ROW_MAJOR): quantPre 2 is not an Atlas A2/A3 QuantMode_t mode (pyasc's "
        "asc.QuantModes.F322BF16 is 2, the reference's listing order; the compiler's QuantMode_t::F322BF16 is 16)"),
    (9, "DataCopy(GM->L1, Nd2NzParams): ND matrix 0, row 8, column block 0 writes element 128 of dst, which this "
        "copy already wrote (overlapping NZ rows: check dstNzC0Stride, dstNzNStride and dstNzMatrixStride; the "
        "reference leaves the result undefined)"),
    (11, "LocalTensor<half>::GetValue(1): the tensor is in TPosition A1; element access takes VECIN, VECCALC and "
         "VECOUT tensors only"),
]


@pytest.mark.parametrize("case,message", FAULTS)
def test_faults(case, message):
    a, c = fault_arrays()
    with pytest.raises(KernelRuntimeError) as e:
        ascrun.run_local(cube_ops.fault_kernel, 1, a, c, case)
    assert unsited(str(e.value)) == f"block 0: {message}"


def test_mmad_unit_flag_2():
    """MmadParams' unit_flag 2 (Mmad.md: 0, 2 or 3). pyasc 1.1.1 writes unit_flag as a bool (the C++ of
    case 0 has c0_i1 there), so 2 arrives as 1 and faults; the nightly writes it as uint8_t, and 2 is
    then otherwise ignored: the product is case 0's."""
    a, c = fault_arrays()
    source = ascrun.run_local(cube_ops.fault_kernel, 1, a, c, 0).source
    if re.search(r"MmadParams \w+\{\w+, \w+, \w+, c0_i1, ", source):
        with pytest.raises(KernelRuntimeError) as e:
            ascrun.run_local(cube_ops.fault_kernel, 1, a, c, 7)
        assert unsited(str(e.value)) == ("block 0: Mmad: unitFlag 1 is not 0, 2 or 3 (pyasc 1.1.1 passes MmadParams' "
                                         "unit_flag as a bool, so 2 and 3 arrive as 1)")
    else:
        c[:] = 0
        ascrun.run_local(cube_ops.fault_kernel, 1, a, c, 7)
        x = a.reshape(-1)[:256].reshape(16, 16)
        np.testing.assert_array_equal(c, exact(x, x).astype(np.float32))


def test_transposing_load_of_int8_faults():
    a, b = ints((16, 32), np.int8), ints((32, 16), np.int8)
    with pytest.raises(KernelRuntimeError) as e:
        matmul(a, b, np.zeros((16, 16), np.int32), b_trans=0)
    message = unsited(str(e.value))
    assert message == ("block 0: LoadData(L1->L0, LoadData2DParams): ifTranspose supports b16 types only (half, "
                       "bfloat16_t, int16_t, uint16_t), not int8_t")


def test_nz_output_to_a_misaligned_address_faults():
    a, b = ints((16, 16), np.float16), ints((16, 16), np.float16)
    c = aligned_32(np.zeros(16 * 16 + 16, np.float32), 16 * 16 + 8)[4:]  # 16 bytes past a 32-byte boundary
    with pytest.raises(KernelRuntimeError) as e:
        matmul(a, b, c, nz=1, dst_stride=32)
    assert re.fullmatch(r"block 0: Fixpipe\(L0C->GM, CFG_NZ\): the NZ dst GM address 0x[0-9a-f]+ is not 32-byte "
                        r"aligned", unsited(str(e.value)))

"""Issue 26: the Ascend C APIs pyasc's nightly (asc.experimental.asctile) emits that the cpu runtime
lacked: SoftMax with a sharedTmpBuffer and no sum/max (Atlas A2/A3 and Ascend 950), and for Ascend 950
(__NPU_ARCH__ 3510) Duplicate from a LocalTensor, bfloat16 CompareScalar / Muls / Select,
LoadData2DParamsV2 and Fixpipe L0C->L1 with FixpipeParamsC310. The kernels are asctile's
(tests/kernels/c310_api.py), run through run_local for Ascend910B1 or Ascend950PR_9599, and a few
written here in Ascend C for what asctile does not reach (int8 cube, refusals); outputs against numpy,
refusals against their messages. On pyasc 1.1.1, which has no asctile, these skip."""
import re

import numpy as np
import pytest

import ascrun
from ascrun.args import launch_args
from ascrun.compiler import frontend, pipeline
from conftest import unsited
from test_asctile import needs_asctile

pytestmark = [pytest.mark.kernel, needs_asctile]


@pytest.fixture(scope="module")
def kernels():
    import c310_api
    return c310_api


def softmax_ref(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


# ---- SoftMax(dst, src, sharedTmpBuffer, tiling, shapeInfo): Atlas A2/A3 ----------------------------

@pytest.mark.parametrize("dtype, m, k", [(np.float32, 8, 64), (np.float32, 3, 200), (np.float16, 4, 128)])
def test_softmax_with_a_shared_tmp_buffer_runs_on_910B(kernels, dtype, m, k):
    x = ((np.random.default_rng(1).random((m, k)) - 0.5) * 20).astype(dtype)
    z = np.zeros_like(x)
    result = ascrun.run_local(kernels.softmax_rows, 1, x, z, m, k)
    call = "float" if dtype == np.float32 else "half"
    assert re.search(rf"AscendC::SoftMax<{call}, 0, 0>\(\w+, \w+, \w+, \w+, \w+\)", result.source)
    # half: computed in float, rounded once (the Atlas A2/A3 implementation widens half operands)
    np.testing.assert_allclose(z, softmax_ref(x.astype(np.float32)).astype(dtype), rtol=2e-6, atol=1e-7)


# ---- Ascend 950 (__NPU_ARCH__ 3510): pyasc-dev's kernels for Ascend950PR_9599 -----------------------
SOC_950 = "Ascend950PR_9599"
ARCH_950 = 3510  # the cpu toolchain's npu_arch for it (socs.py)


def run_950(kernel, *args):
    return ascrun.run_local(kernel, 1, *args, soc=SOC_950)


def test_softmax_with_a_shared_tmp_buffer_runs_on_950(kernels):
    x = ((np.random.default_rng(2).random((8, 64)) - 0.5) * 20).astype(np.float32)
    z = np.zeros_like(x)
    result = run_950(kernels.softmax_rows, x, z, 8, 64)
    assert re.search(r"AscendC::SoftMax<float, 0, 0>\(\w+, \w+, \w+, \w+, \w+\)", result.source)
    np.testing.assert_allclose(z, softmax_ref(x), rtol=2e-6, atol=1e-7)


def test_duplicate_from_a_local_tensor_fills_with_its_first_element(kernels):
    x = np.array([3.25, 7, 7, 7, 7, 7, 7, 7], np.float32)
    z = np.zeros(256, np.float32)
    result = run_950(kernels.broadcast_row, x, z, 256, 1)
    assert re.search(r"AscendC::Duplicate\(\w+, \w+, c256_i64\)", result.source)
    np.testing.assert_array_equal(z, np.full(256, 3.25, np.float32))


def test_duplicate_from_a_local_tensor_is_ascend_950_only(kernels):
    """On Atlas A2/A3 (no __NPU_ARCH__ 3510) the LocalTensor form does not compile (Duplicate.md)."""
    bundle, host = launch_args(kernels.broadcast_row, (np.zeros(8, np.float32), np.zeros(256, np.float32), 256, 1))
    result = frontend.run(bundle, host.specs, None, SOC_950)
    source = re.sub(r"^\s*(get_buf|rls_buf)\(.*\);\n", "", result.source, flags=re.M)  # 950's sync, not A2's
    with pytest.raises(ascrun.KernelError) as e:
        pipeline.get_target("cpu").toolchain.build(source, result.kernel_name, result.kernel_type)  # Atlas A2/A3
    assert "static assertion failed: Duplicate(dst, src LocalTensor, count): Ascend 950 (__NPU_ARCH__ 3510) only" \
        in str(e.value)


def bf16(x):
    import ml_dtypes
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16)


def test_bfloat16_compare_scalar_muls_and_select(kernels):
    """where(x > 0.5, x * 2, 0) in bfloat16: CompareScalar, Muls<bfloat16_t, 0> and Select, count forms."""
    x = bf16((np.random.default_rng(3).random(256) - 0.25) * 3)
    x[:4] = bf16([0.5, 0.50390625, -0.0, 1.0])  # the boundary, the next bfloat16 above it
    z = bf16(np.full(256, 9.0))
    result = run_950(kernels.clamp_below, x, z, 256)
    for call in ("CompareScalar(", "Muls<bfloat16_t, 0>(", "Select("):
        assert f"AscendC::{call}" in result.source
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(z.astype(np.float32), np.where(xf > 0.5, xf * 2, 0).astype(np.float32))


def test_bfloat16_compare_scalar_is_refused_on_910B(kernels):
    """Atlas A2/A3's CompareScalar, Muls and Select take no bfloat16_t (Compares.md, Muls.md, Select.md)."""
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernels.clamp_below, 1, bf16(np.zeros(256)), bf16(np.zeros(256)), 256)
    assert e.value.kind == "build_error"
    assert "static assertion failed: CompareScalar: T must be half, float or int32_t (Atlas A2/A3" in str(e.value)
    assert "static assertion failed: Muls: T must be one of half, float, int16_t, int32_t (Atlas A2/A3" \
        in str(e.value)


# ---- the cube: LoadData2DParamsV2, FixpipeParamsC310 (L0C -> L1) --------------------------------------

def chain_args(m=32, k=32, n=32):
    rng = np.random.default_rng(5)
    return (rng.integers(-4, 5, (m, k)).astype(np.float32), rng.integers(-4, 5, (k, n)).astype(np.float32),
            rng.integers(-4, 5, (n, n)).astype(np.float32), np.zeros((m, n), np.float32), m, k, n)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("m, k, n", [(32, 32, 32), (48, 64, 16), (16, 48, 80)])
def test_matmul_loads_with_load_data_2d_v2_on_950(kernels, dtype, m, k, n):
    """a @ b: A into L0A (Nz) without transposing, B into L0B (Zn) transposed (b16: each fractal; b32:
    pairs of 16 x 8 fractals as 16 x 16 squares), Mmad reading Ascend 950's Nz L0A."""
    rng = np.random.default_rng(m + k + n)
    a, b = rng.integers(-8, 9, (m, k)).astype(dtype), rng.integers(-8, 9, (k, n)).astype(dtype)
    c = np.zeros((m, n), np.float32)
    result = run_950(kernels.matmul, a, b, c, m, k, n)
    assert result.source.count("AscendC::LoadData2DParamsV2 ") == 2 and ".ifTranspose = cm1_i1;" in result.source
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


def test_the_matmul_chain_stops_at_fixpipe_l0c_to_l1_blocks_that_overlap(kernels):
    """(a @ b) @ c: pyasc-dev moves a @ b from L0C to L1 with FixpipeParamsC310 dstStride = mSize * 8 for
    float, as if the Fixpipe wrote 16 x 8 blocks; NZ2NZ.md's Ascend 950 pseudo-code writes 16 elements
    a row per block (16 x 8 only with F32 Channel Split, a GM-path option), so its blocks overlap."""
    with pytest.raises(ascrun.KernelError) as e:
        run_950(kernels.matmul_chain, *chain_args())
    assert unsited(str(e.value)) == (
        "block 0: Fixpipe(L0C->L1, FixpipeParamsC310): dstStride 256 elements is less than a column block's 512 "
        "(mSize x 16): dst blocks overlap")


FIXPIPE_L1 = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void fixpipe_l1(__gm__ float* unused) {{
  AscendC::LocalTensor<float> c{{AscendC::TPosition::CO1, 0, 1024}};
  AscendC::LocalTensor<float> l1{{AscendC::TPosition::A1, 0, 2048}};
  AscendC::FixpipeParamsC310<AscendC::CO2Layout::NZ> p;
  p.nSize = {n};
  p.mSize = 32;
  p.srcStride = 32;
  p.dstStride = {dst_stride};
  static constexpr AscendC::FixpipeConfig config{{AscendC::CO2Layout::NZ, false}};
  AscendC::Fixpipe<float, float, config>(l1, c, p);
}}
"""


@pytest.mark.parametrize("n, dst_stride, message", [
    (32, 256, "dstStride 256 elements is less than a column block's 512 (mSize x 16): dst blocks overlap"),
    (24, 512, "nSize 24 is not a multiple of 16"),
])
def test_fixpipe_l0c_to_l1_checks_its_parameters(n, dst_stride, message):
    """NZ2NZ.md (Ascend 950): dstStride counts elements between 16-column blocks, which must not overlap.
    (pyasc-dev writes dstStride = mSize * 8 for a float tile, 16 x 8 blocks: see the report.)"""
    target = pipeline.get_target("cpu")
    artifact = target.toolchain.build(FIXPIPE_L1.format(n=n, dst_stride=dst_stride), "fixpipe_l1", "AIC_ONLY",
                                      ARCH_950)
    params = [{"name": "unused", "kind": "tensor", "dtype": "float32"}]
    with pytest.raises(ascrun.KernelError) as e:
        target.runner.run(artifact, 1, params, ["explicit"], [np.zeros(8, np.float32)])
    assert str(e.value) == f"block 0: Fixpipe(L0C->L1, FixpipeParamsC310): {message}"


@pytest.mark.parametrize("m, k, n", [(32, 32, 32), (16, 64, 48)])
def test_fixpipe_l0c_to_l1_feeds_the_next_matmul_on_950(kernels, m, k, n):
    """(a @ b).to(float16) @ c: Fixpipe L0C -> L1 with FixpipeParamsC310, CFG_NZ and F322F16
    (dstStride = mSize * 16 elements), then LoadData2DParamsV2 of that L1 tile as the next A."""
    rng = np.random.default_rng(7)
    a, b = rng.integers(-4, 5, (m, k)).astype(np.float16), rng.integers(-4, 5, (k, n)).astype(np.float16)
    c, d = rng.integers(-4, 5, (n, n)).astype(np.float16), np.zeros((m, n), np.float32)
    result = run_950(kernels.matmul_chain_half, a, b, c, d, m, k, n)
    assert "AscendC::FixpipeParamsC310<AscendC::CO2Layout::NZ>" in result.source
    ab = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)  # exact: small integers
    np.testing.assert_array_equal(d, ab.astype(np.float64) @ c.astype(np.float64))


INT8_MATMUL = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void int8_matmul(__gm__ int8_t* a_gm, __gm__ int8_t* b_gm, __gm__ int32_t* c_gm) {{
  AscendC::GlobalTensor<int8_t> a, b;
  AscendC::GlobalTensor<int32_t> c;
  a.SetGlobalBuffer(a_gm);
  b.SetGlobalBuffer(b_gm);
  c.SetGlobalBuffer(c_gm);
  AscendC::LocalTensor<int8_t> a1{{AscendC::TPosition::A1, 0, {m} * {k}}};
  AscendC::LocalTensor<int8_t> b1{{AscendC::TPosition::B1, 65536, {k} * {n}}};
  AscendC::DataCopy(a1, a, AscendC::Nd2NzParams{{1, {m}, {k}, 0, {k}, {m}, 1, 0}});
  AscendC::DataCopy(b1, b, AscendC::Nd2NzParams{{1, {k}, {n}, 0, {n}, {k}, 1, 0}});
  AscendC::LocalTensor<int8_t> a2{{AscendC::TPosition::A2, 0, {m} * {k}}};
  AscendC::LocalTensor<int8_t> b2{{AscendC::TPosition::B2, 0, {k} * {n}}};
  // A [m, k] Nz -> L0A Nz as it is; B [k, n] Nz -> L0B Zn transposed, 32 x 32 squares of two fractals
  AscendC::LoadData(a2, a1, AscendC::LoadData2DParamsV2{{0, 0, {m} / 16, {k} / 32, {m} / 16, {m} / 16, false, 0}});
  AscendC::LoadData(b2, b1, AscendC::LoadData2DParamsV2{{0, 0, {k} / 16, {n} / 32, {k} / 16, {n} / 16, true, 0}});
  AscendC::LocalTensor<int32_t> c1{{AscendC::TPosition::CO1, 0, {m} * {n}}};
  AscendC::MmadParams mp;
  mp.m = {m};
  mp.n = {n};
  mp.k = {k};
  AscendC::Mmad(c1, a2, b2, mp);
  AscendC::FixpipeParamsV220 fp{{{n}, {m}, {m}, {n}, false}};
  AscendC::Fixpipe<int32_t, int32_t, AscendC::CFG_ROW_MAJOR>(c, c1, fp);
}}
"""


@pytest.mark.parametrize("m, k, n", [(32, 64, 32), (16, 96, 64)])
def test_int8_load_data_2d_v2_transposes_two_fractals_as_one_square(m, k, n):
    """b8 (no asctile matmul takes int8): B's [k, n] Nz, 16 x 32 fractals, into L0B's Zn with
    ifTranspose needs an even mStep (LoadData_2D_V2.md); each pair along M is one 32 x 32 square."""
    rng = np.random.default_rng(k)
    a, b = rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = np.zeros((m, n), np.int32)
    target = pipeline.get_target("cpu")
    artifact = target.toolchain.build(INT8_MATMUL.format(m=m, k=k, n=n), "int8_matmul", "AIC_ONLY", ARCH_950)
    params = [{"name": name, "kind": "tensor", "dtype": dtype}
              for name, dtype in (("a_gm", "int8"), ("b_gm", "int8"), ("c_gm", "int32"))]
    target.runner.run(artifact, 1, params, ["explicit"] * 3, [a, b, c])
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


# ---- refusals of written kernels ----------------------------------------------------------------------

def run_written(source, kernel_type="AIV_ONLY", npu_arch=2201):
    """Builds `source`, a kernel `k(__gm__ float* unused)`, for `npu_arch` and runs it on one block."""
    target = pipeline.get_target("cpu")
    artifact = target.toolchain.build(source, "k", kernel_type, npu_arch)
    params = [{"name": "unused", "kind": "tensor", "dtype": "float32"}]
    target.runner.run(artifact, 1, params, ["explicit"], [np.zeros(8, np.float32)])


SOFTMAX_TMP = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void k(__gm__ float* unused) {
  AscendC::LocalTensor<float> src{AscendC::TPosition::VECCALC, 0, 512};
  AscendC::LocalTensor<float> dst{AscendC::TPosition::VECCALC, 2048, 512};
  AscendC::LocalTensor<uint8_t> tmp{AscendC::TPosition::VECCALC, TMP, 1024};
  SoftMaxTiling tiling;
  AscendC::SoftMaxShapeInfo shape{8, 64, 8, 64};
  AscendC::SoftMax<float, false, false>(dst, src, tmp, tiling, shape);
}
"""


@pytest.mark.parametrize("tmp, message", [
    (1024, "SoftMax: sharedTmpBuffer range [0x400, 0x800) overlaps srcTensor range [0x0, 0x800) (sharedTmpBuffer may "
           "not share memory with src or dst)"),
    (3072, "SoftMax: sharedTmpBuffer range [0xc00, 0x1000) overlaps dstTensor range [0x800, 0x1000) "
           "(sharedTmpBuffer may not share memory with src or dst)"),
])
def test_softmax_refuses_a_tmp_buffer_over_src_or_dst(tmp, message):
    """SoftMax.md: "不支持sharedTmpBuffer与源操作数和目的操作数地址重叠"."""
    with pytest.raises(ascrun.KernelError) as e:
        run_written(SOFTMAX_TMP.replace("TMP", str(tmp)))
    assert str(e.value) == f"block 0: {message}"


LOAD_V2 = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void k(__gm__ float* unused) {
  AscendC::LocalTensor<float> l1{AscendC::TPosition::A1, 0, 8192};
  AscendC::LocalTensor<float> l0{AscendC::TPosition::B2, 0, 8192};
  AscendC::LoadData(l0, l1, AscendC::LoadData2DParamsV2{PARAMS});
}
"""
LOAD = "LoadData(L1->L0, LoadData2DParamsV2)"


@pytest.mark.parametrize("params, message", [
    ("0, 0, 2, 3, 2, 2, true, 0", f"{LOAD}: ifTranspose with float needs an even kStep, not 3"),
    ("0, 0, 2, 2, 2, 1, false, 0", f"{LOAD}: dstStride 1 is less than the 2 fractals of a dst row: dst fractals "
                                   "overlap"),
    ("0, 0, 256, 1, 2, 2, false, 0", f"{LOAD}: mStep 256 is outside [0, 255]"),
    ("0, 0, 2, 2, -2, 2, false, 0", f"{LOAD}: srcStride -2 is negative, which the cpu target does not model"),
    ("0, 0, 8, 9, 8, 8, false, 0", f"{LOAD}: dst: 36864 bytes from L0B offset 0x0 exceed the LocalTensor's 32768 "
                                   "bytes (8192 elements)"),
    # the source's span overflowed 64 bits and wrapped to 512 bytes: a read 512 bytes before L1 (review)
    ("8388607, 4294967295, 2, 1, 8388608, 2, false, 0", f"{LOAD}: src: fractal kStartPosition 4294967295 * srcStride "
                                                        "8388608 + mStartPosition 8388607 is past every L1 address"),
], ids=["b32-odd-kStep", "dst-overlap", "mStep-range", "negative-srcStride", "past-dst", "wrapping-start"])
def test_load_data_2d_v2_refusals(params, message):
    with pytest.raises(ascrun.KernelError) as e:
        run_written(LOAD_V2.replace("PARAMS", params), "AIC_ONLY", ARCH_950)
    assert str(e.value) == f"block 0: {message}"


def test_the_ascend_950_cube_forms_do_not_compile_for_atlas_a2():
    source = LOAD_V2.replace("PARAMS", "0, 0, 2, 2, 2, 2, false, 0")
    with pytest.raises(ascrun.KernelError) as e:
        pipeline.get_target("cpu").toolchain.build(source, "k", "AIC_ONLY")
    assert "static assertion failed: LoadData(LoadData2DParamsV2): Ascend 950 (__NPU_ARCH__ 3510) only" in str(e.value)
    with pytest.raises(ascrun.KernelError) as e:
        pipeline.get_target("cpu").toolchain.build(FIXPIPE_L1.format(n=32, dst_stride=512).replace(", false}", "}"),
                                                   "fixpipe_l1", "AIC_ONLY")
    assert "static assertion failed: Fixpipe(L0C->L1, FixpipeParamsC310): Ascend 950 (__NPU_ARCH__ 3510) only" \
        in str(e.value)

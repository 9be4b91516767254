"""Fixpipe's quantPre on the Ascend 950 (cube/quant_pre.h): F322F16 and F322BF16 round float to nearest,
ties to even ("cast mode为CAST_RINT模式", L0C到L1数据搬运（Fixpipe）.md), on both paths out of L0C: to GM
(FixpipeParamsV220) and to L1 (FixpipeParamsC310, CFG_NZ), the L1 tile read back through a second Mmad by
the identity. QuantMode_t takes the compiler's values (F322BF16 is 16, as pyasc's asctile emits it), and
the modes the cpu target does not convert are refused by name. Ascend C written here, run through the cpu
target, against numpy's rounding."""
import numpy as np
import pytest

import ascrun
from ascrun.compiler import pipeline

pytestmark = pytest.mark.kernel

ARCH_950 = 3510
N = 32  # m = k = n

# c = a @ b (half, k = 32), out to GM with quantPre, and to L1, whose tile @ eye comes back as float
KERNEL = """#include "kernel_operator.h"
using T = TYPE;
extern "C" __global__ __aicore__ void quant_pre(__gm__ half* a_gm, __gm__ half* b_gm, __gm__ T* eye_gm,
                                                __gm__ T* g_gm, __gm__ float* d_gm) {
  AscendC::GlobalTensor<half> a, b;
  AscendC::GlobalTensor<T> eye, g;
  AscendC::GlobalTensor<float> d;
  a.SetGlobalBuffer(a_gm);
  b.SetGlobalBuffer(b_gm);
  eye.SetGlobalBuffer(eye_gm);
  g.SetGlobalBuffer(g_gm);
  d.SetGlobalBuffer(d_gm);
  AscendC::Nd2NzParams nz{1, 32, 32, 0, 32, 32, 1, 0};
  AscendC::LoadData2DParamsV2 as_is;
  as_is.mStep = 2;
  as_is.kStep = 2;
  as_is.srcStride = 2;
  as_is.dstStride = 2;
  AscendC::LoadData2DParamsV2 transposed = as_is;
  transposed.ifTranspose = true;
  AscendC::LocalTensor<half> a1{AscendC::TPosition::A1, 0, 1024}, b1{AscendC::TPosition::A1, 2048, 1024};
  AscendC::LocalTensor<T> eye1{AscendC::TPosition::A1, 4096, 1024}, c1{AscendC::TPosition::A1, 6144, 1024};
  AscendC::DataCopy(a1, a, nz);
  AscendC::DataCopy(b1, b, nz);
  AscendC::DataCopy(eye1, eye, nz);
  AscendC::LocalTensor<half> a2{AscendC::TPosition::A2, 0, 1024}, b2{AscendC::TPosition::B2, 0, 1024};
  AscendC::LocalTensor<T> c2{AscendC::TPosition::A2, 2048, 1024}, eye2{AscendC::TPosition::B2, 2048, 1024};
  AscendC::LoadData(a2, a1, as_is);
  AscendC::LoadData(b2, b1, transposed);
  AscendC::LoadData(eye2, eye1, transposed);
  AscendC::LocalTensor<float> acc{AscendC::TPosition::CO1, 0, 1024}, out{AscendC::TPosition::CO1, 4096, 1024};
  AscendC::MmadParams mp;
  mp.m = 32;
  mp.n = 32;
  mp.k = 32;
  AscendC::Mmad(acc, a2, b2, mp);
  AscendC::FixpipeParamsV220 to_gm{32, 32, 32, 32, RELU};
  to_gm.quantPre = QUANT;
  AscendC::Fixpipe<T, float, AscendC::CFG_ROW_MAJOR>(g, acc, to_gm);
  AscendC::FixpipeParamsC310<AscendC::CO2Layout::NZ> to_l1{32, 32, 32, 512};
  to_l1.quantPre = QUANT;
  to_l1.reluEn = RELU;
  static constexpr AscendC::FixpipeConfig config{AscendC::CO2Layout::NZ, false};
  AscendC::Fixpipe<T, float, config>(c1, acc, to_l1);
  AscendC::LoadData(c2, c1, as_is);
  AscendC::Mmad(out, c2, eye2, mp);
  AscendC::FixpipeParamsV220 back{32, 32, 32, 32, false};
  AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(d, out, back);
}
"""


def bf16_bits(x):
    """float32 -> bfloat16 bits, to nearest even (no NaN here)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bits_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def operands():
    """a, b with a @ b = hi + lo per element, exact in float: hi a half, lo below half's ulp of hi (the
    bits F322F16 rounds off); with ties of both roundings, values just past a tie and half's overflow."""
    rng = np.random.default_rng(26)
    hi = rng.uniform(-1000, 1000, (N, N // 2)).astype(np.float16)
    top = np.exp2(np.floor(np.log2(np.abs(hi.astype(np.float64)))))  # hi's leading bit, 2^e
    lo = (rng.integers(-2047, 2048, hi.shape) * top * 2.0 ** -21).astype(np.float16)  # 2^(e-21) .. 2^(e-10)
    special = [  # (hi, lo): bfloat16 ties (to even: down, up), half ties (down, up), past a tie, overflow
        (1 + 2 ** -8, 0), (1 + 3 * 2 ** -8, 0), (2048, 1), (2048, 3), (2048, 1 + 2 ** -10), (-2048, -3),
        (1, 2 ** -11), (1 + 2 ** -10, 2 ** -11), (65504, 16)]
    for col, (h, lo_) in enumerate(special):
        hi[0, col], lo[0, col] = h, lo_
    a = np.empty((N, N), np.float16)
    a[:, 0::2], a[:, 1::2] = hi, lo
    b = np.zeros((N, N), np.float16)  # column j sums a's pair j % 16
    for j in range(N):
        b[2 * (j % 16):2 * (j % 16) + 2, j] = 1
    c = a.astype(np.float64) @ b.astype(np.float64)
    assert (c == c.astype(np.float32)).all()
    return a, b, c.astype(np.float32)


def build(type_name, quant, relu=False):
    source = KERNEL.replace("TYPE", type_name).replace("QUANT", quant).replace("RELU", str(relu).lower())
    return pipeline.get_target("cpu").toolchain.build(source, "quant_pre", "AIC_ONLY", ARCH_950)


def run(type_name, quant, relu=False):
    """(g, d): the GM output's elements as float and the L1 tile read back; row 0 of d is left out (its
    infinity times the identity's zeros)."""
    a, b, _ = operands()
    bf16 = type_name == "bfloat16_t"
    dtype = "bfloat16" if bf16 else "float16"
    eye = bf16_bits(np.eye(N)) if bf16 else np.eye(N, dtype=np.float16)
    g, d = np.zeros((N, N), np.uint16 if bf16 else np.float16), np.zeros((N, N), np.float32)
    params = [{"name": name, "kind": "tensor", "dtype": dt}
              for name, dt in (("a_gm", "float16"), ("b_gm", "float16"), ("eye_gm", dtype), ("g_gm", dtype),
                               ("d_gm", "float32"))]
    target = pipeline.get_target("cpu")
    target.runner.run(build(type_name, quant, relu), 1, params, ["explicit"] * 5, [a, b, eye, g, d])
    return (bits_to_float(g) if bf16 else g.astype(np.float32)), d


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("type_name, quant", [("half", "QuantMode_t::F322F16"),
                                              ("bfloat16_t", "QuantMode_t::F322BF16")])
def test_f322f16_and_f322bf16_round_to_nearest_even(type_name, quant, relu):
    _, _, c = operands()
    if relu:
        c = np.maximum(c, 0)
    with np.errstate(over="ignore"):
        want = bits_to_float(bf16_bits(c)) if type_name == "bfloat16_t" else c.astype(np.float16).astype(np.float32)
    g, d = run(type_name, quant, relu)
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(d[1:], want[1:])
    if type_name == "half":  # the ties, the value past one, and 65520 -> infinity
        np.testing.assert_array_equal(g[0, 2:9], [2048, 2052, 2050, 0 if relu else -2052, 1, 1 + 2 ** -9, np.inf])
    else:
        np.testing.assert_array_equal(g[0, :2], [1, 1 + 2 ** -6])


def test_the_value_of_f322bf16_is_the_compilers():
    """QuantMode_t::F322BF16 is 16, what pyasc's asctile writes (static_cast<QuantMode_t>(16))."""
    g, _ = run("bfloat16_t", "static_cast<QuantMode_t>(16)")
    np.testing.assert_array_equal(g, bits_to_float(bf16_bits(operands()[2])))


GM = "Fixpipe(L0C->GM, CFG_ROW_MAJOR)"


@pytest.mark.parametrize("type_name, quant, message", [
    ("half", "QuantMode_t::F322BF16", f"{GM}: quantPre F322BF16 (16) does not convert float -> half, which takes "
                                      "F322F16 (1), QF322F16_PRE (32) or VQF322F16_PRE (31)"),
    ("bfloat16_t", "static_cast<QuantMode_t>(2)",
     f"{GM}: quantPre VQF322HIF8_PRE (2) does not convert float -> bfloat16_t, which takes F322BF16 (16), "
     "QF322BF16_PRE (34) or VQF322BF16_PRE (33) (pyasc's asc.QuantModes.F322BF16 is 2, the reference's listing "
     "order; the compiler's QuantMode_t::F322BF16 is 16)"),
    ("bfloat16_t", "QuantMode_t::QF322BF16_PRE",
     f"{GM}: quantPre QF322BF16_PRE (scalar quantization, deqScalar) is not supported on the cpu target"),
    ("half", "static_cast<QuantMode_t>(7)", f"{GM}: quantPre 7 is not an Ascend 950 QuantMode_t mode (pyasc's "
                                            "asc.QuantModes.REQ8 is 7, the reference's listing order; the compiler's "
                                            "QuantMode_t::REQ8 is 9)"),
], ids=["bf16-mode-to-half", "pyasc-F322BF16", "scalar-quant", "not-a-mode"])
def test_quant_pre_refusals(type_name, quant, message):
    with pytest.raises(ascrun.KernelError) as e:
        run(type_name, quant)
    assert str(e.value) == f"block 0: {message}"


def test_the_l1_path_refuses_as_the_gm_path():
    source = KERNEL.replace("TYPE", "half").replace("RELU", "false").replace(
        "to_gm.quantPre = QUANT;", "to_gm.quantPre = QuantMode_t::F322F16;").replace("QUANT", "QuantMode_t::DEQF16")
    artifact = pipeline.get_target("cpu").toolchain.build(source, "quant_pre", "AIC_ONLY", ARCH_950)
    a = np.zeros((N, N), np.float16)
    params = [{"name": name, "kind": "tensor", "dtype": dt} for name, dt in (
        ("a_gm", "float16"), ("b_gm", "float16"), ("eye_gm", "float16"), ("g_gm", "float16"), ("d_gm", "float32"))]
    with pytest.raises(ascrun.KernelError) as e:
        pipeline.get_target("cpu").runner.run(artifact, 1, params, ["explicit"] * 5,
                                              [a, a, a.copy(), a.copy(), np.zeros((N, N), np.float32)])
    assert str(e.value) == ("block 0: Fixpipe(L0C->L1, FixpipeParamsC310): quantPre DEQF16 (11) does not convert "
                            "float -> half, which takes F322F16 (1), QF322F16_PRE (32) or VQF322F16_PRE (31)")

// ascrun cpu runtime: Mmad (Mmad.md, MmadParams) on Atlas A2/A3: C (m x n, L0C) = A (m x k, L0A) x
// B (k x n, L0B) [+ C].
//
// Layouts (关键分形格式详解, Zz x Zn = Nz): with K0 = 32 bytes / sizeof(A's type) (half/bfloat16_t 16,
// float 8, int8_t 32), M1 = ceil(m / 16), K1 = ceil(k / K0), N1 = ceil(n / 16):
//   A in L0A, Zz: fractal (i / 16, kk / K0) at (i / 16) * K1 + kk / K0, element (i % 16) * K0 + kk % K0;
//     on Ascend 950 (__NPU_ARCH__ 3510) Nz (Mmad.md: "A | L0A Buffer | M x K | Nz"): the same fractals
//     at (kk / K0) * M1 + i / 16;
//     m == 1 is GEMV mode: A is k contiguous elements (GEMV.md);
//   B in L0B, Zn: fractal (kk / K0, j / 16) at (kk / K0) * N1 + j / 16, element (j % 16) * K0 + kk % K0;
//   C in L0C, Nz: 16 x 16 fractals, fractal (i / 16, j / 16) at (j / 16) * M1 + i / 16, element
//     (i % 16) * 16 + j % 16.
// Only the m x k, k x n and m x n elements take part ("其他无效数据在计算中会被忽略"); the rest of C's
// fractals is left undefined: the poison byte. cmatrixInitVal (and not the deprecated isBias)
// starts C at 0, else the product is added to C. Types (fm, filter -> dst): int8_t -> int32_t
// (wrapping int32 sums), half, bfloat16_t or float -> float; the products are summed in double and
// rounded once to float, so integer-valued data is exact (the device's fp32 summation order is not
// documented).
// Faults: operands not in CO1/A2/B2 or misaligned (1024/512/512 bytes), fractals past a tensor,
// m/n/k over 4095, cmatrixSource (C from the BiasTable, C2, not modelled), unitFlag not 0, 2 or 3.
// unitFlag 2/3 is otherwise ignored: the instructions of a block run in program order. m, n or k 0
// is a NOP. Not modelled: the bias form, kDirectionAlign (pyasc 1.1.1 cannot set it), int4b_t.
#pragma once

#include "ascrun/cube/load_data.h"
#include "ascrun/pipes/costs.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct MmadParams {
    MmadParams() = default;
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
               const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn, const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
               const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;       // deprecated: true accumulates into C
    int32_t fmOffset = 0;      // unused on Atlas A2/A3
    bool enSsparse = false;    // unused on Atlas A2/A3
    bool enWinogradA = false;  // unused on Atlas A2/A3
    bool enWinogradB = false;  // unused on Atlas A2/A3
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};

}  // namespace AscendC

namespace ascrun {
namespace cube {

constexpr uint64_t kCFractalElems = 256;  // a 16 x 16 L0C fractal
constexpr bool kL0ANz = kNpuArch == 3510;  // Ascend 950's L0A holds Nz (Mmad.md), Atlas A2/A3's Zz

// The accumulator of each supported (dst, fm, filter) type triple.
template <typename T, typename U, typename S>
struct MmadTypes {
    static constexpr bool supported =
        (std::is_same<T, int32_t>::value && std::is_same<U, int8_t>::value && std::is_same<S, int8_t>::value) ||
        (std::is_same<T, float>::value && std::is_same<U, S>::value &&
         (std::is_same<U, half>::value || std::is_same<U, bfloat16_t>::value || std::is_same<U, float>::value));
};

// One element of C: init + sum of a[kk] * b[kk] (int32_t wraps; float sums in double).
template <typename T>
struct Accumulate;
template <>
struct Accumulate<int32_t> {
    int64_t sum = 0;
    template <typename U, typename S>
    void add(U a, S b) { sum += int64_t{a} * int64_t{b}; }
    int32_t result(int32_t init) const {
        return static_cast<int32_t>(static_cast<uint32_t>(init) + static_cast<uint32_t>(static_cast<uint64_t>(sum)));
    }
};
template <>
struct Accumulate<float> {
    double sum = 0;
    template <typename U, typename S>
    void add(U a, S b) {
        sum += static_cast<double>(static_cast<float>(a)) * static_cast<double>(static_cast<float>(b));
    }
    float result(float init) const { return static_cast<float>(static_cast<double>(init) + sum); }
};

}  // namespace cube
}  // namespace ascrun

namespace AscendC {

template <typename T, typename U, typename S>
void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter, const MmadParams& p) {
    static_assert(ascrun::cube::MmadTypes<T, U, S>::supported,
                  "Mmad: Atlas A2/A3 take (dst, fm, filter) = (int32_t, int8_t, int8_t), (float, half, half), "
                  "(float, bfloat16_t, bfloat16_t) or (float, float, float)");
    constexpr const char* api = "Mmad";
    ascrun::BlockContext& b = ascrun::enter();
    using ascrun::cube::check_range;
    check_range(api, "m", p.m, 0, 4095);
    check_range(api, "n", p.n, 0, 4095);
    check_range(api, "k", p.k, 0, 4095);
    if (p.unitFlag != 0 && p.unitFlag != 2 && p.unitFlag != 3) {
        ascrun::fault(ascrun::format("Mmad: unitFlag %u is not 0, 2 or 3 (pyasc 1.1.1 passes MmadParams' unit_flag as "
                                     "a bool, so 2 and 3 arrive as 1)",
                                     static_cast<unsigned>(p.unitFlag)));
    }
    if (p.cmatrixSource) {
        ascrun::fault("Mmad: cmatrixSource = true (C initialized from the BiasTable, TPosition C2) is not supported "
                      "on the cpu target");
    }
    if (p.m == 0 || p.n == 0 || p.k == 0) return;

    constexpr uint64_t k0 = 32 / sizeof(U);
    const uint64_t m = p.m, n = p.n, k = p.k;
    const uint64_t m1 = (m + 15) / 16, n1 = (n + 15) / 16, k1 = (k + k0 - 1) / k0;
    const bool gemv = m == 1;
    const uint64_t a_bytes = gemv ? k * sizeof(U) : m1 * k1 * ascrun::cube::kFractalBytes;
    auto* c = reinterpret_cast<ascrun::elem_t<T>*>(ascrun::cube_operand(
        b, api, "dst", dst, ascrun::Memory::L0C, "CO1 (L0C Buffer)", m1 * n1 * ascrun::cube::kCFractalElems * sizeof(T), 1024));
    const auto* a = reinterpret_cast<const ascrun::elem_t<U>*>(
        ascrun::cube_operand(b, api, "fm", fm, ascrun::Memory::L0A, "A2 (L0A Buffer)", a_bytes, 512));
    const auto* bm = reinterpret_cast<const ascrun::elem_t<S>*>(ascrun::cube_operand(
        b, api, "filter", filter, ascrun::Memory::L0B, "B2 (L0B Buffer)", k1 * n1 * ascrun::cube::kFractalBytes, 512));
    const bool init_zero = p.cmatrixInitVal && !p.isBias;
    // The cube's cost: its MACs over whole fractals at its rate for the input type (pipes/costs.h).
    if (b.pipes) {
        namespace costs = ascrun::pipes;
        b.pipes->work(m1 * 16 * n1 * 16 * k1 * k0, sizeof(U) == 1   ? costs::kCubeInt8MacsPerCycle
                                                    : sizeof(U) == 4 ? costs::kCubeFloatMacsPerCycle
                                                                     : costs::kCubeHalfMacsPerCycle);
    }

    for (uint64_t fj = 0; fj < n1; ++fj) {
        for (uint64_t fi = 0; fi < m1; ++fi) {
            auto* frac = c + (fj * m1 + fi) * ascrun::cube::kCFractalElems;
            for (uint64_t r = 0; r < 16; ++r) {
                for (uint64_t col = 0; col < 16; ++col) {
                    const uint64_t i = fi * 16 + r, j = fj * 16 + col;
                    auto& out = frac[r * 16 + col];
                    if (i >= m || j >= n) {
                        std::memset(static_cast<void*>(&out), ascrun::kUbPoison, sizeof(T));
                        continue;
                    }
                    ascrun::cube::Accumulate<T> acc;
                    for (uint64_t kk = 0; kk < k; ++kk) {
                        const uint64_t a_fractal =
                            ascrun::cube::kL0ANz ? (kk / k0) * m1 + i / 16 : (i / 16) * k1 + kk / k0;
                        const uint64_t a_at = gemv ? kk : a_fractal * (16 * k0) + (i % 16) * k0 + kk % k0;
                        const uint64_t b_at = ((kk / k0) * n1 + j / 16) * (16 * k0) + (j % 16) * k0 + kk % k0;
                        acc.add(static_cast<U>(a[a_at]), static_cast<S>(bm[b_at]));
                    }
                    out = acc.result(init_zero ? T(0) : static_cast<T>(out));
                }
            }
        }
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: LoadData (2D: LoadData_2D.md, LoadData2DParams) L1 -> L0A/L0B and GM -> L0A/L0B.
//
// The instruction moves whole 512-byte fractals and does not look at their layout: repeat i copies
// source fractal startIndex + i * srcStride to destination fractal i * (1 + dstGap) (the reference's
// load2d.py). With ifTranspose (L1 source and b16 types only) each 16 x 16 fractal is transposed on
// the way. The layouts Mmad reads come from the caller's choice of fractals: A2 (L0A) holds Zz,
// B2 (L0B) Zn (see cube/mmad.h).
// Faults: dst not in A2/B2 or not 512-byte aligned, an L1 source not in A1/B1/C1 or not 32-byte
// aligned, ifTranspose with a GM source or a non-b16 type, addrMode other than 0 ("目前仅GM->L1 Buffer
// 通路支持配置"), fractals past either tensor. repeatTimes 0 is a NOP; sid is ignored, as on the device.
//
// Ascend 950 (__NPU_ARCH__ 3510) only, LoadData2DParamsV2 (LoadData_2D_V2.md), L1 (A1/B1) -> L0A/L0B:
// the source is [M, K] in 512-byte fractals of 16 rows x 32 bytes; fractal (mi, ki) of the moved
// mStep x kStep block is read from fractal (kStartPosition * srcStride + mStartPosition) + ki *
// srcStride + mi ("startAddr = srcAddr + (kStartPosition x |srcStride| + mStartPosition) x 512B") and
// written to fractal ki * dstStride + mi, unchanged (Nz -> Nz: "不改变分形间排布及分形内的排布").
// With ifTranspose the fractals are transposed as squares of S x S elements ("按正方形矩阵转置"): b16
// one fractal (S 16), b32 two along K (S 16; kStep even), b8 two along M (S 32; mStep even) (the
// load_data_2dv2_l12l0 example's fractalNum). Element (R, C) of square (p, q) (R its row from the
// M side, C its column) goes to row C, column R of the transposed square, which fills S / 16 x
// S / C0 fractals of 16 x C0 (C0 = 32 bytes / sizeof(T)): fractal (C / 16, R / C0) of the square is
// written at ((p * S / C0 + R / C0) * dstStride + q * S / 16 + C / 16), element (C % 16) * C0 + R % C0.
// The example's transposed loads (a [k, m] A into L0A Nz, a [k, n] B into L0B Zn) follow from this,
// and so does the b16 figure's fractal-wise transpose.
// Faults: the Atlas A2/A3 build (the struct exists there, the call does not compile), mStep or
// kStep over 255, dst fractals that overlap, a negative srcStride, b32 with an odd kStep or b8 with
// an odd mStep when transposing ("b32数据类型时，kStep必须是2的倍数", "b8 ... mStep必须是2的倍数"),
// operands as above; mStep or kStep 0 is a NOP; sid is ignored ("Ascend 950PR/Ascend 950DT产品不做处理").
// Not modelled: LoadDataWithTranspose, the GM forms of LoadData2DParamsV2, the 3D forms.
#pragma once

#include "ascrun/cube/data_copy.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct LoadData2DParams {
    LoadData2DParams() = default;
    LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                     const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};

// kernel_struct_mm.h's field order and types.
struct LoadData2DParamsV2 {
    LoadData2DParamsV2() = default;
    LoadData2DParamsV2(const uint32_t mStartPositionIn, const uint32_t kStartPositionIn, const uint16_t mStepIn,
                       const uint16_t kStepIn, const int32_t srcStrideIn, const uint16_t dstStrideIn,
                       const bool ifTransposeIn, const uint8_t sidIn)
        : mStartPosition(mStartPositionIn), kStartPosition(kStartPositionIn), mStep(mStepIn), kStep(kStepIn),
          srcStride(srcStrideIn), dstStride(dstStrideIn), ifTranspose(ifTransposeIn), sid(sidIn) {}
    uint32_t mStartPosition = 0;
    uint32_t kStartPosition = 0;
    uint16_t mStep = 0;
    uint16_t kStep = 0;
    int32_t srcStride = 0;
    uint16_t dstStride = 0;
    bool ifTranspose = false;
    uint8_t sid = 0;
};

}  // namespace AscendC

namespace ascrun {
namespace cube {

// Ascend 950PR/950DT (core/soc.h); a template, so that the static_asserts fire only where called.
template <typename T>
constexpr bool on_ascend950 = sizeof(T) > 0 && kNpuArch == 3510;

constexpr uint64_t kFractalBytes = 512;  // the unit of LoadData and of the L0A/L0B fractals

// The destination of a LoadData or the operand of a Mmad in L0A/L0B: which memory, how messages name it.
template <typename T>
uint8_t* l0_operand(BlockContext& b, const char* api, const char* role, const AscendC::LocalTensor<T>& t,
                    uint64_t bytes) {
    const bool in_l0b = t.ascrun_bound() && t.ascrun_pos() == AscendC::TPosition::B2;
    return cube_operand(b, api, role, t, in_l0b ? Memory::L0B : Memory::L0A, in_l0b ? "B2 (L0B Buffer)" : "A2 (L0A Buffer) or B2 (L0B Buffer)", bytes,
                        static_cast<uint32_t>(kFractalBytes));
}

// One LoadData 2D: `src` is the source's first byte (fractal 0), `sizeof_t` the element size.
inline void load_2d(uint8_t* dst, const uint8_t* src, const AscendC::LoadData2DParams& p, size_t sizeof_t) {
    for (uint64_t i = 0; i < p.repeatTimes; ++i) {
        const uint8_t* from = src + (p.startIndex + i * p.srcStride) * kFractalBytes;
        uint8_t* to = dst + i * (1u + p.dstGap) * kFractalBytes;
        if (!p.ifTranspose) {
            std::memcpy(to, from, kFractalBytes);
            continue;
        }
        for (uint64_t r = 0; r < 16; ++r) {  // b16: a 16 x 16 fractal, row r of dst is column r of src
            for (uint64_t c = 0; c < 16; ++c) {
                std::memcpy(to + (r * 16 + c) * sizeof_t, from + (c * 16 + r) * sizeof_t, sizeof_t);
            }
        }
    }
}

// The checks both LoadData forms share; returns false for a NOP.
template <typename T>
bool check_load_2d(const char* api, const AscendC::LoadData2DParams& p, bool from_gm) {
    static_assert(sizeof(T) <= 4 && is_element_v<T>, "LoadData: T must be a b8, b16 or b32 type");
    if (p.addrMode != 0) {
        fault(format("%s: addrMode %u: only 0 (increasing) is supported on this path (the reference: only GM->L1 "
                     "takes addrMode)",
                     api, static_cast<unsigned>(p.addrMode)));
    }
    if (p.ifTranspose && from_gm) fault(format("%s: ifTranspose needs an L1 source (A1/B1), not GM", api));
    if (p.ifTranspose && sizeof(T) != 2) {
        fault(format("%s: ifTranspose supports b16 types only (half, bfloat16_t, int16_t, uint16_t), not %s", api,
                     TypeName<T>::c()));
    }
    return p.repeatTimes != 0;
}

// The bytes LoadData reads from its source and writes to its destination, from fractal 0.
inline uint64_t load_2d_src_bytes(const AscendC::LoadData2DParams& p) {
    return (p.startIndex + uint64_t{p.repeatTimes - 1u} * p.srcStride + 1) * kFractalBytes;
}
inline uint64_t load_2d_dst_bytes(const AscendC::LoadData2DParams& p) {
    return (uint64_t{p.repeatTimes - 1u} * (1u + p.dstGap) + 1) * kFractalBytes;
}

}  // namespace cube
}  // namespace ascrun

namespace AscendC {

// L1 (A1/B1/C1) -> L0A (A2) / L0B (B2)
template <typename T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
    constexpr const char* api = "LoadData(L1->L0, LoadData2DParams)";
    ascrun::BlockContext& b = ascrun::enter();
    if (!ascrun::cube::check_load_2d<T>(api, p, false)) return;
    uint8_t* d = ascrun::cube::l0_operand(b, api, "dst", dst, ascrun::cube::load_2d_dst_bytes(p));
    const uint8_t* s = ascrun::cube_operand(b, api, "src", src, ascrun::Memory::L1, "A1, B1 or C1 (L1 Buffer)",
                                            ascrun::cube::load_2d_src_bytes(p), 32);
    ascrun::cube::load_2d(d, s, p, sizeof(T));
}

// GM -> L0A (A2) / L0B (B2)
template <typename T>
void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p) {
    constexpr const char* api = "LoadData(GM->L0, LoadData2DParams)";
    ascrun::BlockContext& b = ascrun::enter();
    if (!ascrun::cube::check_load_2d<T>(api, p, true)) return;
    uint8_t* d = ascrun::cube::l0_operand(b, api, "dst", dst, ascrun::cube::load_2d_dst_bytes(p));
    const auto* s = src.ascrun_access(b, api, 0, ascrun::cube::load_2d_src_bytes(p) / sizeof(T), false);
    ascrun::cube::load_2d(d, reinterpret_cast<const uint8_t*>(s), p, sizeof(T));
}

// L1 (A1/B1) -> L0A (A2) / L0B (B2), Ascend 950.
template <typename T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParamsV2& p) {
    static_assert(ascrun::cube::on_ascend950<T>,
                  "LoadData(LoadData2DParamsV2): Ascend 950 (__NPU_ARCH__ 3510) only (LoadData_2D_V2.md)");
    static_assert(sizeof(T) <= 4 && ascrun::is_element_v<T>, "LoadData: T must be a b8, b16 or b32 type");
    constexpr const char* api = "LoadData(L1->L0, LoadData2DParamsV2)";
    ascrun::BlockContext& b = ascrun::enter();
    ascrun::cube::check_range(api, "mStep", p.mStep, 0, 255);  // "mStep∈[0, 255]"
    ascrun::cube::check_range(api, "kStep", p.kStep, 0, 255);  // "kStep∈[0, 255]"
    if (p.mStep == 0 || p.kStep == 0) return;  // "mStep和kStep为0时 ... 被视为NOP"
    if (p.srcStride < 0) {
        ascrun::fault(ascrun::format("%s: srcStride %d is negative, which the cpu target does not model", api,
                                     static_cast<int>(p.srcStride)));
    }
    constexpr uint64_t f = ascrun::cube::kFractalBytes, c0 = 32 / sizeof(T);
    // A transposed square's fractals along M and K (1 x 1 without ifTranspose: each fractal as it is).
    const uint64_t fm = p.ifTranspose && sizeof(T) == 1 ? 2 : 1, fk = p.ifTranspose && sizeof(T) == 4 ? 2 : 1;
    if (p.mStep % fm != 0 || p.kStep % fk != 0) {
        ascrun::fault(ascrun::format("%s: ifTranspose with %s needs an even %s, not %u", api,
                                     ascrun::TypeName<T>::c(), fm == 2 ? "mStep" : "kStep",
                                     static_cast<unsigned>(fm == 2 ? p.mStep : p.kStep)));
    }
    const uint64_t m_step = p.mStep, k_step = p.kStep, src_stride = static_cast<uint64_t>(p.srcStride);
    // dst fractals: without ifTranspose ki * dstStride + mi; transposed, rows of dstStride (see the header).
    const uint64_t rows = p.ifTranspose ? m_step / fm * (16 * fm / c0) : k_step;
    const uint64_t per_row = p.ifTranspose ? k_step / fk * (16 * fm / 16) : m_step;
    if (rows > 1 && p.dstStride < per_row) {
        ascrun::fault(ascrun::format("%s: dstStride %u is less than the %llu fractals of a dst row: dst fractals "
                                     "overlap",
                                     api, static_cast<unsigned>(p.dstStride),
                                     static_cast<unsigned long long>(per_row)));
    }
    // the kernel's positions and stride can take the source's span past 64 bits, wrapping to a small one
    // that the operand check lets through: refused while it is computed
    uint64_t start = 0, src_fractals = 0, src_bytes = 0;
    if (__builtin_mul_overflow(uint64_t{p.kStartPosition}, src_stride, &start) ||
        __builtin_add_overflow(start, uint64_t{p.mStartPosition}, &start) ||
        __builtin_add_overflow(start, (k_step - 1) * src_stride + m_step, &src_fractals) ||
        __builtin_mul_overflow(src_fractals, uint64_t{f}, &src_bytes)) {
        ascrun::fault(ascrun::format("%s: src: fractal kStartPosition %llu * srcStride %llu + mStartPosition %llu is "
                                     "past every L1 address", api,
                                     static_cast<unsigned long long>(p.kStartPosition),
                                     static_cast<unsigned long long>(src_stride),
                                     static_cast<unsigned long long>(p.mStartPosition)));
    }
    const uint64_t dst_fractals = (rows - 1) * p.dstStride + per_row;
    uint8_t* d = ascrun::cube::l0_operand(b, api, "dst", dst, dst_fractals * f);
    const uint8_t* s = ascrun::cube_operand(b, api, "src", src, ascrun::Memory::L1, "A1 or B1 (L1 Buffer)",
                                            src_bytes, 32);
    for (uint64_t ki = 0; ki < k_step; ++ki) {
        for (uint64_t mi = 0; mi < m_step; ++mi) {
            const uint8_t* from = s + (start + ki * src_stride + mi) * f;
            if (!p.ifTranspose) {
                std::memcpy(d + (ki * p.dstStride + mi) * f, from, f);
                continue;
            }
            const uint64_t side = 16 * fm;  // S
            for (uint64_t r = 0; r < 16; ++r) {
                for (uint64_t c = 0; c < c0; ++c) {
                    const uint64_t row = (mi % fm) * 16 + r, col = (ki % fk) * c0 + c;  // (R, C) in the square
                    const uint64_t to = ((mi / fm) * (side / c0) + row / c0) * p.dstStride + (ki / fk) * (side / 16) +
                                        col / 16;
                    std::memcpy(d + to * f + ((col % 16) * c0 + row % c0) * sizeof(T), from + (r * c0 + c) * sizeof(T),
                                sizeof(T));
                }
            }
        }
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

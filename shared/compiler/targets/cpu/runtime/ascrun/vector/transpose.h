// ascrun cpu runtime: Transpose (数据排布转换/Transpose.md).
//  - Transpose(dst, src): one 16 x 16 matrix of 16-bit elements, dst[j][i] = src[i][j]; dst may be
//    src itself ("普通转置接口支持src和dst复用"), any other overlap is undefined.
//  - Transpose(dst, src, sharedTmpBuffer, TransposeParamsExt):
//      TRANSPOSE_ND2ND_B16: the 16 x 16 transpose (uint16_t on Atlas A2/A3; nSize/cSize/hSize/wSize
//        are not read), dst may be src;
//      TRANSPOSE_NCHW2NHWC / TRANSPOSE_NHWC2NCHW: [N,C,H,W] <-> [N,H,W,C] of nSize * cSize * hSize *
//        wSize elements, int8_t .. float; cSize <= 4095, hSize * wSize <= 4095 and 32-byte aligned;
//        any size 0 is a NOP; dst and src may not overlap; sharedTmpBuffer (uint8_t) holds at least
//        (cSize + 2) (NCHW2NHWC) or (2 * cSize + 1) (NHWC2NCHW) times h0 * w0 * sizeof(T) bytes
//        (h0 = 16, 32 for 8-bit T; w0 = 32 / sizeof(T)), and is left undefined: the poison byte;
//      TRANSPOSE_TYPE_NONE does nothing; the other TransposeType values are not supported (fault).
#pragma once

#include <cstring>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class TransposeType : uint8_t {
    TRANSPOSE_TYPE_NONE,
    TRANSPOSE_NZ2ND_0213,
    TRANSPOSE_NZ2NZ_0213,
    TRANSPOSE_NZ2NZ_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITHOUT_N,
    TRANSPOSE_NZ2NZ_012_WITHOUT_N,
    TRANSPOSE_ND2ND_ONLY,
    TRANSPOSE_ND_UB_GM,
    TRANSPOSE_GRAD_ND_UB_GM,
    TRANSPOSE_ND2ND_B16,
    TRANSPOSE_NCHW2NHWC,
    TRANSPOSE_NHWC2NCHW,
};

struct TransposeParamsExt {
    TransposeParamsExt() = default;
    TransposeParamsExt(const uint16_t nSizeIn, const uint16_t cSizeIn, const uint16_t hSizeIn, const uint16_t wSizeIn,
                       const TransposeType transposeTypeIn)
        : nSize(nSizeIn), cSize(cSizeIn), hSize(hSizeIn), wSize(wSizeIn), transposeType(transposeTypeIn) {}
    uint16_t nSize = 0;
    uint16_t cSize = 0;
    uint16_t hSize = 0;
    uint16_t wSize = 0;
    TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
};

}  // namespace AscendC

namespace ascrun {
namespace transpose {

// Byte ranges [a, a + an) and [b, b + bn) of the Unified Buffer overlap.
inline bool overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) { return a < b + bn && b < a + an; }

inline void fail_overlap(const char* what, uint64_t d, uint64_t dn, const char* role, uint64_t s, uint64_t sn) {
    fault(format("Transpose: %s range [%s, %s) overlaps %s range [%s, %s)", what, hex(d).c_str(), hex(d + dn).c_str(),
                 role, hex(s).c_str(), hex(s + sn).c_str()));
}

// The 16 x 16 transpose; dst may coincide with src (it reads a copy).
template <typename T>
void square(BlockContext& b, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src) {
    constexpr uint64_t n = 256;
    elem_t<T>* d = ub_operand(b, "Transpose", "dst", dst, n);
    const elem_t<T>* s = ub_operand(b, "Transpose", "src", src, n);
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
    if (da != sa && overlaps(da, n * sizeof(T), sa, n * sizeof(T))) {
        fail_overlap("dst", da, n * sizeof(T), "src", sa, n * sizeof(T));
    }
    elem_t<T> in[n];
    std::memcpy(in, s, sizeof(in));
    for (uint32_t i = 0; i < 16; ++i) {
        for (uint32_t j = 0; j < 16; ++j) d[j * 16 + i] = in[i * 16 + j];
    }
}

// [N,C,H,W] -> [N,H,W,C] (to_nhwc) or back.
template <typename T>
void four_d(BlockContext& b, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
            const AscendC::LocalTensor<uint8_t>& tmp, const AscendC::TransposeParamsExt& p, bool to_nhwc) {
    const uint64_t N = p.nSize, C = p.cSize, HW = static_cast<uint64_t>(p.hSize) * p.wSize;
    if (C > 4095 || HW > 4095 || (HW * sizeof(T)) % 32 != 0) {
        fault(format("Transpose<%s>(%s): cSize %llu must be <= 4095 and hSize * wSize = %llu must be <= 4095 with "
                     "hSize * wSize * sizeof(T) a multiple of 32 bytes",
                     TypeName<T>::c(), to_nhwc ? "TRANSPOSE_NCHW2NHWC" : "TRANSPOSE_NHWC2NCHW",
                     static_cast<unsigned long long>(C), static_cast<unsigned long long>(HW)));
    }
    if (N == 0 || C == 0 || HW == 0) return;  // no computation, dst untouched
    const uint64_t n = N * C * HW;
    const uint64_t fractal = (sizeof(T) == 1 ? 32 : 16) * 32;  // h0 * w0 * sizeof(T) bytes
    const uint64_t tmp_bytes = (to_nhwc ? C + 2 : 2 * C + 1) * fractal;
    elem_t<T>* d = ub_operand(b, "Transpose", "dst", dst, n);
    const elem_t<T>* s = ub_operand(b, "Transpose", "src", src, n);
    uint8_t* t = ub_operand(b, "Transpose", "sharedTmpBuffer", tmp, 0);  // bound, in the UB, aligned
    if (tmp.GetSize() < tmp_bytes) {
        fault(format("Transpose<%s>(%s): sharedTmpBuffer holds %u bytes; cSize %llu needs %llu",
                     TypeName<T>::c(), to_nhwc ? "TRANSPOSE_NCHW2NHWC" : "TRANSPOSE_NHWC2NCHW", tmp.GetSize(),
                     static_cast<unsigned long long>(C), static_cast<unsigned long long>(tmp_bytes)));
    }
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr(), ta = tmp.ascrun_addr();
    const uint64_t bytes = n * sizeof(T);
    if (overlaps(da, bytes, sa, bytes)) fail_overlap("dst", da, bytes, "src", sa, bytes);
    if (overlaps(ta, tmp_bytes, da, bytes)) fail_overlap("sharedTmpBuffer", ta, tmp_bytes, "dst", da, bytes);
    if (overlaps(ta, tmp_bytes, sa, bytes)) fail_overlap("sharedTmpBuffer", ta, tmp_bytes, "src", sa, bytes);
    const uint64_t chw = C * HW;
    for (uint64_t i = 0; i < N; ++i) {
        elem_t<T>* di = d + i * chw;
        const elem_t<T>* si = s + i * chw;
        for (uint64_t c = 0; c < C; ++c) {
            if (to_nhwc) {
                for (uint64_t k = 0; k < HW; ++k) di[k * C + c] = si[c * HW + k];
            } else {
                for (uint64_t k = 0; k < HW; ++k) di[c * HW + k] = si[k * C + c];
            }
        }
    }
    std::memset(t, kUbPoison, tmp_bytes);
}

}  // namespace transpose
}  // namespace ascrun

namespace AscendC {

template <typename T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src) {
    static_assert(::ascrun::one_of_v<T, int16_t, uint16_t, half>, "Transpose: T must be one of int16_t, uint16_t, "
                                                                 "half (Atlas A2/A3, 16 x 16 form)");
    ::ascrun::transpose::square(::ascrun::enter(), dst, src);
}

template <typename T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
               const TransposeParamsExt& transposeParams) {
    static_assert(::ascrun::one_of_v<T, int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float>,
                  "Transpose (TransposeParamsExt): T must be one of int8_t, uint8_t, int16_t, uint16_t, half, int32_t, "
                  "uint32_t, float (Atlas A2/A3)");
    ::ascrun::BlockContext& b = ::ascrun::enter();
    switch (transposeParams.transposeType) {
        case TransposeType::TRANSPOSE_TYPE_NONE: return;
        case TransposeType::TRANSPOSE_ND2ND_B16:
            if constexpr (std::is_same<T, uint16_t>::value) {
                return ::ascrun::transpose::square(b, dst, src);
            } else {
                ::ascrun::fault(::ascrun::format("Transpose<%s>(TRANSPOSE_ND2ND_B16): Atlas A2/A3 takes uint16_t only",
                                                 ::ascrun::TypeName<T>::c()));
            }
        case TransposeType::TRANSPOSE_NCHW2NHWC:
            return ::ascrun::transpose::four_d(b, dst, src, sharedTmpBuffer, transposeParams, true);
        case TransposeType::TRANSPOSE_NHWC2NCHW:
            return ::ascrun::transpose::four_d(b, dst, src, sharedTmpBuffer, transposeParams, false);
        default:
            ::ascrun::fault(::ascrun::format("Transpose: transposeType %u is not supported (Atlas A2/A3 supports "
                                             "TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC and TRANSPOSE_NHWC2NCHW)",
                                             static_cast<unsigned>(transposeParams.transposeType)));
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

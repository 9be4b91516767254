// ascrun cpu runtime: Fixpipe L0C (CO1) -> GM with FixpipeParamsV220 (L0C到GM数据搬运（Fixpipe）).
//
// The source is the Nz matrix Mmad writes: element (i, j) at (j / 16) * srcStride * 16 + i * 16 + j % 16
// (srcStride in C0_Size = 16 elements, normally mSize rounded up to 16), the ndNum matrices
// srcNdStride * 256 elements apart. Per element: ReLU (reluEn: max(0, x)), then quantPre (cube/quant_pre.h):
// NoQuant (float -> float, int32_t -> int32_t), F322F16 / F322BF16 (float -> half / bfloat16_t,
// round to nearest even; overflow gives infinity). Layouts (FixpipeConfig):
//   CFG_ROW_MAJOR (NZ2ND): element (i, j) of matrix t goes to dst + t * dstNdStride + i * dstStride + j
//     (elements), for i < mSize (<= 8192) and j < nSize;
//   CFG_NZ: column block j / 16 goes to dst + (j / 16) * dstStride * 32 bytes as mSize rows of 16
//     elements; nSize must be a multiple of 16 (the NZ2ND pseudo-code takes a partial last block).
// mSize, nSize or ndNum 0 is a NOP. Faults: src not in CO1 or not 64-byte aligned, reads past it,
// a NZ dst not 32-byte aligned, writes past the GM tensor argument, parameters out of range, dst rows
// or matrices that overlap ("目标数据不能有重叠"), a type pair (a compile error) or quantPre the architecture
// does not define, and what the cpu target does not model: the scalar and tensor quantization modes
// (DEQF16, QF322B8_PRE, REQ8, ..., their vector forms, which take a cbufWorkspace), isChannelSplit,
// CFG_COLUMN_MAJOR. On the Ascend 950 this path takes FixpipeParamsV220 as well (pyasc's nightly emits it).
// unitFlag must be 0, 2 or 3 and is otherwise ignored, as in Mmad.
//
// Ascend 950 (__NPU_ARCH__ 3510) only, L0C (CO1) -> L1 (A1/B1/C1) with FixpipeParamsC310 and CFG_NZ
// (L0C到L1数据搬运（Fixpipe）.md, NZ2NZ.md's Ascend 950 pseudo-code): for each row i < mSize and
// 16-column block k < nSize / 16, the 16 elements at src + k * srcStride * 16 + i * 16 go to
// dst + k * dstStride + i * 16 (dstStride in elements, not FixpipeParamsV220's 32-byte blocks), with
// ReLU and quantPre as above. FixpipeConfig there has a second field, isToUB (kernel_struct_fixpipe.h).
// Faults: the Atlas A2/A3 build, dst not in L1 or not 32-byte aligned, src not in CO1 or not 64-byte
// aligned, nSize not a multiple of 16 ("若不开启channelSplit功能，nSize必须为16的倍数"), nSize over 4095,
// dstStride 0 or dst blocks that overlap ("目标数据不能有重叠": dstStride < mSize * 16 with two blocks
// or more), a config whose layout is not the params' or not NZ, isToUB (the UB path), isChannelSplit,
// quantPre / types as above. Not modelled: NZ2ND / NZ2DN to L1, the cbufWorkspace form.
#pragma once

#include "ascrun/cube/mmad.h"
#include "ascrun/cube/quant_pre.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };

struct FixpipeConfig {
    CO2Layout format;
#if __NPU_ARCH__ == 3510  // kernel_struct_fixpipe.h has the field on 3510 only
    bool isToUB = false;  // Ascend 950: the destination is the Unified Buffer
#endif
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
    FixpipeParamsV220() = default;
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                      const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                      const uint16_t dstNdStrideIn, const uint8_t unitFlagIn, const bool isChannelSplitIn = false)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn),
          dstNdStride(dstNdStrideIn), reluEn(reluEnIn), unitFlag(unitFlagIn), isChannelSplit(isChannelSplitIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};

// FixpipeParamsArch3510 / FixpipeParamsC310 (kernel_struct_fixpipe.h), the fields the cpu target
// models; `params` is the layout's (NZ: none).
struct Nz2NdParams {
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint32_t dstNdStride = 0;
};
template <CO2Layout format>
struct TransformParams {
    using PARAMS = Nz2NdParams;
};
template <>
struct TransformParams<CO2Layout::NZ> {
    using PARAMS = uint8_t;
};
template <CO2Layout format = CO2Layout::ROW_MAJOR>
struct FixpipeParamsC310 {
    FixpipeParamsC310() = default;
    FixpipeParamsC310(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    typename TransformParams<format>::PARAMS params{};
    bool isChannelSplit = false;
};
template <CO2Layout format = CO2Layout::ROW_MAJOR>
using FixpipeParamsArch3510 = FixpipeParamsC310<format>;

}  // namespace AscendC

namespace ascrun {
namespace cube {

// The (L0C, dst) type pairs of Fixpipe (数据类型): Atlas A2/A3's to GM; the Ascend 950's, to GM and to L1,
// add int32_t -> bfloat16_t (and hifloat8_t, fp8_e4m3fn_t, which the cpu target lacks).
template <typename U, typename T>
constexpr bool fixpipe_pair_v =
    (std::is_same<U, float>::value &&
     (std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value || std::is_same<T, half>::value ||
      std::is_same<T, bfloat16_t>::value || std::is_same<T, float>::value)) ||
    (std::is_same<U, int32_t>::value &&
     (std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value || std::is_same<T, half>::value ||
      std::is_same<T, int32_t>::value || (kNpuArch == 3510 && std::is_same<T, bfloat16_t>::value)));
#define ASCRUN_FIXPIPE_PAIRS_950                                                                          \
    "Ascend 950 takes L0C float -> int8_t, uint8_t, half, bfloat16_t or float, and int32_t -> int8_t, " \
    "uint8_t, half, bfloat16_t or int32_t (hifloat8_t and fp8_e4m3fn_t: not on the cpu target)"

}  // namespace cube
}  // namespace ascrun

namespace AscendC {

template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p) {
    static_assert(ascrun::kNpuArch == 3510 || ascrun::cube::fixpipe_pair_v<U, T>,
                  "Fixpipe: Atlas A2/A3 take L0C float -> GM int8_t, uint8_t, half, bfloat16_t or float, and int32_t "
                  "-> int8_t, uint8_t, half or int32_t");
    static_assert(ascrun::kNpuArch != 3510 || ascrun::cube::fixpipe_pair_v<U, T>,
                  "Fixpipe: " ASCRUN_FIXPIPE_PAIRS_950);
    const bool nd = config.format == CO2Layout::ROW_MAJOR;
    const char* api = nd ? "Fixpipe(L0C->GM, CFG_ROW_MAJOR)" : "Fixpipe(L0C->GM, CFG_NZ)";
    ascrun::BlockContext& b = ascrun::enter();
    if (config.format == CO2Layout::COLUMN_MAJOR) {
        ascrun::fault("Fixpipe: CFG_COLUMN_MAJOR (NZ2DN) is an Ascend 950 layout, not Atlas A2/A3's");
    }
    using ascrun::cube::check_range;
    check_range(api, "nSize", p.nSize, 0, 4095);
    check_range(api, "mSize", p.mSize, 0, nd ? 8192 : 65535);
    check_range(api, "srcNdStride", p.srcNdStride, 0, 512);
    if (p.unitFlag != 0 && p.unitFlag != 2 && p.unitFlag != 3) {
        ascrun::fault(ascrun::format("%s: unitFlag %u is not 0, 2 or 3", api, static_cast<unsigned>(p.unitFlag)));
    }
    if (p.isChannelSplit) ascrun::fault(ascrun::format("%s: isChannelSplit is not supported on the cpu target", api));
    ascrun::cube::check_quant<T, U>(api, p.quantPre);
    if (!nd && p.nSize % 16 != 0) {
        ascrun::fault(ascrun::format("%s: nSize %u is not a multiple of 16 (NZ output moves whole 16-column blocks)",
                                     api, static_cast<unsigned>(p.nSize)));
    }
    const uint64_t nd_num = nd ? p.ndNum : 1;  // ndNum, srcNdStride and dstNdStride belong to NZ2ND
    if (p.nSize == 0 || p.mSize == 0 || nd_num == 0) return;
    if (p.dstStride == 0) ascrun::fault(ascrun::format("%s: dstStride must not be 0", api));

    const uint64_t m = p.mSize, n = p.nSize, n1 = (n + 15) / 16;
    const uint64_t src_col_pitch = uint64_t{p.srcStride} * 16, src_matrix_pitch = uint64_t{p.srcNdStride} * 256;
    const uint64_t src_elems = (nd_num - 1) * src_matrix_pitch + (n1 - 1) * src_col_pitch + m * 16;
    const auto* s = reinterpret_cast<const ascrun::elem_t<U>*>(
        ascrun::cube_operand(b, api, "src", src, ascrun::Memory::L0C, "CO1 (L0C Buffer)", src_elems * sizeof(U), 64));

    if (nd) {
        const uint64_t rows_span = (m - 1) * p.dstStride + n;
        if (p.dstStride < n) {
            ascrun::fault(ascrun::format("%s: dstStride %u is less than nSize %u: dst rows overlap", api,
                                         static_cast<unsigned>(p.dstStride), static_cast<unsigned>(n)));
        }
        if (nd_num > 1 && p.dstNdStride < rows_span) {
            ascrun::fault(ascrun::format("%s: dstNdStride %u is less than a matrix's %llu elements: dst matrices "
                                         "overlap",
                                         api, static_cast<unsigned>(p.dstNdStride),
                                         static_cast<unsigned long long>(rows_span)));
        }
        auto* d = dst.ascrun_access(b, api, 0, (nd_num - 1) * p.dstNdStride + rows_span, true);
        for (uint64_t t = 0; t < nd_num; ++t) {
            for (uint64_t i = 0; i < m; ++i) {
                for (uint64_t j = 0; j < n; ++j) {
                    const U x = s[t * src_matrix_pitch + (j / 16) * src_col_pitch + i * 16 + j % 16];
                    d[t * p.dstNdStride + i * p.dstStride + j] = ascrun::cube::fixpipe_element<T>(x, p.reluEn);
                }
            }
        }
        return;
    }
    const uint64_t dst_col_bytes = uint64_t{p.dstStride} * 32;
    if (dst_col_bytes < m * 16 * sizeof(T)) {
        ascrun::fault(ascrun::format("%s: dstStride %u x 32 bytes is less than a column block's %llu bytes (mSize x "
                                     "16 elements): dst blocks overlap",
                                     api, static_cast<unsigned>(p.dstStride),
                                     static_cast<unsigned long long>(m * 16 * sizeof(T))));
    }
    const uint64_t dst_col_pitch = dst_col_bytes / sizeof(T);
    auto* d = dst.ascrun_access(b, api, 0, (n1 - 1) * dst_col_pitch + m * 16, true);
    if (reinterpret_cast<uintptr_t>(d) % 32 != 0) {
        ascrun::fault(ascrun::format("%s: the NZ dst GM address %s is not 32-byte aligned", api,
                                     ascrun::hex(reinterpret_cast<uintptr_t>(d)).c_str()));
    }
    for (uint64_t fj = 0; fj < n1; ++fj) {
        for (uint64_t i = 0; i < m; ++i) {
            for (uint64_t c = 0; c < 16; ++c) {
                d[fj * dst_col_pitch + i * 16 + c] =
                    ascrun::cube::fixpipe_element<T>(static_cast<U>(s[fj * src_col_pitch + i * 16 + c]), p.reluEn);
            }
        }
    }
}

// The vector quantization form (cbufWorkspace: the per-channel scales in L1).
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T>&, const LocalTensor<U>&, const LocalTensor<uint64_t>&, const FixpipeParamsV220&) {
    ascrun::enter();
    ascrun::fault("Fixpipe(L0C->GM, cbufWorkspace): vector quantization (VDEQF16, VQF322B8_PRE, VREQ8) is not "
                  "supported on the cpu target");
}

// L0C (CO1) -> L1, Ascend 950, NZ2NZ.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR, CO2Layout format>
void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsC310<format>& p) {
    static_assert(ascrun::cube::on_ascend950<T>, "Fixpipe(L0C->L1, FixpipeParamsC310): Ascend 950 (__NPU_ARCH__ "
                                                 "3510) only (L0C到L1数据搬运（Fixpipe）.md)");
    static_assert(ascrun::cube::fixpipe_pair_v<U, T>,
                  "Fixpipe(L0C->L1, FixpipeParamsC310): " ASCRUN_FIXPIPE_PAIRS_950);
    constexpr const char* api = "Fixpipe(L0C->L1, FixpipeParamsC310)";
    ascrun::BlockContext& b = ascrun::enter();
    if (config.format != format) {
        ascrun::fault(ascrun::format("%s: the FixpipeConfig's layout is not the FixpipeParamsC310's", api));
    }
    if (format != CO2Layout::NZ) {
        ascrun::fault(ascrun::format("%s: only CFG_NZ (NZ2NZ) is modelled on the cpu target", api));
    }
#if __NPU_ARCH__ == 3510
    if (config.isToUB) ascrun::fault(ascrun::format("%s: isToUB (the L0C->UB path) is not modelled", api));
#endif
    using ascrun::cube::check_range;
    check_range(api, "nSize", p.nSize, 0, 4095);
    if (p.unitFlag != 0 && p.unitFlag != 2 && p.unitFlag != 3) {
        ascrun::fault(ascrun::format("%s: unitFlag %u is not 0, 2 or 3", api, static_cast<unsigned>(p.unitFlag)));
    }
    if (p.isChannelSplit) ascrun::fault(ascrun::format("%s: isChannelSplit is not supported on the cpu target", api));
    ascrun::cube::check_quant<T, U>(api, p.quantPre);
    if (p.nSize % 16 != 0) {
        ascrun::fault(ascrun::format("%s: nSize %u is not a multiple of 16", api, static_cast<unsigned>(p.nSize)));
    }
    if (p.nSize == 0 || p.mSize == 0) return;
    if (p.dstStride == 0) ascrun::fault(ascrun::format("%s: dstStride must not be 0", api));
    const uint64_t m = p.mSize, n1 = p.nSize / 16, src_col_pitch = uint64_t{p.srcStride} * 16;
    if (n1 > 1 && p.dstStride < m * 16) {
        ascrun::fault(ascrun::format("%s: dstStride %u elements is less than a column block's %llu (mSize x 16): dst "
                                     "blocks overlap",
                                     api, static_cast<unsigned>(p.dstStride), static_cast<unsigned long long>(m * 16)));
    }
    const uint64_t src_elems = (n1 - 1) * src_col_pitch + m * 16, dst_elems = (n1 - 1) * p.dstStride + m * 16;
    const auto* s = reinterpret_cast<const ascrun::elem_t<U>*>(
        ascrun::cube_operand(b, api, "src", src, ascrun::Memory::L0C, "CO1 (L0C Buffer)", src_elems * sizeof(U), 64));
    auto* d = reinterpret_cast<ascrun::elem_t<T>*>(ascrun::cube_operand(
        b, api, "dst", dst, ascrun::Memory::L1, "A1, B1 or C1 (L1 Buffer)", dst_elems * sizeof(T), 32));
    for (uint64_t k = 0; k < n1; ++k) {
        for (uint64_t i = 0; i < m; ++i) {
            for (uint64_t c = 0; c < 16; ++c) {
                d[k * p.dstStride + i * 16 + c] =
                    ascrun::cube::fixpipe_element<T>(static_cast<U>(s[k * src_col_pitch + i * 16 + c]), p.reluEn);
            }
        }
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

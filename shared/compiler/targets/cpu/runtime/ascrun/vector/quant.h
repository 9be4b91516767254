// ascrun cpu runtime: AscendQuant, per-tensor quantization to int8_t (高阶API/量化操作/AscendQuant.md),
// with its AscendQuantConfig template parameter.
//
// dst[i] = int8(half(half(src[i]) * half(scale)) + half(offset)), as Atlas A2/A3 compute it: a float
// src is first Cast to half (CAST_NONE: nearest even), scale and offset are static_cast to half, Muls
// and Adds run in half (rounded after each), and the final Cast half -> int8_t rounds to nearest even
// and saturates (vector/cast.h). Elements are independent: the device's split of the work into
// sharedTmpBuffer-sized pieces does not change a result.
//
// AscendQuantConfig{calcCount, offsetCount, scaleCount, workLocalSize}: with calcCount and
// workLocalSize both non-zero the parameters are "constant": calcCount replaces the calCount
// argument and workLocalSize bytes of sharedTmpBuffer are used; otherwise the whole buffer is.
//
// Forms: with sharedTmpBuffer, or in the framework's reserved space (not checked: the cpu target needs
// none); both with calCount, which pyasc 1.1.1 always passes.
// Faults: T other than half/float (does not compile); counts past the operands (bounds policy);
// operands outside the Unified Buffer positions; a working size under GetAscendQuantMaxMinTmpSize's
// minimum (2 repeats of 256 bytes; "预留/申请的临时空间大小不能小于最小临时空间大小"); config.workLocalSize
// over sharedTmpBuffer's size or config.calcCount over srcTensor's (the reference's asserts);
// sharedTmpBuffer sharing bytes with src or dst; dst partially overlapping src (the reference lets
// them be the same tensor, "源操作数与目的操作数可以复用"); |scale| or |offset| beyond half's range
// ("当Scale为float类型时，其取值范围仍为half类型的取值范围"); a NaN result, whose int8_t conversion is undefined.
// Not modelled: the whole-tensor forms without calCount and the per-channel (scale tensor) forms,
// which pyasc 1.1.1 does not emit (its quant takes a calCount and scalar scale and offset); the
// dstT/PER_TOKEN/PER_GROUP forms (not on Atlas A2/A3).
#pragma once

#include <cmath>

#include "ascrun/core/half.h"
#include "ascrun/core/tensor.h"
#include "ascrun/vector/cast.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct AscendQuantConfig {
    uint32_t calcCount = 0;
    uint32_t offsetCount = 0;
    uint32_t scaleCount = 0;
    uint32_t workLocalSize = 0;
};
constexpr AscendQuantConfig ASCEND_QUANT_DEFAULT_CFG = {0, 0, 0, 0};

}  // namespace AscendC

namespace ascrun {
namespace quant {

// GetAscendQuantMaxMinTmpSize's minimum: two 256-byte repeats of half intermediates.
constexpr uint64_t kMinTmpBytes = 2 * 256;
constexpr float kHalfMax = 65504.0f;

inline void check_half_range(const char* api, const char* name, float value) {
    if (std::isfinite(value) && std::fabs(value) > kHalfMax) {
        fault(format("%s: %s %g is outside half's range (+-65504): the reference computes with half(%s)", api, name,
                     static_cast<double>(value), name));
    }
}

// `tmp`: sharedTmpBuffer, or nullptr for the framework's reserved space (which the cpu target does
// not need, so its size is not checked).
template <typename T>
void per_tensor(const AscendC::LocalTensor<int8_t>& dst, const AscendC::LocalTensor<T>& src,
                const AscendC::LocalTensor<uint8_t>* tmp, float scale, float offset, uint64_t count,
                const AscendC::AscendQuantConfig& config) {
    static_assert(one_of_v<T, half, float>, "AscendQuant: T must be half or float (Atlas A2/A3)");
    constexpr const char* api = "AscendQuant";
    BlockContext& b = enter();
    const bool constant_params = config.calcCount != 0 && config.workLocalSize != 0;
    if (config.calcCount > src.GetSize()) {
        fault(format("%s: config.calcCount %u is larger than srcTensor's %u elements", api, config.calcCount,
                     src.GetSize()));
    }
    if (constant_params) count = config.calcCount;
    check_half_range(api, "scale", scale);
    check_half_range(api, "offset", offset);

    const elem_t<T>* s = ub_operand(b, api, "srcTensor", src, count);
    elem_t<int8_t>* d = ub_operand(b, api, "dstTensor", dst, count);
    const uint64_t s0 = src.ascrun_addr(), d0 = dst.ascrun_addr();
    const uint64_t s_end = s0 + count * sizeof(T), d_end = d0 + count;
    if (tmp != nullptr) {
        if (config.workLocalSize > tmp->GetSize()) {
            fault(format("%s: config.workLocalSize %u is larger than sharedTmpBuffer's %u bytes", api,
                         config.workLocalSize, tmp->GetSize()));
        }
        const uint64_t work_bytes = constant_params ? config.workLocalSize : tmp->GetSize();
        if (work_bytes < kMinTmpBytes) {
            fault(format("%s: %s of %llu bytes is under the minimum temporary space of %llu bytes "
                         "(GetAscendQuantMaxMinTmpSize)",
                         api, constant_params ? "config.workLocalSize" : "sharedTmpBuffer",
                         static_cast<unsigned long long>(work_bytes), static_cast<unsigned long long>(kMinTmpBytes)));
        }
        ub_operand(b, api, "sharedTmpBuffer", *tmp, work_bytes);
        const uint64_t t0 = tmp->ascrun_addr(), t_end = t0 + work_bytes;
        check_disjoint(api, "sharedTmpBuffer", t0, t_end, "srcTensor", s0, s_end,
                       "the intermediates are written there");
        check_disjoint(api, "sharedTmpBuffer", t0, t_end, "dstTensor", d0, d_end,
                       "the intermediates are written there");
    }
    if (d0 != s0) {
        check_disjoint(api, "dstTensor", d0, d_end, "srcTensor", s0, s_end,
                       "dst may reuse src only from its start");
    }

    const half h_scale(scale), h_offset(offset);
    // In element order: with dst == src, element i writes byte i, which element i (or an earlier
    // one) has already read.
    for (uint64_t i = 0; i < count; ++i) {
        bool bad = false;
        half x;
        if constexpr (std::is_same<T, half>::value) {
            x = s[i];
        } else {
            x = cast::convert<half, float, AscendC::RoundMode::CAST_NONE>(s[i], bad);  // cannot fail
        }
        const half y = x * h_scale + h_offset;
        const int8_t q = cast::convert<int8_t, half, AscendC::RoundMode::CAST_NONE>(y, bad);
        if (bad) {
            fault(format("%s: element %llu: src %g gives NaN (half(src) * scale + offset), whose conversion to "
                         "int8_t the reference does not define",
                         api, static_cast<unsigned long long>(i), static_cast<double>(static_cast<float>(s[i]))));
        }
        d[i] = q;
    }
}

}  // namespace quant
}  // namespace ascrun

namespace AscendC {

// With sharedTmpBuffer: the first calCount elements.
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                        const uint32_t calCount) {
    ascrun::quant::per_tensor(dstTensor, srcTensor, &sharedTmpBuffer, scale, offset, calCount, config);
}

// In the framework's reserved temporary space: the first calCount elements.
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                        const float offset, const uint32_t calCount) {
    ascrun::quant::per_tensor(dstTensor, srcTensor, nullptr, scale, offset, calCount, config);
}

}  // namespace AscendC

#pragma GCC visibility pop

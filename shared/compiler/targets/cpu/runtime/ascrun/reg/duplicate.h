// ascrun cpu runtime: the register API's fill (基础API/Reg矢量计算/数据填充/Duplicate.md):
// `Duplicate(dstReg, scalarValue[, mask])`, a scalar into every (selected) element, and
// `Duplicate(dstReg, srcReg, mask)`, srcReg's lowest element into the selected ones (HighLowPart::
// LOWEST, the only position the page supports). asctile broadcasts a reduction's result this way.
#pragma once

#include "ascrun/reg/arith.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
namespace Reg {

// "默认为LOWEST，表示将srcReg中的最低位广播至dstReg（暂不支持其他取值）" (Duplicate.md).
enum class HighLowPart { LOWEST, HIGHEST };

template <typename T>
struct IsRegTensor : std::false_type {};
template <typename T>
struct IsRegTensor<RegTensor<T>> : std::true_type {};

template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U, typename S,
          typename = typename std::enable_if<!IsRegTensor<U>::value>::type>
inline void Duplicate(S& dstReg, U scalarValue, MaskReg& mask) {
    using E = typename S::ActualT;
    constexpr const char* api = "Reg::Duplicate";
    ascrun::reg::enter_vf(api);
    const E value = ascrun::reg::scalar_as<E>(api, ascrun::TypeName<E>::c(), scalarValue);
    ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t) { return value; });
}

template <typename T = void, typename U, typename S, typename = typename std::enable_if<!IsRegTensor<U>::value>::type>
inline void Duplicate(S& dstReg, U scalarValue) {
    MaskReg all;
    all.select_first<uint8_t>(ascrun::reg::kVecLen);
    Duplicate(dstReg, scalarValue, all);
}

template <typename T = void, HighLowPart pos = HighLowPart::LOWEST, MaskMergeMode mode = MaskMergeMode::ZEROING,
          typename U>
inline void Duplicate(U& dstReg, U& srcReg, MaskReg& mask) {
    static_assert(pos == HighLowPart::LOWEST, "Reg::Duplicate: the page supports HighLowPart::LOWEST only");
    using E = typename U::ActualT;
    constexpr const char* api = "Reg::Duplicate";
    ascrun::reg::enter_vf(api);
    const E value = srcReg.read(api, "srcReg")[0];
    ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t) { return value; });
}

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

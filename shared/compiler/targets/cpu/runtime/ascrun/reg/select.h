// ascrun cpu runtime: the register API's selection (基础API/Reg矢量计算/比较与选择/Select.md):
// `Select(dstReg, srcReg0, srcReg1, mask)`, dstReg_i = mask_i ? srcReg0_i : srcReg1_i. asctile
// takes a reduction's partial last register this way.
#pragma once

#include "ascrun/reg/registers.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
namespace Reg {

template <typename T = void, typename U>
inline void Select(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {
    using E = typename U::ActualT;
    constexpr const char* api = "Reg::Select";
    ascrun::reg::enter_vf(api);
    const ascrun::elem_t<E>* a = srcReg0.read(api, "srcReg0");
    const ascrun::elem_t<E>* b = srcReg1.read(api, "srcReg1");
    const MaskReg& m = mask.checked(api);
    ascrun::elem_t<E> out[ascrun::reg::lanes<E>()];
    for (uint32_t i = 0; i < ascrun::reg::lanes<E>(); ++i) out[i] = m.selects<E>(i) ? a[i] : b[i];
    std::memcpy(dstReg.write(), out, sizeof(out));
}

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

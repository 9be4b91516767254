// ascrun cpu runtime: the register API's barrier inside a VF (基础API/Reg矢量计算/同步控制/
// LocalMemBar.md): `LocalMemBar<src, dst>()`, the dst pipeline waits for the src pipeline's
// instructions (asctile puts VEC_STORE -> VEC_LOAD between a VF's store and its reload of the same
// UB). The cpu runs a VF's instructions in program order, so the barrier orders nothing more here;
// a load racing a store of the same VF without one is not detected.
#pragma once

#include "ascrun/reg/registers.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
namespace Reg {

// LocalMemBar.md 表2.
enum class MemType { VEC_STORE, VEC_LOAD, SCALAR_STORE, SCALAR_LOAD, VEC_ALL, SCALAR_ALL };

}  // namespace Reg
}  // namespace AscendC

namespace ascrun {
namespace reg {

// LocalMemBar.md 表3: the (src, dst) pairs the instruction takes.
template <AscendC::Reg::MemType src, AscendC::Reg::MemType dst>
constexpr bool is_mem_bar_pair() {
    using M = AscendC::Reg::MemType;
    return (src == M::VEC_STORE && (dst == M::VEC_LOAD || dst == M::VEC_STORE || dst == M::SCALAR_LOAD ||
                                    dst == M::SCALAR_STORE)) ||
           (src == M::VEC_LOAD && (dst == M::VEC_STORE || dst == M::SCALAR_STORE)) ||
           (src == M::SCALAR_STORE && (dst == M::VEC_LOAD || dst == M::VEC_STORE)) ||
           (src == M::SCALAR_LOAD && dst == M::VEC_STORE) ||
           (src == M::VEC_ALL && (dst == M::VEC_ALL || dst == M::SCALAR_ALL)) ||
           (src == M::SCALAR_ALL && dst == M::VEC_ALL);
}

}  // namespace reg
}  // namespace ascrun

namespace AscendC {
namespace Reg {

template <MemType src, MemType dst>
inline void LocalMemBar() {
    static_assert(ascrun::reg::is_mem_bar_pair<src, dst>(), "Reg::LocalMemBar: a (src, dst) pair LocalMemBar.md 表3 "
                                                            "does not list");
    ascrun::reg::enter_vf("Reg::LocalMemBar");
}

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

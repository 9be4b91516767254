// ascrun cpu runtime: the register API's reductions (基础API/Reg矢量计算/归约计算/Reduce.md), under
// the names asctile emits: `ReduceSum`, `ReduceMax`, `ReduceMin` (Reduce<ReduceType::SUM/MAX/MIN>).
//
// The result goes to dstReg's element 0; MAX/MIN put the index of the first extreme element in
// element 1 (as an integer of T's width in T's bits); the other elements become 0 (ZEROING, the
// only mode). Unselected elements count as 0 (SUM), T's lowest (MAX) or highest (MIN) value; a NaN
// among the selected gives NaN and its index. SUM adds in the page's binary tree: neighbours in
// pairs, then the pairs' sums in pairs, each addition rounded to T.
#pragma once

#include <limits>

#include "ascrun/reg/arith.h"
#include "ascrun/reg/logic.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace reg {

template <typename T>
inline T lowest() {
    if constexpr (std::is_same<T, half>::value) return half::from_bits(0xfc00);  // -inf
    else if constexpr (std::is_floating_point<T>::value) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
}
template <typename T>
inline T highest() {
    if constexpr (std::is_same<T, half>::value) return half::from_bits(0x7c00);  // +inf
    else if constexpr (std::is_floating_point<T>::value) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
}

// dst = [result, (index,) 0...].
template <typename T, typename U>
inline void reduced(U& dst, T value, bool with_index, uint32_t index) {
    elem_t<T>* out = dst.write();
    for (uint32_t i = 0; i < lanes<T>(); ++i) out[i] = T(0);
    out[0] = value;
    if (with_index) {
        const bits_t<T> bits = static_cast<bits_t<T>>(index);
        std::memcpy(&out[1], &bits, sizeof(T));
    }
}

template <typename T, typename U>
inline void reduce_sum(const char* api, U& dst, const U& src, const AscendC::Reg::MaskReg& mask) {
    const elem_t<T>* a = src.read(api, "srcReg");
    const AscendC::Reg::MaskReg& m = mask.checked(api);
    T level[lanes<T>()];
    for (uint32_t i = 0; i < lanes<T>(); ++i) level[i] = m.selects<T>(i) ? T(a[i]) : T(0);
    for (uint32_t n = lanes<T>(); n > 1; n /= 2) {
        for (uint32_t i = 0; i < n / 2; ++i) level[i] = arith::add(level[2 * i], level[2 * i + 1]);
    }
    reduced<T>(dst, level[0], false, 0);
}

template <typename T, bool is_max, typename U>
inline void reduce_extreme(const char* api, U& dst, const U& src, const AscendC::Reg::MaskReg& mask) {
    const elem_t<T>* a = src.read(api, "srcReg");
    const AscendC::Reg::MaskReg& m = mask.checked(api);
    T best = is_max ? lowest<T>() : highest<T>();
    uint32_t at = 0;
    for (uint32_t i = 0; i < lanes<T>(); ++i) {
        if (!m.selects<T>(i)) continue;
        const T v = a[i];
        if (v != v) {  // the first NaN wins
            best = v;
            at = i;
            break;
        }
        if (is_max ? v > best : v < best) {
            best = v;
            at = i;
        }
    }
    reduced<T>(dst, best, true, at);
}

}  // namespace reg
}  // namespace ascrun

namespace AscendC {
namespace Reg {

// Reduce.md 表3 (SUM, the same-type rows) and 表4 (MAX, MIN).
template <typename T = void, typename V = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename S>
inline void ReduceSum(S& dstReg, S srcReg, MaskReg mask) {
    using E = typename S::ActualT;
    static_assert(ascrun::one_of_v<E, half, int32_t, uint32_t, float, int64_t, uint64_t>,
                  "Reg::ReduceSum: a dtype Reduce.md does not list (int16_t -> int32_t is not modelled)");
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::ReduceSum: Reduce.md supports ZEROING only");
    ascrun::reg::enter_vf("Reg::ReduceSum");
    ascrun::reg::reduce_sum<E>("Reg::ReduceSum", dstReg, srcReg, mask);
}

#define ASCRUN_REG_REDUCE_EXTREME(NAME, IS_MAX)                                                             \
    template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>                    \
    inline void NAME(U& dstReg, U srcReg, MaskReg mask) {                                                   \
        using E = typename U::ActualT;                                                                      \
        static_assert(ascrun::one_of_v<E, int16_t, uint16_t, half, int32_t, uint32_t, float, int64_t, uint64_t>, \
                      "Reg::" #NAME ": a dtype Reduce.md does not list");                                   \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": Reduce.md supports ZEROING only");    \
        ascrun::reg::enter_vf("Reg::" #NAME);                                                               \
        ascrun::reg::reduce_extreme<E, IS_MAX>("Reg::" #NAME, dstReg, srcReg, mask);                        \
    }
ASCRUN_REG_REDUCE_EXTREME(ReduceMax, true)
ASCRUN_REG_REDUCE_EXTREME(ReduceMin, false)
#undef ASCRUN_REG_REDUCE_EXTREME

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

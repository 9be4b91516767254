// ascrun cpu runtime: the register API's bitwise instructions (基础API/Reg矢量计算/逻辑计算):
// `And Or Xor` (register, register), `Not`, `ShiftLefts ShiftRights` (register, scalar count).
// Masked as reg/arith.h's instructions (ZEROING or MERGING). Not acts on the element's bits, so
// also on half and float, as its page lists.
#pragma once

#include "ascrun/reg/arith.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace reg {

[[noreturn]] void negative_shift(const char* api, long long count);

// The unsigned integer of T's width: bitwise operations on any element's bits.
template <typename T>
using bits_t = typename std::conditional<
    sizeof(T) == 1, uint8_t,
    typename std::conditional<sizeof(T) == 2, uint16_t,
                              typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type>::type;

template <typename T>
inline T bit_not(T a) {
    bits_t<T> b;
    std::memcpy(&b, &a, sizeof(T));
    b = static_cast<bits_t<T>>(~b);
    std::memcpy(&a, &b, sizeof(T));
    return a;
}

// ShiftLefts.md / ShiftRights.md 约束说明: a count past the width gives 0 (an arithmetic right
// shift of a negative value: -1); a negative count is undefined (the caller faults on it).
template <typename T>
inline T shift_left(T a, uint32_t s) {
    return s >= sizeof(T) * 8 ? T(0) : arith::shl(a, static_cast<T>(s));
}
template <typename T>
inline T shift_right(T a, uint32_t s) {
    if (s >= sizeof(T) * 8) return (std::is_signed<T>::value && a < T(0)) ? T(-1) : T(0);
    return arith::shr(a, static_cast<T>(s));
}

}  // namespace reg
}  // namespace ascrun

namespace AscendC {
namespace Reg {

// dstReg_i = srcReg0_i op srcReg1_i (逻辑计算/And.md, Or.md, Xor.md: bool and the integer types).
#define ASCRUN_REG_BITWISE(NAME, OP)                                                                        \
    template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>                    \
    inline void NAME(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {                                    \
        using E = typename U::ActualT;                                                                      \
        static_assert(std::is_integral<E>::value, "Reg::" #NAME ": its page lists bool and integer types only"); \
        constexpr const char* api = "Reg::" #NAME;                                                          \
        ascrun::reg::enter_vf(api);                                                                         \
        const E* a = srcReg0.read(api, "srcReg0");                                                          \
        const E* b = srcReg1.read(api, "srcReg1");                                                          \
        ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t i) { return static_cast<E>(a[i] OP b[i]); }); \
    }
ASCRUN_REG_BITWISE(And, &)
ASCRUN_REG_BITWISE(Or, |)
ASCRUN_REG_BITWISE(Xor, ^)
#undef ASCRUN_REG_BITWISE

// 逻辑计算/Not.md: dstReg_i = ~srcReg_i, on the element's bits.
template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>
inline void Not(U& dstReg, U& srcReg, MaskReg& mask) {
    using E = typename U::ActualT;
    static_assert(ascrun::one_of_v<E, int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float, int64_t,
                                   uint64_t>,
                  "Reg::Not: a dtype its page does not list");
    constexpr const char* api = "Reg::Not";
    ascrun::reg::enter_vf(api);
    const E* a = srcReg.read(api, "srcReg");
    ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t i) { return ascrun::reg::bit_not<E>(a[i]); });
}

// dstReg_i = srcReg_i shifted by scalarValue bits (逻辑计算/ShiftLefts.md, ShiftRights.md: the integer
// types, the count an int16_t; a signed right shift is arithmetic).
#define ASCRUN_REG_SHIFT(NAME, FN)                                                                          \
    template <typename T = void, typename S, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>        \
    inline void NAME(U& dstReg, U& srcReg, S scalarValue, MaskReg& mask) {                                  \
        using E = typename U::ActualT;                                                                      \
        static_assert(std::is_integral<E>::value && !std::is_same<E, bool>::value,                          \
                      "Reg::" #NAME ": its page lists the integer types only");                             \
        constexpr const char* api = "Reg::" #NAME;                                                          \
        ascrun::reg::enter_vf(api);                                                                         \
        const int16_t count = ascrun::reg::scalar_as<int16_t>(api, "int16_t", scalarValue);                 \
        if (count < 0) ascrun::reg::negative_shift(api, count);                                             \
        const E* a = srcReg.read(api, "srcReg");                                                            \
        ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t i) {                                   \
            return ascrun::reg::FN<E>(a[i], static_cast<uint32_t>(count));                                 \
        });                                                                                                 \
    }
ASCRUN_REG_SHIFT(ShiftLefts, shift_left)
ASCRUN_REG_SHIFT(ShiftRights, shift_right)
#undef ASCRUN_REG_SHIFT

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

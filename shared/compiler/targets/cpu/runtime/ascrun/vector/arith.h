// ascrun cpu runtime: the per-element arithmetic shared by the vector instruction families.
//
// Integers wrap around (two's complement, computed in unsigned arithmetic so the runtime itself
// has no signed-overflow UB). half rounds after every operation (see core/half.h). Max/Min follow
// IEEE/numpy: a NaN operand gives NaN; equal operands give the first.
#pragma once

#include <cmath>

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

// Marks an element loop whose iterations are independent, so -O2 vectorizes it without runtime
// alias checks. Used on runs of one 256-byte repeat: the only overlap the instructions allow
// (dst == src, or dst whole repeats below src) has no dependence inside a repeat.
#if defined(__clang__)
#define ASCRUN_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define ASCRUN_IVDEP _Pragma("GCC ivdep")
#else
#define ASCRUN_IVDEP
#endif

namespace ascrun {

constexpr uint32_t kRepeatBytes = 256;  // one vector repeat: 8 blocks of 32 bytes

namespace arith {

// Unsigned type wide enough that T op T cannot be promoted to a signed int.
template <typename T>
using wrap_t = typename std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                         typename std::make_unsigned<T>::type>::type;

template <typename T>
inline T add(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)));
    } else {
        return a + b;
    }
}
template <typename T>
inline T sub(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)));
    } else {
        return a - b;
    }
}
template <typename T>
inline T mul(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)));
    } else {
        return a * b;
    }
}
template <typename T>
inline T div(T a, T b) {
    static_assert(!std::is_integral<T>::value, "integer Div is not modelled");
    return a / b;
}
template <typename T>
inline T max(T a, T b) {
    return (a >= b || a != a) ? a : b;  // a != a: a is NaN (never true for integers)
}
template <typename T>
inline T min(T a, T b) {
    return (a <= b || a != a) ? a : b;
}

template <typename T>
inline T band(T a, T b) {
    return static_cast<T>(a & b);
}
template <typename T>
inline T bor(T a, T b) {
    return static_cast<T>(a | b);
}
template <typename T>
inline T bnot(T a) {
    return static_cast<T>(~a);
}
// Shifts: the caller has checked 0 <= s < bit width. Signed ShiftRight is arithmetic (A2/A3).
template <typename T>
inline T shl(T a, T s) {
    return static_cast<T>(static_cast<wrap_t<T>>(static_cast<wrap_t<T>>(a) << static_cast<unsigned>(s)));
}
template <typename T>
inline T shr(T a, T s) {
    return static_cast<T>(a >> static_cast<unsigned>(s));
}
template <typename T>
inline T relu(T a) {
    return a > T(0) ? a : (a != a ? a : T(0));
}
template <typename T>
inline T add_relu(T a, T b) {
    return relu(add(a, b));
}
template <typename T>
inline T sub_relu(T a, T b) {
    return relu(sub(a, b));
}
template <typename T>
inline T abs(T a) {
    if constexpr (std::is_same<T, half>::value) {
        return half::from_bits(static_cast<uint16_t>(a.bits & 0x7fffu));
    } else {
        return std::fabs(a);
    }
}
template <typename T>
inline T leaky_relu(T a, T s) {
    return a >= T(0) ? a : a * s;
}
// Transcendentals: evaluated in float, then rounded once to T.
template <typename T>
inline T exp(T a) {
    return static_cast<T>(std::exp(static_cast<float>(a)));
}
template <typename T>
inline T ln(T a) {
    return static_cast<T>(std::log(static_cast<float>(a)));
}
template <typename T>
inline T sqrt(T a) {
    return static_cast<T>(std::sqrt(static_cast<float>(a)));
}
template <typename T>
inline T rsqrt(T a) {
    return static_cast<T>(1.0f / std::sqrt(static_cast<float>(a)));
}
template <typename T>
inline T reciprocal(T a) {
    return static_cast<T>(1.0f / static_cast<float>(a));
}

}  // namespace arith

// Element types an instruction accepts, as listed for Atlas A2/A3 in the API reference.
template <typename T, typename... Allowed>
constexpr bool one_of_v = (std::is_same<T, Allowed>::value || ...);

// A parenthesized type list as macro arguments: one_of_v<T, ASCRUN_UNPAREN (half, float)>.
#define ASCRUN_UNPAREN(...) __VA_ARGS__

// An op struct's dtype table (vector/mask.h at the use): `supports`, Atlas A2/A3's list (A2) or Ascend
// 950's (A950) by mask::kAscend950; `count_only`, the Ascend 950 types its page allows in the count
// form only ("仅支持tensor前n个数据计算接口").
#define ASCRUN_DTYPE_TABLE(A2, A950, COUNT_ONLY)                                                       \
    template <typename T>                                                                             \
    static constexpr bool supports =                                                                  \
        mask::kAscend950 ? one_of_v<T, ASCRUN_UNPAREN A950> : one_of_v<T, ASCRUN_UNPAREN A2>;         \
    template <typename T>                                                                             \
    static constexpr bool count_only = mask::kAscend950 && one_of_v<T, ASCRUN_UNPAREN COUNT_ONLY>;

}  // namespace ascrun

#pragma GCC visibility pop

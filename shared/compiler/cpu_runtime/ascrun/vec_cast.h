// ascrun cpu runtime: Cast (类型转换/Cast.md), count form, with its RoundMode:
//   CAST_NONE  = CAST_RINT when the conversion loses precision, else exact;
//   CAST_RINT  nearest, ties to even;   CAST_FLOOR toward -inf;   CAST_CEIL toward +inf;
//   CAST_ROUND nearest, ties away from zero;   CAST_TRUNC toward zero;
//   CAST_ODD   round to odd (the neighbour with an odd last bit when inexact).
// The (src, dst, roundMode) combinations are the Atlas A2/A3 table; others do not compile or fault.
// Conversions to an integer type whose result is outside the type (or NaN) are not defined by the
// reference: they fault. The mask + repeat forms (mixed element widths) fault: not modelled yet.
#pragma once

#include <cmath>
#include <limits>

#include "arith.h"
#include "mask.h"
#include "tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
}

namespace ascrun {
namespace cast {

using RM = AscendC::RoundMode;
constexpr unsigned bit(RM m) { return 1u << static_cast<unsigned>(m); }
constexpr unsigned kNone = bit(RM::CAST_NONE);
constexpr unsigned kDirected = bit(RM::CAST_RINT) | bit(RM::CAST_FLOOR) | bit(RM::CAST_CEIL) | bit(RM::CAST_ROUND) |
                               bit(RM::CAST_TRUNC);

// Allowed round modes for (dst D, src S) on Atlas A2/A3; 0: not supported.
template <typename D, typename S>
constexpr unsigned allowed() {
    using std::is_same;
#define ASCRUN_CAST(SRC, DST, MODES) \
    if (is_same<S, SRC>::value && is_same<D, DST>::value) return MODES;
    ASCRUN_CAST(int8_t, half, kNone)
    ASCRUN_CAST(uint8_t, half, kNone)
    ASCRUN_CAST(int16_t, half, kDirected | kNone)
    ASCRUN_CAST(int16_t, float, kNone)
    ASCRUN_CAST(half, int8_t, kDirected | kNone)
    ASCRUN_CAST(half, uint8_t, kDirected | kNone)
    ASCRUN_CAST(half, int16_t, kDirected)
    ASCRUN_CAST(half, int32_t, kDirected)
    ASCRUN_CAST(half, float, kNone)
    ASCRUN_CAST(bfloat16_t, int32_t, kDirected)
    ASCRUN_CAST(bfloat16_t, float, kNone)
    ASCRUN_CAST(int32_t, int16_t, kNone)
    ASCRUN_CAST(int32_t, float, kDirected | kNone)
    ASCRUN_CAST(int32_t, int64_t, kNone)
    ASCRUN_CAST(float, int16_t, kDirected)
    ASCRUN_CAST(float, half, kDirected | bit(RM::CAST_ODD) | kNone)
    ASCRUN_CAST(float, bfloat16_t, kDirected)
    ASCRUN_CAST(float, int32_t, kDirected)
    ASCRUN_CAST(float, float, kDirected)
    ASCRUN_CAST(float, int64_t, kDirected)
    ASCRUN_CAST(int64_t, int32_t, kNone)
    ASCRUN_CAST(int64_t, float, kDirected)
#undef ASCRUN_CAST
    return 0;
}

inline const char* mode_name(RM m) {
    static const char* names[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC",
                                  "CAST_ODD"};
    const unsigned i = static_cast<unsigned>(m);
    return i < 7 ? names[i] : "?";
}

// The next representable D above (up) or below v (finite v).
template <typename D>
inline D step(D v, bool up) {
    if constexpr (std::is_same<D, float>::value) {
        return std::nextafter(v, up ? INFINITY : -INFINITY);
    } else {
        const uint16_t b = v.bits;
        if ((b & 0x7fffu) == 0) return D::from_bits(up ? 0x0001u : 0x8001u);
        const bool neg = (b & 0x8000u) != 0;
        return D::from_bits(static_cast<uint16_t>(neg == up ? b - 1 : b + 1));
    }
}
template <typename D>
inline bool odd_last_bit(D v) {
    if constexpr (std::is_same<D, float>::value) {
        return (__builtin_bit_cast(uint32_t, v) & 1u) != 0;
    } else {
        return (v.bits & 1u) != 0;
    }
}

// The type every value of S (and every rounding step) is exact in: double, or long double when a
// 64-bit integer is involved.
template <typename D, typename S>
using wide_t = typename std::conditional<(sizeof(D) == 8 || sizeof(S) == 8), long double, double>::type;

// x (exact in W) to floating type D under mode M.
template <typename D, RM M, typename W>
inline D to_float_type(W x) {
    D n;
    if constexpr (std::is_same<D, float>::value) {
        n = static_cast<float>(x);
    } else {
        n = D(static_cast<double>(x));
    }
    const W nv = static_cast<W>(static_cast<float>(n));
    if (M == RM::CAST_NONE || M == RM::CAST_RINT || nv == x || !std::isfinite(static_cast<float>(n)) || x != x) {
        return n;
    }
    const D lo = nv < x ? n : step(n, false);
    const D hi = nv > x ? n : step(n, true);
    switch (M) {
        case RM::CAST_FLOOR: return lo;
        case RM::CAST_CEIL: return hi;
        case RM::CAST_TRUNC: return x > 0 ? lo : hi;
        case RM::CAST_ODD: return odd_last_bit(lo) ? lo : hi;
        case RM::CAST_ROUND: {
            const W dl = x - static_cast<W>(static_cast<float>(lo));
            const W dh = static_cast<W>(static_cast<float>(hi)) - x;
            if (dl == dh) return x > 0 ? hi : lo;
            return n;
        }
        default: return n;
    }
}

template <RM M, typename W>
inline W round_integral(W x) {
    switch (M) {
        case RM::CAST_FLOOR: return std::floor(x);
        case RM::CAST_CEIL: return std::ceil(x);
        case RM::CAST_ROUND: return std::round(x);
        case RM::CAST_TRUNC: return std::trunc(x);
        default: return std::nearbyint(x);  // CAST_RINT / CAST_NONE: ties to even (the default environment)
    }
}

template <typename W, typename S>
inline W exact(S v) {
    if constexpr (std::is_integral<S>::value) {
        return static_cast<W>(v);
    } else {
        return static_cast<W>(static_cast<float>(v));
    }
}

// The element loop. Returns the index of the first element whose integer result is out of range
// (or NaN), n if none.
template <typename D, typename S, RM M>
uint64_t cast_elements(elem_t<D>* dst, const elem_t<S>* src, uint64_t n) {
    using W = wide_t<D, S>;
    constexpr W lo = static_cast<W>(std::numeric_limits<D>::lowest());
    constexpr W hi = static_cast<W>(std::numeric_limits<D>::max());
    for (uint64_t i = 0; i < n; ++i) {
        const W x = exact<W>(src[i]);
        if constexpr (std::is_integral<D>::value) {
            const W r = std::is_integral<S>::value ? x : round_integral<M>(x);
            if (!(r >= lo && r <= hi)) return i;
            dst[i] = static_cast<D>(r);
        } else if constexpr (std::is_same<D, S>::value) {
            dst[i] = static_cast<D>(round_integral<M>(x));  // float -> float: to an integral value
        } else {
            dst[i] = to_float_type<D, M>(x);
        }
    }
    return n;
}

template <typename D, typename S, RM M>
void cast_count_mode(elem_t<D>* d, const elem_t<S>* s, uint64_t n) {
    const uint64_t bad = cast_elements<D, S, M>(d, s, n);
    if (bad != n) {
        fault(format("Cast<%s, %s>(%s): element %llu (%Lg) is outside the range of %s (the reference does not define "
                     "the result)",
                     TypeName<D>::c(), TypeName<S>::c(), mode_name(M), static_cast<unsigned long long>(bad),
                     static_cast<long double>(exact<wide_t<D, S>>(s[bad])), TypeName<D>::c()));
    }
}

template <typename D, typename S>
void cast_count(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RM mode, uint32_t count) {
    BlockContext& b = enter();
    constexpr unsigned ok = allowed<D, S>();
    if ((ok & bit(mode)) == 0) {
        fault(format("Cast<%s, %s>: roundMode %s is not supported for %s -> %s (Atlas A2/A3)", TypeName<D>::c(),
                     TypeName<S>::c(), mode_name(mode), TypeName<S>::c(), TypeName<D>::c()));
    }
    const uint64_t n = mask::count_of<true>(b, "Cast", count);
    if (n == 0) return;
    elem_t<D>* d = ub_operand(b, "Cast", "dst", dst, n);
    const elem_t<S>* s = ub_operand(b, "Cast", "src", src, n);
    if (sizeof(D) == sizeof(S)) {
        check_overlap("Cast", "dst", dst, n, "src", src, n);
    } else {
        const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
        if (da < sa + n * sizeof(S) && sa < da + n * sizeof(D)) {
            fault(format("Cast: dst range [%s, %s) overlaps src range [%s, %s) (element sizes differ)",
                         hex(da).c_str(), hex(da + n * sizeof(D)).c_str(), hex(sa).c_str(),
                         hex(sa + n * sizeof(S)).c_str()));
        }
    }
    switch (mode) {
        case RM::CAST_NONE: return cast_count_mode<D, S, RM::CAST_NONE>(d, s, n);
        case RM::CAST_RINT: return cast_count_mode<D, S, RM::CAST_RINT>(d, s, n);
        case RM::CAST_FLOOR: return cast_count_mode<D, S, RM::CAST_FLOOR>(d, s, n);
        case RM::CAST_CEIL: return cast_count_mode<D, S, RM::CAST_CEIL>(d, s, n);
        case RM::CAST_ROUND: return cast_count_mode<D, S, RM::CAST_ROUND>(d, s, n);
        case RM::CAST_TRUNC: return cast_count_mode<D, S, RM::CAST_TRUNC>(d, s, n);
        case RM::CAST_ODD: return cast_count_mode<D, S, RM::CAST_ODD>(d, s, n);
    }
}

}  // namespace cast
}  // namespace ascrun

namespace AscendC {

template <typename T, typename U>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint32_t count) {
    static_assert(::ascrun::cast::allowed<T, U>() != 0, "Cast: this (src, dst) type pair is not supported on Atlas "
                                                        "A2/A3 by the cpu target (see 类型转换/Cast.md)");
    ::ascrun::cast::cast_count<T, U>(dst, src, roundMode, count);
}
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    (void)dst, (void)src, (void)roundMode, (void)mask, (void)repeatTime, (void)repeatParams;
    ::ascrun::enter();
    ::ascrun::fault("Cast: the mask + repeat form is not supported on the cpu target yet (use the count form)");
}
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    (void)dst, (void)src, (void)roundMode, (void)mask, (void)repeatTime, (void)repeatParams;
    ::ascrun::enter();
    ::ascrun::fault("Cast: the mask + repeat form is not supported on the cpu target yet (use the count form)");
}

}  // namespace AscendC

#pragma GCC visibility pop

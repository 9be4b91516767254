// ascrun cpu runtime: Cast (类型转换/Cast.md, 数据结构/precision_conversion.md) in its count and mask +
// repeat forms, and SetDeqScale (类型转换/寄存器配置说明/SetDeqScale.md).
//
// RoundMode: CAST_NONE = CAST_RINT when the conversion loses precision, else exact;
//   CAST_RINT nearest, ties to even;   CAST_FLOOR toward -inf;   CAST_CEIL toward +inf;
//   CAST_ROUND nearest, ties away from zero;   CAST_TRUNC toward zero;
//   CAST_ODD round to odd (the neighbour with an odd last bit when inexact).
// The (src, dst, roundMode) combinations are the Atlas A2/A3 table; others do not compile or fault.
// Overflow saturates ("溢出默认按照饱和模式处理"): integer results clamp to the type's range; finite
// floating results beyond the largest finite value become it (+-inf and NaN inputs stay themselves).
// Left undefined, so faults: NaN to an integer type; a negative value to uint8_t ("负数输入会被视为
// 异常").
// int32_t -> half ignores roundMode: it dequantizes with the scale of SetDeqScale(half),
// half(float(src) * scale) rounded to nearest even and saturated (the reference's
// src / 2^17 * scale * 2^17: its power-of-two steps are exact in float).
// Mask + repeat forms: the wider of the two types sets the elements of a repeat and the mask; each
// operand keeps them in its own 32-byte blocks (vector/mask.h).
#pragma once

#include <cfloat>
#include <cmath>
#include <limits>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

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
constexpr unsigned kAny = kNone | kDirected | bit(RM::CAST_ODD);

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
    ASCRUN_CAST(int32_t, half, kAny)  // roundMode has no effect: SetDeqScale's scale
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

// Calls f(std::integral_constant<RM, mode>{}): the element loops are instantiated per round mode.
template <typename F>
inline void with_mode(RM mode, F&& f) {
    switch (mode) {
        case RM::CAST_NONE: return f(std::integral_constant<RM, RM::CAST_NONE>{});
        case RM::CAST_RINT: return f(std::integral_constant<RM, RM::CAST_RINT>{});
        case RM::CAST_FLOOR: return f(std::integral_constant<RM, RM::CAST_FLOOR>{});
        case RM::CAST_CEIL: return f(std::integral_constant<RM, RM::CAST_CEIL>{});
        case RM::CAST_ROUND: return f(std::integral_constant<RM, RM::CAST_ROUND>{});
        case RM::CAST_TRUNC: return f(std::integral_constant<RM, RM::CAST_TRUNC>{});
        case RM::CAST_ODD: return f(std::integral_constant<RM, RM::CAST_ODD>{});
    }
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
// The largest finite D.
template <typename D>
inline D max_finite() {
    if constexpr (std::is_same<D, float>::value) {
        return FLT_MAX;
    } else {
        return D::from_bits(std::is_same<D, half>::value ? 0x7bffu : 0x7f7fu);
    }
}

// The type every value of S (and every rounding step) is exact in: double, or long double when a
// 64-bit integer is involved.
template <typename D, typename S>
using wide_t = typename std::conditional<(sizeof(D) == 8 || sizeof(S) == 8), long double, double>::type;

// x (exact in W) to floating type D under mode M (IEEE overflow to infinity; the caller saturates).
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

// v converted to D under mode M, saturating. `bad` is set for NaN to an integer type (the result
// is then 0). Shared with the instructions that end in a conversion (vector/fused.h).
template <typename D, typename S, RM M>
inline D convert(S v, bool& bad) {
    using W = wide_t<D, S>;
    const W x = exact<W>(v);
    if constexpr (std::is_integral<D>::value) {
        if (x != x) {
            bad = true;
            return D(0);
        }
        const W r = std::is_integral<S>::value ? x : round_integral<M>(x);
        if (r <= static_cast<W>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
        if (r >= static_cast<W>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
        return static_cast<D>(r);
    } else if constexpr (std::is_same<D, S>::value) {
        return static_cast<D>(round_integral<M>(x));  // float -> float: to an integral value
    } else {
        const D r = to_float_type<D, M>(x);
        if (std::isinf(static_cast<float>(r)) && std::isfinite(x)) return x > 0 ? max_finite<D>() : -max_finite<D>();
        return r;
    }
}

// Cast's own rule on top of convert: a negative value to an unsigned type is an error.
template <typename D, typename S, RM M>
inline D cast_one(S v, bool& bad) {
    if constexpr (std::is_unsigned<D>::value && !std::is_unsigned<S>::value) bad |= exact<double>(v) < 0;
    return convert<D, S, M>(v, bad);
}

// int32_t -> half with the deq scale (also AddDeqRelu's Deq).
inline half deq(int32_t x, float scale) {
    bool unused = false;  // float -> half cannot fail
    return convert<half, float, RM::CAST_RINT>(static_cast<float>(x) * scale, unused);
}

// The deq scale SetDeqScale(half) set; a fault before the first call.
inline float deq_scale(const BlockContext& b, const char* api) {
    if (!b.deq_scale_set) {
        fault(format("%s: the deq scale was never set (int32_t -> half dequantizes with the scale of "
                     "SetDeqScale(half scale); call it first)",
                     api));
    }
    return static_cast<float>(half::from_bits(b.deq_scale));
}

// The element loop; false if an element is undefined (then first_bad finds it).
template <typename D, typename S, RM M>
inline bool cast_elements(elem_t<D>* dst, const elem_t<S>* src, uint64_t n, float scale) {
    if constexpr (std::is_same<D, half>::value && std::is_same<S, int32_t>::value) {
        for (uint64_t i = 0; i < n; ++i) dst[i] = deq(src[i], scale);
        return true;
    } else {
        bool bad = false;
        for (uint64_t i = 0; i < n; ++i) dst[i] = cast_one<D, S, M>(src[i], bad);
        return !bad;
    }
}

template <typename D, typename S, RM M>
[[noreturn]] void fail_element(const elem_t<S>* src, uint64_t n, uint64_t src_offset) {
    uint64_t i = 0;
    for (bool bad = false; i < n; ++i) {
        cast_one<D, S, M>(src[i], bad);
        if (bad) break;
    }
    const long double x = exact<long double>(src[i]);
    fault(format("Cast<%s, %s>(%s): src element %llu (%Lg) %s", TypeName<D>::c(), TypeName<S>::c(), mode_name(M),
                 static_cast<unsigned long long>(src_offset + i), x,
                 x != x ? format("is NaN, whose conversion to %s the reference does not define", TypeName<D>::c()).c_str()
                        : format("is negative, which the reference treats as an exception for %s "
                                 "(precision_conversion.md)",
                                 TypeName<D>::c())
                              .c_str()));
}

template <typename D, typename S>
void check_mode(RM mode) {
    if ((allowed<D, S>() & bit(mode)) == 0) {
        fault(format("Cast<%s, %s>: roundMode %s is not supported for %s -> %s (Atlas A2/A3)", TypeName<D>::c(),
                     TypeName<S>::c(), mode_name(mode), TypeName<S>::c(), TypeName<D>::c()));
    }
}

// Count forms: operands of one width coincide or are disjoint (core/tensor.h); of different widths, disjoint.
template <typename D, typename S>
void check_count_overlap(const char* api, const AscendC::LocalTensor<D>& dst, const char* s_role,
                         const AscendC::LocalTensor<S>& src, uint64_t n) {
    if (sizeof(D) == sizeof(S)) return check_overlap(api, "dst", dst, n, s_role, src, n);
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
    if (da < sa + n * sizeof(S) && sa < da + n * sizeof(D)) {
        undefined_overlap(api, da, uint64_t{dst.GetSize()} * sizeof(D), sa, uint64_t{src.GetSize()} * sizeof(S), [&] {
            return format("%s: dst range [%s, %s) overlaps %s range [%s, %s) (element sizes differ)", api,
                          hex(da).c_str(), hex(da + n * sizeof(D)).c_str(), s_role, hex(sa).c_str(),
                          hex(sa + n * sizeof(S)).c_str());
        });
    }
}

template <typename D, typename S>
float scale_for(const BlockContext& b) {
    return std::is_same<D, half>::value && std::is_same<S, int32_t>::value ? deq_scale(b, "Cast<half, int32_t>")
                                                                            : 0.0f;
}

template <typename D, typename S>
void cast_count(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RM mode, uint32_t count) {
    BlockContext& b = enter();
    check_mode<D, S>(mode);
    const uint64_t n = mask::count_of<true>(b, "Cast", count);
    if (n == 0) return;
    elem_t<D>* d = ub_operand(b, "Cast", "dst", dst, n);
    const elem_t<S>* s = ub_operand(b, "Cast", "src", src, n);
    check_count_overlap("Cast", dst, "src", src, n);
    const float scale = scale_for<D, S>(b);
    with_mode(mode, [&](auto m) {
        constexpr RM M = decltype(m)::value;
        if (!cast_elements<D, S, M>(d, s, n, scale)) fail_element<D, S, M>(s, n, 0);
    });
}

template <typename D, typename S, bool isSetMask>
void cast_masked(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RM mode, mask::Arg arg,
                 uint64_t m0, uint64_t m1, uint8_t repeat, const AscendC::UnaryRepeatParams& rp) {
    using Wide = typename std::conditional<(sizeof(S) > sizeof(D)), S, D>::type;
    BlockContext& b = enter();
    check_mode<D, S>(mode);
    const uint64_t blk[2] = {rp.dstBlkStride, rp.srcBlkStride};
    const uint64_t rep[2] = {rp.dstRepStride, rp.srcRepStride};
    const uint32_t bytes[2] = {sizeof(D), sizeof(S)};
    mask::Plan p;
    if (!mask::make_plan<Wide>(b, "Cast", isSetMask, arg, m0, m1, repeat, 2, blk, rep, p, bytes)) return;
    elem_t<D>* d = ub_operand(b, "Cast", "dst", dst, p.extent[0]);
    const elem_t<S>* s = ub_operand(b, "Cast", "src", src, p.extent[1]);
    mask::check_overlap("Cast", p, 0, dst, 1, "src", src, false);
    const float scale = scale_for<D, S>(b);
    with_mode(mode, [&](auto m) {
        constexpr RM M = decltype(m)::value;
        mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
            if (!cast_elements<D, S, M>(d + o[0], s + o[1], len, scale)) fail_element<D, S, M>(s + o[1], len, o[1]);
        });
    });
}

}  // namespace cast
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_CAST_CHECK                                                                                          \
    static_assert(::ascrun::cast::allowed<T, U>() != 0, "Cast: this (src, dst) type pair is not supported on Atlas " \
                                                        "A2/A3 by the cpu target (see 类型转换/Cast.md)")

template <typename T, typename U>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint32_t count) {
    ASCRUN_CAST_CHECK;
    ::ascrun::cast::cast_count<T, U>(dst, src, roundMode, count);
}
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    ASCRUN_CAST_CHECK;
    ::ascrun::cast::cast_masked<T, U, isSetMask>(dst, src, roundMode, ::ascrun::mask::Arg::Continuous, mask, 0,
                                                 repeatTime, repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    ASCRUN_CAST_CHECK;
    ::ascrun::cast::cast_masked<T, U, isSetMask>(dst, src, roundMode, ::ascrun::mask::Arg::Bits, mask[0], mask[1],
                                                 repeatTime, repeatParams);
}
#undef ASCRUN_CAST_CHECK

// The DEQSCALE scale of Cast int32_t -> half and AddDeqRelu.
inline void SetDeqScale(half scale) {
    ::ascrun::BlockContext& b = ::ascrun::enter();
    b.deq_scale = scale.bits;
    b.deq_scale_set = true;
}
// CastDequant's int16_t -> b8 configuration: CastDequant is not modelled.
inline void SetDeqScale(float scale, int16_t offset, bool signMode) {
    (void)scale, (void)offset, (void)signMode;
    ::ascrun::enter();
    ::ascrun::fault("SetDeqScale(float scale, int16_t offset, bool signMode): configures CastDequant's int16_t -> "
                    "int8_t/uint8_t dequantization, which the cpu target does not model");
}

}  // namespace AscendC

#pragma GCC visibility pop

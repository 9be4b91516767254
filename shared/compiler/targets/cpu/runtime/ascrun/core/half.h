// ascrun cpu runtime: IEEE 754 binary16 (`half`) and bfloat16 (`bfloat16_t`, 8-bit significand).
//
// Both are plain structs over uint16_t, so a Unified Buffer byte array can be viewed as an array
// of them. Arithmetic converts the operands to float, computes in float and rounds the result back
// after EACH operation (round to nearest, ties to even). For + - * / this gives the correctly
// rounded binary16 (and bfloat16) result: float's 24-bit significand is at least 2*11+2 bits, so
// rounding twice (to float, then to half) never differs from rounding once.
//
// Mixed expressions follow C++'s usual arithmetic conversions as if half were a narrow floating
// type: half op half -> half, half op integer -> half, half op float -> float, half op double -> double.
#pragma once

#include <cstdint>
#include <type_traits>

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace fp16 {

constexpr uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
constexpr float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }
// c ? a : b with masks: both sides are computed unconditionally, so the compiler keeps the
// floating-point operations out of branches and can vectorize loops over these conversions.
constexpr uint32_t select(bool c, uint32_t a, uint32_t b) {
    const uint32_t m = 0u - static_cast<uint32_t>(c);
    return (a & m) | (b & ~m);
}

// float -> binary16, round to nearest even; keeps the sign of zeros, maps NaN to a quiet NaN
// with the top payload bits, overflow to infinity. Branch-free (selects only), so element
// loops over half vectorize.
constexpr uint16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t a = x & 0x7fffffffu;
    // >= 2^-14: rebias the exponent (-112 << 23) and round on bit 13, ties to even; values in
    // [65520, 65536) round up to the infinity encoding 0x7c00.
    const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    // < 2^-14: adding 0.5f makes the FPU round (to nearest even) at the half-subnormal quantum
    // 2^-24, leaving the half's mantissa in the low bits.
    const uint32_t subnormal = float_bits(bits_float(a) + 0.5f) - 0x3f000000u;
    const uint32_t inf_nan = select(a > 0x7f800000u, 0x7e00u | ((a >> 13) & 0x03ffu), 0x7c00u);
    const uint32_t r = select(a >= 0x47800000u, inf_nan, select(a < 0x38800000u, subnormal, normal));
    return static_cast<uint16_t>(sign | r);
}

// double -> binary16 directly (no double rounding through float).
constexpr uint16_t from_double(double d) {
    const uint64_t x = __builtin_bit_cast(uint64_t, d);
    const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
    const uint64_t a = x & 0x7fffffffffffffffull;
    if (a >= 0x7ff0000000000000ull) {
        return static_cast<uint16_t>(sign | 0x7c00u |
                                     (a > 0x7ff0000000000000ull ? (0x0200u | ((a >> 42) & 0x03ffu)) : 0u));
    }
    const int e = static_cast<int>(a >> 52) - 1023;  // subnormal doubles give -1023: far below half
    if (e >= 16) return static_cast<uint16_t>(sign | 0x7c00u);
    if (e < -25) return sign;
    const uint64_t m = (a & 0x000fffffffffffffull) | (1ull << 52);
    const bool subnormal = e < -14;
    const int shift = subnormal ? 28 - e : 42;  // quantum 2^-24 for subnormals, 2^(e-10) for normals
    uint64_t r = m >> shift;
    const uint64_t rem = m & ((1ull << shift) - 1u);
    const uint64_t halfway = 1ull << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    if (subnormal) return static_cast<uint16_t>(sign | r);
    const uint64_t bits = (static_cast<uint64_t>(e + 15) << 10) + (r - 1024u);  // carry bumps the exponent
    return static_cast<uint16_t>(sign | (bits >= 0x7c00u ? 0x7c00u : bits));
}

// binary16 -> float (exact). Branch-free: the half's exponent and mantissa, shifted into a
// float and scaled by 2^112, are the value for normals and subnormals alike.
constexpr float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;
    const uint32_t finite = float_bits(bits_float(em << 13) * 0x1p112f);
    const uint32_t inf_nan = 0x7f800000u | (em << 13);
    return bits_float(sign | select(em >= 0x7c00u, inf_nan, finite));
}

// float -> bfloat16, round to nearest even; NaN stays a quiet NaN.
constexpr uint16_t bf16_from_float(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
constexpr float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// double -> bfloat16, round to nearest even, as one rounding: double is first rounded to float
// with round-to-odd (toward zero, then the last bit set when inexact), which keeps the sticky
// information that a plain double -> float rounding would lose before the second rounding.
constexpr uint16_t bf16_from_double(double d) {
    const float f = static_cast<float>(d);
    uint32_t x = float_bits(f);
    if (static_cast<double>(f) != d) {  // inexact (or NaN: the last bit keeps it a NaN)
        const bool away = (f < 0 ? -static_cast<double>(f) : static_cast<double>(f)) > (d < 0 ? -d : d);
        if (away) --x;  // one step toward zero (f is nonzero; an infinity becomes the largest float)
        x |= 1u;
    }
    return bf16_from_float(bits_float(x));
}

}  // namespace fp16

namespace detail {
template <typename T>
constexpr bool is_int_v = std::is_integral<T>::value;
template <typename T>
constexpr bool is_flt_v = std::is_floating_point<T>::value;
}  // namespace detail
}  // namespace ascrun

// A 16-bit float type with the semantics above. `Tag` only tells half and bfloat16_t apart.
namespace ascrun {
namespace detail {

struct Binary16Codec {
    static constexpr uint16_t from_float(float f) { return fp16::from_float(f); }
    static constexpr uint16_t from_double(double d) { return fp16::from_double(d); }
    static constexpr float to_float(uint16_t b) { return fp16::to_float(b); }
};
struct BFloat16Codec {
    static constexpr uint16_t from_float(float f) { return fp16::bf16_from_float(f); }
    static constexpr uint16_t from_double(double d) { return fp16::bf16_from_double(d); }
    static constexpr float to_float(uint16_t b) { return fp16::bf16_to_float(b); }
};

template <typename Codec>
struct __attribute__((__may_alias__)) Float16 {
    uint16_t bits;

    Float16() = default;  // like float: an uninitialized scalar, trivially constructible
    constexpr Float16(float f) : bits(Codec::from_float(f)) {}
    constexpr Float16(double d) : bits(Codec::from_double(d)) {}
    constexpr Float16(long double d) : bits(Codec::from_double(static_cast<double>(d))) {}
    template <typename I, typename std::enable_if<is_int_v<I>, int>::type = 0>
    constexpr Float16(I i) : bits(Codec::from_double(static_cast<double>(i))) {}

    static constexpr Float16 from_bits(uint16_t b) {
        Float16 h{};
        h.bits = b;
        return h;
    }
    constexpr operator float() const { return Codec::to_float(bits); }

    constexpr Float16 operator-() const { return from_bits(static_cast<uint16_t>(bits ^ 0x8000u)); }
    constexpr Float16 operator+() const { return *this; }

    // half op half -> half
    friend constexpr Float16 operator+(Float16 a, Float16 b) { return Float16(float(a) + float(b)); }
    friend constexpr Float16 operator-(Float16 a, Float16 b) { return Float16(float(a) - float(b)); }
    friend constexpr Float16 operator*(Float16 a, Float16 b) { return Float16(float(a) * float(b)); }
    friend constexpr Float16 operator/(Float16 a, Float16 b) { return Float16(float(a) / float(b)); }
    friend constexpr bool operator==(Float16 a, Float16 b) { return float(a) == float(b); }
    friend constexpr bool operator!=(Float16 a, Float16 b) { return float(a) != float(b); }
    friend constexpr bool operator<(Float16 a, Float16 b) { return float(a) < float(b); }
    friend constexpr bool operator<=(Float16 a, Float16 b) { return float(a) <= float(b); }
    friend constexpr bool operator>(Float16 a, Float16 b) { return float(a) > float(b); }
    friend constexpr bool operator>=(Float16 a, Float16 b) { return float(a) >= float(b); }

    constexpr Float16& operator+=(Float16 o) { return *this = *this + o; }
    constexpr Float16& operator-=(Float16 o) { return *this = *this - o; }
    constexpr Float16& operator*=(Float16 o) { return *this = *this * o; }
    constexpr Float16& operator/=(Float16 o) { return *this = *this / o; }
    constexpr Float16& operator++() { return *this += Float16(1.0f); }
    constexpr Float16& operator--() { return *this -= Float16(1.0f); }
    constexpr Float16 operator++(int) { Float16 old = *this; ++*this; return old; }
    constexpr Float16 operator--(int) { Float16 old = *this; --*this; return old; }
};

// Mixed operands. The result type of half (op) U is:
template <typename Codec, typename U>
using MixedResult = typename std::conditional<is_int_v<U>, Float16<Codec>, U>::type;

#define ASCRUN_F16_MIXED_ARITH(OP)                                                                          \
    template <typename C, typename U, typename std::enable_if<is_int_v<U> || is_flt_v<U>, int>::type = 0> \
    constexpr MixedResult<C, U> operator OP(Float16<C> a, U b) {                                            \
        using R = MixedResult<C, U>;                                                                        \
        return static_cast<R>(is_int_v<U> ? R(float(a) OP float(Float16<C>(b)))                            \
                                           : R(static_cast<R>(float(a)) OP static_cast<R>(b)));             \
    }                                                                                                       \
    template <typename C, typename U, typename std::enable_if<is_int_v<U> || is_flt_v<U>, int>::type = 0> \
    constexpr MixedResult<C, U> operator OP(U a, Float16<C> b) {                                            \
        using R = MixedResult<C, U>;                                                                        \
        return static_cast<R>(is_int_v<U> ? R(float(Float16<C>(a)) OP float(b))                            \
                                           : R(static_cast<R>(a) OP static_cast<R>(float(b))));             \
    }
ASCRUN_F16_MIXED_ARITH(+)
ASCRUN_F16_MIXED_ARITH(-)
ASCRUN_F16_MIXED_ARITH(*)
ASCRUN_F16_MIXED_ARITH(/)
#undef ASCRUN_F16_MIXED_ARITH

#define ASCRUN_F16_MIXED_CMP(OP)                                                                            \
    template <typename C, typename U, typename std::enable_if<is_int_v<U> || is_flt_v<U>, int>::type = 0> \
    constexpr bool operator OP(Float16<C> a, U b) {                                                         \
        return static_cast<double>(float(a)) OP static_cast<double>(b);                                     \
    }                                                                                                       \
    template <typename C, typename U, typename std::enable_if<is_int_v<U> || is_flt_v<U>, int>::type = 0> \
    constexpr bool operator OP(U a, Float16<C> b) {                                                         \
        return static_cast<double>(a) OP static_cast<double>(float(b));                                     \
    }
ASCRUN_F16_MIXED_CMP(==)
ASCRUN_F16_MIXED_CMP(!=)
ASCRUN_F16_MIXED_CMP(<)
ASCRUN_F16_MIXED_CMP(<=)
ASCRUN_F16_MIXED_CMP(>)
ASCRUN_F16_MIXED_CMP(>=)
#undef ASCRUN_F16_MIXED_CMP

}  // namespace detail
}  // namespace ascrun

// The names emitted code uses, in the global namespace as in CANN.
using half = ::ascrun::detail::Float16<::ascrun::detail::Binary16Codec>;
using bfloat16_t = ::ascrun::detail::Float16<::ascrun::detail::BFloat16Codec>;

static_assert(sizeof(half) == 2 && alignof(half) == 2, "half must be 2 bytes");
static_assert(std::is_trivially_copyable<half>::value && std::is_trivially_default_constructible<half>::value,
              "half must be a trivial storage type");

#pragma GCC visibility pop

// ascrun cpu runtime: vector-scalar instructions dst[i] = op(src[i], scalar):
// Adds, Muls, Maxs, Mins, LeakyRelu, ShiftLeft, ShiftRight; and Axpy, dst[i] = src[i] * scalar + dst[i].
// Same structure as vector/binary.h: Op structs, one element loop, one driver per call form
// (count; mask + repeat with UnaryRepeatParams).
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/cast.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

// No per-scalar rule: every value is valid.
struct AnyScalar {
    template <typename T>
    static void check(const char*, T) {}
};
// Shift counts: the reference defines 0 <= scalar < bit width only.
struct ShiftScalar {
    template <typename T>
    static void check(const char* api, T s) {
        if (static_cast<int64_t>(s) < 0 || static_cast<int64_t>(s) >= static_cast<int64_t>(8 * sizeof(T))) {
            fault(format("%s<%s>: shift count %lld is outside [0, %zu) (the result is undefined)", api,
                         TypeName<T>::c(), static_cast<long long>(s), 8 * sizeof(T)));
        }
    }
};

// A2, A950, COUNT_ONLY: the dtype table (ASCRUN_DTYPE_TABLE).
#define ASCRUN_SCALAR_OP(NAME, FN, RULE, A2, A950, COUNT_ONLY)                                         \
    struct NAME##Op {                                                                                 \
        static constexpr const char* name = #NAME;                                                    \
        using Scalar = RULE;                                                                          \
        ASCRUN_DTYPE_TABLE(A2, A950, COUNT_ONLY)                                                      \
        template <typename T>                                                                         \
        static T apply(T a, T s) { return arith::FN(a, s); }                                          \
    };
// Atlas A2/A3 dtypes (基础算术/Adds.md, Muls.md, Maxs.md, Mins.md, LeakyRelu.md; 逻辑计算/ShiftLeft.md,
// ShiftRight.md). Ascend 950's: Adds.md, Muls.md, Maxs.md, Mins.md "针对Ascend 950PR/Ascend 950DT，T和U支持
// 的数据类型为" (complex32/complex64 not modelled); LeakyRelu and the shifts keep Atlas A2/A3's. bfloat16_t
// arithmetic: exact in float, rounded once to nearest even.
#define ASCRUN_SCALAR_950 (int8_t, uint8_t, int16_t, half, bfloat16_t, int32_t, float, int64_t, uint64_t)
#define ASCRUN_SCALAR_950_COUNT_ONLY (int8_t, uint8_t, int64_t, uint64_t)
ASCRUN_SCALAR_OP(Adds, add, AnyScalar, (half, float, int16_t, int32_t), ASCRUN_SCALAR_950,
                 ASCRUN_SCALAR_950_COUNT_ONLY)
ASCRUN_SCALAR_OP(Muls, mul, AnyScalar, (half, float, int16_t, int32_t),
                 (int16_t, half, bfloat16_t, int32_t, float, int64_t, uint64_t), (int64_t, uint64_t))
ASCRUN_SCALAR_OP(Maxs, max, AnyScalar, (half, float, int16_t, int32_t), ASCRUN_SCALAR_950,
                 ASCRUN_SCALAR_950_COUNT_ONLY)
ASCRUN_SCALAR_OP(Mins, min, AnyScalar, (half, float, int16_t, int32_t), ASCRUN_SCALAR_950,
                 ASCRUN_SCALAR_950_COUNT_ONLY)
ASCRUN_SCALAR_OP(LeakyRelu, leaky_relu, AnyScalar, (half, float), (half, float), (void))
ASCRUN_SCALAR_OP(ShiftLeft, shl, ShiftScalar, (int16_t, uint16_t, int32_t, uint32_t),
                 (int16_t, uint16_t, int32_t, uint32_t), (void))
ASCRUN_SCALAR_OP(ShiftRight, shr, ShiftScalar, (int16_t, uint16_t, int32_t, uint32_t),
                 (int16_t, uint16_t, int32_t, uint32_t), (void))
#undef ASCRUN_SCALAR_950_COUNT_ONLY
#undef ASCRUN_SCALAR_950
#undef ASCRUN_SCALAR_OP

// ShiftRight with roundEn (signed types): adds the last bit shifted out.
struct ShiftRightRoundOp {
    static constexpr const char* name = "ShiftRight";
    using Scalar = ShiftScalar;
    template <typename T>
    static T apply(T a, T s) {
        const T r = arith::shr(a, s);
        return s == 0 ? r : static_cast<T>(arith::add<T>(r, static_cast<T>((a >> (s - 1)) & 1)));
    }
};

// The element loop, structured like binary_elements.
template <typename Op, typename T>
inline void scalar_elements(elem_t<T>* dst, const elem_t<T>* src, T scalar, uint64_t n) {
    constexpr uint32_t per_repeat = kRepeatBytes / sizeof(T);
    uint64_t i = 0;
    for (; i + per_repeat <= n; i += per_repeat) {
        elem_t<T>* d = dst + i;
        const elem_t<T>* a = src + i;
        ASCRUN_IVDEP
        for (uint32_t j = 0; j < per_repeat; ++j) d[j] = Op::template apply<T>(a[j], scalar);
    }
    ASCRUN_IVDEP
    for (; i < n; ++i) dst[i] = Op::template apply<T>(src[i], scalar);
}

template <typename Op, typename T, bool isSetMask>
void scalar_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, T scalar,
                  int32_t count) {
    BlockContext& b = enter();
    // Ascend 950: "tensor前n个数据计算API中的isSetMask参数不生效" (Muls.md): the count always counts.
    const uint64_t n = mask::count_of<isSetMask || mask::kAscend950>(b, Op::name, count);
    if (n == 0) return;  // a NOP on Atlas A2/A3
    Op::Scalar::check(Op::name, scalar);
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, n);
    const elem_t<T>* s = ub_operand(b, Op::name, "src", src, n);
    check_overlap(Op::name, "dst", dst, n, "src", src, n);
    scalar_elements<Op, T>(d, s, scalar, n);
}

template <typename Op, typename T, bool isSetMask>
void scalar_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, T scalar, mask::Arg arg,
                   uint64_t m0, uint64_t m1, uint8_t repeat, const AscendC::UnaryRepeatParams& rp) {
    BlockContext& b = enter();
    const uint64_t blk[2] = {rp.dstBlkStride, rp.srcBlkStride};
    const uint64_t rep[2] = {rp.dstRepStride, rp.srcRepStride};
    mask::Plan p;
    if (!mask::make_plan<T>(b, Op::name, isSetMask, arg, m0, m1, repeat, 2, blk, rep, p)) return;
    Op::Scalar::check(Op::name, scalar);
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, p.extent[0]);
    const elem_t<T>* s = ub_operand(b, Op::name, "src", src, p.extent[1]);
    mask::check_overlap(Op::name, p, 0, dst, 1, "src", src, false);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
        scalar_elements<Op, T>(d + o[0], s + o[1], scalar, len);
    });
}

// ---- Axpy (复合计算/Axpy.md): dst = src * scalar + dst, per element. T = dst type, U = src type:
// (half, half), (float, float), (float, half) on Atlas A2/A3. half: the product and the sum each
// round to half; (float, half): src converts exactly to float and the arithmetic is float.
template <typename T, typename U>
constexpr bool axpy_supports = (std::is_same<T, U>::value && one_of_v<T, half, float>) ||
                               (std::is_same<T, float>::value && std::is_same<U, half>::value);

template <typename T, typename U>
inline void axpy_elements(elem_t<T>* dst, const elem_t<U>* src, U scalar, uint64_t n) {
    ASCRUN_IVDEP
    for (uint64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same<T, U>::value) {
            dst[i] = static_cast<T>(src[i] * scalar) + dst[i];
        } else {
            dst[i] = static_cast<float>(src[i]) * static_cast<float>(scalar) + dst[i];
        }
    }
}

template <typename T, typename U, bool isSetMask>
void axpy_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, U scalar, int32_t count) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<isSetMask>(b, "Axpy", count);
    if (n == 0) return;
    elem_t<T>* d = ub_operand(b, "Axpy", "dst", dst, n);
    const elem_t<U>* s = ub_operand(b, "Axpy", "src", src, n);
    cast::check_count_overlap("Axpy", dst, "src", src, n);
    axpy_elements<T, U>(d, s, scalar, n);
}

// Mask + repeat forms: with (float, half) the float dst sets the repeat (64 elements) and the mask;
// the half src holds them in 4 blocks (vector/mask.h). dst is also read: no repeat may write dst elements
// a later repeat reads.
template <typename T, typename U, bool isSetMask>
void axpy_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, U scalar, mask::Arg arg,
                 uint64_t m0, uint64_t m1, uint8_t repeat, const AscendC::UnaryRepeatParams& rp) {
    BlockContext& b = enter();
    const uint64_t blk[2] = {rp.dstBlkStride, rp.srcBlkStride};
    const uint64_t rep[2] = {rp.dstRepStride, rp.srcRepStride};
    const uint32_t bytes[2] = {sizeof(T), sizeof(U)};
    mask::Plan p;
    if (!mask::make_plan<T>(b, "Axpy", isSetMask, arg, m0, m1, repeat, 2, blk, rep, p, bytes)) return;
    elem_t<T>* d = ub_operand(b, "Axpy", "dst", dst, p.extent[0]);
    const elem_t<U>* s = ub_operand(b, "Axpy", "src", src, p.extent[1]);
    mask::check_overlap("Axpy", p, 0, dst, 1, "src", src, false);
    mask::check_overlap("Axpy", p, 0, dst, 0, "dst (also read)", dst, false);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
        axpy_elements<T, U>(d + o[0], s + o[1], scalar, len);
    });
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

// TYPES: Atlas A2/A3's table; TYPES_950: Ascend 950's, as the message says it.
#define ASCRUN_SCALAR_TYPES(NAME, TYPES, TYPES_950)                                                       \
    static_assert(::ascrun::mask::kAscend950 || ::ascrun::vec::NAME##Op::supports<T>,                     \
                  #NAME ": T must be one of " TYPES " (Atlas A2/A3)");                                    \
    static_assert(!::ascrun::mask::kAscend950 || ::ascrun::vec::NAME##Op::supports<T>,                    \
                  #NAME ": T must be one of " TYPES_950 " (Ascend 950)")
#define ASCRUN_SCALAR_MASKED_TYPES(NAME)                                                                  \
    static_assert(!::ascrun::vec::NAME##Op::count_only<T>,                                                \
                  #NAME ": on Ascend 950 this T takes the count form only (" #NAME ".md)")
#define ASCRUN_SCALAR_API(NAME, TYPES, TYPES_950)                                                          \
    template <typename T, bool isSetMask = true>                                                          \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,                 \
              const int32_t& count) {                                                                     \
        ASCRUN_SCALAR_TYPES(NAME, TYPES, TYPES_950);                                                      \
        ::ascrun::vec::scalar_count<::ascrun::vec::NAME##Op, T, isSetMask>(dst, src, scalarValue, count);  \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,  \
              const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                          \
        ASCRUN_SCALAR_TYPES(NAME, TYPES, TYPES_950);                                                      \
        ASCRUN_SCALAR_MASKED_TYPES(NAME);                                                                 \
        ::ascrun::vec::scalar_masked<::ascrun::vec::NAME##Op, T, isSetMask>(                              \
            dst, src, scalarValue, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);   \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,                 \
              const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {   \
        ASCRUN_SCALAR_TYPES(NAME, TYPES, TYPES_950);                                                      \
        ASCRUN_SCALAR_MASKED_TYPES(NAME);                                                                 \
        ::ascrun::vec::scalar_masked<::ascrun::vec::NAME##Op, T, isSetMask>(                              \
            dst, src, scalarValue, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams); \
    }
#define ASCRUN_SCALAR_950 "int8_t, uint8_t, int16_t, half, bfloat16_t, int32_t, float, int64_t, uint64_t; int8_t, " \
                          "uint8_t, int64_t, uint64_t in the count form only"
ASCRUN_SCALAR_API(Adds, "half, float, int16_t, int32_t", ASCRUN_SCALAR_950)
ASCRUN_SCALAR_API(Muls, "half, float, int16_t, int32_t",
                  "int16_t, half, bfloat16_t, int32_t, float, int64_t, uint64_t; int64_t, uint64_t in the count form "
                  "only")
ASCRUN_SCALAR_API(Maxs, "half, float, int16_t, int32_t", ASCRUN_SCALAR_950)
ASCRUN_SCALAR_API(Mins, "half, float, int16_t, int32_t", ASCRUN_SCALAR_950)
ASCRUN_SCALAR_API(LeakyRelu, "half, float", "half, float (the runtime keeps Atlas A2/A3's table)")
ASCRUN_SCALAR_API(ShiftLeft, "int16_t, uint16_t, int32_t, uint32_t",
                  "int16_t, uint16_t, int32_t, uint32_t (the runtime keeps Atlas A2/A3's table)")
#undef ASCRUN_SCALAR_950
#undef ASCRUN_SCALAR_MASKED_TYPES
#undef ASCRUN_SCALAR_TYPES
#undef ASCRUN_SCALAR_API

// ShiftRight: as above, plus roundEn on the mask + repeat forms.
template <typename T, bool isSetMask = true>
void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) {
    static_assert(::ascrun::vec::ShiftRightOp::supports<T>, "ShiftRight: T must be one of int16_t, uint16_t, "
                                                            "int32_t, uint32_t (Atlas A2/A3)");
    ::ascrun::vec::scalar_count<::ascrun::vec::ShiftRightOp, T, isSetMask>(dst, src, scalarValue, count);
}
template <typename T, bool isSetMask = true>
void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,
                const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, bool roundEn = false) {
    static_assert(::ascrun::vec::ShiftRightOp::supports<T>, "ShiftRight: T must be one of int16_t, uint16_t, "
                                                            "int32_t, uint32_t (Atlas A2/A3)");
    if (roundEn && std::is_signed<T>::value) {
        ::ascrun::vec::scalar_masked<::ascrun::vec::ShiftRightRoundOp, T, isSetMask>(
            dst, src, scalarValue, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);
    } else {
        ::ascrun::vec::scalar_masked<::ascrun::vec::ShiftRightOp, T, isSetMask>(
            dst, src, scalarValue, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);
    }
}
template <typename T, bool isSetMask = true>
void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const uint64_t mask[],
                const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, bool roundEn = false) {
    static_assert(::ascrun::vec::ShiftRightOp::supports<T>, "ShiftRight: T must be one of int16_t, uint16_t, "
                                                            "int32_t, uint32_t (Atlas A2/A3)");
    if (roundEn && std::is_signed<T>::value) {
        ::ascrun::vec::scalar_masked<::ascrun::vec::ShiftRightRoundOp, T, isSetMask>(
            dst, src, scalarValue, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);
    } else {
        ::ascrun::vec::scalar_masked<::ascrun::vec::ShiftRightOp, T, isSetMask>(
            dst, src, scalarValue, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);
    }
}

template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const int32_t& count) {
    static_assert(::ascrun::vec::axpy_supports<T, U>, "Axpy: (T, U) must be (half, half), (float, float) or "
                                                      "(float, half) (Atlas A2/A3)");
    ::ascrun::vec::axpy_count<T, U, isSetMask>(dst, src, scalarValue, count);
}
template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    static_assert(::ascrun::vec::axpy_supports<T, U>, "Axpy: (T, U) must be (half, half), (float, float) or "
                                                      "(float, half) (Atlas A2/A3)");
    ::ascrun::vec::axpy_masked<T, U, isSetMask>(dst, src, scalarValue, ::ascrun::mask::Arg::Continuous, mask, 0,
                                                repeatTime, repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    static_assert(::ascrun::vec::axpy_supports<T, U>, "Axpy: (T, U) must be (half, half), (float, float) or "
                                                      "(float, half) (Atlas A2/A3)");
    ::ascrun::vec::axpy_masked<T, U, isSetMask>(dst, src, scalarValue, ::ascrun::mask::Arg::Bits, mask[0], mask[1],
                                                repeatTime, repeatParams);
}

}  // namespace AscendC

#pragma GCC visibility pop

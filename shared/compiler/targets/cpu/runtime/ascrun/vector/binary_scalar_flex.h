// ascrun cpu runtime: the Ascend 950's tensor-scalar forms with the scalar on either side (基础算术/
// Subs（灵活标量位置）.md, Divs（灵活标量位置）.md): dst[i] = src[i] op scalar, or scalar op src[i] with
// the scalar first. Ascend 950PR/950DT only ("Atlas A2 训练系列产品/Atlas A2 推理系列产品：不支持"), so
// Atlas A2/A3 kernels get a static assertion. Count and mask + repeat forms, run by vector/binary_scalar.h's
// drivers (the count always counts on the 950: "tensor前n个数据计算API中的isSetMask参数不生效"). A scalar
// given as a LocalTensor's single element (BinaryConfig's scalarTensorIndex) is not modelled.
#pragma once

#include "ascrun/vector/binary_scalar.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

// Subs.md "支持的数据为int16_t、half、bfloat16_t、int32_t、float" (complex and 64-bit types left out);
// Divs.md "支持的数据为half、float". bfloat16_t and half round once after each operation (core/half.h).
template <typename T>
constexpr bool subs_supports = one_of_v<T, int16_t, half, bfloat16_t, int32_t, float>;
template <typename T>
constexpr bool divs_supports = one_of_v<T, half, float>;

// Dependent on T, so that an Atlas A2/A3 kernel fails only where it calls one.
template <typename T>
constexpr bool on_950 = mask::kAscend950 && sizeof(T) != 0;

template <bool ScalarFirst>
struct SubsOp {
    static constexpr const char* name = "Subs";
    using Scalar = AnyScalar;
    template <typename T>
    static T apply(T a, T s) { return ScalarFirst ? arith::sub(s, a) : arith::sub(a, s); }
};
// IEEE division: a zero divisor gives an infinity or NaN, as Div (Div.md) does.
template <bool ScalarFirst>
struct DivsOp {
    static constexpr const char* name = "Divs";
    using Scalar = AnyScalar;
    template <typename T>
    static T apply(T a, T s) { return ScalarFirst ? arith::div(s, a) : arith::div(a, s); }
};

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_FLEX_SCALAR_API(NAME, SUPPORTS, TYPES)                                                              \
    template <typename T, bool isSetMask = true>                                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count) { \
        static_assert(::ascrun::vec::on_950<T>, #NAME ": Ascend 950 only (" #NAME "（灵活标量位置）.md)");        \
        static_assert(::ascrun::vec::SUPPORTS<T>, #NAME ": T must be one of " TYPES " (Ascend 950)");             \
        ::ascrun::vec::scalar_count<::ascrun::vec::NAME##Op<false>, T, true>(dst, src, scalarValue, count);       \
    }                                                                                                             \
    template <typename T, bool isSetMask = true>                                                                  \
    void NAME(const LocalTensor<T>& dst, const T& scalarValue, const LocalTensor<T>& src, const int32_t& count) { \
        static_assert(::ascrun::vec::on_950<T>, #NAME ": Ascend 950 only (" #NAME "（灵活标量位置）.md)");        \
        static_assert(::ascrun::vec::SUPPORTS<T>, #NAME ": T must be one of " TYPES " (Ascend 950)");             \
        ::ascrun::vec::scalar_count<::ascrun::vec::NAME##Op<true>, T, true>(dst, src, scalarValue, count);        \
    }                                                                                                             \
    template <typename T, bool isSetMask = true>                                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,          \
              const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                                  \
        static_assert(::ascrun::vec::on_950<T>, #NAME ": Ascend 950 only (" #NAME "（灵活标量位置）.md)");        \
        static_assert(::ascrun::vec::SUPPORTS<T>, #NAME ": T must be one of " TYPES " (Ascend 950)");             \
        ::ascrun::vec::scalar_masked<::ascrun::vec::NAME##Op<false>, T, isSetMask>(                               \
            dst, src, scalarValue, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);           \
    }                                                                                                             \
    template <typename T, bool isSetMask = true>                                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const uint64_t mask[],  \
              const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                                  \
        static_assert(::ascrun::vec::on_950<T>, #NAME ": Ascend 950 only (" #NAME "（灵活标量位置）.md)");        \
        static_assert(::ascrun::vec::SUPPORTS<T>, #NAME ": T must be one of " TYPES " (Ascend 950)");             \
        ::ascrun::vec::scalar_masked<::ascrun::vec::NAME##Op<false>, T, isSetMask>(                               \
            dst, src, scalarValue, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);        \
    }
ASCRUN_FLEX_SCALAR_API(Subs, subs_supports, "int16_t, half, bfloat16_t, int32_t, float")
ASCRUN_FLEX_SCALAR_API(Divs, divs_supports, "half, float")
#undef ASCRUN_FLEX_SCALAR_API

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the element-wise math of the high-level API (高阶API/数学计算, each op's page
// <Op>接口/<Op>.md): Erf, Tanh, Sin, Cos, Tan, Sinh, Cosh, Ceil, Floor, which pyasc's nightly emits for
// asctile.erf, tanh, sin, cos, tan, sinh, cosh, ceil and floor.
//
// Each form of the reference: with a sharedTmpBuffer (calCount, or all of srcTensor) and with the
// framework's temporary space (calCount, or all of srcTensor); Ceil and Floor have the calCount forms
// only. T: half or float (every page: "支持的数据类型为：half、float"); isReuseSource is reserved or only
// lets the API overwrite srcTensor, which the cpu target does not. dst[i] = f(src[i]) for the first
// calCount elements, computed in float and rounded once to T: the device's polynomial approximations
// are not bit-exact with that (compare with a tolerance); Ceil and Floor are exact. The temporary space
// holds no result: its size (Get<Op>MaxMinTmpSize) is not checked, the cpu target needs none.
// Faults: an operand past its tensor (bounds policy; calCount is unsigned), src and dst sharing any
// byte ("不支持源操作数与目的操作数地址重叠"), a sharedTmpBuffer sharing bytes with either, an input
// outside the op's documented range (Sin, Cos, Tan: below).
#pragma once

#include <cmath>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace math {

// Each op: its name in messages, and f computed in float.
#define ASCRUN_MATH_OP(Name, f)                           \
    struct Name##Op {                                     \
        static constexpr const char* name = #Name;        \
        static float apply(float x) { return std::f(x); } \
    };
ASCRUN_MATH_OP(Erf, erf)
ASCRUN_MATH_OP(Tanh, tanh)
ASCRUN_MATH_OP(Sin, sin)
ASCRUN_MATH_OP(Cos, cos)
ASCRUN_MATH_OP(Tan, tan)
ASCRUN_MATH_OP(Sinh, sinh)
ASCRUN_MATH_OP(Cosh, cosh)
ASCRUN_MATH_OP(Ceil, ceil)
ASCRUN_MATH_OP(Floor, floor)
#undef ASCRUN_MATH_OP

// The input range an op's algorithm takes; outside it the device's result is undefined, so a fault.
struct Range {
    enum Kind { Any, Closed, Open } kind;
    float bound;  // [-bound, bound] or (-bound, bound)
};
constexpr Range kAnyInput{Range::Any, 0.0f};
// Sin.md, Cos.md: "输入源数据必须保持值域在[-65504.0, 65504.0]范围内" (Atlas A2/A3; on the Ascend 950 with
// the default POLYNOMIAL_APPROXIMATION, its RADIAN_REDUCTION "支持输入全值域").
constexpr Range kPolynomialInput{Range::Closed, 65504.0f};
// Tan.md: "输入数据限制在(-65504.0, 65504.0)范围内".
constexpr Range kTanInput{Range::Open, 65504.0f};

inline bool in_range(Range r, float x) {
    if (r.kind == Range::Any) return true;
    return r.kind == Range::Closed ? (x >= -r.bound && x <= r.bound) : (x > -r.bound && x < r.bound);
}

template <typename T>
constexpr bool supports = one_of_v<T, half, float>;

template <typename Op, typename T>
void elementwise(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                 const AscendC::LocalTensor<uint8_t>* tmp, int64_t count, Range range = kAnyInput) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, Op::name, count);  // the API sets its own mask, as isSetMask
    if (n == 0) return;
    elem_t<T>* d = ub_operand(b, Op::name, "dstTensor", dst, n);
    const elem_t<T>* s = ub_operand(b, Op::name, "srcTensor", src, n);
    const uint64_t bytes = n * sizeof(T);
    check_disjoint(Op::name, "dstTensor", dst.ascrun_addr(), dst.ascrun_addr() + bytes, "srcTensor",
                   src.ascrun_addr(), src.ascrun_addr() + bytes, "the source and destination may not overlap");
    if (tmp != nullptr) {
        const uint64_t tmp_bytes = tmp->GetSize();
        ub_operand(b, Op::name, "sharedTmpBuffer", *tmp, tmp_bytes);
        const uint64_t t = tmp->ascrun_addr();
        check_disjoint(Op::name, "sharedTmpBuffer", t, t + tmp_bytes, "dstTensor", dst.ascrun_addr(),
                       dst.ascrun_addr() + bytes, "the temporary space is the API's own");
        check_disjoint(Op::name, "sharedTmpBuffer", t, t + tmp_bytes, "srcTensor", src.ascrun_addr(),
                       src.ascrun_addr() + bytes, "the temporary space is the API's own");
    }
    for (uint64_t i = 0; i < n; ++i) {
        const float x = static_cast<float>(T(s[i]));
        if (!in_range(range, x)) {
            fault(format("%s: srcTensor[%llu] = %g is outside %c-%g, %g%c, the input range the reference "
                         "defines (%s.md)", Op::name, static_cast<unsigned long long>(i), static_cast<double>(x),
                         range.kind == Range::Closed ? '[' : '(', static_cast<double>(range.bound),
                         static_cast<double>(range.bound), range.kind == Range::Closed ? ']' : ')', Op::name));
        }
        d[i] = static_cast<T>(Op::apply(x));
    }
}

}  // namespace math
}  // namespace ascrun

namespace AscendC {

// Sin.md, Cos.md: the algorithm (a template parameter; the Ascend 950 only).
enum class SinAlgo { POLYNOMIAL_APPROXIMATION = 0, RADIAN_REDUCTION };
struct SinConfig {
    SinAlgo algo = SinAlgo::POLYNOMIAL_APPROXIMATION;
};
constexpr SinConfig defaultSinConfig{};
enum class CosAlgo { POLYNOMIAL_APPROXIMATION = 0, RADIAN_REDUCTION };
struct CosConfig {
    CosAlgo algo = CosAlgo::POLYNOMIAL_APPROXIMATION;
};
constexpr CosConfig defaultCosConfig{};

#define ASCRUN_MATH_COUNT_FORMS(NAME, TEMPLATE, RANGE)                                                            \
    TEMPLATE                                                                                                      \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                  \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {                            \
        static_assert(::ascrun::math::supports<T>, #NAME ": T must be half or float (" #NAME ".md)");           \
        ::ascrun::math::elementwise<::ascrun::math::NAME##Op, T>(dstTensor, srcTensor, &sharedTmpBuffer, calCount, \
                                                                 RANGE);                                          \
    }                                                                                                             \
    TEMPLATE                                                                                                      \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {       \
        static_assert(::ascrun::math::supports<T>, #NAME ": T must be half or float (" #NAME ".md)");           \
        ::ascrun::math::elementwise<::ascrun::math::NAME##Op, T>(dstTensor, srcTensor, nullptr, calCount, RANGE); \
    }
#define ASCRUN_MATH_WHOLE_FORMS(NAME, TEMPLATE, CALL)                                                             \
    TEMPLATE                                                                                                      \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                  \
              const LocalTensor<uint8_t>& sharedTmpBuffer) {                                                     \
        CALL(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());                                        \
    }                                                                                                             \
    TEMPLATE                                                                                                      \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {                                \
        CALL(dstTensor, srcTensor, srcTensor.GetSize());                                                         \
    }
#define ASCRUN_MATH_TEMPLATE template <typename T, bool isReuseSource = false>
#define ASCRUN_MATH_API(NAME, RANGE)                                                                              \
    ASCRUN_MATH_COUNT_FORMS(NAME, ASCRUN_MATH_TEMPLATE, RANGE)                                                    \
    ASCRUN_MATH_WHOLE_FORMS(NAME, ASCRUN_MATH_TEMPLATE, (NAME<T, isReuseSource>))

ASCRUN_MATH_API(Erf, ::ascrun::math::kAnyInput)
ASCRUN_MATH_API(Tanh, ::ascrun::math::kAnyInput)
ASCRUN_MATH_API(Tan, ::ascrun::math::kTanInput)
ASCRUN_MATH_API(Sinh, ::ascrun::math::kAnyInput)
ASCRUN_MATH_API(Cosh, ::ascrun::math::kAnyInput)
// Ceil.md, Floor.md: the calCount forms only; their input limit is for Atlas inference AI Cores only.
ASCRUN_MATH_COUNT_FORMS(Ceil, ASCRUN_MATH_TEMPLATE, ::ascrun::math::kAnyInput)
ASCRUN_MATH_COUNT_FORMS(Floor, ASCRUN_MATH_TEMPLATE, ::ascrun::math::kAnyInput)

// Sin, Cos: the range holds on Atlas A2/A3 always, on the Ascend 950 with the polynomial approximation.
#define ASCRUN_TRIG_RANGE(ALGO)                                                                                   \
    (::ascrun::mask::kAscend950 && config.algo == ALGO::RADIAN_REDUCTION ? ::ascrun::math::kAnyInput             \
                                                                         : ::ascrun::math::kPolynomialInput)
#define ASCRUN_TRIG_API(NAME, CONFIG, DEFAULT, ALGO)                                                              \
    ASCRUN_MATH_COUNT_FORMS(NAME, template <typename T ASCRUN_COMMA bool isReuseSource = false ASCRUN_COMMA       \
                                            const CONFIG& config = DEFAULT>, ASCRUN_TRIG_RANGE(ALGO))             \
    ASCRUN_MATH_WHOLE_FORMS(NAME, template <typename T ASCRUN_COMMA bool isReuseSource = false ASCRUN_COMMA       \
                                            const CONFIG& config = DEFAULT>, (NAME<T, isReuseSource, config>))
#define ASCRUN_COMMA ,
ASCRUN_TRIG_API(Sin, SinConfig, defaultSinConfig, SinAlgo)
ASCRUN_TRIG_API(Cos, CosConfig, defaultCosConfig, CosAlgo)
#undef ASCRUN_COMMA
#undef ASCRUN_TRIG_API
#undef ASCRUN_TRIG_RANGE
#undef ASCRUN_MATH_API
#undef ASCRUN_MATH_TEMPLATE
#undef ASCRUN_MATH_WHOLE_FORMS
#undef ASCRUN_MATH_COUNT_FORMS

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the element-wise math of the high-level API (高阶API/数学计算): Erf (Erf.md) and
// Tanh (Tanh.md), which pyasc's nightly emits for asctile.erf and asctile.tanh.
//
// Each form of the reference: with a sharedTmpBuffer (calCount, or all of srcTensor) and with the
// framework's temporary space (calCount, or all of srcTensor). T: half or float (Atlas A2/A3);
// isReuseSource is reserved ("该参数预留，传入默认值false即可"). dst[i] = f(src[i]) for the first
// calCount elements, computed in float and rounded once to T: the device's polynomial approximations
// are not bit-exact with that (compare with a tolerance). The temporary space holds no result: its
// size (GetErfMaxMinTmpSize / GetTanhMaxMinTmpSize) is not checked, the cpu target needs none.
// Faults: an operand past its tensor (bounds policy; calCount is unsigned), src and dst sharing any
// byte ("不支持源操作数与目的操作数地址重叠"), a sharedTmpBuffer sharing bytes with either.
#pragma once

#include <cmath>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace math {

struct ErfOp {
    static constexpr const char* name = "Erf";
    static float apply(float x) { return std::erf(x); }
};
struct TanhOp {
    static constexpr const char* name = "Tanh";
    static float apply(float x) { return std::tanh(x); }
};

template <typename T>
constexpr bool supports = one_of_v<T, half, float>;

template <typename Op, typename T>
void elementwise(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                 const AscendC::LocalTensor<uint8_t>* tmp, int64_t count) {
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
    for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<T>(Op::apply(static_cast<float>(T(s[i]))));
}

}  // namespace math
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_MATH_API(NAME)                                                                                     \
    template <typename T, bool isReuseSource = false>                                                            \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                  \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {                            \
        static_assert(::ascrun::math::supports<T>, #NAME ": T must be half or float (Atlas A2/A3)");            \
        ::ascrun::math::elementwise<::ascrun::math::NAME##Op, T>(dstTensor, srcTensor, &sharedTmpBuffer, calCount); \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                            \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                  \
              const LocalTensor<uint8_t>& sharedTmpBuffer) {                                                     \
        NAME<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());                      \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                            \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {       \
        static_assert(::ascrun::math::supports<T>, #NAME ": T must be half or float (Atlas A2/A3)");            \
        ::ascrun::math::elementwise<::ascrun::math::NAME##Op, T>(dstTensor, srcTensor, nullptr, calCount);       \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                            \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {                                \
        NAME<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());                                       \
    }

ASCRUN_MATH_API(Erf)
ASCRUN_MATH_API(Tanh)
#undef ASCRUN_MATH_API

}  // namespace AscendC

#pragma GCC visibility pop

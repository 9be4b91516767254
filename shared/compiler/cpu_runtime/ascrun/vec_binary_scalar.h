// ascrun cpu runtime: vector-scalar instructions dst[i] = op(src[i], scalar): Adds, Muls.
// Same structure as vec_binary.h: Op structs, one element loop, one driver per form.
#pragma once

#include "arith.h"
#include "tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

#define ASCRUN_SCALAR_OP(NAME, FN, ...)                                           \
    struct NAME##Op {                                                             \
        static constexpr const char* name = #NAME;                                \
        template <typename T>                                                     \
        static constexpr bool supports = one_of_v<T, __VA_ARGS__>;                \
        template <typename T>                                                     \
        static T apply(T a, T s) { return arith::FN(a, s); }                      \
    };
// Atlas A2/A3 dtypes (基础算术/Adds.md, Muls.md).
ASCRUN_SCALAR_OP(Adds, add, half, float, int16_t, int32_t)
ASCRUN_SCALAR_OP(Muls, mul, half, float, int16_t, int32_t)
#undef ASCRUN_SCALAR_OP

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
    for (; i < n; ++i) dst[i] = Op::template apply<T>(src[i], scalar);
}

template <typename Op, typename T, bool isSetMask>
void scalar_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, T scalar,
                  int32_t count) {
    BlockContext& b = enter();
    if (!isSetMask) {
        // With isSetMask = false the count is ignored and the mask comes from SetVectorMask,
        // which this runtime does not model yet: refuse rather than guess.
        fault(format("%s<%s, false>: the count form with isSetMask = false (mask set by SetVectorMask) is not "
                     "supported on the cpu target",
                     Op::name, TypeName<T>::c()));
    }
    const uint64_t n = checked_count(Op::name, count);
    if (n == 0) return;  // a NOP on Atlas A2/A3
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, n);
    const elem_t<T>* s = ub_operand(b, Op::name, "src", src, n);
    check_overlap(Op::name, "dst", dst, n, "src", src, n);
    scalar_elements<Op, T>(d, s, scalar, n);
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_SCALAR_API(NAME, TYPES)                                                                    \
    template <typename T, bool isSetMask = true>                                                         \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,                \
              const int32_t& count) {                                                                    \
        static_assert(::ascrun::vec::NAME##Op::supports<T>, #NAME ": T must be one of " TYPES            \
                                                                   " (Atlas A2/A3)");                    \
        ::ascrun::vec::scalar_count<::ascrun::vec::NAME##Op, T, isSetMask>(dst, src, scalarValue, count); \
    }
ASCRUN_SCALAR_API(Adds, "half, float, int16_t, int32_t")
ASCRUN_SCALAR_API(Muls, "half, float, int16_t, int32_t")
#undef ASCRUN_SCALAR_API

}  // namespace AscendC

#pragma GCC visibility pop

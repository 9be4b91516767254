// ascrun cpu runtime: binary vector instructions dst[i] = op(src0[i], src1[i]):
// Add, Sub, Mul, Div, Max, Min.
//
// Structure (for the forms still to come): each instruction is an Op struct (name, dtype rule,
// element function); `binary_elements` is the one element loop; a form (count now; mask/repeat
// later) is a driver that checks the operands once and calls the loop over contiguous runs.
#pragma once

#include "arith.h"
#include "tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

#define ASCRUN_BINARY_OP(NAME, FN, ...)                                           \
    struct NAME##Op {                                                             \
        static constexpr const char* name = #NAME;                                \
        template <typename T>                                                     \
        static constexpr bool supports = one_of_v<T, __VA_ARGS__>;                \
        template <typename T>                                                     \
        static T apply(T a, T b) { return arith::FN(a, b); }                      \
    };
// Atlas A2/A3 dtypes of the count form (基础算术/<Op>.md).
ASCRUN_BINARY_OP(Add, add, half, float, int16_t, int32_t)
ASCRUN_BINARY_OP(Sub, sub, half, float, int16_t, int32_t)
ASCRUN_BINARY_OP(Mul, mul, half, float, int16_t, int32_t)
ASCRUN_BINARY_OP(Div, div, half, float)
ASCRUN_BINARY_OP(Max, max, half, float, int16_t, int32_t)
ASCRUN_BINARY_OP(Min, min, half, float, int16_t, int32_t)
#undef ASCRUN_BINARY_OP

// The element loop: n contiguous elements, one 256-byte repeat at a time (a fixed trip count
// that -O2 vectorizes), then the tail. dst may equal a source or lie whole repeats below it.
template <typename Op, typename T>
inline void binary_elements(elem_t<T>* dst, const elem_t<T>* src0, const elem_t<T>* src1, uint64_t n) {
    constexpr uint32_t per_repeat = kRepeatBytes / sizeof(T);
    uint64_t i = 0;
    for (; i + per_repeat <= n; i += per_repeat) {
        elem_t<T>* d = dst + i;
        const elem_t<T>* a = src0 + i;
        const elem_t<T>* b = src1 + i;
        ASCRUN_IVDEP
        for (uint32_t j = 0; j < per_repeat; ++j) d[j] = Op::template apply<T>(a[j], b[j]);
    }
    for (; i < n; ++i) dst[i] = Op::template apply<T>(src0[i], src1[i]);
}

// Count form: the first `count` elements of each operand.
template <typename Op, typename T>
void binary_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                  const AscendC::LocalTensor<T>& src1, int32_t count) {
    BlockContext& b = enter();
    const uint64_t n = checked_count(Op::name, count);
    if (n == 0) return;  // a NOP on Atlas A2/A3
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, n);
    const elem_t<T>* s0 = ub_operand(b, Op::name, "src0", src0, n);
    const elem_t<T>* s1 = ub_operand(b, Op::name, "src1", src1, n);
    check_overlap(Op::name, "dst", dst, n, "src0", src0, n);
    check_overlap(Op::name, "dst", dst, n, "src1", src1, n);
    binary_elements<Op, T>(d, s0, s1, n);
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_BINARY_API(NAME, TYPES)                                                                    \
    template <typename T>                                                                                \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const int32_t& count) {                                                                    \
        static_assert(::ascrun::vec::NAME##Op::supports<T>, #NAME ": T must be one of " TYPES            \
                                                                   " (Atlas A2/A3)");                    \
        ::ascrun::vec::binary_count<::ascrun::vec::NAME##Op, T>(dst, src0, src1, count);                 \
    }
ASCRUN_BINARY_API(Add, "half, float, int16_t, int32_t")
ASCRUN_BINARY_API(Sub, "half, float, int16_t, int32_t")
ASCRUN_BINARY_API(Mul, "half, float, int16_t, int32_t")
ASCRUN_BINARY_API(Div, "half, float")
ASCRUN_BINARY_API(Max, "half, float, int16_t, int32_t")
ASCRUN_BINARY_API(Min, "half, float, int16_t, int32_t")
#undef ASCRUN_BINARY_API

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: unary vector instructions dst[i] = op(src[i]):
// Abs, Exp, Ln, Sqrt, Rsqrt, Reciprocal, Relu, Not.
// Same structure as vector/binary.h (count form; mask + repeat forms with UnaryRepeatParams).
// Exp/Ln/Sqrt/Rsqrt/Reciprocal evaluate in float and round once to T; the hardware's own
// approximations are not bit-exact with that (compare with a tolerance).
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

#define ASCRUN_UNARY_OP(NAME, FN, ...)                                            \
    struct NAME##Op {                                                             \
        static constexpr const char* name = #NAME;                                \
        template <typename T>                                                     \
        static constexpr bool supports = one_of_v<T, __VA_ARGS__>;                \
        template <typename T>                                                     \
        static T apply(T a) { return arith::FN(a); }                              \
    };
// Atlas A2/A3 dtypes (基础算术/<Op>.md, 逻辑计算/Not.md).
ASCRUN_UNARY_OP(Abs, abs, half, float)
ASCRUN_UNARY_OP(Exp, exp, half, float)
ASCRUN_UNARY_OP(Ln, ln, half, float)
ASCRUN_UNARY_OP(Sqrt, sqrt, half, float)
ASCRUN_UNARY_OP(Rsqrt, rsqrt, half, float)
ASCRUN_UNARY_OP(Reciprocal, reciprocal, half, float)
ASCRUN_UNARY_OP(Relu, relu, half, float, int32_t)
ASCRUN_UNARY_OP(Not, bnot, int16_t, uint16_t)
#undef ASCRUN_UNARY_OP

template <typename Op, typename T>
inline void unary_elements(elem_t<T>* dst, const elem_t<T>* src, uint64_t n) {
    constexpr uint32_t per_repeat = kRepeatBytes / sizeof(T);
    uint64_t i = 0;
    for (; i + per_repeat <= n; i += per_repeat) {
        elem_t<T>* d = dst + i;
        const elem_t<T>* a = src + i;
        ASCRUN_IVDEP
        for (uint32_t j = 0; j < per_repeat; ++j) d[j] = Op::template apply<T>(a[j]);
    }
    ASCRUN_IVDEP
    for (; i < n; ++i) dst[i] = Op::template apply<T>(src[i]);
}

template <typename Op, typename T>
void unary_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, int32_t count) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, Op::name, count);
    if (n == 0) return;
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, n);
    const elem_t<T>* s = ub_operand(b, Op::name, "src", src, n);
    check_overlap(Op::name, "dst", dst, n, "src", src, n);
    unary_elements<Op, T>(d, s, n);
}

template <typename Op, typename T, bool isSetMask>
void unary_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, mask::Arg arg, uint64_t m0,
                  uint64_t m1, uint8_t repeat, const AscendC::UnaryRepeatParams& rp) {
    BlockContext& b = enter();
    const uint64_t blk[2] = {rp.dstBlkStride, rp.srcBlkStride};
    const uint64_t rep[2] = {rp.dstRepStride, rp.srcRepStride};
    mask::Plan p;
    if (!mask::make_plan<T>(b, Op::name, isSetMask, arg, m0, m1, repeat, 2, blk, rep, p)) return;
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, p.extent[0]);
    const elem_t<T>* s = ub_operand(b, Op::name, "src", src, p.extent[1]);
    mask::check_overlap(Op::name, p, 0, dst, 1, "src", src, false);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) { unary_elements<Op, T>(d + o[0], s + o[1], len); });
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_UNARY_API(NAME, TYPES)                                                                       \
    template <typename T>                                                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {                \
        static_assert(::ascrun::vec::NAME##Op::supports<T>, #NAME ": T must be one of " TYPES " (Atlas A2/A3)"); \
        ::ascrun::vec::unary_count<::ascrun::vec::NAME##Op, T>(dst, src, count);                           \
    }                                                                                                      \
    template <typename T, bool isSetMask = true>                                                           \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTime, \
              const UnaryRepeatParams& repeatParams) {                                                     \
        static_assert(::ascrun::vec::NAME##Op::supports<T>, #NAME ": T must be one of " TYPES " (Atlas A2/A3)"); \
        ::ascrun::vec::unary_masked<::ascrun::vec::NAME##Op, T, isSetMask>(                                \
            dst, src, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);                 \
    }                                                                                                      \
    template <typename T, bool isSetMask = true>                                                           \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                 \
              const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                           \
        static_assert(::ascrun::vec::NAME##Op::supports<T>, #NAME ": T must be one of " TYPES " (Atlas A2/A3)"); \
        ::ascrun::vec::unary_masked<::ascrun::vec::NAME##Op, T, isSetMask>(                                \
            dst, src, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);              \
    }
ASCRUN_UNARY_API(Abs, "half, float")
ASCRUN_UNARY_API(Exp, "half, float")
ASCRUN_UNARY_API(Ln, "half, float")
ASCRUN_UNARY_API(Sqrt, "half, float")
ASCRUN_UNARY_API(Rsqrt, "half, float")
ASCRUN_UNARY_API(Reciprocal, "half, float")
ASCRUN_UNARY_API(Relu, "half, float, int32_t")
ASCRUN_UNARY_API(Not, "int16_t, uint16_t")
#undef ASCRUN_UNARY_API

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: binary vector instructions dst[i] = op(src0[i], src1[i]):
// Add, Sub, Mul, Div, Max, Min, And, Or, and AddRelu, SubRelu (复合计算/AddRelu.md, SubRelu.md:
// Relu(src0 + src1), Relu(src0 - src1), the sum rounded or wrapped in T first).
//
// Each instruction is an Op struct (name, dtype rule, element function); `binary_elements` is the
// one element loop; each call form is a driver that checks the operands once and runs the loop
// over contiguous runs: the count form over the first `count` elements, the mask + repeat forms
// (BinaryRepeatParams, continuous or bit mask, normal or counter mode) over the runs of vector/mask.h.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

// `accumulate`: dst may overlap src1 with a zero repeat stride (通用地址重叠约束, for
// Add/Sub/Mul/Max/Min/AddRelu/SubRelu on half/int32_t/float).
// A2, A950, COUNT_ONLY: the dtype table (ASCRUN_DTYPE_TABLE); type lists are parenthesized, (void) for none.
#define ASCRUN_BINARY_OP(NAME, FN, ACC, A2, A950, COUNT_ONLY)                                            \
    struct NAME##Op {                                                                                    \
        static constexpr const char* name = #NAME;                                                       \
        ASCRUN_DTYPE_TABLE(A2, A950, COUNT_ONLY)                                                         \
        template <typename T>                                                                            \
        static constexpr bool accumulate = ACC && one_of_v<T, half, int32_t, float>;                     \
        template <typename T>                                                                            \
        static T apply(T a, T b) { return arith::FN(a, b); }                                             \
    };
// Atlas A2/A3 dtypes (基础算术/<Op>.md, 逻辑计算/And.md, Or.md, 复合计算/AddRelu.md, SubRelu.md).
// Ascend 950 dtypes: 基础算术/Add.md, Sub.md, Mul.md, Max.md, Min.md "针对Ascend 950PR/Ascend 950DT，T支持
// 的数据类型为" (complex32/complex64 are not modelled); Div, And, Or, AddRelu, SubRelu keep Atlas A2/A3's.
ASCRUN_BINARY_OP(Add, add, true, (half, float, int16_t, int32_t),
                 (int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t),
                 (int8_t, uint8_t, int64_t, uint64_t))
ASCRUN_BINARY_OP(Sub, sub, true, (half, float, int16_t, int32_t),
                 (int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t),
                 (int8_t, uint8_t, int64_t, uint64_t))
ASCRUN_BINARY_OP(Mul, mul, true, (half, float, int16_t, int32_t),
                 (int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t),
                 (int64_t, uint64_t))
ASCRUN_BINARY_OP(Div, div, false, (half, float), (half, float), (void))
ASCRUN_BINARY_OP(Max, max, true, (half, float, int16_t, int32_t),
                 (int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t),
                 (int8_t, uint8_t, int64_t, uint64_t))
ASCRUN_BINARY_OP(Min, min, true, (half, float, int16_t, int32_t),
                 (int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t),
                 (int8_t, uint8_t, int64_t, uint64_t))
ASCRUN_BINARY_OP(And, band, false, (int16_t, uint16_t), (int16_t, uint16_t), (void))
ASCRUN_BINARY_OP(Or, bor, false, (int16_t, uint16_t), (int16_t, uint16_t), (void))
ASCRUN_BINARY_OP(AddRelu, add_relu, true, (half, float, int16_t), (half, float, int16_t), (void))
ASCRUN_BINARY_OP(SubRelu, sub_relu, true, (half, float, int16_t), (half, float, int16_t), (void))
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
    ASCRUN_IVDEP
    for (; i < n; ++i) dst[i] = Op::template apply<T>(src0[i], src1[i]);
}

// Count form: the first `count` elements of each operand.
template <typename Op, typename T>
void binary_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                  const AscendC::LocalTensor<T>& src1, int32_t count) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, Op::name, count);
    if (n == 0) return;  // a NOP on Atlas A2/A3
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, n);
    const elem_t<T>* s0 = ub_operand(b, Op::name, "src0", src0, n);
    const elem_t<T>* s1 = ub_operand(b, Op::name, "src1", src1, n);
    check_overlap(Op::name, "dst", dst, n, "src0", src0, n);
    check_overlap(Op::name, "dst", dst, n, "src1", src1, n);
    binary_elements<Op, T>(d, s0, s1, n);
}

// Mask + repeat forms.
template <typename Op, typename T, bool isSetMask>
void binary_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                   const AscendC::LocalTensor<T>& src1, mask::Arg arg, uint64_t m0, uint64_t m1, uint8_t repeat,
                   const AscendC::BinaryRepeatParams& rp) {
    BlockContext& b = enter();
    const uint64_t blk[3] = {rp.dstBlkStride, rp.src0BlkStride, rp.src1BlkStride};
    const uint64_t rep[3] = {rp.dstRepStride, rp.src0RepStride, rp.src1RepStride};
    mask::Plan p;
    if (!mask::make_plan<T>(b, Op::name, isSetMask, arg, m0, m1, repeat, 3, blk, rep, p)) return;
    elem_t<T>* d = ub_operand(b, Op::name, "dst", dst, p.extent[0]);
    const elem_t<T>* s0 = ub_operand(b, Op::name, "src0", src0, p.extent[1]);
    const elem_t<T>* s1 = ub_operand(b, Op::name, "src1", src1, p.extent[2]);
    mask::check_overlap(Op::name, p, 0, dst, 1, "src0", src0, false);
    mask::check_overlap(Op::name, p, 0, dst, 2, "src1", src1, Op::template accumulate<T>);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
        binary_elements<Op, T>(d + o[0], s0 + o[1], s1 + o[2], len);
    });
}

// The count form for the dtypes kernels use most, compiled once per toolchain (vector/binary.cpp):
// a kernel's build then only calls it (about a sixth of a small kernel's build, bench/build_time.py).
#define ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, OP, T)                                                        \
    EXTERN template void binary_count<OP, T>(const AscendC::LocalTensor<T>&, const AscendC::LocalTensor<T>&,\
                                             const AscendC::LocalTensor<T>&, int32_t);
#define ASCRUN_BINARY_COUNT_INSTANCES(EXTERN)                                                              \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, AddOp, half)                                                      \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, AddOp, float)                                                     \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, AddOp, int32_t)                                                   \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, SubOp, half)                                                      \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, SubOp, float)                                                     \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, SubOp, int32_t)                                                   \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MulOp, half)                                                      \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MulOp, float)                                                     \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MulOp, int32_t)                                                   \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, DivOp, half)                                                      \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, DivOp, float)                                                     \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MaxOp, half)                                                      \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MaxOp, float)                                                     \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MinOp, half)                                                      \
    ASCRUN_BINARY_COUNT_INSTANCE(EXTERN, MinOp, float)
ASCRUN_BINARY_COUNT_INSTANCES(extern)

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

// TYPES: Atlas A2/A3's table; TYPES_950: Ascend 950's, as the message says it.
#define ASCRUN_BINARY_TYPES(NAME, TYPES, TYPES_950)                                                      \
    static_assert(::ascrun::mask::kAscend950 || ::ascrun::vec::NAME##Op::supports<T>,                    \
                  #NAME ": T must be one of " TYPES " (Atlas A2/A3)");                                   \
    static_assert(!::ascrun::mask::kAscend950 || ::ascrun::vec::NAME##Op::supports<T>,                   \
                  #NAME ": T must be one of " TYPES_950 " (Ascend 950)")
#define ASCRUN_BINARY_MASKED_TYPES(NAME)                                                                 \
    static_assert(!::ascrun::vec::NAME##Op::count_only<T>,                                               \
                  #NAME ": on Ascend 950 this T takes the count form only (" #NAME ".md)")
#define ASCRUN_BINARY_API(NAME, TYPES, TYPES_950)                                                         \
    template <typename T>                                                                                \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const int32_t& count) {                                                                    \
        ASCRUN_BINARY_TYPES(NAME, TYPES, TYPES_950);                                                     \
        ::ascrun::vec::binary_count<::ascrun::vec::NAME##Op, T>(dst, src0, src1, count);                 \
    }                                                                                                    \
    template <typename T, bool isSetMask = true>                                                         \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {         \
        ASCRUN_BINARY_TYPES(NAME, TYPES, TYPES_950);                                                     \
        ASCRUN_BINARY_MASKED_TYPES(NAME);                                                                \
        ::ascrun::vec::binary_masked<::ascrun::vec::NAME##Op, T, isSetMask>(                             \
            dst, src0, src1, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);        \
    }                                                                                                    \
    template <typename T, bool isSetMask = true>                                                         \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,         \
              const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) { \
        ASCRUN_BINARY_TYPES(NAME, TYPES, TYPES_950);                                                     \
        ASCRUN_BINARY_MASKED_TYPES(NAME);                                                                \
        ::ascrun::vec::binary_masked<::ascrun::vec::NAME##Op, T, isSetMask>(                             \
            dst, src0, src1, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);     \
    }
#define ASCRUN_950_TYPES \
    "int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t"
#define ASCRUN_COUNT_ONLY "; int8_t, uint8_t, int64_t, uint64_t in the count form only"
ASCRUN_BINARY_API(Add, "half, float, int16_t, int32_t", ASCRUN_950_TYPES ASCRUN_COUNT_ONLY)
ASCRUN_BINARY_API(Sub, "half, float, int16_t, int32_t", ASCRUN_950_TYPES ASCRUN_COUNT_ONLY)
ASCRUN_BINARY_API(Mul, "half, float, int16_t, int32_t",
                  "int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t; int64_t, uint64_t "
                  "in the count form only")
ASCRUN_BINARY_API(Div, "half, float", "half, float (the runtime keeps Atlas A2/A3's table)")
ASCRUN_BINARY_API(Max, "half, float, int16_t, int32_t", ASCRUN_950_TYPES ASCRUN_COUNT_ONLY)
ASCRUN_BINARY_API(Min, "half, float, int16_t, int32_t", ASCRUN_950_TYPES ASCRUN_COUNT_ONLY)
ASCRUN_BINARY_API(And, "int16_t, uint16_t", "int16_t, uint16_t (the runtime keeps Atlas A2/A3's table)")
ASCRUN_BINARY_API(Or, "int16_t, uint16_t", "int16_t, uint16_t (the runtime keeps Atlas A2/A3's table)")
ASCRUN_BINARY_API(AddRelu, "half, float, int16_t", "half, float, int16_t (the runtime keeps Atlas A2/A3's table)")
ASCRUN_BINARY_API(SubRelu, "half, float, int16_t", "half, float, int16_t (the runtime keeps Atlas A2/A3's table)")
#undef ASCRUN_COUNT_ONLY
#undef ASCRUN_950_TYPES
#undef ASCRUN_BINARY_MASKED_TYPES
#undef ASCRUN_BINARY_TYPES
#undef ASCRUN_BINARY_API

}  // namespace AscendC

#pragma GCC visibility pop

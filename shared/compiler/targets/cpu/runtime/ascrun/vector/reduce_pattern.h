// ascrun cpu runtime: the high-level reductions of a 2-D tensor along one axis (高阶API/归约操作:
// ReduceProd接口/ReduceProd.md, ReduceMax接口/ReduceMax-91.md, ReduceMin接口/ReduceMin-92.md,
// ReduceSum接口/ReduceSum-90.md), which pyasc's nightly emits for asctile.reduce_prod/max/min/sum over
// one dimension: `ReduceX<T, AscendC::Pattern::Reduce::AR|RA, isReuseSource>(dst, src[, sharedTmpBuffer],
// srcShape, srcInnerPad)`.
//
// srcShape = {rows, cols}, src row-major (each row cols elements: the pages' inner axis, padded by the
// caller to 32 bytes where srcInnerPad says so). AR reduces each row (dst: rows elements), RA each
// column (dst: cols elements). The reduction runs in T in index order (half and bfloat16_t round after
// each step, integers wrap): the device's order differs, so a float sum or product may differ in its
// last bits; max/min are exact. The temporary space holds no result and its size is not checked.
// Faults: an empty shape, srcInnerPad false or an inner axis not a multiple of 32 bytes on Atlas A2/A3
// (the pages: "当前只支持true"; "输入向量的内轴必须为32字节的整数倍"), an operand past its tensor,
// src and dst sharing bytes ("不支持源操作数与目的操作数地址重叠"), a sharedTmpBuffer sharing bytes
// with either. isReuseSource lets the device overwrite src; the cpu target leaves it as it was.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
namespace Pattern {
namespace Reduce {
// The pages: "pattern当前只支持取值为AR和RA" (A: a kept axis, R: the reduced one).
struct AR {
    static constexpr bool kReduceRows = false;
};
struct RA {
    static constexpr bool kReduceRows = true;
};
}  // namespace Reduce
}  // namespace Pattern
}  // namespace AscendC

namespace ascrun {
namespace reduce2d {

// Each reduction: its name and page in messages, and how two elements combine.
#define ASCRUN_REDUCE_OP(OP, NAME, PAGE, COMBINE)                          \
    struct OP {                                                            \
        static constexpr const char* name = NAME;                          \
        static constexpr const char* page = PAGE;                          \
        template <typename T>                                              \
        static T apply(T a, T b) { return arith::COMBINE(a, b); }          \
    };
ASCRUN_REDUCE_OP(ProdOp, "ReduceProd", "ReduceProd.md", mul)
ASCRUN_REDUCE_OP(SumOp, "ReduceSum", "ReduceSum-90.md", add)
ASCRUN_REDUCE_OP(MaxOp, "ReduceMax", "ReduceMax-91.md", max)
ASCRUN_REDUCE_OP(MinOp, "ReduceMin", "ReduceMin-92.md", min)
#undef ASCRUN_REDUCE_OP

// ReduceProd.md: "支持的数据类型为：float" (every product).
template <typename T>
constexpr bool prod_supports = std::is_same<T, float>::value;
// ReduceSum-90.md: float on Atlas A2/A3; int32_t, uint32_t, float, int64_t, uint64_t on the Ascend 950.
template <typename T>
constexpr bool sum_supports = mask::kAscend950 ? one_of_v<T, int32_t, uint32_t, float, int64_t, uint64_t>
                                               : std::is_same<T, float>::value;
// ReduceMax-91.md, ReduceMin-92.md: half, float on Atlas A2/A3; on the Ascend 950 also 8-, 16-, 32- and
// 64-bit integers and bfloat16_t.
template <typename T>
constexpr bool max_min_supports =
    mask::kAscend950 ? one_of_v<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float,
                                int64_t, uint64_t>
                     : one_of_v<T, half, float>;

template <typename Pattern>
constexpr bool is_pattern = std::is_same<Pattern, AscendC::Pattern::Reduce::AR>::value ||
                            std::is_same<Pattern, AscendC::Pattern::Reduce::RA>::value;

template <typename Op, typename T, typename Pattern>
void reduce(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
            const AscendC::LocalTensor<uint8_t>* tmp, const uint32_t srcShape[], bool srcInnerPad) {
    BlockContext& b = enter();
    const uint64_t rows = srcShape[0], cols = srcShape[1];
    if (rows == 0 || cols == 0) {
        fault(format("%s: srcShape {%llu, %llu} has no elements", Op::name, static_cast<unsigned long long>(rows),
                     static_cast<unsigned long long>(cols)));
    }
    if (!mask::kAscend950) {  // on the 950 srcInnerPad is reserved: the API works it out from srcShape
        if (!srcInnerPad) {
            fault(format("%s: srcInnerPad must be true on Atlas A2/A3 (%s: \"当前只支持true\")", Op::name, Op::page));
        }
        if (cols * sizeof(T) % 32 != 0) {
            fault(format("%s: the inner axis of srcShape {%llu, %llu} is %llu bytes, not a multiple of 32 (with "
                         "srcInnerPad the caller pads it: %s)", Op::name, static_cast<unsigned long long>(rows),
                         static_cast<unsigned long long>(cols), static_cast<unsigned long long>(cols * sizeof(T)),
                         Op::page));
        }
    }
    const uint64_t n_src = rows * cols, n_dst = Pattern::kReduceRows ? cols : rows;
    elem_t<T>* d = ub_operand(b, Op::name, "dstTensor", dst, n_dst);
    const elem_t<T>* s = ub_operand(b, Op::name, "srcTensor", src, n_src);
    const uint64_t d_addr = dst.ascrun_addr(), s_addr = src.ascrun_addr();
    check_disjoint(Op::name, "dstTensor", d_addr, d_addr + n_dst * sizeof(T), "srcTensor", s_addr,
                   s_addr + n_src * sizeof(T), "the source and destination may not overlap");
    if (tmp != nullptr) {
        const uint64_t tmp_bytes = tmp->GetSize();
        ub_operand(b, Op::name, "sharedTmpBuffer", *tmp, tmp_bytes);
        const uint64_t t = tmp->ascrun_addr();
        check_disjoint(Op::name, "sharedTmpBuffer", t, t + tmp_bytes, "dstTensor", d_addr, d_addr + n_dst * sizeof(T),
                       "the temporary space is the API's own");
        check_disjoint(Op::name, "sharedTmpBuffer", t, t + tmp_bytes, "srcTensor", s_addr, s_addr + n_src * sizeof(T),
                       "the temporary space is the API's own");
    }
    if (Pattern::kReduceRows) {  // RA: column j over the rows
        for (uint64_t j = 0; j < cols; ++j) {
            T acc = T(s[j]);
            for (uint64_t i = 1; i < rows; ++i) acc = Op::template apply<T>(acc, T(s[i * cols + j]));
            d[j] = acc;
        }
    } else {  // AR: row i over its columns
        for (uint64_t i = 0; i < rows; ++i) {
            T acc = T(s[i * cols]);
            for (uint64_t j = 1; j < cols; ++j) acc = Op::template apply<T>(acc, T(s[i * cols + j]));
            d[i] = acc;
        }
    }
}

}  // namespace reduce2d
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_REDUCE_PATTERN_API(NAME, OP, SUPPORTS, TYPES)                                                       \
    template <class T, class pattern, bool isReuseSource = false>                                                 \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                  \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad) {        \
        static_assert(::ascrun::reduce2d::is_pattern<pattern>, #NAME ": pattern must be "                        \
                                                               "AscendC::Pattern::Reduce::AR or RA");            \
        static_assert(::ascrun::reduce2d::SUPPORTS<T>, #NAME ": T must be one of " TYPES);                      \
        ::ascrun::reduce2d::reduce<::ascrun::reduce2d::OP, T, pattern>(dstTensor, srcTensor, &sharedTmpBuffer,   \
                                                                       srcShape, srcInnerPad);                    \
    }                                                                                                             \
    template <class T, class pattern, bool isReuseSource = false>                                                 \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],       \
              bool srcInnerPad) {                                                                                 \
        static_assert(::ascrun::reduce2d::is_pattern<pattern>, #NAME ": pattern must be "                        \
                                                               "AscendC::Pattern::Reduce::AR or RA");            \
        static_assert(::ascrun::reduce2d::SUPPORTS<T>, #NAME ": T must be one of " TYPES);                      \
        ::ascrun::reduce2d::reduce<::ascrun::reduce2d::OP, T, pattern>(dstTensor, srcTensor, nullptr, srcShape, \
                                                                       srcInnerPad);                              \
    }
ASCRUN_REDUCE_PATTERN_API(ReduceProd, ProdOp, prod_supports, "float (ReduceProd.md)")
ASCRUN_REDUCE_PATTERN_API(ReduceSum, SumOp, sum_supports,
                          "float (Atlas A2/A3); int32_t, uint32_t, float, int64_t, uint64_t (Ascend 950) "
                          "(ReduceSum-90.md)")
ASCRUN_REDUCE_PATTERN_API(ReduceMax, MaxOp, max_min_supports,
                          "half, float (Atlas A2/A3); 8- to 64-bit integers, half, bfloat16_t, float (Ascend 950) "
                          "(ReduceMax-91.md)")
ASCRUN_REDUCE_PATTERN_API(ReduceMin, MinOp, max_min_supports,
                          "half, float (Atlas A2/A3); 8- to 64-bit integers, half, bfloat16_t, float (Ascend 950) "
                          "(ReduceMin-92.md)")
#undef ASCRUN_REDUCE_PATTERN_API

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: Duplicate (数据填充/Duplicate.md): dst[i] = scalar, in the count form and the
// mask + repeat forms (dstBlockStride, dstRepeatStride in 32-byte blocks).
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

template <typename T>
constexpr bool duplicate_supports = one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;

template <typename T>
inline void fill_elements(elem_t<T>* dst, T v, uint64_t n) {
    ASCRUN_IVDEP
    for (uint64_t i = 0; i < n; ++i) dst[i] = v;
}

template <typename T>
void duplicate_count(const AscendC::LocalTensor<T>& dst, T v, int32_t count) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, "Duplicate", count);
    if (n == 0) return;
    fill_elements<T>(ub_operand(b, "Duplicate", "dst", dst, n), v, n);
}

template <typename T, bool isSetMask>
void duplicate_masked(const AscendC::LocalTensor<T>& dst, T v, mask::Arg arg, uint64_t m0, uint64_t m1,
                      uint8_t repeat, uint16_t blk_stride, uint8_t rep_stride) {
    BlockContext& b = enter();
    const uint64_t blk[1] = {blk_stride};
    const uint64_t rep[1] = {rep_stride};
    mask::Plan p;
    if (!mask::make_plan<T>(b, "Duplicate", isSetMask, arg, m0, m1, repeat, 1, blk, rep, p)) return;
    elem_t<T>* d = ub_operand(b, "Duplicate", "dst", dst, p.extent[0]);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) { fill_elements<T>(d + o[0], v, len); });
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_DUP_CHECK                                                                                   \
    static_assert(::ascrun::vec::duplicate_supports<T>, "Duplicate: T must be one of int16_t, uint16_t, "  \
                                                        "half, bfloat16_t, int32_t, uint32_t, float (Atlas A2/A3)")

template <typename T>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
    ASCRUN_DUP_CHECK;
    ::ascrun::vec::duplicate_count<T>(dst, scalarValue, count);
}
template <typename T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    ASCRUN_DUP_CHECK;
    ::ascrun::vec::duplicate_masked<T, isSetMask>(dst, scalarValue, ::ascrun::mask::Arg::Continuous, mask, 0,
                                                  repeatTime, dstBlockStride, dstRepeatStride);
}
template <typename T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[], const uint8_t repeatTime,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    ASCRUN_DUP_CHECK;
    ::ascrun::vec::duplicate_masked<T, isSetMask>(dst, scalarValue, ::ascrun::mask::Arg::Bits, mask[0], mask[1],
                                                  repeatTime, dstBlockStride, dstRepeatStride);
}
#undef ASCRUN_DUP_CHECK

}  // namespace AscendC

#pragma GCC visibility pop

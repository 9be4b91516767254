// ascrun cpu runtime: Copy, UB -> UB through the vector unit (数据搬运/UB与UB数据搬运):
// the continuous form Copy(dst, src, count) and the mask + repeat forms with CopyRepeatParams
// (dstStride/srcStride: blocks within a repeat; dstRepeatSize/srcRepeatSize: between repeats; all in
// 32-byte blocks). Element types: int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

template <typename T>
constexpr bool copy_supports = one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;

template <typename T>
inline void copy_elements(elem_t<T>* dst, const elem_t<T>* src, uint64_t n) {
    ASCRUN_IVDEP
    for (uint64_t i = 0; i < n; ++i) dst[i] = src[i];
}

template <typename T>
void copy_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t count) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, "Copy", count);
    if (n == 0) return;
    elem_t<T>* d = ub_operand(b, "Copy", "dst", dst, n);
    const elem_t<T>* s = ub_operand(b, "Copy", "src", src, n);
    check_overlap("Copy", "dst", dst, n, "src", src, n);
    if (d != s) copy_elements<T>(d, s, n);
}

template <typename T, bool isSetMask>
void copy_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, mask::Arg arg, uint64_t m0,
                 uint64_t m1, uint8_t repeat, const AscendC::CopyRepeatParams& rp) {
    BlockContext& b = enter();
    if (rp.dstRepeatSize > 4095 || rp.srcRepeatSize > 4095) {
        fault(format("Copy<%s>: dstRepeatSize %u / srcRepeatSize %u must be in [0, 4095]", TypeName<T>::c(),
                     rp.dstRepeatSize, rp.srcRepeatSize));
    }
    const uint64_t blk[2] = {rp.dstStride, rp.srcStride};
    const uint64_t rep[2] = {rp.dstRepeatSize, rp.srcRepeatSize};
    mask::Plan p;
    if (!mask::make_plan<T>(b, "Copy", isSetMask, arg, m0, m1, repeat, 2, blk, rep, p)) return;
    elem_t<T>* d = ub_operand(b, "Copy", "dst", dst, p.extent[0]);
    const elem_t<T>* s = ub_operand(b, "Copy", "src", src, p.extent[1]);
    mask::check_overlap("Copy", p, 0, dst, 1, "src", src, false);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) { copy_elements<T>(d + o[0], s + o[1], len); });
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_COPY_CHECK                                                                              \
    static_assert(::ascrun::vec::copy_supports<T>, "Copy: T must be one of int16_t, uint16_t, half, "   \
                                                   "bfloat16_t, int32_t, uint32_t, float (Atlas A2/A3)")

template <typename T>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    ASCRUN_COPY_CHECK;
    ::ascrun::vec::copy_count<T>(dst, src, count);
}
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime,
          const CopyRepeatParams& repeatParams) {
    ASCRUN_COPY_CHECK;
    ::ascrun::vec::copy_masked<T, isSetMask>(dst, src, ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime,
                                             repeatParams);
}
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime,
          const CopyRepeatParams& repeatParams) {
    ASCRUN_COPY_CHECK;
    ::ascrun::vec::copy_masked<T, isSetMask>(dst, src, ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime,
                                             repeatParams);
}
#undef ASCRUN_COPY_CHECK

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: Duplicate (数据填充/Duplicate.md): dst[i] = scalar, in the count form and the
// mask + repeat forms (dstBlockStride, dstRepeatStride in 32-byte blocks); on Ascend 950 (__NPU_ARCH__
// 3510) also the count form from a LocalTensor, which fills dst with src[0] ("该函数原型，仅支持Ascend
// 950PR/Ascend 950DT"; pyasc-dev's asctile emits it for a tile broadcast from one element). On Atlas
// A2/A3 that form does not compile.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

template <typename T>
constexpr bool duplicate_supports = one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;

// The LocalTensor form: Ascend 950 only, and there also the b8 and b64 types ("仅支持tensor前n个数据计算接口").
template <typename T>
constexpr bool duplicate_from_tensor_supports =
    mask::kAscend950 && (duplicate_supports<T> || one_of_v<T, int8_t, uint8_t, int64_t, uint64_t>);

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

template <typename T>
void duplicate_from_tensor(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, int32_t count) {
    constexpr const char* api = "Duplicate(dst, src LocalTensor, count)";
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, api, count);
    if (n == 0) return;
    const T v = *reinterpret_cast<const T*>(ub_operand(b, api, "src", src, 1));
    fill_elements<T>(ub_operand(b, api, "dst", dst, n), v, n);
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
template <typename T>
void Duplicate(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(::ascrun::vec::duplicate_from_tensor_supports<T>,
                  "Duplicate(dst, src LocalTensor, count): Ascend 950 (__NPU_ARCH__ 3510) only, T one of int8_t, "
                  "uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t");
    ::ascrun::vec::duplicate_from_tensor<T>(dst, src, count);
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

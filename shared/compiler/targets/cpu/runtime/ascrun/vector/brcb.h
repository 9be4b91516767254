// ascrun cpu runtime: Brcb (数据填充/Brcb.md): each repeat reads 8 consecutive src elements and fills
// one 32-byte dst block with each: block j of repeat r (at r * dstRepStride + j * dstBlkStride blocks)
// = src[r * 8 + j]. src is read contiguously (no strides). Resets the mask register, as the Atlas
// A2/A3 implementation does. Faults where the reference leaves the result undefined: dstBlkStride 0,
// dst overlapping src, counter mode.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

template <typename T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
          const BrcbRepeatParams& repeatParams) {
    static_assert(::ascrun::one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                  "Brcb: T must be one of int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float (Atlas A2/A3)");
    ascrun::BlockContext& b = ascrun::enter();
    if (b.counter_mode) {
        ascrun::fault("Brcb: the reference does not define Brcb in counter mode (the implementation resets the mask "
                      "to a full normal-mode mask); call SetMaskNorm first");
    }
    if (repeatParams.dstBlkStride == 0) {
        ascrun::fault("Brcb: dstBlkStride 0 is undefined (BrcbRepeatParams: dstBlkStride must not be 0)");
    }
    b.mask_lo = b.mask_hi = ~uint64_t(0);  // ResetMask
    if (repeatTime == 0) return;           // a NOP on Atlas A2/A3
    constexpr uint64_t epb = ascrun::mask::per_block<T>;
    const uint64_t blk = repeatParams.dstBlkStride, rep = repeatParams.dstRepStride, n_src = uint64_t(repeatTime) * 8;
    const uint64_t n_dst = ((repeatTime - 1) * rep + 7 * blk + 1) * epb;
    ascrun::elem_t<T>* d = ascrun::ub_operand(b, "Brcb", "dst", dst, n_dst);
    const ascrun::elem_t<T>* s = ascrun::ub_operand(b, "Brcb", "src", src, n_src);
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
    ascrun::check_disjoint("Brcb", "dst", da, da + n_dst * sizeof(T), "src", sa, sa + n_src * sizeof(T),
                           "the reference does not support dst and src sharing memory");
    for (uint64_t r = 0; r < repeatTime; ++r) {
        for (uint64_t j = 0; j < 8; ++j) {
            const T v = s[r * 8 + j];
            ascrun::elem_t<T>* to = d + (r * rep + j * blk) * epb;
            for (uint64_t e = 0; e < epb; ++e) to[e] = v;
        }
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the vector mask register (SetVectorMask, ResetMask, SetMaskCount, SetMaskNorm),
// the repeat-parameter structs, and the planner every mask + repeat ("高维切分") form runs on.
//
// Model (SIMD计算说明/掩码, 高维切分, SetVectorMask.md, 通用说明和约束.md):
//  - one repeat covers 256 bytes = 8 data blocks of 32 bytes; element j of a repeat lives in block
//    j / (32 / sizeof(T)); operand o's block k of repeat r starts at
//    (r * repStride_o + k * blkStride_o) * 32 bytes from its start (strides in 32-byte blocks);
//  - Normal mode: the mask (continuous: the first `mask` elements; bit mode: bit j of
//    mask[1]:mask[0]) selects the elements of every repeat; `repeatTime` repeats run;
//  - Counter mode: the mask's low 64 bits are the number of elements of the whole instruction;
//    repeatTime is ignored; ceil(n / per_repeat) repeats run, the last one on a prefix;
//  - isSetMask = true: the instruction writes its mask argument to the register first;
//    isSetMask = false: it uses the register (SetVectorMask) and the mask argument is a placeholder;
//  - mask 0, repeatTime 0 or count 0 make the instruction a NOP (Atlas A2/A3);
//  - operands of different widths (Cast, MulCast, ...): the larger element type T sets the repeat
//    (256 / sizeof(T) elements) and the mask; each operand holds those elements in its own 32-byte
//    blocks, so a narrower operand spans fewer blocks per repeat (Cast.md: half -> int32_t, 64
//    elements a repeat, dstRepStride 8, srcRepStride 4).
// The plan (runs of consecutive elements inside one repeat, offsets per operand) is built once per
// instruction; the element loops then run over it repeat by repeat, in hardware order.
#pragma once

#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_C0_SIZE = 32;  // bytes of a data block (DataCopyParams lengths and strides count them)
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;

struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                       const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn),
          src0BlkStride(src0BlkStrideIn),
          src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn),
          src0RepStride(src0RepStrideIn),
          src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn),
          srcBlkStride(srcBlkStrideIn),
          dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn, const bool halfBlockIn)
        : dstBlkStride(dstBlkStrideIn),
          srcBlkStride(srcBlkStrideIn),
          dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn),
          halfBlock(halfBlockIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    bool halfBlock = false;
};

struct CopyRepeatParams {
    CopyRepeatParams() = default;
    CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn, uint16_t dstRepeatSizeIn,
                     uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn) {}
    uint16_t dstStride = DEFAULT_BLK_STRIDE;
    uint16_t srcStride = DEFAULT_BLK_STRIDE;
    uint16_t dstRepeatSize = DEFAULT_REPEAT_STRIDE;
    uint16_t srcRepeatSize = DEFAULT_REPEAT_STRIDE;
};

}  // namespace AscendC

namespace ascrun {
namespace mask {

// Ascend 950PR/950DT (core/soc.h): its Memory vector APIs run as VF calls of the Reg API, with dtypes
// and count rules of their own.
constexpr bool kAscend950 = kNpuArch == 3510;

template <typename T>
constexpr uint32_t per_repeat = 256 / sizeof(T);
template <typename T>
constexpr uint32_t per_block = 32 / sizeof(T);

// The first `len` bits of a 128-bit mask.
inline void prefix_bits(uint64_t len, uint64_t& lo, uint64_t& hi) {
    lo = len >= 64 ? ~uint64_t(0) : ((uint64_t(1) << len) - 1);
    hi = len >= 128 ? ~uint64_t(0) : (len <= 64 ? 0 : ((uint64_t(1) << (len - 64)) - 1));
}

// How an instruction gives its mask.
enum class Arg : uint8_t { Continuous, Bits, Register };

constexpr int kMaxOperands = 4;

// A run of `len` consecutive elements inside one repeat, at element offset off[o] of operand o.
struct Run {
    uint32_t off[kMaxOperands];
    uint32_t len;
};

struct Plan {
    uint64_t repeats = 0;  // 0: a NOP
    uint32_t n_full = 0, n_last = 0;
    Run full[128];  // the runs of repeats 0 .. repeats-2
    Run last[128];  // the runs of the last repeat (a prefix in counter mode)
    uint64_t rep[kMaxOperands] = {};     // repeat stride per operand, elements
    uint64_t extent[kMaxOperands] = {};  // elements from each operand's start the instruction spans
    uint64_t span[kMaxOperands] = {};    // elements one repeat spans
};

// The planner's work depends on the element type only through its size, so it is defined once, in
// vector/mask.cpp, with the size (`elem_size`) and name (`type`, for messages) as values.
void lay_out_sized(Plan& p, uint32_t elem_size, uint64_t repeats, uint64_t full_lo, uint64_t full_hi,
                   uint64_t last_lo, uint64_t last_hi, int n_ops, const uint64_t* blk_blocks,
                   const uint64_t* rep_blocks, const uint32_t* elem_bytes);
bool make_plan_sized(BlockContext& b, const char* api, const char* type, uint32_t elem_size, bool set_mask, Arg arg,
                     uint64_t m0, uint64_t m1, uint8_t repeat_times, int n_ops, const uint64_t* blk_blocks,
                     const uint64_t* rep_blocks, Plan& p, const uint32_t* elem_bytes);
void check_overlap_sized(const char* api, const Plan& p, int d_op, uint64_t d, uint32_t d_size, uint32_t d_elem,
                         int s_op, const char* s_role, uint64_t s, uint32_t s_size, uint32_t s_elem, bool accumulate);

// Fills plan `p` for `repeats` repeats on element type T: repeats 0 .. repeats-2 select the elements
// of (full_hi:full_lo), the last one those of (last_hi:last_lo). `blk`/`rep`: each operand's strides
// in 32-byte blocks. `elem_bytes[o]`: operand o's element size when it differs from T (nullptr: all
// are T); offsets, strides and extents are in each operand's own elements.
template <typename T>
void lay_out(Plan& p, uint64_t repeats, uint64_t full_lo, uint64_t full_hi, uint64_t last_lo, uint64_t last_hi,
             int n_ops, const uint64_t* blk_blocks, const uint64_t* rep_blocks,
             const uint32_t* elem_bytes = nullptr) {
    lay_out_sized(p, sizeof(T), repeats, full_lo, full_hi, last_lo, last_hi, n_ops, blk_blocks, rep_blocks,
                  elem_bytes);
}

// Builds the plan of one mask + repeat instruction on element type T. `blk`/`rep`: strides of
// each operand in 32-byte blocks. `elem_bytes[o]`: operand o's element size when it is narrower
// than T (nullptr: all are T). Offsets, strides and extents are in each operand's own elements.
// Returns false for a NOP. Updates the mask register when set.
template <typename T>
bool make_plan(BlockContext& b, const char* api, bool set_mask, Arg arg, uint64_t m0, uint64_t m1,
               uint8_t repeat_times, int n_ops, const uint64_t* blk_blocks, const uint64_t* rep_blocks, Plan& p,
               const uint32_t* elem_bytes = nullptr) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "mask + repeat forms take 16-, 32- or 64-bit elements");
    return make_plan_sized(b, api, TypeName<T>::c(), sizeof(T), set_mask, arg, m0, m1, repeat_times, n_ops,
                           blk_blocks, rep_blocks, p, elem_bytes);
}

// Runs f(offsets, len) over every run of every repeat, in order. offsets[o]: element offset of
// the run in operand o.
template <typename F>
inline void for_each_run(const Plan& p, F&& f) {
    uint64_t off[kMaxOperands];
    for (uint64_t r = 0; r < p.repeats; ++r) {
        const bool last = r + 1 == p.repeats;
        const Run* runs = last ? p.last : p.full;
        const uint32_t n = last ? p.n_last : p.n_full;
        for (uint32_t i = 0; i < n; ++i) {
            for (int o = 0; o < kMaxOperands; ++o) off[o] = r * p.rep[o] + runs[i].off[o];
            f(off, runs[i].len);
        }
    }
}

// 通用地址重叠约束: within a repeat, destination and source must coincide exactly or be disjoint,
// and no repeat may write what a later repeat reads. `accumulate`: the exception for
// Add/Sub/Mul/Max/Min/AddRelu/SubRelu on half/int32/float: dst may overlap src1 when dstRepStride
// or src1RepStride is 0 (repeats run in order). Operands of different widths cannot coincide: any
// overlap is undefined (Cast.md, MulAddDst.md).
template <typename T, typename U>
void check_overlap(const char* api, const Plan& p, int d_op, const AscendC::LocalTensor<T>& dst, int s_op,
                   const char* s_role, const AscendC::LocalTensor<U>& src, bool accumulate) {
    check_overlap_sized(api, p, d_op, dst.ascrun_addr(), dst.GetSize(), sizeof(T), s_op, s_role, src.ascrun_addr(),
                        src.GetSize(), sizeof(U), accumulate);
}

// After a count form with isSetMask = true: the instruction set counter mode and the count
// itself, then restored the defaults (ResetMask, SetMaskNorm).
inline void restore_defaults(BlockContext& b) {
    b.counter_mode = false;
    b.mask_lo = b.mask_hi = ~uint64_t(0);
}

// The element count of a count form: the argument, or with isSetMask = false the counter-mode mask.
template <bool isSetMask>
inline uint64_t count_of(BlockContext& b, const char* api, int64_t count) {
    if (isSetMask) {
        if (count < 0) fault(format("%s: count %lld is negative", api, static_cast<long long>(count)));
        restore_defaults(b);
        return static_cast<uint64_t>(count);
    }
    if (!b.counter_mode) {
        fault(format("%s: the count form with isSetMask = false takes its element count from the mask register in "
                     "counter mode; call SetMaskCount and SetVectorMask first (in normal mode the count is undefined)",
                     api));
    }
    return b.mask_lo;
}

}  // namespace mask
}  // namespace ascrun

namespace AscendC {

template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow) {
    ascrun::BlockContext& b = ascrun::enter();
    b.mask_lo = maskLow;
    b.mask_hi = mode == MaskMode::COUNTER ? 0 : maskHigh;
}

template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len) {
    ascrun::BlockContext& b = ascrun::enter();
    if (len < 0) {
        ascrun::fault(ascrun::format("SetVectorMask<%s>(%d): the length is negative", ascrun::TypeName<T>::c(), len));
    }
    if (mode == MaskMode::COUNTER) {
        b.mask_lo = static_cast<uint64_t>(len);
        b.mask_hi = 0;
        return;
    }
    constexpr uint32_t per = 256 / sizeof(T);
    if (static_cast<uint32_t>(len) > per) {
        ascrun::fault(ascrun::format("SetVectorMask<%s, NORMAL>(%d): the length is outside [0, %u] (elements of one "
                                     "repeat)",
                                     ascrun::TypeName<T>::c(), len, per));
    }
    ascrun::mask::prefix_bits(static_cast<uint64_t>(len), b.mask_lo, b.mask_hi);
}

inline void ResetMask() {
    ascrun::BlockContext& b = ascrun::enter();
    b.mask_lo = b.mask_hi = ~uint64_t(0);
}
inline void SetMaskCount() { ascrun::enter().counter_mode = true; }
inline void SetMaskNorm() { ascrun::enter().counter_mode = false; }

}  // namespace AscendC

#pragma GCC visibility pop

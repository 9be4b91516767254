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

#include <algorithm>

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

// epb[o]: elements of operand o in a 32-byte block. A run breaks where an operand with a block
// stride other than 1 starts a new block.
inline uint32_t build_runs(uint64_t lo, uint64_t hi, uint32_t per, const uint32_t* epb, int n_ops,
                           const uint64_t* blk, Run* out) {
    uint32_t n = 0;
    int64_t prev = -2;
    for (uint32_t j = 0; j < per; ++j) {
        const bool on = j < 64 ? ((lo >> j) & 1u) : ((hi >> (j - 64)) & 1u);
        if (!on) continue;
        bool block_break = false;
        for (int o = 0; o < n_ops; ++o) block_break = block_break || (blk[o] != 1 && j % epb[o] == 0);
        if (n > 0 && static_cast<int64_t>(j) == prev + 1 && !block_break) {
            ++out[n - 1].len;
        } else {
            Run& r = out[n++];
            for (int o = 0; o < kMaxOperands; ++o) {
                r.off[o] = o < n_ops ? static_cast<uint32_t>((j / epb[o]) * blk[o] * epb[o] + j % epb[o]) : 0;
            }
            r.len = 1;
        }
        prev = j;
    }
    return n;
}

// Fills plan `p` for `repeats` repeats on element type T: repeats 0 .. repeats-2 select the elements
// of (full_hi:full_lo), the last one those of (last_hi:last_lo). `blk`/`rep`: each operand's strides
// in 32-byte blocks. `elem_bytes[o]`: operand o's element size when it differs from T (nullptr: all
// are T); offsets, strides and extents are in each operand's own elements.
template <typename T>
void lay_out(Plan& p, uint64_t repeats, uint64_t full_lo, uint64_t full_hi, uint64_t last_lo, uint64_t last_hi,
             int n_ops, const uint64_t* blk_blocks, const uint64_t* rep_blocks,
             const uint32_t* elem_bytes = nullptr) {
    constexpr uint32_t per = per_repeat<T>;
    p.repeats = repeats;
    uint64_t blk[kMaxOperands] = {};
    uint32_t epb[kMaxOperands] = {};
    for (int o = 0; o < n_ops; ++o) {
        epb[o] = 32 / (elem_bytes != nullptr ? elem_bytes[o] : static_cast<uint32_t>(sizeof(T)));
        blk[o] = blk_blocks[o];
        p.rep[o] = rep_blocks[o] * epb[o];
    }
    p.n_full = build_runs(full_lo, full_hi, per, epb, n_ops, blk, p.full);
    p.n_last = build_runs(last_lo, last_hi, per, epb, n_ops, blk, p.last);
    for (int o = 0; o < n_ops; ++o) {
        uint64_t end_full = 0, end_last = 0;
        for (uint32_t i = 0; i < p.n_full; ++i) end_full = std::max<uint64_t>(end_full, p.full[i].off[o] + p.full[i].len);
        for (uint32_t i = 0; i < p.n_last; ++i) end_last = std::max<uint64_t>(end_last, p.last[i].off[o] + p.last[i].len);
        p.span[o] = std::max(end_full, end_last);
        p.extent[o] = (p.repeats - 1) * p.rep[o] + end_last;
        if (p.repeats >= 2) p.extent[o] = std::max(p.extent[o], (p.repeats - 2) * p.rep[o] + end_full);
    }
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
    constexpr uint32_t per = per_repeat<T>;
    if (!set_mask) arg = Arg::Register;
    uint64_t lo, hi;
    if (arg == Arg::Register) {
        lo = b.mask_lo;
        hi = b.mask_hi;
    } else if (b.counter_mode) {
        lo = m0;  // the element count (mask[0] in bit form; mask[1] has no effect)
        hi = 0;
        b.mask_lo = lo;
        b.mask_hi = hi;
    } else if (arg == Arg::Continuous) {
        if (m0 > per) {
            fault(format("%s<%s>: mask %llu is outside [0, %u] (continuous mask: the number of leading elements "
                         "of each repeat; a repeat holds %u %s elements)",
                         api, TypeName<T>::c(), static_cast<unsigned long long>(m0), per, per, TypeName<T>::c()));
        }
        prefix_bits(m0, lo, hi);
        b.mask_lo = lo;
        b.mask_hi = hi;
    } else {
        // 32- and 64-bit elements: the bits past a repeat's 64 or 32 elements select nothing, and
        // Atlas A2/A3 take the mask as it is: the reference's "maskHigh must be 0 for type b32 and
        // b64" check is for __NPU_ARCH__ 3510/5102 only, and its own SetMask(len >= 128) and
        // ResetMask write FULL_MASK there for every type (kernel_utils_base.h).
        lo = m0;
        hi = m1;
        b.mask_lo = lo;
        b.mask_hi = hi;
    }

    uint64_t full_lo, full_hi, last_lo, last_hi, repeats;
    if (b.counter_mode) {
        const uint64_t n = lo;
        if (n == 0) return false;
        if (n > 0xffffffffu) {  // keeps every offset computed from it far inside 64 bits
            fault(format("%s<%s>: counter-mode element count %llu is larger than ascrun supports (2^32 - 1)", api,
                         TypeName<T>::c(), static_cast<unsigned long long>(n)));
        }
        repeats = (n + per - 1) / per;
        prefix_bits(per, full_lo, full_hi);
        prefix_bits(n - (repeats - 1) * per, last_lo, last_hi);
    } else {
        if (sizeof(T) >= 4) hi = 0;             // 32-bit elements: only the low 64 bits are mask bits,
        if (sizeof(T) == 8) lo &= 0xffffffffu;  // 64-bit elements: the low 32
        if (repeat_times == 0 || (lo == 0 && hi == 0)) return false;
        repeats = repeat_times;
        full_lo = last_lo = lo;
        full_hi = last_hi = hi;
    }
    lay_out<T>(p, repeats, full_lo, full_hi, last_lo, last_hi, n_ops, blk_blocks, rep_blocks, elem_bytes);
    return true;
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
    const uint64_t d = dst.ascrun_addr(), s = src.ascrun_addr();
    const uint64_t d_end = d + p.extent[d_op] * sizeof(T), s_end = s + p.extent[s_op] * sizeof(U);
    if (d_end <= s || s_end <= d) return;
    const uint64_t d_own = uint64_t{dst.GetSize()} * sizeof(T), s_own = uint64_t{src.GetSize()} * sizeof(U);
    if (sizeof(T) != sizeof(U)) {
        undefined_overlap(api, d, d_own, s, s_own, [&] {
            return format("%s: dst range [%s, %s) overlaps %s range [%s, %s), whose element size differs (the "
                          "hardware does not define overlapping operands of different widths)",
                          api, hex(d).c_str(), hex(d_end).c_str(), s_role, hex(s).c_str(), hex(s_end).c_str());
        });
        return;
    }
    bool same_runs = d == s && p.rep[d_op] == p.rep[s_op];
    for (uint32_t i = 0; same_runs && i < p.n_full; ++i) same_runs = p.full[i].off[d_op] == p.full[i].off[s_op];
    for (uint32_t i = 0; same_runs && i < p.n_last; ++i) same_runs = p.last[i].off[d_op] == p.last[i].off[s_op];
    if (same_runs && (p.repeats == 1 || p.rep[d_op] >= p.span[d_op])) return;
    if (accumulate && (p.rep[d_op] == 0 || p.rep[s_op] == 0)) return;
    undefined_overlap(api, d, d_own, s, s_own, [&] {
        return format("%s: dst range [%s, %s) overlaps %s range [%s, %s) in a way the hardware does not define "
                      "(within a repeat dst and src must coincide exactly or be disjoint, and no repeat may write "
                      "what a later repeat reads)",
                      api, hex(d).c_str(), hex(d_end).c_str(), s_role, hex(s).c_str(), hex(s_end).c_str());
    });
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

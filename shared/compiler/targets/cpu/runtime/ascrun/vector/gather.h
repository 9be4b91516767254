// ascrun cpu runtime: gather and scatter (离散与聚合): Gather (count; mask + repeat), Gatherb, Scatter;
// and GatherMask (比较与选择/GatherMask.md) with GetGatherMaskRemainCount.
//
// Model, Atlas A2/A3 (Gather.md, Gatherb(ISASI).md, Scatter(ISASI).md, GatherMask.md, C API
// asc_reduce.md / asc_get_rsvd_count.md):
//  - Gather: dst element j of repeat r (at r * dstRepStride blocks + j) = the src element at byte
//    srcBaseAddr + srcOffset[r * per + j] of src, for the elements the mask selects (normal or
//    counter mode; the others keep their values). The count form issues count / per full repeats and
//    a tail repeat, as the device implementation does. Offsets are bytes: each must address a whole
//    element inside src (the CPU model of the reference bounds them by src's size).
//  - Gatherb: dst block j of repeat r (at r * dstRepStride + j * dstBlkStride blocks; dstBlkStride 0
//    counts as 1) = the 32 bytes at byte offset[r * 8 + j] of src; offsets 32-byte aligned, in src.
//    Resets the mask register, as the implementation does.
//  - Scatter is not supported on Atlas A2/A3: every form faults (the device build compiles it to nothing).
//  - GatherMask: per repeat, the src0 elements whose pattern bit is 1 are packed, in order, into dst
//    from its start on; dst elements past the kept count keep their values. reduceMode = false: each
//    repeat takes 256 bytes, the mask is ignored. reduceMode = true: each repeat takes `mask` elements
//    (Atlas A2/A3 "配置方式一"). src0 element j of repeat r is at r * src0RepeatStride blocks +
//    (j / per block) * src0BlockStride blocks + j % per block. Pattern: built-in 1..7, the same for
//    every repeat, or pattern bits consumed continuously within a repeat, repeat r's starting
//    src1RepeatStride * r blocks into src1Pattern. rsvdCnt and the register GetGatherMaskRemainCount
//    reads = the number kept. Afterwards the core is in normal mode with the mask register = mask.
// Faults where the reference leaves the result undefined: offsets or a base not aligned to the
// element (Gatherb: 32 bytes) or outside src; dst overlapping src or the offsets; Gatherb in counter
// mode; the count form of Gather needing more than 255 repeats (its 8-bit repeat count would wrap);
// GatherMask with repeatTimes 0, a counter-mode mask of 0, more than 8 blocks per repeat with
// src0BlockStride != 1, dst overlapping src1Pattern, or dst over src0 other than in place at the
// same start with no repeat's output reaching the src0 of a later repeat.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct GatherRepeatParams {
    GatherRepeatParams() = default;
    GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;  // Atlas A2/A3

struct GatherMaskParams {
    GatherMaskParams() = default;
    GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn, const uint16_t src0RepeatStrideIn,
                     const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn),
          repeatTimes(repeatTimesIn),
          src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = DEFAULT_BLK_STRIDE;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
};

}  // namespace AscendC

namespace ascrun {
namespace gather {

// dst's first d_elems elements and src's first s_elems must not share memory.
template <typename T, typename U>
void check_apart(const char* api, const AscendC::LocalTensor<T>& dst, uint64_t d_elems, const char* s_role,
                 const AscendC::LocalTensor<U>& src, uint64_t s_elems) {
    const uint64_t d = dst.ascrun_addr(), s = src.ascrun_addr();
    check_disjoint(api, "dst", d, d + d_elems * sizeof(T), s_role, s, s + s_elems * sizeof(U),
                   "the reference does not support these operands sharing memory");
}

// ---- Gather -------------------------------------------------------------------------------------

template <typename T>
constexpr bool gather_supports = one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;

template <typename T>
[[noreturn]] void bad_offset(const char* api, const char* role, uint64_t index, uint32_t offset, uint32_t base,
                             uint64_t src_elems, uint32_t align) {
    const uint64_t byte = static_cast<uint64_t>(base) + offset;
    const char* why = byte % align != 0 ? "is not aligned" : "is outside src";
    fault(format("%s<%s>: %s[%llu] = %u (+ base %u) addresses src byte %llu, which %s (src holds %llu elements = "
                 "%llu bytes; offsets address whole %u-byte-aligned units inside src)",
                 api, TypeName<T>::c(), role, static_cast<unsigned long long>(index), offset, base,
                 static_cast<unsigned long long>(byte), why, static_cast<unsigned long long>(src_elems),
                 static_cast<unsigned long long>(src_elems * sizeof(T)), align));
}

// Mask + repeat form. Plan operands: dst, and the index of the offset (r * per + j).
template <typename T>
void gather_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                   const AscendC::LocalTensor<uint32_t>& src_offset, uint32_t base, mask::Arg arg, uint64_t m0,
                   uint64_t m1, uint8_t repeat, uint16_t dst_rep_stride) {
    BlockContext& b = enter();
    const char* api = "Gather";
    const uint64_t blk[2] = {1, 1};
    const uint64_t rep[2] = {dst_rep_stride, mask::per_repeat<T> / mask::per_block<T>};
    mask::Plan p;
    if (!mask::make_plan<T>(b, api, true, arg, m0, m1, repeat, 2, blk, rep, p)) return;
    elem_t<T>* d = ub_operand(b, api, "dst", dst, p.extent[0]);
    const uint64_t n_src = src.GetSize();
    const elem_t<T>* s = ub_operand(b, api, "src", src, n_src);
    const elem_t<uint32_t>* off = ub_operand(b, api, "srcOffset", src_offset, p.extent[1]);
    if (base % sizeof(T) != 0 || base >= n_src * sizeof(T)) {
        fault(format("Gather<%s>: srcBaseAddr %u must be a multiple of %zu inside src's %llu bytes", TypeName<T>::c(),
                     base, sizeof(T), static_cast<unsigned long long>(n_src * sizeof(T))));
    }
    check_apart(api, dst, p.extent[0], "src", src, n_src);
    check_apart(api, dst, p.extent[0], "srcOffset", src_offset, p.extent[1]);
    const uint64_t limit = n_src * sizeof(T);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
        for (uint32_t i = 0; i < len; ++i) {
            const uint64_t byte = static_cast<uint64_t>(base) + off[o[1] + i];
            if (byte % sizeof(T) != 0 || byte + sizeof(T) > limit) {
                bad_offset<T>(api, "srcOffset", o[1] + i, off[o[1] + i], base, n_src, sizeof(T));
            }
            d[o[0] + i] = s[byte / sizeof(T)];
        }
    });
}

// Count form: as the device implementation, count / per full repeats, then the tail as one repeat.
template <typename T>
void gather_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                  const AscendC::LocalTensor<uint32_t>& src_offset, uint32_t base, uint32_t count) {
    constexpr uint32_t per = mask::per_repeat<T>;
    const uint32_t full = count / per, tail = count % per;
    if (full > 255) {
        enter();
        fault(format("Gather<%s>: count %u needs %u repeats of %u elements; the count form issues them as one "
                     "instruction with an 8-bit repeat count (at most %u elements)",
                     TypeName<T>::c(), count, full, per, 255 * per + per - 1));
    }
    if (full > 0) {
        gather_masked<T>(dst, src, src_offset, base, mask::Arg::Continuous, per, 0, static_cast<uint8_t>(full),
                         AscendC::DEFAULT_REPEAT_STRIDE);
    }
    if (tail > 0) {
        gather_masked<T>(dst[count - tail], src, src_offset[count - tail], base, mask::Arg::Continuous, tail, 0, 1,
                         AscendC::DEFAULT_REPEAT_STRIDE);
    }
}

template <typename T>
void gatherb(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
             const AscendC::LocalTensor<uint32_t>& offset, uint8_t repeat, const AscendC::GatherRepeatParams& rp) {
    BlockContext& b = enter();
    const char* api = "Gatherb";
    if (b.counter_mode) {
        fault("Gatherb: the reference does not define Gatherb in counter mode (the implementation resets the mask "
              "to a full normal-mode mask); call SetMaskNorm first");
    }
    b.mask_lo = b.mask_hi = ~uint64_t(0);  // ResetMask
    if (repeat == 0) return;               // a NOP on Atlas A2/A3
    constexpr uint64_t epb = mask::per_block<T>;
    const uint64_t blk = rp.dstBlkStride == 0 ? 1 : rp.dstBlkStride;
    const uint64_t rep = rp.dstRepStride;
    const uint64_t n_dst = ((repeat - 1) * rep + 7 * blk + 1) * epb;
    const uint64_t n_src = src.GetSize();
    elem_t<T>* d = ub_operand(b, api, "dst", dst, n_dst);
    const elem_t<T>* s = ub_operand(b, api, "src", src, n_src);
    const elem_t<uint32_t>* off = ub_operand(b, api, "offset", offset, uint64_t(repeat) * 8);
    check_apart(api, dst, n_dst, "src", src, n_src);
    check_apart(api, dst, n_dst, "offset", offset, uint64_t(repeat) * 8);
    for (uint64_t r = 0; r < repeat; ++r) {
        for (uint64_t j = 0; j < 8; ++j) {
            const uint32_t o = off[r * 8 + j];
            if (o % 32 != 0 || uint64_t(o) + 32 > n_src * sizeof(T)) {
                bad_offset<T>(api, "offset", r * 8 + j, o, 0, n_src, 32);
            }
            elem_t<T>* to = d + (r * rep + j * blk) * epb;
            const elem_t<T>* from = s + o / sizeof(T);
            for (uint64_t e = 0; e < epb; ++e) to[e] = from[e];
        }
    }
}

[[noreturn]] inline void scatter_unsupported() {
    enter();
    fault("Scatter: not supported on Atlas A2/A3 (Scatter(ISASI).md lists it for other products only; the device "
          "build compiles it to nothing). Write the elements with a loop or see the reference's Scatter "
          "compatibility sample");
}

// ---- GatherMask ---------------------------------------------------------------------------------

template <typename T>
constexpr bool gather_mask_supports = one_of_v<T, half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t>;

// The selection bits of GatherMask: a built-in pattern (1..7) or src1Pattern's bytes.
struct Pattern {
    uint8_t builtin;         // 0: use `bytes`
    const uint8_t* bytes;    // src1Pattern
    uint64_t repeat_stride;  // bytes between repeats' patterns
    bool bit(uint64_t r, uint64_t j) const { return (bytes[r * repeat_stride + j / 8] >> (j % 8)) & 1u; }
    // How many of the first n bits of repeat r are set.
    uint64_t count(uint64_t r, uint64_t n) const {
        switch (builtin) {
            case 0: {
                const uint8_t* p = bytes + r * repeat_stride;
                uint64_t c = 0;
                for (uint64_t i = 0; i < n / 8; ++i) c += static_cast<uint64_t>(__builtin_popcount(p[i]));
                if (n % 8 != 0) c += static_cast<uint64_t>(__builtin_popcount(p[n / 8] & ((1u << (n % 8)) - 1u)));
                return c;
            }
            case 1: return (n + 1) / 2;
            case 2: return n / 2;
            case 7: return n;
            default: return (n + 3 - static_cast<uint64_t>(builtin - 3)) / 4;
        }
    }
};

template <typename T, typename U>
uint64_t gather_mask(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                     const AscendC::LocalTensor<U>* pattern, uint8_t builtin, bool reduce_mode, uint32_t mask,
                     const AscendC::GatherMaskParams& gp) {
    BlockContext& b = enter();
    const char* api = "GatherMask";
    constexpr uint64_t per = mask::per_repeat<T>, epb = mask::per_block<T>;
    if (pattern == nullptr && (builtin < 1 || builtin > 7)) {
        fault(format("GatherMask<%s>: built-in src1Pattern %u is outside [1, 7]", TypeName<T>::c(), builtin));
    }
    if (reduce_mode && mask == 0) {
        fault(format("GatherMask<%s>: mask 0 with reduceMode = true (counter mode takes a mask in [1, 2^32 - 1])",
                     TypeName<T>::c()));
    }
    if (gp.repeatTimes == 0) {
        fault(format("GatherMask<%s>: repeatTimes is 0 (the reference does not define GatherMask without repeats)",
                     TypeName<T>::c()));
    }
    const uint64_t n = reduce_mode ? mask : per;  // elements per repeat
    const uint64_t blk = gp.src0BlockStride, rep = gp.src0RepeatStride, repeats = gp.repeatTimes;
    if (n > per && blk != 1) {
        fault(format("GatherMask<%s>: mask %u spans more than one 256-byte repeat with src0BlockStride %llu (the "
                     "reference defines the blocks past the first 8 only for src0BlockStride 1)",
                     TypeName<T>::c(), mask, static_cast<unsigned long long>(blk)));
    }
    // The device sets the mode and the mask register before it gathers, and leaves normal mode.
    b.counter_mode = false;
    b.mask_lo = mask;
    b.mask_hi = 0;

    // src0 elements one repeat spans: the last element, or the end of the block before it.
    const uint64_t last_block = (n - 1) / epb;
    uint64_t span = last_block * blk * epb + (n - 1) % epb + 1;
    if (last_block > 0) span = std::max(span, (last_block - 1) * blk * epb + epb);
    const uint64_t n_src = (repeats - 1) * rep * epb + span;
    const elem_t<T>* s = ub_operand(b, api, "src0", src0, n_src);

    Pattern pat{builtin, nullptr, uint64_t(gp.src1RepeatStride) * 32};
    uint64_t n_pat = 0;  // src1Pattern elements
    if (pattern != nullptr) {
        pat.builtin = 0;
        const uint64_t bytes = (repeats - 1) * pat.repeat_stride + (n + 7) / 8;
        n_pat = (bytes + sizeof(U) - 1) / sizeof(U);
        pat.bytes = reinterpret_cast<const uint8_t*>(ub_operand(b, api, "src1Pattern", *pattern, n_pat));
    }

    // How many each repeat keeps; dst in place over src0 must never reach a later repeat's src0.
    const bool in_place = dst.ascrun_addr() == src0.ascrun_addr();
    uint64_t kept = 0;
    for (uint64_t r = 0; r < repeats; ++r) {
        kept += pat.count(r, n);
        if (in_place && r + 1 < repeats && kept > (r + 1) * rep * epb) {
            fault(format("GatherMask<%s>: in place (dst == src0), the %llu elements kept by repeat %llu reach the "
                         "src0 of repeat %llu (element %llu on); later repeats would read overwritten data",
                         TypeName<T>::c(), static_cast<unsigned long long>(kept), static_cast<unsigned long long>(r),
                         static_cast<unsigned long long>(r + 1), static_cast<unsigned long long>((r + 1) * rep * epb)));
        }
    }
    if (in_place && blk == 0) {
        fault(format("GatherMask<%s>: in place (dst == src0) with src0BlockStride 0: the output would overwrite the "
                     "block every element is read from",
                     TypeName<T>::c()));
    }
    elem_t<T>* d = ub_operand(b, api, "dst", dst, kept);
    if (pattern != nullptr) check_apart(api, dst, kept, "src1Pattern", *pattern, n_pat);
    if (!in_place) check_apart(api, dst, kept, "src0", src0, n_src);

    // Element by element in hardware order (in place, each write lands at or before its read).
    uint64_t w = 0;
    auto gather = [&](auto bit) {
        for (uint64_t r = 0; r < repeats; ++r) {
            const elem_t<T>* base = s + r * rep * epb;
            for (uint64_t j = 0; j < n; ++j) {
                if (bit(r, j)) d[w++] = base[(j / epb) * blk * epb + j % epb];
            }
        }
    };
    switch (pat.builtin) {
        case 0: gather([&](uint64_t r, uint64_t j) { return pat.bit(r, j); }); break;
        case 1: gather([](uint64_t, uint64_t j) { return j % 2 == 0; }); break;
        case 2: gather([](uint64_t, uint64_t j) { return j % 2 == 1; }); break;
        case 7: gather([](uint64_t, uint64_t) { return true; }); break;
        default: {
            const uint64_t k = pat.builtin - 3u;
            gather([k](uint64_t, uint64_t j) { return j % 4 == k; });
        }
    }
    b.rsvd_cnt = kept;
    return kept;
}

}  // namespace gather
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_GATHER_TYPES(T)                                                                             \
    static_assert(::ascrun::gather::gather_supports<T>, "Gather: T must be one of int16_t, uint16_t, half, " \
                                                        "bfloat16_t, int32_t, uint32_t, float (Atlas A2/A3)")

template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint32_t count) {
    ASCRUN_GATHER_TYPES(T);
    ::ascrun::gather::gather_count<T>(dst, src, srcOffset, srcBaseAddr, count);
}
template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint64_t mask[], const uint8_t repeatTime, const uint16_t dstRepStride) {
    ASCRUN_GATHER_TYPES(T);
    ::ascrun::gather::gather_masked<T>(dst, src, srcOffset, srcBaseAddr, ::ascrun::mask::Arg::Bits, mask[0], mask[1],
                                       repeatTime, dstRepStride);
}
template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint64_t mask, const uint8_t repeatTime, const uint16_t dstRepStride) {
    ASCRUN_GATHER_TYPES(T);
    ::ascrun::gather::gather_masked<T>(dst, src, srcOffset, srcBaseAddr, ::ascrun::mask::Arg::Continuous, mask, 0,
                                       repeatTime, dstRepStride);
}
#undef ASCRUN_GATHER_TYPES

template <typename T>
void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& offset,
             const uint8_t repeatTime, const GatherRepeatParams& repeatParams) {
    static_assert(::ascrun::one_of_v<T, uint16_t, uint32_t>, "Gatherb: T must be uint16_t or uint32_t (Atlas A2/A3)");
    ::ascrun::gather::gatherb<T>(dst, src, offset, repeatTime, repeatParams);
}

template <typename T>
void Scatter(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t,
             const uint32_t) {
    ::ascrun::gather::scatter_unsupported();
}
template <typename T>
void Scatter(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t,
             const uint64_t[], const uint8_t, const uint8_t) {
    ::ascrun::gather::scatter_unsupported();
}
template <typename T>
void Scatter(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t,
             const uint64_t, const uint8_t, const uint8_t) {
    ::ascrun::gather::scatter_unsupported();
}

#define ASCRUN_GATHER_MASK_TYPES(T)                                               \
    static_assert(::ascrun::gather::gather_mask_supports<T>,                      \
                  "GatherMask: T must be one of half, bfloat16_t, uint16_t, int16_t, " \
                  "float, uint32_t, int32_t (Atlas A2/A3)")

template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt) {
    ASCRUN_GATHER_MASK_TYPES(T);
    static_assert(std::is_same<U, typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type>::value,
                  "GatherMask: src1Pattern must be uint16_t for 16-bit T, uint32_t for 32-bit T");
    rsvdCnt = ::ascrun::gather::gather_mask<T, U>(dst, src0, &src1Pattern, 0, reduceMode, mask, gatherMaskParams);
}
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt) {
    ASCRUN_GATHER_MASK_TYPES(T);
    rsvdCnt = ::ascrun::gather::gather_mask<T, uint16_t>(dst, src0, nullptr, src1Pattern, reduceMode, mask,
                                                         gatherMaskParams);
}
#undef ASCRUN_GATHER_MASK_TYPES

inline int64_t GetGatherMaskRemainCount() { return static_cast<int64_t>(ascrun::enter().rsvd_cnt); }

}  // namespace AscendC

#pragma GCC visibility pop

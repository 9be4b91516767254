// ascrun cpu runtime: the reduction instructions (归约计算), Atlas A2/A3, half and float:
//   BlockReduceSum/Max/Min, PairReduceSum, RepeatReduceSum, WholeReduceSum/Max/Min (mask + repeat
//   forms: continuous or bit mask, normal or counter mode, isSetMask), and ReduceSum/Max/Min with
//   their sharedTmpBuffer (count form and mask + repeat forms).
//
// Model (Memory矢量计算/归约计算/<API>.md as pyasc 1.1.1 names them, their successors
// ReduceDataBlock.md, ReduceRepeat.md, ReducePairElem.md, and 通用说明和约束.md; how ReduceSum/Max/Min
// compose the instructions follows their pages and the c220 implementation):
//  - Each repeat reads the `per` lanes (256 bytes) of vector/mask.h's repeat geometry: lane j sits in block
//    j / (32 / sizeof(T)); blocks srcBlkStride apart, repeats srcRepStride blocks apart.
//  - Sums are binary trees in lane order: lanes (0,1), (2,3), ... are added, then those sums pairwise,
//    every addition rounded to T (half accumulates in half). A lane the mask leaves out enters the
//    tree as +0 (the reference does not say; it only matters for the sign of a zero sum).
//    PairReduceSum is the first level of that tree, BlockReduceSum the first log2(lanes per block)
//    levels, WholeReduceSum / RepeatReduceSum the whole tree. half overflows to inf: the reference's
//    65504 clamp is the saturation mode (SetCtrlSpr), which is not the default and not modelled.
//  - Max/Min pick the first extreme in lane order: equal values keep the lowest lane (the reference:
//    "the smallest index"); a NaN wins over numbers (the reference is silent; ascrun chooses numpy's
//    rule, like vector/arith.h's Max/Min), the first NaN over later ones.
//  - A block (BlockReduce*) or pair (PairReduceSum) without a selected lane leaves its dst element
//    unwritten (A2/A3). WholeReduceMax/Min write per ReduceOrder: [value, index], [index, value]
//    (dstRepStride in 2 * sizeof(T)), [value] (sizeof(T)) or [index] as uint32_t (4 bytes). The
//    index is the lane in its repeat, stored as the bits of T (uint16_t in a half, uint32_t in a float).
//  - dst alignment per page: BlockReduce* 8 elements, PairReduceSum 32 bytes, WholeReduceSum /
//    RepeatReduceSum / ReduceSum one element, WholeReduceMax/Min the dstRepStride unit of the order,
//    ReduceMax/Min two elements; src and sharedTmpBuffer 32 bytes.
//  - Overlap (BlockReduceSum.md, 通用地址重叠约束): a repeat may overwrite the source it has just read,
//    but a repeat that writes what a later repeat reads faults.
//  - ReduceSum, count form (A2/A3 "方式二"): a tree per repeat of `per` elements (the last one padded
//    with +0), the repeats' sums added in order; sharedTmpBuffer is neither read nor written. Mask +
//    repeat forms ("方式一"): a tree per repeat, then a tree over each `per` repeat sums, then (more
//    than `per` repeats) a tree over those; more than per * per repeats faults.
//  - ReduceMax/Min: the first extreme over all selected elements in (repeat, lane) order; with
//    calIndex, dst[1] holds its index (repeat * srcRepStride * lanes per block + lane; the element's
//    offset in the count form) as the bits of T, else dst[1] is untouched. A half holds indexes up to
//    65535 only: a larger one faults.
//  - sharedTmpBuffer must hold the reference's minimum (ReduceSum.md, ReduceMax.md; the count form of
//    ReduceMax/Min counts floor(count / per), at least 1, first-round repeats). Its contents after
//    the call are not defined: ascrun fills that minimum with the UB poison byte 0xA5. dst may
//    overlap it (dst is written last); src may not (intermediate results would overwrite it).
//  - The reference does not say what ReduceMax/Min and the mask forms of ReduceSum leave in the mask
//    register (they set masks and modes internally): ascrun leaves the defaults (normal mode, full
//    mask). They fault in counter mode, where their internal normal-mode masks would be counts.
//  - mask 0 or repeatTime 0 (count 0) is a NOP, as for the other vector instructions. Counter-mode
//    counts above 2^32 - 1 fault (an ascrun limit that keeps every offset in 64 bits).
#pragma once

#include <algorithm>
#include <cstring>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

}  // namespace AscendC

namespace ascrun {
namespace reduce {

template <typename T>
constexpr bool supports = one_of_v<T, half, float>;

template <typename T>
constexpr uint32_t per = mask::per_repeat<T>;
template <typename T>
constexpr uint32_t epb = mask::per_block<T>;

// The index of an extreme, stored as the bits of T.
template <typename T>
using index_bits = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type;

constexpr uint32_t log2(uint32_t v) { return v <= 1 ? 0 : 1 + log2(v / 2); }

// An int32_t parameter the reference bounds to [0, hi].
inline uint64_t bounded(const char* api, const char* name, int32_t v, int64_t hi) {
    if (v < 0 || v > hi) fault(format("%s: %s = %d is outside [0, %lld]", api, name, v, static_cast<long long>(hi)));
    return static_cast<uint64_t>(v);
}

// The selected lanes of one repeat in lane order, each with its element offset from the repeat's
// start; `groups`: bit g set when group g (lanes [g << levels, (g + 1) << levels)) has a lane
// (levels >= 1, so at most 64 groups; log2(per) makes the whole repeat one group).
struct Lanes {
    uint32_t n = 0;
    uint8_t lane[128];
    uint32_t off[128];
    uint64_t groups = 0;
    uint8_t blocks = 0;  // bit k: block k has a lane (what the repeat reads)
    bool dense = false;  // every lane, from contiguous blocks: the repeat is 256 contiguous bytes
};

template <typename T>
inline void make_lanes(uint64_t lo, uint64_t hi, uint64_t blk, uint32_t levels, Lanes& l) {
    l.n = 0;
    l.groups = 0;
    l.blocks = 0;
    for (uint32_t j = 0; j < per<T>; ++j) {
        const bool on = j < 64 ? ((lo >> j) & 1u) : ((hi >> (j - 64)) & 1u);
        if (!on) continue;
        l.lane[l.n] = static_cast<uint8_t>(j);
        l.off[l.n] = static_cast<uint32_t>((j / epb<T>) * blk * epb<T> + j % epb<T>);  // < 8 * 2^16 * 16
        ++l.n;
        l.groups |= uint64_t(1) << (j >> levels);
        l.blocks = static_cast<uint8_t>(l.blocks | (1u << (j / epb<T>)));
    }
    l.dense = l.n == per<T> && blk == 1;
}

// The lanes of the full repeats and of the last one, from the mask register as make_plan left it:
// normal mode: its bits select the lanes of every repeat (the low 64 for 32-bit types); counter
// mode: it holds the element count, and only the last repeat is partial.
template <typename T>
inline void plan_lanes(const BlockContext& b, uint64_t repeats, uint64_t blk, uint32_t levels, Lanes& full,
                       Lanes& last) {
    uint64_t lo = b.mask_lo, hi = sizeof(T) == 4 ? 0 : b.mask_hi;
    if (b.counter_mode) {
        mask::prefix_bits(per<T>, lo, hi);
        make_lanes<T>(lo, hi, blk, levels, full);
        mask::prefix_bits(b.mask_lo - (repeats - 1) * per<T>, lo, hi);
        make_lanes<T>(lo, hi, blk, levels, last);
        return;
    }
    make_lanes<T>(lo, hi, blk, levels, full);
    last = full;
}

// Scratch of one repeat: its lane values and the two rows the tree levels alternate between.
template <typename T>
struct Work {
    T v[128];
    T s[2][64];
};

// `levels` (>= 1) levels of the binary tree over `width` lanes at `in`: returns the width >> levels
// partial sums, sum g covering lanes [g << levels, (g + 1) << levels).
template <typename T, typename In>
inline const T* tree_sum(const In* in, uint32_t width, uint32_t levels, Work<T>& w) {
    uint32_t n = width / 2;
    ASCRUN_IVDEP
    for (uint32_t i = 0; i < n; ++i) w.s[0][i] = arith::add<T>(in[2 * i], in[2 * i + 1]);
    for (uint32_t k = 1; k < levels; ++k) {
        const T* a = w.s[(k - 1) & 1];
        T* d = w.s[k & 1];
        n /= 2;
        ASCRUN_IVDEP
        for (uint32_t i = 0; i < n; ++i) d[i] = arith::add<T>(a[2 * i], a[2 * i + 1]);
    }
    return w.s[(levels - 1) & 1];
}

// The sums of one repeat's lane groups: the tree straight over src when the repeat is dense, else
// over the selected lanes gathered with +0 in the others.
template <typename T>
inline const T* repeat_sums(const elem_t<T>* src, const Lanes& l, uint32_t levels, Work<T>& w) {
    if (l.dense) return tree_sum<T>(src, per<T>, levels, w);
    std::fill(w.v, w.v + per<T>, T(0.0f));
    for (uint32_t i = 0; i < l.n; ++i) w.v[l.lane[i]] = src[l.off[i]];
    return tree_sum<T>(w.v, per<T>, levels, w);
}

// Whether v (a later lane) replaces best: best is not NaN, and v is NaN or strictly better.
template <bool IsMax, typename T>
inline bool better(T v, T best) {
    if (best != best) return false;
    return v != v || (IsMax ? v > best : v < best);
}

// 通用地址重叠约束 for reductions: repeat r writes [d + r * d_step, + d_len) (bytes) after reading
// its own source; no later repeat may read those bytes. Repeat r reads the 32-byte blocks of its
// lanes at s + r * s_rep + k * s_blk.
struct Geometry {
    uint64_t repeats;
    uint64_t d, d_step, d_len;
    uint64_t s, s_rep, s_blk;
    uint8_t blocks_full, blocks_last;
};

inline void check_later_reads(const char* api, const Geometry& g) {
    uint64_t span = 0;  // bytes from a repeat's start to the end of its last block read
    for (uint32_t k = 0; k < 8; ++k) {
        if (((g.blocks_full | g.blocks_last) >> k) & 1u) span = std::max<uint64_t>(span, k * g.s_blk + 32);
    }
    const uint64_t d_end = g.d + (g.repeats - 1) * g.d_step + g.d_len;
    const uint64_t s_end = g.s + (g.repeats - 1) * g.s_rep + span;
    if (d_end <= g.s || s_end <= g.d) return;
    for (uint64_t r = 0; r + 1 < g.repeats; ++r) {
        const uint64_t a = g.d + r * g.d_step, e = a + g.d_len;
        uint64_t first = r + 1, last = g.repeats - 1;
        if (g.s_rep == 0) {
            last = first;  // every repeat reads the same blocks
        } else {
            if (e <= g.s) continue;
            last = std::min(last, (e - 1 - g.s) / g.s_rep);
            if (a >= g.s + span) first = std::max(first, (a - g.s - span) / g.s_rep + 1);
        }
        for (uint64_t q = first; q <= last; ++q) {
            const uint8_t blocks = q + 1 == g.repeats ? g.blocks_last : g.blocks_full;
            for (uint32_t k = 0; k < 8; ++k) {
                const uint64_t bs = g.s + q * g.s_rep + k * g.s_blk;
                if (((blocks >> k) & 1u) && bs < e && bs + 32 > a) {
                    fault(format("%s: repeat %llu writes dst bytes [%s, %s), which repeat %llu reads later as src "
                                 "(通用地址重叠约束: no repeat may overwrite the source of a later repeat)",
                                 api, static_cast<unsigned long long>(r), hex(a).c_str(), hex(e).c_str(),
                                 static_cast<unsigned long long>(q)));
                }
            }
        }
    }
}

// The parameters every mask + repeat reduction instruction shares: checks them, builds the plan
// (vector/mask.h: mask checks, mask register, counter mode) and the lanes. False: a NOP.
template <typename T, bool isSetMask>
bool setup(BlockContext& b, const char* api, mask::Arg arg, int64_t m0, uint64_t m1, int32_t repeat, int32_t sbs,
           int32_t srs, uint32_t levels, uint64_t& repeats, uint64_t& src_extent, Lanes& full, Lanes& last) {
    if (arg == mask::Arg::Continuous && isSetMask && m0 < 0) {
        fault(format("%s<%s>: mask %lld is negative", api, TypeName<T>::c(), static_cast<long long>(m0)));
    }
    const uint64_t count = isSetMask ? static_cast<uint64_t>(m0) : b.mask_lo;
    if (b.counter_mode && count > UINT32_MAX) {  // keeps every offset below 2^64
        fault(format("%s: counter-mode element count %llu is larger than ascrun supports (2^32 - 1)", api,
                     static_cast<unsigned long long>(count)));
    }
    const uint64_t rep_times = bounded(api, "repeatTime", repeat, 255);
    const uint64_t blk[1] = {bounded(api, "srcBlkStride", sbs, 65535)};
    const uint64_t rep[1] = {bounded(api, "srcRepStride", srs, 65535)};
    mask::Plan p;
    if (!mask::make_plan<T>(b, api, isSetMask, arg, static_cast<uint64_t>(m0), m1, static_cast<uint8_t>(rep_times),
                            1, blk, rep, p)) {
        return false;
    }
    repeats = p.repeats;
    src_extent = p.extent[0];
    plan_lanes<T>(b, repeats, blk[0], levels, full, last);
    return true;
}

// One past the last group of a repeat that has a lane.
inline uint32_t groups_end(uint64_t groups) {
    return groups == 0 ? 0 : 64 - static_cast<uint32_t>(__builtin_clzll(groups));
}

// BlockReduce*, PairReduceSum, WholeReduceSum, RepeatReduceSum: each repeat reduces groups of
// 2^levels lanes; group g of repeat r goes to dst element r * dstRepStride * unit + g.
template <typename T>
struct SumGroups {
    static const T* run(const elem_t<T>* src, const Lanes& l, uint32_t levels, Work<T>& w) {
        return repeat_sums<T>(src, l, levels, w);
    }
};
template <bool IsMax, typename T>
struct ExtremeGroups {
    static const T* run(const elem_t<T>* src, const Lanes& l, uint32_t levels, Work<T>& w) {
        T* out = w.v;
        uint64_t seen = 0;
        for (uint32_t i = 0; i < l.n; ++i) {
            const uint32_t g = l.lane[i] >> levels;
            const T v = src[l.off[i]];
            if (!((seen >> g) & 1u)) {
                out[g] = v;
                seen |= uint64_t(1) << g;
            } else if (better<IsMax>(v, out[g])) {
                out[g] = v;
            }
        }
        return out;
    }
};

template <typename Groups, typename T, bool isSetMask>
void group_reduce(const char* api, uint32_t levels, uint32_t unit, uint32_t dst_align,
                  const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, mask::Arg arg, int64_t m0,
                  uint64_t m1, int32_t repeat, int32_t drs, int32_t sbs, int32_t srs) {
    BlockContext& b = enter();
    const uint64_t d_rep = bounded(api, "dstRepStride", drs, 65535) * unit;  // elements
    uint64_t repeats = 0, src_extent = 0;
    Lanes full, last;
    if (!setup<T, isSetMask>(b, api, arg, m0, m1, repeat, sbs, srs, levels, repeats, src_extent, full, last)) return;
    uint64_t d_count = (repeats - 1) * d_rep + groups_end(last.groups);
    if (repeats >= 2) d_count = std::max(d_count, (repeats - 2) * d_rep + groups_end(full.groups));
    elem_t<T>* d = ub_operand(b, api, "dst", dst, d_count, dst_align);
    const elem_t<T>* s = ub_operand(b, api, "src", src, src_extent);
    const uint64_t s_rep = static_cast<uint64_t>(srs) * epb<T>;
    Geometry g{repeats,
               dst.ascrun_addr(),
               d_rep * sizeof(T),
               uint64_t(groups_end(full.groups | last.groups)) * sizeof(T),
               src.ascrun_addr(),
               s_rep * sizeof(T),
               static_cast<uint64_t>(sbs) * 32,
               full.blocks,
               last.blocks};
    check_later_reads(api, g);
    Work<T> work;
    for (uint64_t r = 0; r < repeats; ++r) {
        const Lanes& l = r + 1 == repeats ? last : full;
        const T* out = Groups::run(s + r * s_rep, l, levels, work);
        elem_t<T>* dr = d + r * d_rep;
        for (uint64_t m = l.groups; m != 0; m &= m - 1) {
            const uint32_t k = static_cast<uint32_t>(__builtin_ctzll(m));
            dr[k] = out[k];
        }
    }
}

// WholeReduceMax/Min: per repeat the first extreme and its lane, written per ReduceOrder.
template <bool IsMax, typename T, bool isSetMask>
void whole_extreme(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                   mask::Arg arg, int64_t m0, uint64_t m1, int32_t repeat, int32_t drs, int32_t sbs, int32_t srs,
                   AscendC::ReduceOrder order) {
    using AscendC::ReduceOrder;
    BlockContext& b = enter();
    const uint32_t o = static_cast<uint32_t>(order);
    if (o > 3) fault(format("%s: ReduceOrder %u is not one of the four orders (Atlas A2/A3)", api, o));
    // dstRepStride unit, dst alignment and bytes written per repeat (ReduceRepeat.md, 表3).
    const uint32_t unit = order == ReduceOrder::ORDER_ONLY_VALUE   ? sizeof(T)
                          : order == ReduceOrder::ORDER_ONLY_INDEX ? 4
                                                                   : 2 * sizeof(T);
    const uint64_t d_rep = bounded(api, "dstRepStride", drs, 65535) * unit;  // bytes
    uint64_t repeats = 0, src_extent = 0;
    Lanes full, last;
    if (!setup<T, isSetMask>(b, api, arg, m0, m1, repeat, sbs, srs, log2(per<T>), repeats, src_extent, full, last)) {
        return;
    }
    elem_t<T>* dp = ub_operand(b, api, "dst", dst, ((repeats - 1) * d_rep + unit) / sizeof(T), unit);
    uint8_t* d = reinterpret_cast<uint8_t*>(dp);
    const elem_t<T>* s = ub_operand(b, api, "src", src, src_extent);
    const uint64_t s_rep = static_cast<uint64_t>(srs) * epb<T>;
    check_later_reads(api, Geometry{repeats, dst.ascrun_addr(), d_rep, unit, src.ascrun_addr(), s_rep * sizeof(T),
                                    static_cast<uint64_t>(sbs) * 32, full.blocks, last.blocks});
    for (uint64_t r = 0; r < repeats; ++r) {
        const Lanes& l = r + 1 == repeats ? last : full;
        const elem_t<T>* sr = s + r * s_rep;
        T best = sr[l.off[0]];
        uint32_t at = l.lane[0];
        for (uint32_t i = 1; i < l.n; ++i) {
            const T v = sr[l.off[i]];
            if (better<IsMax>(v, best)) {
                best = v;
                at = l.lane[i];
            }
        }
        uint8_t* dr = d + r * d_rep;
        const index_bits<T> idx = static_cast<index_bits<T>>(at);
        const uint32_t idx32 = at;
        switch (order) {
            case ReduceOrder::ORDER_VALUE_INDEX:
                std::memcpy(dr, &best, sizeof(T));
                std::memcpy(dr + sizeof(T), &idx, sizeof(T));
                break;
            case ReduceOrder::ORDER_INDEX_VALUE:
                std::memcpy(dr, &idx, sizeof(T));
                std::memcpy(dr + sizeof(T), &best, sizeof(T));
                break;
            case ReduceOrder::ORDER_ONLY_VALUE: std::memcpy(dr, &best, sizeof(T)); break;
            default: std::memcpy(dr, &idx32, 4); break;
        }
    }
}

// ---- ReduceSum / ReduceMax / ReduceMin -------------------------------------------------------------

// The tree sum of the first n (<= per) values (the rest +0).
template <typename T, typename In>
inline T tree_of(const In* vals, uint64_t n, Work<T>& w) {
    std::fill(w.v, w.v + per<T>, T(0.0f));
    std::copy(vals, vals + n, w.v);
    return tree_sum<T>(w.v, per<T>, log2(per<T>), w)[0];
}

// sharedTmpBuffer's minimum in elements for ReduceMax/Min (ReduceMax.md): the first round's
// (value, index) per repeat, block-aligned; with calIndex the second and third rounds' too.
template <typename T>
inline uint64_t extreme_tmp_min(uint64_t first_repeats, bool cal_index) {
    auto up = [](uint64_t a, uint64_t b) { return (a + b - 1) / b; };
    const uint64_t out1 = first_repeats * 2, end1 = up(out1, epb<T>) * epb<T>;
    if (!cal_index) return end1;
    const uint64_t out2 = up(out1, per<T>) * 2, end2 = up(out2, epb<T>) * epb<T>;
    if (out2 <= 2) return end1 + end2;
    const uint64_t out3 = up(out2, per<T>) * 2;
    return end1 + end2 + up(out3, epb<T>) * epb<T>;
}

// Checks sharedTmpBuffer against its minimum and against src; returns its UB pointer.
template <typename T>
elem_t<T>* tmp_operand(BlockContext& b, const char* api, const AscendC::LocalTensor<T>& tmp, uint64_t need,
                       const AscendC::LocalTensor<T>& src, uint64_t src_count) {
    if (tmp.ascrun_bound() && tmp.GetSize() < need) {
        fault(format("%s: sharedTmpBuffer holds %u elements; this call needs at least %llu (the reference's "
                     "minimum for its repeat count)",
                     api, tmp.GetSize(), static_cast<unsigned long long>(need)));
    }
    elem_t<T>* w = ub_operand(b, api, "sharedTmpBuffer", tmp, need);
    const uint64_t t0 = tmp.ascrun_addr(), t1 = t0 + need * sizeof(T);
    const uint64_t s0 = src.ascrun_addr(), s1 = s0 + src_count * sizeof(T);
    if (t0 < s1 && s0 < t1) {
        fault(format("%s: sharedTmpBuffer range [%s, %s) overlaps src range [%s, %s) (the intermediate results "
                     "would overwrite source data still to be read)",
                     api, hex(t0).c_str(), hex(t1).c_str(), hex(s0).c_str(), hex(s1).c_str()));
    }
    return w;
}

inline void no_counter_mode(const BlockContext& b, const char* api) {
    if (b.counter_mode) {
        fault(format("%s: called in counter mode; this API sets normal-mode masks internally (call SetMaskNorm "
                     "first)",
                     api));
    }
}

// The mask + repeat forms of ReduceSum/Max/Min: checks, then the lanes (normal mode). False: a NOP.
template <typename T>
bool setup_composite(BlockContext& b, const char* api, mask::Arg arg, int64_t m0, uint64_t m1, int32_t repeat,
                     int32_t srs, uint64_t& repeats, uint64_t& src_extent, Lanes& lanes) {
    no_counter_mode(b, api);
    if (arg == mask::Arg::Continuous && m0 < 0) {
        fault(format("%s<%s>: mask %lld is negative", api, TypeName<T>::c(), static_cast<long long>(m0)));
    }
    if (repeat < 0) fault(format("%s: repeatTime %d is negative", api, repeat));
    if (srs < 0) fault(format("%s: srcRepStride %d is negative", api, srs));
    const uint64_t blk[1] = {1};
    const uint64_t rep[1] = {static_cast<uint64_t>(srs)};
    mask::Plan p;  // one repeat: checks the mask and gives one repeat's span
    const bool any = mask::make_plan<T>(b, api, true, arg, static_cast<uint64_t>(m0), m1, 1, 1, blk, rep, p);
    Lanes unused;
    if (any) plan_lanes<T>(b, 1, 1, log2(per<T>), lanes, unused);
    mask::restore_defaults(b);
    if (!any || repeat == 0) return false;
    repeats = static_cast<uint64_t>(repeat);
    // A step past the UB makes any second repeat out of range (and keeps the product below 2^64).
    const uint64_t step = std::min<uint64_t>(rep[0] * epb<T>, kUbBytes);
    src_extent = (repeats - 1) * step + p.extent[0];
    return true;
}

template <typename T>
void reduce_sum_masked(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                       const AscendC::LocalTensor<T>& tmp, mask::Arg arg, int64_t m0, uint64_t m1, int32_t repeat,
                       int32_t srs) {
    const char* api = "ReduceSum";
    BlockContext& b = enter();
    uint64_t repeats = 0, src_extent = 0;
    Lanes lanes;
    if (!setup_composite<T>(b, api, arg, m0, m1, repeat, srs, repeats, src_extent, lanes)) return;
    const uint64_t groups = (repeats + per<T> - 1) / per<T>;
    if (groups > per<T>) {
        fault(format("%s: repeatTime %llu needs more than two rounds of partial sums (at most %u repeats)", api,
                     static_cast<unsigned long long>(repeats), per<T> * per<T>));
    }
    const elem_t<T>* s = ub_operand(b, api, "src", src, src_extent);
    elem_t<T>* w = tmp_operand(b, api, tmp, (repeats + epb<T> - 1) / epb<T> * epb<T>, src, src_extent);
    elem_t<T>* d = ub_operand(b, api, "dst", dst, 1, sizeof(T));
    const uint64_t s_rep = static_cast<uint64_t>(srs) * epb<T>;
    Work<T> work;
    T sums[128], top[128];
    uint64_t n_sums = 0, n_top = 0;
    T first = T(0.0f);
    for (uint64_t r = 0; r < repeats; ++r) {
        const T sum = repeat_sums<T>(s + r * s_rep, lanes, log2(per<T>), work)[0];
        if (r == 0) first = sum;
        sums[n_sums++] = sum;
        if (n_sums == per<T> || r + 1 == repeats) {
            top[n_top++] = tree_of(sums, n_sums, work);
            n_sums = 0;
        }
    }
    // One repeat: its sum as it is; up to `per`: the second round's one sum; more: a third round.
    const T result = repeats == 1 ? first : (n_top == 1 ? top[0] : tree_of(top, n_top, work));
    std::memset(w, kUbPoison, ((repeats + epb<T> - 1) / epb<T> * epb<T>) * sizeof(T));
    d[0] = result;
}

template <typename T, bool isSetMask>
void reduce_sum_count(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                      const AscendC::LocalTensor<T>& tmp, int32_t count) {
    const char* api = "ReduceSum";
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<isSetMask>(b, api, count);
    if (n == 0) return;
    ub_operand(b, api, "sharedTmpBuffer", tmp, 0);  // not used by this form ("方式二")
    const elem_t<T>* s = ub_operand(b, api, "src", src, n);
    elem_t<T>* d = ub_operand(b, api, "dst", dst, 1, sizeof(T));
    Work<T> work;
    T acc = T(0.0f);
    for (uint64_t i = 0; i < n; i += per<T>) {
        const uint64_t len = std::min<uint64_t>(per<T>, n - i);
        const T sum = len == per<T> ? tree_sum<T>(s + i, per<T>, log2(per<T>), work)[0] : tree_of(s + i, len, work);
        acc = i == 0 ? sum : arith::add(acc, sum);
    }
    d[0] = acc;
}

// ReduceMax/Min results: checks the index fits, poisons the sharedTmpBuffer minimum, then writes dst
// (which may overlap it).
template <typename T>
void write_extreme(const char* api, elem_t<T>* d, elem_t<T>* w, uint64_t w_elems, T best, uint64_t at,
                   bool cal_index) {
    if (cal_index && sizeof(T) == 2 && at > 65535) {
        fault(format("%s<half>: the index of the result is %llu; half results hold indexes up to 65535 only",
                     api, static_cast<unsigned long long>(at)));
    }
    std::memset(w, kUbPoison, w_elems * sizeof(T));
    d[0] = best;
    if (cal_index) {
        const index_bits<T> idx = static_cast<index_bits<T>>(at);
        std::memcpy(reinterpret_cast<uint8_t*>(d) + sizeof(T), &idx, sizeof(T));
    }
}

template <bool IsMax, typename T>
void reduce_extreme_masked(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                           const AscendC::LocalTensor<T>& tmp, mask::Arg arg, int64_t m0, uint64_t m1,
                           int32_t repeat, int32_t srs, bool cal_index) {
    BlockContext& b = enter();
    uint64_t repeats = 0, src_extent = 0;
    Lanes lanes;
    if (!setup_composite<T>(b, api, arg, m0, m1, repeat, srs, repeats, src_extent, lanes)) return;
    const elem_t<T>* s = ub_operand(b, api, "src", src, src_extent);
    const uint64_t need = extreme_tmp_min<T>(repeats, cal_index);
    elem_t<T>* w = tmp_operand(b, api, tmp, need, src, src_extent);
    elem_t<T>* d = ub_operand(b, api, "dst", dst, cal_index ? 2 : 1, 2 * sizeof(T));
    const uint64_t s_rep = static_cast<uint64_t>(srs) * epb<T>;
    T best = s[lanes.off[0]];
    uint64_t at = lanes.lane[0];
    for (uint64_t r = 0; r < repeats; ++r) {
        const elem_t<T>* sr = s + r * s_rep;
        for (uint32_t i = 0; i < lanes.n; ++i) {
            const T v = sr[lanes.off[i]];
            if (better<IsMax>(v, best)) {
                best = v;
                at = r * s_rep + lanes.lane[i];
            }
        }
    }
    write_extreme<T>(api, d, w, need, best, at, cal_index);
}

template <bool IsMax, typename T>
void reduce_extreme_count(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                          const AscendC::LocalTensor<T>& tmp, int32_t count, bool cal_index) {
    BlockContext& b = enter();
    no_counter_mode(b, api);
    const uint64_t n = checked_count(api, count);
    mask::restore_defaults(b);
    if (n == 0) return;
    const elem_t<T>* s = ub_operand(b, api, "src", src, n);
    // The count form runs floor(count / per) full repeats (at least one), then the tail.
    const uint64_t need = extreme_tmp_min<T>(std::max<uint64_t>(1, n / per<T>), cal_index);
    elem_t<T>* w = tmp_operand(b, api, tmp, need, src, n);
    elem_t<T>* d = ub_operand(b, api, "dst", dst, cal_index ? 2 : 1, 2 * sizeof(T));
    T best = s[0];
    uint64_t at = 0;
    for (uint64_t i = 1; i < n; ++i) {
        if (better<IsMax>(T(s[i]), best)) {
            best = s[i];
            at = i;
        }
    }
    write_extreme<T>(api, d, w, need, best, at, cal_index);
}

}  // namespace reduce
}  // namespace ascrun

namespace ascrun {
namespace reduce {
template <typename T>
using MaxGroups = ExtremeGroups<true, T>;
template <typename T>
using MinGroups = ExtremeGroups<false, T>;
}  // namespace reduce
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_REDUCE_CHECK(NAME) \
    static_assert(::ascrun::reduce::supports<T>, NAME ": T must be half or float (Atlas A2/A3)")

// BlockReduceSum/Max/Min: one result per 32-byte block; dstRepStride in 8 elements; dst aligned to
// 8 elements (16 bytes half, 32 bytes float).
#define ASCRUN_BLOCK_REDUCE(NAME, GROUPS)                                                                          \
    template <typename T, bool isSetMask = true>                                                                   \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask, \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {                \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                \
        ::ascrun::reduce::group_reduce<::ascrun::reduce::GROUPS<T>, T, isSetMask>(                                 \
            #NAME, ::ascrun::reduce::log2(::ascrun::reduce::epb<T>), 8, 8 * sizeof(T), dst, src,                 \
            ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, dstRepStride, srcBlkStride, srcRepStride);      \
    }                                                                                                              \
    template <typename T, bool isSetMask = true>                                                                   \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,                     \
              const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,                       \
              const int32_t srcRepStride) {                                                                        \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                \
        ::ascrun::reduce::group_reduce<::ascrun::reduce::GROUPS<T>, T, isSetMask>(                                 \
            #NAME, ::ascrun::reduce::log2(::ascrun::reduce::epb<T>), 8, 8 * sizeof(T), dst, src,                 \
            ::ascrun::mask::Arg::Bits, static_cast<int64_t>(mask[0]), mask[1], repeatTime, dstRepStride,          \
            srcBlkStride, srcRepStride);                                                                           \
    }
ASCRUN_BLOCK_REDUCE(BlockReduceSum, SumGroups)
ASCRUN_BLOCK_REDUCE(BlockReduceMax, MaxGroups)
ASCRUN_BLOCK_REDUCE(BlockReduceMin, MinGroups)
#undef ASCRUN_BLOCK_REDUCE

// PairReduceSum: lanes (2k, 2k + 1) -> element k; dstRepStride in 128 bytes; dst 32-byte aligned.
template <typename T, bool isSetMask = true>
void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,
                   const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("PairReduceSum");
    ::ascrun::reduce::group_reduce<::ascrun::reduce::SumGroups<T>, T, isSetMask>(
        "PairReduceSum", 1, ::ascrun::reduce::per<T> / 2, 32, dst, src, ::ascrun::mask::Arg::Continuous, mask, 0,
        repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}
template <typename T, bool isSetMask = true>
void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                   const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,
                   const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("PairReduceSum");
    ::ascrun::reduce::group_reduce<::ascrun::reduce::SumGroups<T>, T, isSetMask>(
        "PairReduceSum", 1, ::ascrun::reduce::per<T> / 2, 32, dst, src, ::ascrun::mask::Arg::Bits,
        static_cast<int64_t>(mask[0]), mask[1], repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}

// WholeReduceSum: one sum per repeat; dstRepStride in elements.
template <typename T, bool isSetMask = true>
void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("WholeReduceSum");
    ::ascrun::reduce::group_reduce<::ascrun::reduce::SumGroups<T>, T, isSetMask>(
        "WholeReduceSum", ::ascrun::reduce::log2(::ascrun::reduce::per<T>), 1, sizeof(T), dst, src,
        ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}
template <typename T, bool isSetMask = true>
void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                    const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("WholeReduceSum");
    ::ascrun::reduce::group_reduce<::ascrun::reduce::SumGroups<T>, T, isSetMask>(
        "WholeReduceSum", ::ascrun::reduce::log2(::ascrun::reduce::per<T>), 1, sizeof(T), dst, src,
        ::ascrun::mask::Arg::Bits, static_cast<int64_t>(mask[0]), mask[1], repeatTime, dstRepStride, srcBlkStride,
        srcRepStride);
}

// RepeatReduceSum: WholeReduceSum with a continuous mask; dstBlkStride has no effect (its page).
template <typename T, bool isSetMask = true>
void RepeatReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                     const int32_t mask, const int32_t dstBlkStride, const int32_t srcBlkStride,
                     const int32_t dstRepStride, const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("RepeatReduceSum");
    (void)dstBlkStride;
    ::ascrun::reduce::group_reduce<::ascrun::reduce::SumGroups<T>, T, isSetMask>(
        "RepeatReduceSum", ::ascrun::reduce::log2(::ascrun::reduce::per<T>), 1, sizeof(T), dst, src,
        ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}

// WholeReduceMax/Min: one extreme (and/or its lane) per repeat, laid out per ReduceOrder.
#define ASCRUN_WHOLE_EXTREME(NAME, IS_MAX)                                                                          \
    template <typename T, bool isSetMask = true>                                                                    \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,  \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                   \
              ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                                                 \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                 \
        ::ascrun::reduce::whole_extreme<IS_MAX, T, isSetMask>(#NAME, dst, src, ::ascrun::mask::Arg::Continuous,    \
                                                              mask, 0, repeatTime, dstRepStride, srcBlkStride,      \
                                                              srcRepStride, order);                                 \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                         \
              const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,                     \
              const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                     \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                 \
        ::ascrun::reduce::whole_extreme<IS_MAX, T, isSetMask>(#NAME, dst, src, ::ascrun::mask::Arg::Bits,          \
                                                              static_cast<int64_t>(mask[0]), mask[1], repeatTime,   \
                                                              dstRepStride, srcBlkStride, srcRepStride, order);     \
    }
ASCRUN_WHOLE_EXTREME(WholeReduceMax, true)
ASCRUN_WHOLE_EXTREME(WholeReduceMin, false)
#undef ASCRUN_WHOLE_EXTREME

// ReduceSum: count form (isSetMask as for the other count forms) and mask + repeat forms.
template <typename T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count) {
    ASCRUN_REDUCE_CHECK("ReduceSum");
    ::ascrun::reduce::reduce_sum_count<T, isSetMask>(dst, src, sharedTmpBuffer, count);
}
template <typename T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("ReduceSum");
    ::ascrun::reduce::reduce_sum_masked<T>(dst, src, sharedTmpBuffer, ::ascrun::mask::Arg::Continuous, mask, 0,
                                           repeatTime, srcRepStride);
}
template <typename T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride) {
    ASCRUN_REDUCE_CHECK("ReduceSum");
    ::ascrun::reduce::reduce_sum_masked<T>(dst, src, sharedTmpBuffer, ::ascrun::mask::Arg::Bits,
                                           static_cast<int64_t>(mask[0]), mask[1], repeatTime, srcRepStride);
}

// ReduceMax/ReduceMin: count form and mask + repeat forms, optionally with the index.
#define ASCRUN_REDUCE_EXTREME(NAME, IS_MAX)                                                                           \
    template <typename T>                                                                                             \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,           \
              const int32_t count, bool calIndex = 0) {                                                               \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                   \
        ::ascrun::reduce::reduce_extreme_count<IS_MAX, T>(#NAME, dst, src, sharedTmpBuffer, count, calIndex);        \
    }                                                                                                                 \
    template <typename T>                                                                                             \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,           \
              const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0) {          \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                   \
        ::ascrun::reduce::reduce_extreme_masked<IS_MAX, T>(#NAME, dst, src, sharedTmpBuffer,                         \
                                                           ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime,      \
                                                           srcRepStride, calIndex);                                   \
    }                                                                                                                 \
    template <typename T>                                                                                             \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,           \
              const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0) {       \
        ASCRUN_REDUCE_CHECK(#NAME);                                                                                   \
        ::ascrun::reduce::reduce_extreme_masked<IS_MAX, T>(#NAME, dst, src, sharedTmpBuffer,                         \
                                                           ::ascrun::mask::Arg::Bits, static_cast<int64_t>(mask[0]),  \
                                                           mask[1], repeatTime, srcRepStride, calIndex);              \
    }
ASCRUN_REDUCE_EXTREME(ReduceMax, true)
ASCRUN_REDUCE_EXTREME(ReduceMin, false)
#undef ASCRUN_REDUCE_EXTREME
#undef ASCRUN_REDUCE_CHECK

}  // namespace AscendC

#pragma GCC visibility pop

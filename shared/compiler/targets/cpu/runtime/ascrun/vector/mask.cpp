// ascrun cpu runtime: the mask + repeat planner of vector/mask.h, compiled once per toolchain.
#include "ascrun/vector/mask.h"

#include <algorithm>

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace mask {
namespace {

// epb[o]: elements of operand o in a 32-byte block. A run breaks where an operand with a block
// stride other than 1 starts a new block.
uint32_t build_runs(uint64_t lo, uint64_t hi, uint32_t per, const uint32_t* epb, int n_ops, const uint64_t* blk,
                    Run* out) {
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

}  // namespace

void lay_out_sized(Plan& p, uint32_t elem_size, uint64_t repeats, uint64_t full_lo, uint64_t full_hi,
                   uint64_t last_lo, uint64_t last_hi, int n_ops, const uint64_t* blk_blocks,
                   const uint64_t* rep_blocks, const uint32_t* elem_bytes) {
    const uint32_t per = 256 / elem_size;
    p.repeats = repeats;
    uint64_t blk[kMaxOperands] = {};
    uint32_t epb[kMaxOperands] = {};
    for (int o = 0; o < n_ops; ++o) {
        epb[o] = 32 / (elem_bytes != nullptr ? elem_bytes[o] : elem_size);
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

bool make_plan_sized(BlockContext& b, const char* api, const char* type, uint32_t elem_size, bool set_mask, Arg arg,
                     uint64_t m0, uint64_t m1, uint8_t repeat_times, int n_ops, const uint64_t* blk_blocks,
                     const uint64_t* rep_blocks, Plan& p, const uint32_t* elem_bytes) {
    const uint32_t per = 256 / elem_size;
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
                         api, type, static_cast<unsigned long long>(m0), per, per, type));
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
                         type, static_cast<unsigned long long>(n)));
        }
        repeats = (n + per - 1) / per;
        prefix_bits(per, full_lo, full_hi);
        prefix_bits(n - (repeats - 1) * per, last_lo, last_hi);
    } else {
        if (elem_size >= 4) hi = 0;             // 32-bit elements: only the low 64 bits are mask bits,
        if (elem_size == 8) lo &= 0xffffffffu;  // 64-bit elements: the low 32
        if (repeat_times == 0 || (lo == 0 && hi == 0)) return false;
        repeats = repeat_times;
        full_lo = last_lo = lo;
        full_hi = last_hi = hi;
    }
    lay_out_sized(p, elem_size, repeats, full_lo, full_hi, last_lo, last_hi, n_ops, blk_blocks, rep_blocks,
                  elem_bytes);
    return true;
}

void check_overlap_sized(const char* api, const Plan& p, int d_op, uint64_t d, uint32_t d_size, uint32_t d_elem,
                         int s_op, const char* s_role, uint64_t s, uint32_t s_size, uint32_t s_elem, bool accumulate) {
    const uint64_t d_end = d + p.extent[d_op] * d_elem, s_end = s + p.extent[s_op] * s_elem;
    if (d_end <= s || s_end <= d) return;
    const uint64_t d_own = uint64_t{d_size} * d_elem, s_own = uint64_t{s_size} * s_elem;
    if (d_elem != s_elem) {
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

}  // namespace mask
}  // namespace ascrun

#pragma GCC visibility pop

// ascrun cpu runtime: compare and select (比较与选择): Compare (count form; mask + repeat forms with
// BinaryRepeatParams; the form without dst that writes the CmpMask register), CompareScalar,
// GetCmpMask, SetCmpMask, Select (SELMODE 0, 1, 2: count, mask + repeat and register forms).
//
// Model, Atlas A2/A3 (Compare.md, Compare（结果存入寄存器）.md, Compares.md, GetCmpMask(ISASI).md,
// SetCmpMask(ISASI).md, Select.md; the instruction rules of C API asc_lt.md / asc_select.md):
//  - A comparison result is one bit per element: element k of the instruction is bit k % 8 of byte
//    k / 8. NaN compares false except under NE (IEEE).
//  - Compare / CompareScalar with a dst compare every element of each repeat: on A2/A3 the mask is
//    a reserved parameter (neither the argument nor the register is used; the register keeps its
//    value). Repeat r's 256 / sizeof(T) bits go to dst bytes [r * per / 8, (r + 1) * per / 8): the
//    dst strides are not used (the count form issues the default strides and packs repeats back to
//    back). Count form: count * sizeof(T) / 256 whole repeats; a partial last repeat is not compared.
//  - Compare without dst: one repeat under the mask (src block strides apply); each selected
//    element sets or clears its bit of CmpMask, the others keep theirs.
//  - Select: dst = bit ? src0 : src1 on the elements the mask selects (the others keep their
//    values). Mode 0: the bits are CmpMask's, the same 256 / sizeof(T) for every repeat. Mode 1:
//    src1 is a scalar, held in CmpMask; the bits come from selMask, consumed continuously (repeat r
//    uses bits [r * per, (r + 1) * per)). Mode 2: like mode 1 with a src1 tensor; CmpMask holds
//    selMask's UB address. The forms with a selMask argument first load CmpMask as the device does
//    (mode 0: selMask's first 16 bytes; modes 1 and 2: a 32-element Duplicate of the scalar / the
//    address into the scratch Atlas A2/A3 reserve at UB 184 KiB, then its first 16 bytes) and
//    always apply their mask argument (isSetMask is reserved). The count forms run in counter mode
//    and end with ResetMask + SetMaskNorm.
// Faults where the reference leaves the result undefined: Compare/CompareScalar in counter mode,
// int32_t with a CMPMODE other than EQ (the device compares EQ whatever the mode), dst overlapping a
// source of Compare/CompareScalar, GetCmpMask into less than 128 bytes, Select sources in the scratch,
// a selMask range overlapping dst, a SELMODE that does not match the src1 form.
//
// Ascend 950 (__NPU_ARCH__ 3510; its vector APIs run as VF calls of the Reg API, dav_3510 impl headers):
//  - Compare / CompareScalar count form: exactly `count` elements, in ceil(count / n) repeats of n =
//    256 / sizeof(T) (64 for 64-bit types), whatever the mask mode; each repeat stores n / 8 dst bytes,
//    the bits past `count` 0. For count 32 of float: 8 bytes, bits 32..63 zero (compare_count_950).
//  - Compare / CompareScalar mask + repeat forms: the mask applies, in normal or counter mode; the
//    bits of unselected elements are 0; repeats pack back to back as on Atlas A2/A3.
//  - int32_t compares under every CMPMODE; the dtype tables are the 950's (cmp_supports, select_supports_950).
//  - Select with a selMask argument uses no scratch; the bits of the elements it selects are read as above.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

}  // namespace AscendC

namespace ascrun {
namespace cmpsel {

using AscendC::CMPMODE;
using AscendC::SELMODE;

constexpr uint32_t kScratch = 184 * 1024;  // Select's scratch on Atlas A2/A3 (TMP_UB_OFFSET)
constexpr uint32_t kScratchElems = 32;     // the Duplicate that fills it writes 32 elements

inline const char* mode_name(CMPMODE m) {
    static const char* const names[] = {"LT", "GT", "EQ", "LE", "GE", "NE"};
    return static_cast<uint8_t>(m) < 6 ? names[static_cast<uint8_t>(m)] : "?";
}

template <typename T>
void check_cmp_mode(const char* api, CMPMODE m) {
    if (static_cast<uint8_t>(m) > static_cast<uint8_t>(CMPMODE::NE)) {
        fault(format("%s<%s>: cmpMode %u is not a CMPMODE (LT, GT, EQ, LE, GE, NE)", api, TypeName<T>::c(),
                     static_cast<unsigned>(m)));
    }
    if (!mask::kAscend950 && std::is_same<T, int32_t>::value && m != CMPMODE::EQ) {
        fault(format("%s<int32_t>: CMPMODE::%s is not supported for int32_t (Atlas A2/A3 compare int32_t with EQ "
                     "only; the device would compare EQ)",
                     api, mode_name(m)));
    }
}

// `what`: why the mask mode matters to the form, for the message.
inline void require_normal_mode(const BlockContext& b, const char* api, const char* what) {
    if (b.counter_mode) {
        fault(format("%s: the reference does not define this form in counter mode (%s); call SetMaskNorm first",
                     api, what));
    }
}

// Calls f(pred) with the comparison of mode m, so each element loop is specialised per mode.
template <typename F>
void with_pred(CMPMODE m, F&& f) {
    switch (m) {
        case CMPMODE::LT: f([](auto a, auto c) { return a < c; }); break;
        case CMPMODE::GT: f([](auto a, auto c) { return a > c; }); break;
        case CMPMODE::EQ: f([](auto a, auto c) { return a == c; }); break;
        case CMPMODE::LE: f([](auto a, auto c) { return a <= c; }); break;
        case CMPMODE::GE: f([](auto a, auto c) { return a >= c; }); break;
        case CMPMODE::NE: f([](auto a, auto c) { return a != c; }); break;
    }
}

// The first `elems` elements of t must not share memory with bytes [b, b_end) of another operand.
template <typename T>
void check_apart(const char* api, const char* role, const AscendC::LocalTensor<T>& t, uint64_t elems,
                 const char* b_role, uint64_t b, uint64_t b_end, const char* why) {
    check_disjoint(api, role, t.ascrun_addr(), t.ascrun_addr() + elems * sizeof(T), b_role, b, b_end, why);
}

// Compare / CompareScalar with a dst over plan p (operands src0, src1, dst bit): `out_bytes` dst bytes
// are written, the bits of the elements the plan leaves out 0. src1 == nullptr: compare with `scalar`.
template <typename T, typename U>
void compare_run(BlockContext& b, const char* api, const AscendC::LocalTensor<U>& dst,
                 const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>* src1, T scalar, CMPMODE m,
                 const mask::Plan& p, uint64_t out_bytes) {
    uint8_t* d = reinterpret_cast<uint8_t*>(ub_operand(b, api, "dst", dst, out_bytes));
    const elem_t<T>* a = ub_operand(b, api, "src0", src0, p.extent[0]);
    const char* rule = "the reference defines no overlap of dst with a source for this instruction";
    const uint64_t s0 = src0.ascrun_addr();
    check_apart(api, "dst", dst, out_bytes, "src0", s0, s0 + p.extent[0] * sizeof(T), rule);
    const elem_t<T>* c = nullptr;
    if (src1 != nullptr) {
        c = ub_operand(b, api, "src1", *src1, p.extent[1]);
        const uint64_t s1 = src1->ascrun_addr();
        check_apart(api, "dst", dst, out_bytes, "src1", s1, s1 + p.extent[1] * sizeof(T), rule);
    }
    std::memset(d, 0, out_bytes);
    with_pred(m, [&](auto pred) {
        mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
            for (uint32_t i = 0; i < len; ++i) {
                const uint64_t k = o[2] + i;
                const T rhs = c != nullptr ? T(c[o[1] + i]) : scalar;
                d[k / 8] |= static_cast<uint8_t>(static_cast<unsigned>(pred(T(a[o[0] + i]), rhs)) << (k % 8));
            }
        });
    });
}

// Atlas A2/A3's Compare / CompareScalar with a dst (vcmpv / vcmpvs): `repeats` full repeats, the mask
// unused. Strides in 32-byte blocks; the dst's are not used (see the header).
template <typename T, typename U>
void compare_to_dst(const char* api, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0,
                    const AscendC::LocalTensor<T>* src1, T scalar, CMPMODE m, uint64_t repeats, uint64_t blk0,
                    uint64_t rep0, uint64_t blk1, uint64_t rep1) {
    BlockContext& b = enter();
    check_cmp_mode<T>(api, m);
    require_normal_mode(b, api, "on Atlas A2/A3 it ignores the mask");
    if (repeats == 0) return;  // a NOP on Atlas A2/A3
    constexpr uint32_t per = mask::per_repeat<T>;
    uint64_t lo, hi;
    mask::prefix_bits(per, lo, hi);
    const uint64_t blk[3] = {blk0, blk1, 1};
    const uint64_t rep[3] = {rep0, rep1, per / mask::per_block<T>};
    mask::Plan p;
    mask::lay_out<T>(p, repeats, lo, hi, lo, hi, 3, blk, rep);
    compare_run<T, U>(b, api, dst, src0, src1, scalar, m, p, repeats * per / 8);
}

// Ascend 950's mask + repeat forms (dav_3510 kernel_operator_vec_cmp_impl.h CompareLevel0NormalMode /
// CounterMode, the CompareScalar ones alike): the mask applies (Compare.md, Compares.md "针对Ascend 950PR/
// Ascend 950DT，设置有效"), in normal or counter mode; each repeat stores its 256 / sizeof(T) result bits
// to the next dst bytes (StoreUnAlign of the MaskReg), the bits of unselected elements 0 (Reg矢量计算/
// 比较与选择/Compare.md: "通过mask参数控制的未选中元素在目的操作数中被置零").
template <typename T, typename U, bool isSetMask>
void compare_masked_950(const char* api, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0,
                        const AscendC::LocalTensor<T>* src1, T scalar, CMPMODE m, mask::Arg arg, uint64_t m0,
                        uint64_t m1, uint8_t repeat, uint64_t blk0, uint64_t rep0, uint64_t blk1, uint64_t rep1) {
    BlockContext& b = enter();
    check_cmp_mode<T>(api, m);
    constexpr uint32_t per = mask::per_repeat<T>;
    const uint64_t blk[3] = {blk0, blk1, 1};
    const uint64_t rep[3] = {rep0, rep1, per / mask::per_block<T>};
    mask::Plan p;
    if (!mask::make_plan<T>(b, api, isSetMask, arg, m0, m1, repeat, 3, blk, rep, p)) return;
    compare_run<T, U>(b, api, dst, src0, src1, scalar, m, p, p.repeats * per / 8);
}

// Elements of one repeat of Ascend 950's count form: 256 bytes, 64-bit types two registers' worth.
template <typename T>
constexpr uint64_t count_repeat_950 = sizeof(T) == 8 ? 64 : 256 / sizeof(T);

// Ascend 950's count form (dav_3510 kernel_operator_vec_compare_continuous_impl.h CompareLevel2,
// kernel_operator_vec_cmp_impl.h CompareScalarLevel2): ceil(count / n) repeats of n = count_repeat_950
// elements under UpdateMask, so exactly `count` elements are compared, whatever the mask mode; each
// repeat stores n / 8 dst bytes (a partial last one too), the bits past `count` 0. Compare.md's "count
// 个元素所占空间256字节对齐" rule (the unaligned tail not compared) is Atlas A2/A3's vcmpv.
template <typename T, typename U>
void compare_count_950(const char* api, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0,
                       const AscendC::LocalTensor<T>* src1, T scalar, CMPMODE m, uint32_t count) {
    BlockContext& b = enter();
    check_cmp_mode<T>(api, m);
    if (count == 0) return;
    constexpr uint64_t per = count_repeat_950<T>;
    const uint64_t n = count;
    mask::Plan p;  // one run of n elements, the same offset in every operand
    p.repeats = 1;
    p.n_last = 1;
    p.last[0] = mask::Run{{0, 0, 0, 0}, count};
    p.extent[0] = p.extent[1] = p.extent[2] = n;
    compare_run<T, U>(b, api, dst, src0, src1, scalar, m, p, (n + per - 1) / per * per / 8);
}

// Compare without dst (vcmp): one repeat under the mask into CmpMask.
template <typename T, bool isSetMask>
void compare_to_register(const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>& src1, CMPMODE m,
                         mask::Arg arg, uint64_t m0, uint64_t m1, const AscendC::BinaryRepeatParams& rp) {
    BlockContext& b = enter();
    const char* api = "Compare (CmpMask)";
    check_cmp_mode<T>(api, m);
    require_normal_mode(b, api, "it compares one fixed 256-byte repeat");
    const uint64_t blk[3] = {rp.src0BlkStride, rp.src1BlkStride, 1};
    const uint64_t rep[3] = {0, 0, 0};
    mask::Plan p;
    if (!mask::make_plan<T>(b, api, isSetMask, arg, m0, m1, 1, 3, blk, rep, p)) return;
    const elem_t<T>* a = ub_operand(b, api, "src0", src0, p.extent[0]);
    const elem_t<T>* c = ub_operand(b, api, "src1", src1, p.extent[1]);
    with_pred(m, [&](auto pred) {
        mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
            for (uint32_t i = 0; i < len; ++i) {
                const uint64_t k = o[2] + i;
                const uint8_t bit = static_cast<uint8_t>(1u << (k % 8));
                if (pred(T(a[o[0] + i]), T(c[o[1] + i]))) {
                    b.cmp_mask[k / 8] |= bit;
                } else {
                    b.cmp_mask[k / 8] &= static_cast<uint8_t>(~bit);
                }
            }
        });
    });
}

// ---- Select -------------------------------------------------------------------------------------

// Compare / CompareScalar dtypes. Atlas A2/A3: Compare.md, Compares.md (half, float, int32_t with EQ
// only). Ascend 950 (Compare.md, Compares.md 数据类型 "针对Ascend 950PR/Ascend 950DT"): every CMPMODE on
// the types below, the 8- and 64-bit ones in the count form only (double, also listed, is not modelled).
template <typename T>
constexpr bool cmp_supports = mask::kAscend950 ? one_of_v<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t,
                                                           int32_t, uint32_t, float, int64_t, uint64_t>
                                               : one_of_v<T, half, float, int32_t>;
template <typename T>
constexpr bool cmp_count_only = mask::kAscend950 && one_of_v<T, int8_t, uint8_t, int64_t, uint64_t>;

// Select dtypes. Atlas A2/A3 (Select.md): half, float. Ascend 950, the forms with a selMask argument:
// the b16/b32 types of dav_3510 kernel_operator_vec_sel_impl.h VselImpl (Select.md 数据类型 adds int8_t,
// uint8_t, int64_t, uint64_t and complex types in the count form, not modelled); the register forms
// keep Atlas A2/A3's.
template <typename T>
constexpr bool select_supports = one_of_v<T, half, float>;
template <typename T>
constexpr bool select_supports_950 =
    mask::kAscend950 && one_of_v<T, half, int16_t, uint16_t, bfloat16_t, int32_t, uint32_t, float>;
template <typename U>
constexpr bool sel_mask_supports = one_of_v<U, uint8_t, uint16_t, uint32_t, uint64_t>;

inline void check_sel_mode(const char* api, SELMODE mode, bool scalar_src1) {
    if (static_cast<uint8_t>(mode) > static_cast<uint8_t>(SELMODE::VSEL_TENSOR_TENSOR_MODE)) {
        fault(format("%s: selMode %u is not a SELMODE (0, 1, 2)", api, static_cast<unsigned>(mode)));
    }
    if (scalar_src1 != (mode == SELMODE::VSEL_TENSOR_SCALAR_MODE)) {
        fault(format("%s: selMode %u with a %s src1: mode 1 (VSEL_TENSOR_SCALAR_MODE) takes a scalar src1, modes 0 "
                     "and 2 a tensor (the device would not select)",
                     api, static_cast<unsigned>(mode), scalar_src1 ? "scalar" : "tensor"));
    }
}

// The Duplicate into the scratch and the CmpMask load that precede modes 1 and 2. Returns the bytes written.
template <typename V>
uint32_t fill_scratch(BlockContext& b, V value) {
    uint8_t* s = b.ub + kScratch;
    for (uint32_t i = 0; i < kScratchElems; ++i) std::memcpy(s + i * sizeof(V), &value, sizeof(V));
    std::memcpy(b.cmp_mask, s, sizeof(b.cmp_mask));
    return kScratchElems * sizeof(V);
}

// What a Select with a selMask argument loads into CmpMask before it runs (see the header).
// Returns the scratch bytes it wrote (0 for mode 0).
template <typename T, typename U>
uint32_t select_prologue(BlockContext& b, const char* api, SELMODE mode, const AscendC::LocalTensor<U>& sel,
                         T scalar) {
    if (mode == SELMODE::VSEL_TENSOR_SCALAR_MODE) return fill_scratch<T>(b, scalar);
    if (mode == SELMODE::VSEL_TENSOR_TENSOR_MODE) return fill_scratch<uint32_t>(b, sel.ascrun_addr());
    // Mode 0: the bits of one repeat must lie in selMask; the register load reads 16 bytes.
    constexpr uint64_t bytes = mask::per_repeat<T> / 8;
    ub_operand(b, api, "selMask", sel, (bytes + sizeof(U) - 1) / sizeof(U));
    std::memcpy(b.cmp_mask, b.ub + sel.ascrun_addr(), sizeof(b.cmp_mask));
    return 0;
}

// vsel over plan p (operands dst, src0, src1, selection bit). src1 == nullptr: mode 1, the scalar in
// CmpMask. sel: the selMask tensor the bits of modes 1 and 2 come from, or nullptr for mode 2's
// register form (the bits at the UB address in CmpMask). scratch: bytes the prologue wrote at kScratch.
template <typename T, typename U>
void select_run(BlockContext& b, const char* api, SELMODE mode, const AscendC::LocalTensor<T>& dst,
                const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>* src1,
                const AscendC::LocalTensor<U>* sel, const mask::Plan& p, uint32_t scratch) {
    elem_t<T>* d = ub_operand(b, api, "dst", dst, p.extent[0]);
    const elem_t<T>* s0 = ub_operand(b, api, "src0", src0, p.extent[1]);
    const elem_t<T>* s1 = src1 != nullptr ? ub_operand(b, api, "src1", *src1, p.extent[2]) : nullptr;
    mask::check_overlap(api, p, 0, dst, 1, "src0", src0, false);
    if (src1 != nullptr) mask::check_overlap(api, p, 0, dst, 2, "src1", *src1, false);

    const uint64_t sel_bytes = (p.extent[3] + 7) / 8;
    const uint8_t* bits = b.cmp_mask;
    if (mode != SELMODE::VSEL_CMPMASK_SPR) {
        uint64_t addr;
        if (sel != nullptr) {
            ub_operand(b, api, "selMask", *sel, (sel_bytes + sizeof(U) - 1) / sizeof(U));
            addr = sel->ascrun_addr();
        } else {
            uint32_t a32;
            std::memcpy(&a32, b.cmp_mask, sizeof(a32));
            addr = a32;
            if (addr % kUbAlign != 0 || addr + sel_bytes > kUbBytes) {
                fault(format("%s: CmpMask holds selMask address %s; %llu bytes of selection bits from there are not "
                             "a 32-byte aligned Unified Buffer range (SetCmpMask a tensor holding the address)",
                             api, hex(addr).c_str(), static_cast<unsigned long long>(sel_bytes)));
            }
        }
        bits = b.ub + addr;
        check_apart(api, "dst", dst, p.extent[0], "selMask", addr, addr + sel_bytes,
                    "selMask is read over all repeats while dst is written");
    }
    if (scratch != 0) {
        const uint64_t s = kScratch, s_end = kScratch + scratch;
        const char* rule = "Select modes 1 and 2 first fill this scratch, which Atlas A2/A3 reserve from UB 184 KiB";
        check_apart(api, "src0", src0, p.extent[1], "scratch", s, s_end, rule);
        if (src1 != nullptr) check_apart(api, "src1", *src1, p.extent[2], "scratch", s, s_end, rule);
        if (sel != nullptr) {
            check_disjoint(api, "selMask", sel->ascrun_addr(), sel->ascrun_addr() + sel_bytes, "scratch", s, s_end,
                           rule);
        }
    }

    if (s1 != nullptr) {
        mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
            for (uint32_t i = 0; i < len; ++i) {
                const uint64_t k = o[3] + i;
                d[o[0] + i] = (bits[k / 8] >> (k % 8)) & 1u ? s0[o[1] + i] : s1[o[2] + i];
            }
        });
    } else {
        T scalar;
        std::memcpy(&scalar, b.cmp_mask, sizeof(T));
        mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
            for (uint32_t i = 0; i < len; ++i) {
                const uint64_t k = o[3] + i;
                d[o[0] + i] = (bits[k / 8] >> (k % 8)) & 1u ? T(s0[o[1] + i]) : scalar;
            }
        });
    }
}

// Plan operands: dst, src0, src1, and the selection bit (the same bits every repeat in mode 0).
inline void select_strides(SELMODE mode, const AscendC::BinaryRepeatParams& rp, uint64_t* blk, uint64_t* rep,
                           uint64_t bits_per_repeat_blocks) {
    blk[0] = rp.dstBlkStride;
    blk[1] = rp.src0BlkStride;
    blk[2] = rp.src1BlkStride;
    blk[3] = 1;
    rep[0] = rp.dstRepStride;
    rep[1] = rp.src0RepStride;
    rep[2] = rp.src1RepStride;
    rep[3] = mode == SELMODE::VSEL_CMPMASK_SPR ? 0 : bits_per_repeat_blocks;
}

// The forms with a selMask argument: mask + repeat (count == false) or count (counter mode).
template <typename T, typename U>
void select_with_mask(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& sel,
                      const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>* src1, T scalar,
                      SELMODE mode, bool count_form, mask::Arg arg, uint64_t m0, uint64_t m1, uint8_t repeat,
                      const AscendC::BinaryRepeatParams& rp) {
    BlockContext& b = enter();
    const char* api = "Select";
    check_sel_mode(api, mode, src1 == nullptr);
    uint32_t scratch = 0;
    if (mask::kAscend950 && mode != SELMODE::VSEL_CMPMASK_SPR) {
        // Select.md: on Ascend 950 the count forms and the mask forms with a selMask argument use no 8 KB
        // scratch ("不涉及8KB Unified Buffer临时空间的占用"); mode 1 holds its scalar in CmpMask
        if (mode == SELMODE::VSEL_TENSOR_SCALAR_MODE) std::memcpy(b.cmp_mask, &scalar, sizeof(T));
    } else {
        scratch = select_prologue<T, U>(b, api, mode, sel, scalar);
    }
    uint64_t blk[4], rep[4];
    select_strides(mode, rp, blk, rep, mask::per_repeat<T> / mask::per_block<T>);
    if (count_form) b.counter_mode = true;  // SetMaskCount; the count is the mask
    mask::Plan p;
    if (mask::make_plan<T>(b, api, true, arg, m0, m1, repeat, 4, blk, rep, p)) {
        select_run<T, U>(b, api, mode, dst, src0, src1, &sel, p, scratch);
    }
    if (count_form) mask::restore_defaults(b);  // ResetMask, SetMaskNorm
}

// The register forms: the mask register and CmpMask as they are.
template <typename T, typename U>
void select_from_registers(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>* sel,
                           const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>* src1, SELMODE mode,
                           uint8_t repeat, const AscendC::BinaryRepeatParams& rp) {
    BlockContext& b = enter();
    const char* api = "Select";
    uint64_t blk[4], rep[4];
    select_strides(mode, rp, blk, rep, mask::per_repeat<T> / mask::per_block<T>);
    mask::Plan p;
    if (!mask::make_plan<T>(b, api, false, mask::Arg::Register, 0, 0, repeat, 4, blk, rep, p)) return;
    select_run<T, U>(b, api, mode, dst, src0, src1, sel, p, 0);
}

// The mask + repeat forms: the Ascend 950 applies the mask (Compare.md); on Atlas A2/A3 it is reserved.
template <typename T, typename U, bool isSetMask>
void compare_repeats(const char* api, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0,
                     const AscendC::LocalTensor<T>* src1, T scalar, CMPMODE m, mask::Arg arg, uint64_t m0,
                     uint64_t m1, uint8_t repeat, uint64_t blk0, uint64_t rep0, uint64_t blk1, uint64_t rep1) {
    if constexpr (mask::kAscend950) {
        compare_masked_950<T, U, isSetMask>(api, dst, src0, src1, scalar, m, arg, m0, m1, repeat, blk0, rep0, blk1,
                                            rep1);
    } else {
        compare_to_dst<T, U>(api, dst, src0, src1, scalar, m, repeat, blk0, rep0, blk1, rep1);
    }
}

}  // namespace cmpsel
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_CMP_T(API, T)                                                                                     \
    static_assert(::ascrun::mask::kAscend950 || ::ascrun::cmpsel::cmp_supports<T>,                                  \
                  API ": T must be half, float or int32_t (Atlas A2/A3; int32_t with EQ only)");               \
    static_assert(!::ascrun::mask::kAscend950 || ::ascrun::cmpsel::cmp_supports<T>,                                \
                  API ": T must be one of int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, "      \
                      "uint32_t, float, int64_t, uint64_t (Ascend 950; double is not modelled)")
#define ASCRUN_CMP_MASKED_T(API, T) \
    static_assert(!::ascrun::cmpsel::cmp_count_only<T>, API ": on Ascend 950 this T takes the count form only")
#define ASCRUN_CMP_U(U) \
    static_assert(::ascrun::one_of_v<U, int8_t, uint8_t>, "Compare: dst must be an int8_t or uint8_t tensor")

template <typename T, typename U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t count) {
    ASCRUN_CMP_T("Compare", T);
    ASCRUN_CMP_U(U);
    if constexpr (::ascrun::mask::kAscend950) {
        ::ascrun::cmpsel::compare_count_950<T, U>("Compare", dst, src0, &src1, T(0), cmpMode, count);
    } else {
        ::ascrun::cmpsel::compare_to_dst<T, U>("Compare", dst, src0, &src1, T(0), cmpMode,
                                              static_cast<uint64_t>(count) * sizeof(T) / ::ascrun::kRepeatBytes, 1,
                                              8, 1, 8);
    }
}
template <typename T, typename U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    ASCRUN_CMP_T("Compare", T);
    ASCRUN_CMP_MASKED_T("Compare", T);
    ASCRUN_CMP_U(U);
    ::ascrun::cmpsel::compare_repeats<T, U, isSetMask>("Compare", dst, src0, &src1, T(0), cmpMode,
                                                      ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime,
                                                      repeatParams.src0BlkStride, repeatParams.src0RepStride,
                                                      repeatParams.src1BlkStride, repeatParams.src1RepStride);
}
template <typename T, typename U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             const uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    ASCRUN_CMP_T("Compare", T);
    ASCRUN_CMP_MASKED_T("Compare", T);
    ASCRUN_CMP_U(U);
    ::ascrun::cmpsel::compare_repeats<T, U, isSetMask>("Compare", dst, src0, &src1, T(0), cmpMode,
                                                      ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime,
                                                      repeatParams.src0BlkStride, repeatParams.src0RepStride,
                                                      repeatParams.src1BlkStride, repeatParams.src1RepStride);
}
#undef ASCRUN_CMP_U

#define ASCRUN_CMP_REG_TYPES(T) \
    static_assert(::ascrun::one_of_v<T, half, float>, "Compare (result in CmpMask): T must be half or float")

template <typename T, bool isSetMask = true>
void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask[],
             const BinaryRepeatParams& repeatParams) {
    ASCRUN_CMP_REG_TYPES(T);
    ::ascrun::cmpsel::compare_to_register<T, isSetMask>(src0, src1, cmpMode, ::ascrun::mask::Arg::Bits, mask[0],
                                                        mask[1], repeatParams);
}
template <typename T, bool isSetMask = true>
void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask,
             const BinaryRepeatParams& repeatParams) {
    ASCRUN_CMP_REG_TYPES(T);
    ::ascrun::cmpsel::compare_to_register<T, isSetMask>(src0, src1, cmpMode, ::ascrun::mask::Arg::Continuous, mask,
                                                        0, repeatParams);
}
#undef ASCRUN_CMP_REG_TYPES

#define ASCRUN_CMPS_U(U) \
    static_assert(std::is_same<U, uint8_t>::value, "CompareScalar: dst must be a uint8_t tensor")

template <typename T, typename U>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                   uint32_t count) {
    ASCRUN_CMP_T("CompareScalar", T);
    ASCRUN_CMPS_U(U);
    if constexpr (::ascrun::mask::kAscend950) {
        ::ascrun::cmpsel::compare_count_950<T, U>("CompareScalar", dst, src0, nullptr, src1Scalar, cmpMode, count);
    } else {
        ::ascrun::cmpsel::compare_to_dst<T, U>("CompareScalar", dst, src0, nullptr, src1Scalar, cmpMode,
                                              static_cast<uint64_t>(count) * sizeof(T) / ::ascrun::kRepeatBytes, 1,
                                              8, 0, 0);
    }
}
template <typename T, typename U, bool isSetMask = true>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                   const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    ASCRUN_CMP_T("CompareScalar", T);
    ASCRUN_CMP_MASKED_T("CompareScalar", T);
    ASCRUN_CMPS_U(U);
    ::ascrun::cmpsel::compare_repeats<T, U, isSetMask>("CompareScalar", dst, src0, nullptr, src1Scalar, cmpMode,
                                                      ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime,
                                                      repeatParams.srcBlkStride, repeatParams.srcRepStride, 0, 0);
}
template <typename T, typename U, bool isSetMask = true>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                   const uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    ASCRUN_CMP_T("CompareScalar", T);
    ASCRUN_CMP_MASKED_T("CompareScalar", T);
    ASCRUN_CMPS_U(U);
    ::ascrun::cmpsel::compare_repeats<T, U, isSetMask>("CompareScalar", dst, src0, nullptr, src1Scalar, cmpMode,
                                                      ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime,
                                                      repeatParams.srcBlkStride, repeatParams.srcRepStride, 0, 0);
}
#undef ASCRUN_CMPS_U
#undef ASCRUN_CMP_MASKED_T
#undef ASCRUN_CMP_T

// GetCmpMask: the register's 16 bytes to dst, which must hold 128 bytes (GetCmpMask(ISASI).md); the
// other 112 are left undefined (the UB poison byte).
template <typename T>
void GetCmpMask(const LocalTensor<T>& dst) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "GetCmpMask: T must be a b8, b16 or b32 type");
    ascrun::BlockContext& b = ascrun::enter();
    constexpr uint64_t need = 128;
    if (dst.ascrun_bound() && static_cast<uint64_t>(dst.GetSize()) * sizeof(T) < need) {
        ascrun::fault(ascrun::format("GetCmpMask: dst holds %llu bytes; the reference requires at least 128",
                                     static_cast<unsigned long long>(dst.GetSize()) * sizeof(T)));
    }
    auto* d = reinterpret_cast<uint8_t*>(ascrun::ub_operand(b, "GetCmpMask", "dst", dst, need / sizeof(T), 16));
    std::memcpy(d, b.cmp_mask, sizeof(b.cmp_mask));
    std::memset(d + sizeof(b.cmp_mask), ascrun::kUbPoison, need - sizeof(b.cmp_mask));
}

// SetCmpMask: the register loads 16 bytes from src's address (past a shorter tensor, the UB bytes after it).
template <typename T>
void SetCmpMask(const LocalTensor<T>& src) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "SetCmpMask: T must be a b8, b16, b32 or b64 type");
    ascrun::BlockContext& b = ascrun::enter();
    ascrun::ub_operand(b, "SetCmpMask", "src", src, 1, 16);  // 16-byte aligned, so 16 bytes fit in the UB
    std::memcpy(b.cmp_mask, b.ub + src.ascrun_addr(), sizeof(b.cmp_mask));
}

#define ASCRUN_SEL_MASK_U(U)                                                                                      \
    static_assert(::ascrun::cmpsel::sel_mask_supports<U>,                                                         \
                  "Select: selMask must be a uint8_t, uint16_t, uint32_t or uint64_t tensor (a call "             \
                  "Select(dst, src0, src1, repeatTime, repeatParams) needs Select<T, SELMODE>; pyasc 1.1.1 drops " \
                  "sel_mode there)")
// The register forms.
#define ASCRUN_SEL_TYPES(T, U)                                                                                    \
    static_assert(::ascrun::cmpsel::select_supports<T>, "Select: T must be half or float (Atlas A2/A3)");         \
    ASCRUN_SEL_MASK_U(U)
// The forms with a selMask argument.
#define ASCRUN_SEL_ARG_TYPES(T, U)                                                                                \
    static_assert(::ascrun::mask::kAscend950 || ::ascrun::cmpsel::select_supports<T>,                             \
                  "Select: T must be half or float (Atlas A2/A3)");                                               \
    static_assert(!::ascrun::mask::kAscend950 || ::ascrun::cmpsel::select_supports_950<T>,                        \
                  "Select: T must be one of half, int16_t, uint16_t, bfloat16_t, int32_t, uint32_t, float (Ascend " \
                  "950; its 8- and 64-bit count forms are not modelled)");                                        \
    ASCRUN_SEL_MASK_U(U)

// Modes 0 and 2, src1 a tensor.
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams) {
    ASCRUN_SEL_ARG_TYPES(T, U);
    ::ascrun::cmpsel::select_with_mask<T, U>(dst, selMask, src0, &src1, T(0), selMode, false,
                                             ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams) {
    ASCRUN_SEL_ARG_TYPES(T, U);
    ::ascrun::cmpsel::select_with_mask<T, U>(dst, selMask, src0, &src1, T(0), selMode, false,
                                             ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);
}
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    ASCRUN_SEL_ARG_TYPES(T, U);
    ::ascrun::cmpsel::select_with_mask<T, U>(dst, selMask, src0, &src1, T(0), selMode, true,
                                             ::ascrun::mask::Arg::Continuous, count, 0, 1, BinaryRepeatParams());
}

// Mode 1, src1 a scalar.
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
            SELMODE selMode, const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    ASCRUN_SEL_ARG_TYPES(T, U);
    ::ascrun::cmpsel::select_with_mask<T, U>(dst, selMask, src0, nullptr, src1, selMode, false,
                                             ::ascrun::mask::Arg::Bits, mask[0], mask[1], repeatTime, repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
            SELMODE selMode, uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    ASCRUN_SEL_ARG_TYPES(T, U);
    ::ascrun::cmpsel::select_with_mask<T, U>(dst, selMask, src0, nullptr, src1, selMode, false,
                                             ::ascrun::mask::Arg::Continuous, mask, 0, repeatTime, repeatParams);
}
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
            SELMODE selMode, uint32_t count) {
    ASCRUN_SEL_ARG_TYPES(T, U);
    ::ascrun::cmpsel::select_with_mask<T, U>(dst, selMask, src0, nullptr, src1, selMode, true,
                                             ::ascrun::mask::Arg::Continuous, count, 0, 1, BinaryRepeatParams());
}

// Register forms: mode 1 with the scalar in CmpMask; modes 0 and 2 with the bits / their address in it.
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams) {
    ASCRUN_SEL_TYPES(T, U);
    ::ascrun::cmpsel::select_from_registers<T, U>(dst, &selMask, src0, nullptr, SELMODE::VSEL_TENSOR_SCALAR_MODE,
                                                  repeatTime, repeatParams);
}
template <typename T, SELMODE selMode>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams) {
    ASCRUN_SEL_TYPES(T, uint8_t);
    static_assert(selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE,
                  "Select<T, VSEL_TENSOR_SCALAR_MODE>: mode 1 takes selMask: Select(dst, selMask, src0, repeatTime, "
                  "repeatParams)");
    ::ascrun::cmpsel::select_from_registers<T, uint8_t>(dst, nullptr, src0, &src1, selMode, repeatTime,
                                                        repeatParams);
}
#undef ASCRUN_SEL_ARG_TYPES
#undef ASCRUN_SEL_TYPES
#undef ASCRUN_SEL_MASK_U

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the compound instructions (复合计算) that read their destination or whose
// operands differ in width, dst[i] = op(dst[i], src0[i], src1[i]):
//   FusedMulAdd      src0 * dst + src1               half, float             (FusedMulAdd.md)
//   FusedMulAddRelu  Relu(src0 * dst + src1)         half, float             (MulAddRelu.md)
//   MulAddDst        src0 * src1 + dst               (dst, src) = (half, half), (float, float), (float, half)
//   MulCast          Cast(src0 * src1)               half -> int8_t, uint8_t (MulCast.md)
//   AddReluCast      Cast(Relu(src0 + src1))         half -> int8_t, int16_t -> int8_t, float -> half
//   SubReluCast      Cast(Relu(src0 - src1))         the same                (SubReluCast.md)
//   AddDeqRelu       Relu(Deq(src0 + src1))          int32_t -> half         (AddDeqRelu.md)
// Arithmetic rounds (or, for int16_t/int32_t, wraps) in the source type after each operation, as
// the other families do; MulAddDst's (float, half) form multiplies exactly in float. The casts round
// to nearest even and saturate (vector/cast.h's convert; MulCast's C-API page: "溢出做饱和处理", so a
// negative product gives uint8_t 0); a NaN cast to an integer type faults. Deq(x) =
// half(float(x) * scale), the scale of SetDeqScale(half) (vector/cast.h).
// Count form and mask + repeat forms (BinaryRepeatParams); with operands of different widths the
// wider type sets the repeat and the mask (vector/mask.h). Overlap: 通用地址重叠约束 between dst and each
// source, none between operands of different widths (MulAddDst.md: not for half -> float), and,
// as dst is read, no repeat may write dst elements that a later repeat reads.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/cast.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

using RM = AscendC::RoundMode;

struct FusedMulAddOp {
    static constexpr const char* name = "FusedMulAdd";
    static constexpr bool reads_dst = true;
    static FusedMulAddOp make(const BlockContext&) { return {}; }
    template <typename D, typename S>
    static constexpr bool supports = std::is_same<D, S>::value && one_of_v<D, half, float>;
    template <typename D, typename S>
    D apply(D d, S a, S b, bool&) const { return arith::add(arith::mul(a, d), b); }
};
struct FusedMulAddReluOp {
    static constexpr const char* name = "FusedMulAddRelu";
    static constexpr bool reads_dst = true;
    static FusedMulAddReluOp make(const BlockContext&) { return {}; }
    template <typename D, typename S>
    static constexpr bool supports = std::is_same<D, S>::value && one_of_v<D, half, float>;
    template <typename D, typename S>
    D apply(D d, S a, S b, bool&) const { return arith::relu(arith::add(arith::mul(a, d), b)); }
};
struct MulAddDstOp {
    static constexpr const char* name = "MulAddDst";
    static constexpr bool reads_dst = true;
    static MulAddDstOp make(const BlockContext&) { return {}; }
    template <typename D, typename S>
    static constexpr bool supports = (std::is_same<D, S>::value && one_of_v<D, half, float>) ||
                                     (std::is_same<D, float>::value && std::is_same<S, half>::value);
    template <typename D, typename S>
    D apply(D d, S a, S b, bool&) const {
        if constexpr (std::is_same<D, S>::value) {
            return arith::add(arith::mul(a, b), d);
        } else {
            return static_cast<float>(a) * static_cast<float>(b) + d;  // exact product of two halves
        }
    }
};
struct MulCastOp {
    static constexpr const char* name = "MulCast";
    static constexpr bool reads_dst = false;
    static MulCastOp make(const BlockContext&) { return {}; }
    template <typename D, typename S>
    static constexpr bool supports = std::is_same<S, half>::value && one_of_v<D, int8_t, uint8_t>;
    template <typename D, typename S>
    D apply(D, S a, S b, bool& bad) const { return cast::convert<D, S, RM::CAST_RINT>(arith::mul(a, b), bad); }
};
template <bool Sub>
struct ReluCastOp {
    static constexpr const char* name = Sub ? "SubReluCast" : "AddReluCast";
    static constexpr bool reads_dst = false;
    static ReluCastOp make(const BlockContext&) { return {}; }
    template <typename D, typename S>
    static constexpr bool supports = (std::is_same<S, half>::value && std::is_same<D, int8_t>::value) ||
                                     (std::is_same<S, int16_t>::value && std::is_same<D, int8_t>::value) ||
                                     (std::is_same<S, float>::value && std::is_same<D, half>::value);
    template <typename D, typename S>
    D apply(D, S a, S b, bool& bad) const {
        return cast::convert<D, S, RM::CAST_RINT>(arith::relu(Sub ? arith::sub(a, b) : arith::add(a, b)), bad);
    }
};
struct AddDeqReluOp {
    static constexpr const char* name = "AddDeqRelu";
    static constexpr bool reads_dst = false;
    static AddDeqReluOp make(const BlockContext& b) { return {cast::deq_scale(b, name)}; }
    template <typename D, typename S>
    static constexpr bool supports = std::is_same<D, half>::value && std::is_same<S, int32_t>::value;
    float scale;
    template <typename D, typename S>
    D apply(D, S a, S b, bool&) const { return arith::relu(cast::deq(arith::add(a, b), scale)); }
};

// The element loop; false if a result is undefined (a NaN cast to an integer type).
template <typename Op, typename D, typename S>
inline bool fused_elements(const Op& op, elem_t<D>* dst, const elem_t<S>* src0, const elem_t<S>* src1, uint64_t n) {
    bool bad = false;
    ASCRUN_IVDEP
    for (uint64_t i = 0; i < n; ++i) dst[i] = op.template apply<D, S>(dst[i], src0[i], src1[i], bad);
    return !bad;
}

// Only the casting instructions fail, and they do not read dst: their element i is recomputed.
template <typename Op, typename D, typename S>
[[noreturn]] void fused_fail(const Op& op, const elem_t<S>* src0, const elem_t<S>* src1, uint64_t n,
                             uint64_t src_offset) {
    uint64_t i = 0;
    for (bool bad = false; i < n; ++i) {
        op.template apply<D, S>(D(0), src0[i], src1[i], bad);
        if (bad) break;
    }
    fault(format("%s<%s, %s>: src0 element %llu and its src1 element give NaN before the cast to %s, which the "
                 "reference does not define",
                 Op::name, TypeName<D>::c(), TypeName<S>::c(), static_cast<unsigned long long>(src_offset + i),
                 TypeName<D>::c()));
}

// Op::make(block) gives the instruction's state (AddDeqRelu: the deq scale) once it is known not
// to be a NOP.
template <typename Op, typename D, typename S>
void fused_count(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src0,
                 const AscendC::LocalTensor<S>& src1, int64_t count) {
    BlockContext& b = enter();
    const uint64_t n = mask::count_of<true>(b, Op::name, count);
    if (n == 0) return;  // a NOP on Atlas A2/A3
    elem_t<D>* d = ub_operand(b, Op::name, "dst", dst, n);
    const elem_t<S>* s0 = ub_operand(b, Op::name, "src0", src0, n);
    const elem_t<S>* s1 = ub_operand(b, Op::name, "src1", src1, n);
    cast::check_count_overlap(Op::name, dst, "src0", src0, n);
    cast::check_count_overlap(Op::name, dst, "src1", src1, n);
    const Op op = Op::make(b);
    if (!fused_elements<Op, D, S>(op, d, s0, s1, n)) fused_fail<Op, D, S>(op, s0, s1, n, 0);
}

template <typename Op, typename D, typename S, bool isSetMask>
void fused_masked(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src0,
                  const AscendC::LocalTensor<S>& src1, mask::Arg arg, uint64_t m0, uint64_t m1, uint8_t repeat,
                  const AscendC::BinaryRepeatParams& rp) {
    using Wide = typename std::conditional<(sizeof(S) > sizeof(D)), S, D>::type;
    BlockContext& b = enter();
    const uint64_t blk[3] = {rp.dstBlkStride, rp.src0BlkStride, rp.src1BlkStride};
    const uint64_t rep[3] = {rp.dstRepStride, rp.src0RepStride, rp.src1RepStride};
    const uint32_t bytes[3] = {sizeof(D), sizeof(S), sizeof(S)};
    mask::Plan p;
    if (!mask::make_plan<Wide>(b, Op::name, isSetMask, arg, m0, m1, repeat, 3, blk, rep, p, bytes)) return;
    elem_t<D>* d = ub_operand(b, Op::name, "dst", dst, p.extent[0]);
    const elem_t<S>* s0 = ub_operand(b, Op::name, "src0", src0, p.extent[1]);
    const elem_t<S>* s1 = ub_operand(b, Op::name, "src1", src1, p.extent[2]);
    mask::check_overlap(Op::name, p, 0, dst, 1, "src0", src0, false);
    mask::check_overlap(Op::name, p, 0, dst, 2, "src1", src1, false);
    if (Op::reads_dst) mask::check_overlap(Op::name, p, 0, dst, 0, "dst (also read)", dst, false);
    const Op op = Op::make(b);
    mask::for_each_run(p, [&](const uint64_t* o, uint32_t len) {
        if (!fused_elements<Op, D, S>(op, d + o[0], s0 + o[1], s1 + o[2], len)) {
            fused_fail<Op, D, S>(op, s0 + o[1], s1 + o[2], len, o[1]);
        }
    });
}

}  // namespace vec
}  // namespace ascrun

namespace AscendC {

// The three forms of an instruction with dst type T and source type U.
#define ASCRUN_FUSED_FORMS(NAME, OPTYPE, COUNT_T, TYPES)                                                   \
    template <typename T, typename U>                                                                         \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,              \
              const COUNT_T count) {                                                                          \
        static_assert(OPTYPE::supports<T, U>, #NAME ": (dst, src) must be " TYPES " (Atlas A2/A3)");          \
        ::ascrun::vec::fused_count<OPTYPE, T, U>(dst, src0, src1, count);                                 \
    }                                                                                                         \
    template <typename T, typename U, bool isSetMask = true>                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,              \
              uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {              \
        static_assert(OPTYPE::supports<T, U>, #NAME ": (dst, src) must be " TYPES " (Atlas A2/A3)");          \
        ::ascrun::vec::fused_masked<OPTYPE, T, U, isSetMask>(dst, src0, src1, ::ascrun::mask::Arg::Continuous, \
                                                             mask, 0, repeatTime, repeatParams);              \
    }                                                                                                         \
    template <typename T, typename U, bool isSetMask = true>                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,              \
              const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {      \
        static_assert(OPTYPE::supports<T, U>, #NAME ": (dst, src) must be " TYPES " (Atlas A2/A3)");          \
        ::ascrun::vec::fused_masked<OPTYPE, T, U, isSetMask>(dst, src0, src1, ::ascrun::mask::Arg::Bits,  \
                                                             mask[0], mask[1], repeatTime, repeatParams);     \
    }

ASCRUN_FUSED_FORMS(MulAddDst, ::ascrun::vec::MulAddDstOp, int32_t&, "(half, half), (float, float) or (float, half)")
ASCRUN_FUSED_FORMS(MulCast, ::ascrun::vec::MulCastOp, uint32_t, "(int8_t, half) or (uint8_t, half)")
ASCRUN_FUSED_FORMS(AddReluCast, ::ascrun::vec::ReluCastOp<false>, uint32_t,
                   "(int8_t, half), (int8_t, int16_t) or (half, float)")
ASCRUN_FUSED_FORMS(SubReluCast, ::ascrun::vec::ReluCastOp<true>, uint32_t,
                   "(int8_t, half), (int8_t, int16_t) or (half, float)")
ASCRUN_FUSED_FORMS(AddDeqRelu, ::ascrun::vec::AddDeqReluOp, int32_t&, "(half, int32_t)")
#undef ASCRUN_FUSED_FORMS

// One element type T for dst and both sources.
#define ASCRUN_FUSED_SAME_TYPE(NAME, OPTYPE)                                                                  \
    template <typename T>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,              \
              const int32_t& count) {                                                                         \
        static_assert(OPTYPE::supports<T, T>, #NAME ": T must be half or float (Atlas A2/A3)");               \
        ::ascrun::vec::fused_count<OPTYPE, T, T>(dst, src0, src1, count);                           \
    }                                                                                                         \
    template <typename T, bool isSetMask = true>                                                              \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,              \
              uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {              \
        static_assert(OPTYPE::supports<T, T>, #NAME ": T must be half or float (Atlas A2/A3)");               \
        ::ascrun::vec::fused_masked<OPTYPE, T, T, isSetMask>(dst, src0, src1,                       \
                                                             ::ascrun::mask::Arg::Continuous, mask, 0,        \
                                                             repeatTime, repeatParams);                       \
    }                                                                                                         \
    template <typename T, bool isSetMask = true>                                                              \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,              \
              const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {      \
        static_assert(OPTYPE::supports<T, T>, #NAME ": T must be half or float (Atlas A2/A3)");               \
        ::ascrun::vec::fused_masked<OPTYPE, T, T, isSetMask>(dst, src0, src1, ::ascrun::mask::Arg::Bits, \
                                                             mask[0], mask[1], repeatTime, repeatParams);     \
    }
ASCRUN_FUSED_SAME_TYPE(FusedMulAdd, ::ascrun::vec::FusedMulAddOp)
ASCRUN_FUSED_SAME_TYPE(FusedMulAddRelu, ::ascrun::vec::FusedMulAddReluOp)
#undef ASCRUN_FUSED_SAME_TYPE

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the register API's element-wise arithmetic (基础API/Reg矢量计算/基础算术):
// binary `Add Sub Mul Div Max Min`, unary `Abs Exp Ln Sqrt Relu Neg`, register-scalar
// `Adds Muls Maxs Mins`.
//
// Each computes dstReg_i for the elements `mask` selects; the others become 0 (MaskMergeMode
// ZEROING, the default) or keep dstReg's value (MERGING). Element arithmetic is vector/arith.h's:
// half rounds after every operation, Exp/Ln/Sqrt evaluate in float and round once (not bit-exact
// with the device's approximations). The dtypes are each page's 数据类型 list.
#pragma once

#include "ascrun/reg/registers.h"
#include "ascrun/vector/arith.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace reg {

// dst_i = f(i) where the mask selects i; else 0 (ZEROING) or dst_i (MERGING). Sources are read
// before dst is written: dst may be one of them.
template <typename T, AscendC::Reg::MaskMergeMode mode, typename U, typename F>
inline void masked(const char* api, U& dst, const AscendC::Reg::MaskReg& mask, F f) {
    const AscendC::Reg::MaskReg& m = mask.checked(api);
    if (mode == AscendC::Reg::MaskMergeMode::MERGING) dst.read(api, "dstReg");  // MERGING keeps dstReg's values
    elem_t<T> out[lanes<T>()];
    for (uint32_t i = 0; i < lanes<T>(); ++i) {
        out[i] = m.selects<T>(i) ? f(i) : (mode == AscendC::Reg::MaskMergeMode::MERGING ? dst.lane[i] : T(0));
    }
    std::memcpy(dst.write(), out, sizeof(out));
}

// Neg (基础算术/Neg.md): -a, integers wrapping as vector/arith.h's do.
template <typename T>
inline T neg(T a) {
    return arith::sub(T(0), a);
}

}  // namespace reg
}  // namespace ascrun

namespace AscendC {
namespace Reg {

// Binary: dstReg_i = srcReg0_i op srcReg1_i (基础算术/<Op>.md). Integer Div is not modelled.
#define ASCRUN_REG_BINARY(NAME, FN, ...)                                                                    \
    template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>                    \
    inline void NAME(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {                                    \
        using E = typename U::ActualT;                                                                      \
        static_assert(ascrun::one_of_v<E, __VA_ARGS__>, "Reg::" #NAME ": a dtype its page does not list");   \
        constexpr const char* api = "Reg::" #NAME;                                                          \
        ascrun::reg::enter_vf(api);                                                                         \
        const E* a = srcReg0.read(api, "srcReg0");                                                          \
        const E* b = srcReg1.read(api, "srcReg1");                                                          \
        ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t i) { return ascrun::arith::FN(a[i], b[i]); }); \
    }
ASCRUN_REG_BINARY(Add, add, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
ASCRUN_REG_BINARY(Sub, sub, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
ASCRUN_REG_BINARY(Mul, mul, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t)
ASCRUN_REG_BINARY(Div, div, half, float)  // the page's integer forms are not modelled
ASCRUN_REG_BINARY(Max, max, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
ASCRUN_REG_BINARY(Min, min, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
#undef ASCRUN_REG_BINARY

// Unary: dstReg_i = op(srcReg_i) (基础算术/<Op>.md).
#define ASCRUN_REG_UNARY(NAME, FN, ...)                                                                     \
    template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>                    \
    inline void NAME(U& dstReg, U& srcReg, MaskReg& mask) {                                                 \
        using E = typename U::ActualT;                                                                      \
        static_assert(ascrun::one_of_v<E, __VA_ARGS__>, "Reg::" #NAME ": a dtype its page does not list");   \
        constexpr const char* api = "Reg::" #NAME;                                                          \
        ascrun::reg::enter_vf(api);                                                                         \
        const E* a = srcReg.read(api, "srcReg");                                                            \
        ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t i) { return FN(a[i]); });              \
    }
ASCRUN_REG_UNARY(Abs, ascrun::arith::abs, half, float)  // the page's integer forms are not modelled
ASCRUN_REG_UNARY(Exp, ascrun::arith::exp, half, float)
ASCRUN_REG_UNARY(Ln, ascrun::arith::ln, half, float)
ASCRUN_REG_UNARY(Sqrt, ascrun::arith::sqrt, half, float)
ASCRUN_REG_UNARY(Relu, ascrun::arith::relu, half, int32_t, float, int64_t)
ASCRUN_REG_UNARY(Neg, ascrun::reg::neg, int8_t, int16_t, half, int32_t, float, int64_t)
#undef ASCRUN_REG_UNARY

// Register-scalar: dstReg_i = srcReg_i op scalarValue (基础算术/Adds.md, Muls.md, Maxs.md, Mins.md).
#define ASCRUN_REG_SCALAR(NAME, FN, ...)                                                                    \
    template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U, typename S>        \
    inline void NAME(U& dstReg, U& srcReg, S scalarValue, MaskReg& mask) {                                  \
        using E = typename U::ActualT;                                                                      \
        static_assert(ascrun::one_of_v<E, __VA_ARGS__>, "Reg::" #NAME ": a dtype its page does not list");   \
        constexpr const char* api = "Reg::" #NAME;                                                          \
        ascrun::reg::enter_vf(api);                                                                         \
        const E* a = srcReg.read(api, "srcReg");                                                            \
        const E s = static_cast<E>(scalarValue);                                                            \
        ascrun::reg::masked<E, mode>(api, dstReg, mask, [&](uint32_t i) { return ascrun::arith::FN(a[i], s); }); \
    }
ASCRUN_REG_SCALAR(Adds, add, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
ASCRUN_REG_SCALAR(Muls, mul, int16_t, uint16_t, half, int32_t, uint32_t, float, int64_t, uint64_t)
ASCRUN_REG_SCALAR(Maxs, max, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
ASCRUN_REG_SCALAR(Mins, min, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                  uint64_t)
#undef ASCRUN_REG_SCALAR

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

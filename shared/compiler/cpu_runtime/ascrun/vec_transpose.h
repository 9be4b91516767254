// ascrun cpu runtime: Transpose (变换/Transpose.md), the plain form: one 16 x 16 matrix of 16-bit
// elements, dst[j][i] = src[i][j]. dst and src: 256 elements each; they may not overlap (the
// reference does not define in-place transposition). The TransposeParamsExt form is not modelled.
#pragma once

#include "arith.h"
#include "tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

template <typename T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src) {
    static_assert(::ascrun::one_of_v<T, int16_t, uint16_t, half>, "Transpose: T must be one of int16_t, uint16_t, "
                                                                 "half (Atlas A2/A3, 16 x 16 form)");
    ascrun::BlockContext& b = ascrun::enter();
    constexpr uint64_t n = 256;
    auto* d = ascrun::ub_operand(b, "Transpose", "dst", dst, n);
    const auto* s = ascrun::ub_operand(b, "Transpose", "src", src, n);
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
    if (da < sa + n * sizeof(T) && sa < da + n * sizeof(T)) {
        ascrun::fault(ascrun::format("Transpose: dst range [%s, %s) overlaps src range [%s, %s)",
                                     ascrun::hex(da).c_str(), ascrun::hex(da + n * sizeof(T)).c_str(),
                                     ascrun::hex(sa).c_str(), ascrun::hex(sa + n * sizeof(T)).c_str()));
    }
    for (uint32_t i = 0; i < 16; ++i) {
        for (uint32_t j = 0; j < 16; ++j) d[j * 16 + i] = s[i * 16 + j];
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: SoftMax (高阶API/激活函数/SoftMax接口/SoftMax.md), ND format: with sumTensor and
// maxTensor in the framework-temporary forms (pyasc 1.1.1 emits these: it drops softmax's temp_buffer
// from the call), and without them in the sharedTmpBuffer form (pyasc-dev's asctile.softmax emits
// `SoftMax<T, 0, 0>(dst, src, tmpBuffer, tiling, shapeInfo)` on Atlas A2/A3 and Ascend 950);
// SoftMaxTiling, SoftMaxShapeInfo, SoftmaxConfig.
//
// The shape [m, k]: softmaxShapeInfo's srcM/srcK when both are non-zero, else srcTensor's ShapeInfo
// (k its last dimension, m the product of the others; the original k from its original shape). Per
// row, in float (half operands are widened first, as the Atlas A2/A3 implementation does):
//   max = max of the row's first oriK elements; e[j] = exp(src[j] - max) for all k elements;
//   sum = sum of e[j] over the first oriK; dst[j] = e[j] / sum;
// sumTensor/maxTensor rows are one 32-byte block each, every element the row's sum/max ("last轴长度
// 固定为32Byte ... 该datablock中的所有数据为同一个值"). Columns past oriK are padding: they are written
// but take no part in the reductions, as the reference's reduce over originalSrcShape.k does.
//
// Tiling: the reference recomputes the tiling on the kernel side whenever tiling.srcM/srcK differ
// from the shape (so pyasc's default-constructed SoftmaxTiling, all zeros, is recomputed), and a
// tiling only splits the rows and columns into pieces: the result does not depend on it. ascrun
// therefore computes from the shape alone, and does not check the split fields of a matching tiling.
//
// Faults: srcK not 32-byte aligned, an empty or missing shape (no softmaxShapeInfo and no
// SetShapeInfo on srcTensor), an original k of 0 or above k, operands past their tensors (bounds
// policy), dst partly overlapping src (they may be the same tensor, "src和dst的Tensor空间可以复用"),
// sum or max overlapping another operand, a sharedTmpBuffer that is empty, outside the Unified
// Buffer or overlapping src or dst ("不支持sharedTmpBuffer与源操作数和目的操作数地址重叠"), isBasicBlock
// with a shape that is not a basic block (n a multiple of 64 in [256 / sizeof(T), 2048), m a multiple
// of 8).
// Not modelled (do not compile): the sharedTmpBuffer form with sum and max and the framework form
// without them, which no pyasc emits; isDataFormatNZ; a SoftmaxConfig other than SOFTMAX_DEFAULT_CFG
// (pyasc passes none). Neither the framework's reserved temporary space nor sharedTmpBuffer's size
// against GetSoftMaxMinTmpSize is checked (the cpu target needs no temporary space).
#pragma once

#include <cmath>
#include <vector>

#include "ascrun/core/shape_info.h"
#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"

#pragma GCC visibility push(hidden)

// The host-computed tiling (SoftMaxTilingFunc); in the global namespace, as CANN's kernel_tiling.h
// declares it. A default-constructed one is all zeros.
struct SoftMaxTiling {
    uint32_t srcM = 0;
    uint32_t srcK = 0;
    uint32_t srcSize = 0;
    uint32_t outMaxM = 0;
    uint32_t outMaxK = 0;
    uint32_t outMaxSize = 0;
    uint32_t splitM = 0;
    uint32_t splitK = 0;
    uint32_t splitSize = 0;
    uint32_t reduceM = 0;
    uint32_t reduceK = 0;
    uint32_t reduceSize = 0;
    uint32_t rangeM = 0;
    uint32_t tailM = 0;
    uint32_t tailSplitSize = 0;
    uint32_t tailReduceSize = 0;
};

namespace AscendC {

struct SoftMaxShapeInfo {
    uint32_t srcM = 0;
    uint32_t srcK = 0;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
};

enum class SoftmaxMode {
    SOFTMAX_NORMAL = 0,
    SOFTMAX_OUTPUT_WITHOUT_BRC = 1,
};

struct SoftmaxConfig {
    bool isCheckTiling = true;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
    SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};

}  // namespace AscendC

namespace ascrun {
namespace softmax {

constexpr const char* kApi = "SoftMax";

struct Shape {
    uint32_t m = 0, k = 0, original_k = 0;
};

struct Axes {
    uint32_t rows = 0, last = 0;
};

// The last axis and the product of the others, of `dims` dimensions (ShapeInfo's shape or
// originalShape).
inline Axes last_axis(const uint32_t* shape, uint8_t dims, const char* which) {
    if (dims == 0) fault(format("%s: srcTensor's ShapeInfo has an empty %s", kApi, which));
    uint64_t size = 1;
    for (uint8_t i = 0; i < dims; ++i) size *= shape[i];
    const uint32_t last = shape[dims - 1];
    if (last == 0) fault(format("%s: srcTensor's ShapeInfo %s has a last dimension of 0", kApi, which));
    if (size / last > UINT32_MAX) fault(format("%s: srcTensor's ShapeInfo %s has over 2^32 rows", kApi, which));
    return {static_cast<uint32_t>(size / last), last};
}

template <typename T>
Shape shape_of(const AscendC::LocalTensor<T>& src, const AscendC::SoftMaxShapeInfo& info) {
    Shape s;
    if (info.srcM != 0 && info.srcK != 0) {
        s = {info.srcM, info.srcK, info.oriSrcK};
    } else {
        const AscendC::ShapeInfo shape = src.GetShapeInfo();
        if (!shape.ascrun_defined) {
            fault(format("%s: srcTensor has no shape: softmaxShapeInfo is empty and srcTensor was given no "
                         "ShapeInfo (SetShapeInfo)",
                         kApi));
        }
        const Axes axes = last_axis(shape.shape, shape.shapeDim, "shape");
        s.m = axes.rows;
        s.k = axes.last;
        // The ND reduce takes the original last axis only; the original rows do not matter.
        s.original_k = last_axis(shape.originalShape, shape.originalShapeDim, "originalShape").last;
    }
    if (static_cast<uint64_t>(s.k) * sizeof(T) % 32 != 0) {
        fault(format("%s: srcK %u (the last axis) is not 32-byte aligned (%u bytes of %s)", kApi, s.k,
                     static_cast<uint32_t>(s.k * sizeof(T)), TypeName<T>::c()));
    }
    if (s.original_k == 0 || s.original_k > s.k) {
        fault(format("%s: the original last axis %u is outside [1, srcK %u]", kApi, s.original_k, s.k));
    }
    return s;
}

// `sum` and `max` null: the form without them; `tmp` null: the framework's temporary space.
template <typename T, typename TSum, bool isBasicBlock, bool isDataFormatNZ, const AscendC::SoftmaxConfig& config>
void run(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<TSum>* sum,
         const AscendC::LocalTensor<TSum>* max, const AscendC::LocalTensor<T>& src,
         const AscendC::LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling, const AscendC::SoftMaxShapeInfo& info) {
    static_assert(one_of_v<T, half, float>, "SoftMax: T must be half or float");
    static_assert(std::is_same<T, TSum>::value || std::is_same<TSum, float>::value,
                  "SoftMax: sumTensor and maxTensor are T, or float with half dst and src");
    static_assert(!isDataFormatNZ, "SoftMax: the NZ format (isDataFormatNZ) is not modelled by the cpu target");
    static_assert(config.isCheckTiling && config.oriSrcM == 0 && config.oriSrcK == 0,
                  "SoftMax: a SoftmaxConfig other than the default is not modelled by the cpu target");
    BlockContext& b = enter();
    const Shape s = shape_of(src, info);
    if (isBasicBlock && (s.k % 64 != 0 || s.k < 256 / sizeof(T) || s.k >= 2048 || s.m % 8 != 0)) {
        fault(format("%s: isBasicBlock with shape [%u, %u], which is not a basic block (the last axis a multiple of "
                     "64 in [%u, 2048), the rows a multiple of 8)",
                     kApi, s.m, s.k, static_cast<uint32_t>(256 / sizeof(T))));
    }
    const uint64_t count = static_cast<uint64_t>(s.m) * s.k;
    constexpr uint32_t kPerBlock = 32 / sizeof(TSum);  // sum/max elements per row
    const uint64_t reduced = static_cast<uint64_t>(s.m) * kPerBlock;
    const elem_t<T>* in = ub_operand(b, kApi, "srcTensor", src, count);
    elem_t<T>* out = ub_operand(b, kApi, "dstTensor", dst, count);
    elem_t<TSum>* sums = sum ? ub_operand(b, kApi, "sumTensor", *sum, reduced) : nullptr;
    elem_t<TSum>* maxes = max ? ub_operand(b, kApi, "maxTensor", *max, reduced) : nullptr;

    struct Range {
        const char* role;
        uint64_t begin, end;
    };
    const Range src_r{"srcTensor", src.ascrun_addr(), src.ascrun_addr() + count * sizeof(T)};
    const Range dst_r{"dstTensor", dst.ascrun_addr(), dst.ascrun_addr() + count * sizeof(T)};
    auto disjoint = [](const Range& a, const Range& c, const char* why) {
        check_disjoint(kApi, a.role, a.begin, a.end, c.role, c.begin, c.end, why);
    };
    if (dst_r.begin != src_r.begin) disjoint(dst_r, src_r, "dst may reuse src only as the same tensor");
    if (sum && max) {
        const Range sum_r{"sumTensor", sum->ascrun_addr(), sum->ascrun_addr() + reduced * sizeof(TSum)};
        const Range max_r{"maxTensor", max->ascrun_addr(), max->ascrun_addr() + reduced * sizeof(TSum)};
        for (const Range* r : {&src_r, &dst_r}) {
            disjoint(sum_r, *r, "sum and max are separate outputs");
            disjoint(max_r, *r, "sum and max are separate outputs");
        }
        disjoint(sum_r, max_r, "sum and max are separate outputs");
    }
    if (tmp) {
        if (tmp->GetSize() == 0) fault(format("%s: sharedTmpBuffer is empty", kApi));
        ub_operand(b, kApi, "sharedTmpBuffer", *tmp, tmp->GetSize());
        const Range tmp_r{"sharedTmpBuffer", tmp->ascrun_addr(), tmp->ascrun_addr() + tmp->GetSize()};
        for (const Range* r : {&src_r, &dst_r}) {
            disjoint(tmp_r, *r, "sharedTmpBuffer may not share memory with src or dst");
        }
    }

    std::vector<float> e(s.k);
    for (uint64_t row = 0; row < s.m; ++row) {
        const elem_t<T>* x = in + row * s.k;
        float row_max = static_cast<float>(x[0]);
        for (uint32_t j = 1; j < s.original_k; ++j) {
            const float v = static_cast<float>(x[j]);
            if (v > row_max || v != v) row_max = v;  // a NaN stays the max
            if (row_max != row_max) break;
        }
        float row_sum = 0.0f;
        for (uint32_t j = 0; j < s.k; ++j) {
            e[j] = std::exp(static_cast<float>(x[j]) - row_max);
            if (j < s.original_k) row_sum += e[j];
        }
        elem_t<T>* y = out + row * s.k;  // may be x: the row is read into e first
        for (uint32_t j = 0; j < s.k; ++j) y[j] = static_cast<T>(e[j] / row_sum);
        for (uint32_t i = 0; sums && i < kPerBlock; ++i) {
            sums[row * kPerBlock + i] = static_cast<TSum>(row_sum);
            maxes[row * kPerBlock + i] = static_cast<TSum>(row_max);
        }
    }
}

}  // namespace softmax
}  // namespace ascrun

namespace AscendC {

// sumTensor and maxTensor of T.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascrun::softmax::run<T, T, isBasicBlock, isDataFormatNZ, config>(dstTensor, &sumTensor, &maxTensor, srcTensor,
                                                                      nullptr, tiling, softmaxShapeInfo);
}

// half dst and src, float sumTensor and maxTensor.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascrun::softmax::run<half, float, isBasicBlock, isDataFormatNZ, config>(dstTensor, &sumTensor, &maxTensor,
                                                                             srcTensor, nullptr, tiling,
                                                                             softmaxShapeInfo);
}

// Without sumTensor and maxTensor, the temporary space in sharedTmpBuffer.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascrun::softmax::run<T, T, isBasicBlock, isDataFormatNZ, config>(dstTensor, nullptr, nullptr, srcTensor,
                                                                      &sharedTmpBuffer, tiling, softmaxShapeInfo);
}

}  // namespace AscendC

#pragma GCC visibility pop

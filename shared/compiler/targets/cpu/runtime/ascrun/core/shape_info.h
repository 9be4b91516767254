// ascrun cpu runtime: ShapeInfo and DataFormat (辅助数据结构/ShapeInfo.md), which DumpTensor takes and a
// LocalTensor carries (LocalTensor/SetShapeInfo.md, GetShapeInfo.md).
#pragma once

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class DataFormat : uint8_t {
    ND = 0,
    NZ,
    NCHW,
    NC1HWC0,
    NHWC,
};

// A tensor's shape (DumpTensor, LocalTensor::SetShapeInfo, the shape SoftMax reads). The device leaves a
// default-constructed one undefined, so using it faults.
struct ShapeInfo {
    ShapeInfo() = default;
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const uint8_t inputOriginalShapeDim,
              const uint32_t inputOriginalShape[], const DataFormat inputFormat)
        : shapeDim(inputShapeDim), originalShapeDim(inputOriginalShapeDim), dataFormat(inputFormat) {
        copy_dims(shapeDim, inputShape, shape);
        copy_dims(originalShapeDim, inputOriginalShape, originalShape);
    }
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const DataFormat inputFormat)
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, inputFormat) {}
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[])
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, DataFormat::ND) {}

    static constexpr uint8_t kMaxDim = 8;  // K_MAX_SHAPE_DIM
    uint8_t shapeDim = 0;
    uint8_t originalShapeDim = 0;
    uint32_t shape[kMaxDim] = {};
    uint32_t originalShape[kMaxDim] = {};
    DataFormat dataFormat = DataFormat::ND;
    bool ascrun_defined = false;  // set by the constructors that take a shape

private:
    void copy_dims(uint8_t dim, const uint32_t* from, uint32_t* to) {
        if (dim > kMaxDim) {
            ascrun::enter();
            ascrun::fault(ascrun::format("ShapeInfo: %u dimensions, more than the %u a ShapeInfo holds", dim, kMaxDim));
        }
        for (uint8_t i = 0; i < dim; ++i) to[i] = from[i];
        ascrun_defined = true;
    }
};

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: DataCopy GM -> L1 with ND2NZ conversion (GMToL1随路转换-ND2NZ搬运, Nd2NzParams).
//
// ndNum ND matrices of nValue rows x dValue columns (row pitch srcDValue elements, matrix pitch
// srcNdMatrixStride elements) become NZ matrices in the L1 Buffer: the columns are cut into blocks of
// C0 = 32 bytes / sizeof(T) elements; row r of column block c lands at
//     matrix * dstNzMatrixStride + c * dstNzC0Stride * C0 + r * dstNzNStride * C0   (elements)
// and a last block shorter than C0 is padded with zeros up to 32 bytes ("在目的矩阵中会补0对齐到32字节").
// Rows past nValue are not written. ndNum, nValue or dValue 0 is a NOP. Faults: parameters outside
// the reference's ranges, dst not in A1/B1/C1 or not 32-byte aligned, a write past the dst tensor, and
// two writes to one element (the reference leaves overlapping writes undefined: "搬运至L1 Buffer的数据不
// 能重叠 ... 不保证重叠数据的写入顺序").
// The other GM -> L1 forms (count, DataCopyParams) are in vector/data_copy.h with their GM -> UB twins.
#pragma once

#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct Nd2NzParams {
    Nd2NzParams() = default;
    Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

}  // namespace AscendC

namespace ascrun {
namespace cube {

inline void check_range(const char* api, const char* name, uint64_t value, uint64_t lo, uint64_t hi) {
    if (value < lo || value > hi) {
        fault(format("%s: %s %llu is outside [%llu, %llu]", api, name, static_cast<unsigned long long>(value),
                     static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi)));
    }
}

}  // namespace cube
}  // namespace ascrun

namespace AscendC {

template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
    static_assert(sizeof(T) <= 4 && ascrun::is_element_v<T>,
                  "DataCopy(Nd2NzParams): T must be a b8, b16 or b32 type (int8_t ... float, half, bfloat16_t)");
    constexpr const char* api = "DataCopy(GM->L1, Nd2NzParams)";
    ascrun::BlockContext& b = ascrun::enter();
    using ascrun::cube::check_range;
    check_range(api, "ndNum", p.ndNum, 0, 4095);
    check_range(api, "nValue", p.nValue, 0, 16384);
    check_range(api, "srcDValue", p.srcDValue, 1, 65535);
    check_range(api, "dstNzC0Stride", p.dstNzC0Stride, 1, 16384);
    check_range(api, "dstNzNStride", p.dstNzNStride, 1, 16384);
    check_range(api, "dstNzMatrixStride", p.dstNzMatrixStride, 0, 16384);
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) return;

    constexpr uint64_t c0 = 32 / sizeof(T);
    const uint64_t blocks = (p.dValue + c0 - 1) / c0;
    const uint64_t row_pitch = uint64_t{p.dstNzNStride} * c0, block_pitch = uint64_t{p.dstNzC0Stride} * c0;
    // The last element written, plus one: every block is written whole (its zero pad included).
    const uint64_t dst_end = uint64_t{p.ndNum - 1u} * p.dstNzMatrixStride + (blocks - 1) * block_pitch +
                             uint64_t{p.nValue - 1u} * row_pitch + c0;
    const uint64_t src_end = uint64_t{p.ndNum - 1u} * p.srcNdMatrixStride + uint64_t{p.nValue - 1u} * p.srcDValue +
                             p.dValue;
    auto* d = reinterpret_cast<ascrun::elem_t<T>*>(ascrun::cube_operand(
        b, api, "dst", dst, ascrun::Memory::L1, "A1, B1 or C1 (L1 Buffer)", dst_end * sizeof(T), 32));
    const auto* s = src.ascrun_access(b, api, 0, src_end, false);

    std::vector<bool> written(dst_end, false);
    for (uint64_t m = 0; m < p.ndNum; ++m) {
        for (uint64_t r = 0; r < p.nValue; ++r) {
            const auto* row = s + m * p.srcNdMatrixStride + r * p.srcDValue;
            for (uint64_t c = 0; c < blocks; ++c) {
                const uint64_t at = m * p.dstNzMatrixStride + c * block_pitch + r * row_pitch;
                for (uint64_t e = 0; e < c0; ++e) {
                    if (written[at + e]) {
                        ascrun::fault(ascrun::format(
                            "%s: ND matrix %llu, row %llu, column block %llu writes element %llu of dst, which "
                            "this copy already wrote (overlapping NZ rows: check dstNzC0Stride, dstNzNStride and "
                            "dstNzMatrixStride; the reference leaves the result undefined)",
                            api, static_cast<unsigned long long>(m), static_cast<unsigned long long>(r),
                            static_cast<unsigned long long>(c), static_cast<unsigned long long>(at + e)));
                    }
                    written[at + e] = true;
                    const uint64_t col = c * c0 + e;
                    d[at + e] = col < p.dValue ? static_cast<T>(row[col]) : T(0);
                }
            }
        }
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

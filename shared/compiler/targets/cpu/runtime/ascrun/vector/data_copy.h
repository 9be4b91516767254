// ascrun cpu runtime: DataCopy and DataCopyPad (GM->UB, UB->GM, UB->UB); the count and DataCopyParams
// forms also GM->L1 (A1/B1/C1: GMToL1连续数据搬运, GMToL1高维切分数据搬运; cube/data_copy.h has ND2NZ).
//
// Forms: the contiguous count form; DataCopyParams (blockCount blocks of blockLen 32-byte data
// blocks, srcStride/dstStride = gap between blocks in 32-byte data blocks, GM side included:
// GM与UB高维切分数据搬运 / UBToUB高维切分数据搬运); DataCopyPad with DataCopyExtParams/DataCopyParams
// (blockLen in bytes; GM-side gap in bytes, UB-side gap in 32-byte blocks; each UB row padded to 32
// bytes with leftPadding/rightPadding elements and dummy data: GMToUB/UBToGM非对齐数据搬运).
// Rules checked: UB addresses 32-byte aligned, GM addresses aligned to sizeof(T) (DataCopy), every
// byte inside the LocalTensor, the Unified Buffer and the GM tensor argument. The count forms move
// count * sizeof(T) rounded down to a multiple of 32 bytes, as the reference defines (GM与UB连续数据
// 搬运, UBToUB连续数据搬运), with a warning when that drops bytes.
// Bytes the reference leaves undefined (pads without isPad) are filled with the UB poison byte.
#pragma once

#include "ascrun/core/tensor.h"
#include "ascrun/sync/atomic.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                      const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

struct DataCopyPadParams {
    DataCopyPadParams() = default;
    DataCopyPadParams(const bool isPadValue, const uint16_t left, const uint16_t right, const uint64_t value)
        : isPad(isPadValue), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint16_t leftPadding = 0;
    uint16_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(const bool isPadValue, const uint16_t left, const uint16_t right, T value)
        : isPad(isPadValue), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint16_t leftPadding = 0;
    uint16_t rightPadding = 0;
    T paddingValue = 0;
};

}  // namespace AscendC

namespace ascrun {
namespace copy {

template <typename T>
constexpr bool supported_v = is_element_v<T>;  // b8/b16/b32/b64 incl. half, bfloat16_t, double

// The elements a count form moves: count * elem_bytes rounded down to a multiple of 32 bytes.
// (vector/data_copy.cpp)
uint64_t moved_elements(BlockContext& b, const char* api, uint64_t count, size_t elem_bytes);

// The destination of a GM->local form: the L1 Buffer for an A1/B1/C1 tensor (32-byte aligned, as
// GMToL1连续数据搬运 requires), else the Unified Buffer.
constexpr bool to_l1(AscendC::TPosition p) { return position_modelled(p) && memory_of(p) == Memory::L1; }

template <typename T>
uint8_t* local_dst(BlockContext& b, const char* api, const AscendC::LocalTensor<T>& dst, uint64_t count) {
    if (dst.ascrun_bound() && to_l1(dst.ascrun_pos())) {
        return cube_operand(b, api, "dst", dst, Memory::L1, "A1, B1 or C1 (L1 Buffer)", count * sizeof(T), kUbAlign);
    }
    return reinterpret_cast<uint8_t*>(ub_operand(b, api, "dst", dst, count));
}

inline uint64_t round_up_32(uint64_t v) { return (v + 31) / 32 * 32; }

inline uint64_t span_bytes(uint64_t count, uint64_t len, uint64_t gap) { return (count - 1) * (len + gap) + len; }

inline void copy_rows(uint8_t* d, uint64_t d_pitch, const uint8_t* s, uint64_t s_pitch, uint64_t count, uint64_t len) {
    for (uint64_t i = 0; i < count; ++i) std::memcpy(d + i * d_pitch, s + i * s_pitch, static_cast<size_t>(len));
}

// DataCopy with DataCopyParams, in bytes: blockCount rows of blockLen 32-byte blocks, row i at
// i * (len + stride * 32) on each side. Range checks cover each side's whole span.
struct StridedRows {
    uint64_t count, len, d_pitch, s_pitch, d_span, s_span;

    StridedRows(const char* api, const AscendC::DataCopyParams& p)
        : count(p.blockCount), len(uint64_t(p.blockLen) * 32), d_pitch(len + uint64_t(p.dstStride) * 32),
          s_pitch(len + uint64_t(p.srcStride) * 32) {
        if (count > 4095) fault(format("%s: blockCount %llu is outside [0, 4095]", api, (unsigned long long)count));
        d_span = empty() ? 0 : span_bytes(count, len, d_pitch - len);
        s_span = empty() ? 0 : span_bytes(count, len, s_pitch - len);
    }
    bool empty() const { return count == 0 || len == 0; }  // a NOP
    void copy(uint8_t* d, const uint8_t* s) const { copy_rows(d, d_pitch, s, s_pitch, count, len); }
};

template <typename T>
void check_ub_disjoint(const char* api, const AscendC::LocalTensor<T>& dst, uint64_t d_bytes,
                       const AscendC::LocalTensor<T>& src, uint64_t s_bytes) {
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
    if (da < sa + s_bytes && sa < da + d_bytes) {
        fault(format("%s: dst range [%s, %s) overlaps src range [%s, %s)", api, hex(da).c_str(),
                     hex(da + d_bytes).c_str(), hex(sa).c_str(), hex(sa + s_bytes).c_str()));
    }
}

// DataCopyPad, GM -> UB. blockLen/srcStride in bytes; dstStride in 32-byte blocks; each UB row is
// [leftPadding elements][blockLen bytes][rightPadding elements][dummy up to 32 bytes].
template <typename T>
void pad_gm_to_ub(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, uint64_t count,
                  uint64_t len, uint64_t src_gap, uint64_t dst_gap_blocks, bool is_pad, uint64_t left, uint64_t right,
                  T value) {
    constexpr const char* api = "DataCopyPad(GM->UB)";
    BlockContext& b = enter();
    if (count > 4095) fault(format("%s: blockCount %llu is outside [0, 4095]", api, (unsigned long long)count));
    if (count == 0 || len == 0) return;
    if (len % sizeof(T) != 0) {
        fault(format("%s: blockLen %llu bytes is not a multiple of sizeof(%s) = %zu", api, (unsigned long long)len,
                     TypeName<T>::c(), sizeof(T)));
    }
    if (left * sizeof(T) > 32 || right * sizeof(T) > 32) {
        fault(format("%s: leftPadding %llu / rightPadding %llu elements exceed 32 bytes", api,
                     (unsigned long long)left, (unsigned long long)right));
    }
    const uint64_t row = left * sizeof(T) + len + right * sizeof(T);
    const uint64_t row32 = round_up_32(row);
    const uint64_t pitch = row32 + dst_gap_blocks * 32;
    const uint64_t ub_bytes = (count - 1) * pitch + row32;
    const uint64_t gm_bytes = span_bytes(count, len, src_gap);
    uint8_t* d = reinterpret_cast<uint8_t*>(ub_operand(b, api, "dst", dst, (ub_bytes + sizeof(T) - 1) / sizeof(T)));
    const uint8_t* s = reinterpret_cast<const uint8_t*>(
        src.template ReinterpretCast<uint8_t>().ascrun_access(b, api, 0, gm_bytes, false));
    const bool no_pads = left == 0 && right == 0;
    for (uint64_t i = 0; i < count; ++i) {
        uint8_t* r = d + i * pitch;
        const uint8_t* in = s + i * (len + src_gap);
        auto fill = [&](uint8_t* at, uint64_t elems, bool defined, const uint8_t* v) {
            if (!defined) {
                std::memset(at, kUbPoison, static_cast<size_t>(elems * sizeof(T)));
                return;
            }
            for (uint64_t k = 0; k < elems; ++k) std::memcpy(at + k * sizeof(T), v, sizeof(T));
        };
        const uint8_t* pv = reinterpret_cast<const uint8_t*>(&value);
        fill(r, left, is_pad, pv);
        std::memcpy(r + left * sizeof(T), in, static_cast<size_t>(len));
        fill(r + left * sizeof(T) + len, right, is_pad, pv);
        // dummy: the block's first element when there is no padding, else the pad value (isPad) or undefined
        fill(r + row, (row32 - row) / sizeof(T), no_pads || is_pad, no_pads ? in : pv);
    }
}

// DataCopyPad, UB -> GM: rows of blockLen bytes, UB rows 32-byte padded plus srcStride blocks,
// GM rows blockLen bytes apart plus dstStride bytes.
template <typename T>
void pad_ub_to_gm(const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint64_t count,
                  uint64_t len, uint64_t src_gap_blocks, uint64_t dst_gap) {
    constexpr const char* api = "DataCopyPad(UB->GM)";
    BlockContext& b = enter();
    if (count > 4095) fault(format("%s: blockCount %llu is outside [0, 4095]", api, (unsigned long long)count));
    if (count == 0 || len == 0) return;
    if (len % sizeof(T) != 0) {
        fault(format("%s: blockLen %llu bytes is not a multiple of sizeof(%s) = %zu", api, (unsigned long long)len,
                     TypeName<T>::c(), sizeof(T)));
    }
    const uint64_t pitch = round_up_32(len) + src_gap_blocks * 32;
    const uint64_t ub_bytes = (count - 1) * pitch + len;
    const uint64_t gm_bytes = span_bytes(count, len, dst_gap);
    const uint8_t* s =
        reinterpret_cast<const uint8_t*>(ub_operand(b, api, "src", src, (ub_bytes + sizeof(T) - 1) / sizeof(T)));
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.template ReinterpretCast<uint8_t>().ascrun_access(b, api, 0, gm_bytes,
                                                                                                true));
    for (uint64_t i = 0; i < count; ++i) atomic::gm_store(b, api, d + i * (len + dst_gap), s + i * pitch, len);
}

}  // namespace copy
}  // namespace ascrun

namespace AscendC {

// GM -> UB, GM -> L1
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    const char* api = ascrun::copy::to_l1(dst.ascrun_pos()) ? "DataCopy(GM->L1)" : "DataCopy(GM->UB)";
    ascrun::BlockContext& b = ascrun::enter();
    const uint64_t n = ascrun::copy::moved_elements(b, api, count, sizeof(T));
    if (n == 0) return;
    auto* d = ascrun::copy::local_dst(b, api, dst, n);
    const auto* s = src.ascrun_access(b, api, 0, n, false);
    std::memcpy(static_cast<void*>(d), static_cast<const void*>(s), static_cast<size_t>(n) * sizeof(T));
}

// UB -> GM
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(UB->GM)";
    ascrun::BlockContext& b = ascrun::enter();
    const uint64_t n = ascrun::copy::moved_elements(b, api, count, sizeof(T));
    if (n == 0) return;
    const auto* s = ascrun::ub_operand(b, api, "src", src, n);
    auto* d = dst.ascrun_access(b, api, 0, n, true);
    ascrun::atomic::gm_store(b, api, reinterpret_cast<uint8_t*>(d), reinterpret_cast<const uint8_t*>(s), n * sizeof(T));
}

// UB -> UB
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(UB->UB)";
    ascrun::BlockContext& b = ascrun::enter();
    const uint64_t n = ascrun::copy::moved_elements(b, api, count, sizeof(T));
    if (n == 0) return;
    auto* d = ascrun::ub_operand(b, api, "dst", dst, n);
    const auto* s = ascrun::ub_operand(b, api, "src", src, n);
    if (d == s) return;
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr(), bytes = n * sizeof(T);
    if (da < sa + bytes && sa < da + bytes) {
        ascrun::fault(ascrun::format("%s: dst range [%s, %s) overlaps src range [%s, %s)", api,
                                     ascrun::hex(da).c_str(), ascrun::hex(da + bytes).c_str(),
                                     ascrun::hex(sa).c_str(), ascrun::hex(sa + bytes).c_str()));
    }
    std::memcpy(static_cast<void*>(d), static_cast<const void*>(s), static_cast<size_t>(bytes));
}

// ---- DataCopyParams forms -----------------------------------------------------------------------

// GM -> UB, GM -> L1
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    const char* api = ascrun::copy::to_l1(dst.ascrun_pos()) ? "DataCopy(GM->L1, DataCopyParams)"
                                                            : "DataCopy(GM->UB, DataCopyParams)";
    ascrun::BlockContext& b = ascrun::enter();
    const ascrun::copy::StridedRows rows(api, p);
    if (rows.empty()) return;
    auto* d = ascrun::copy::local_dst(b, api, dst, rows.d_span / sizeof(T));
    const auto* s = reinterpret_cast<const uint8_t*>(src.ascrun_access(b, api, 0, rows.s_span / sizeof(T), false));
    rows.copy(d, s);
}

// UB -> GM
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(UB->GM, DataCopyParams)";
    ascrun::BlockContext& b = ascrun::enter();
    const ascrun::copy::StridedRows rows(api, p);
    if (rows.empty()) return;
    const auto* s = reinterpret_cast<const uint8_t*>(ascrun::ub_operand(b, api, "src", src, rows.s_span / sizeof(T)));
    auto* d = reinterpret_cast<uint8_t*>(dst.ascrun_access(b, api, 0, rows.d_span / sizeof(T), true));
    for (uint64_t i = 0; i < rows.count; ++i) {
        ascrun::atomic::gm_store(b, api, d + i * rows.d_pitch, s + i * rows.s_pitch, rows.len);
    }
}

// UB -> UB
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(UB->UB, DataCopyParams)";
    ascrun::BlockContext& b = ascrun::enter();
    const ascrun::copy::StridedRows rows(api, p);
    if (rows.empty()) return;
    auto* d = reinterpret_cast<uint8_t*>(ascrun::ub_operand(b, api, "dst", dst, rows.d_span / sizeof(T)));
    const auto* s = reinterpret_cast<const uint8_t*>(ascrun::ub_operand(b, api, "src", src, rows.s_span / sizeof(T)));
    ascrun::copy::check_ub_disjoint(api, dst, rows.d_span, src, rows.s_span);
    rows.copy(d, s);
}

// ---- DataCopyPad ------------------------------------------------------------------------------------

template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopyPad: unsupported element type");
    ascrun::copy::pad_gm_to_ub<T>(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad,
                                  pad.leftPadding, pad.rightPadding, pad.paddingValue);
}
template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                 const DataCopyPadParams& pad) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopyPad: unsupported element type");
    if (pad.isPad && !std::is_integral<T>::value) {
        // Integer T: the value and its low bytes agree. Floating T: the reference does not say whether
        // the uint64_t is a value or a bit pattern.
        ascrun::enter();
        ascrun::fault(ascrun::format("DataCopyPad(GM->UB): DataCopyPadParams.paddingValue (uint64_t) with T = %s is "
                                     "not defined by the reference (value or bit pattern?); use "
                                     "DataCopyPadExtParams<T>, whose paddingValue is a T",
                                     ascrun::TypeName<T>::c()));
    }
    ascrun::copy::pad_gm_to_ub<T>(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad,
                                  pad.leftPadding, pad.rightPadding, static_cast<T>(pad.paddingValue));
}
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopyPad: unsupported element type");
    ascrun::copy::pad_ub_to_gm<T>(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride);
}
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopyPad: unsupported element type");
    ascrun::copy::pad_ub_to_gm<T>(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride);
}

// The count forms GM <-> local for the dtypes kernels use most, compiled once per toolchain
// (vector/data_copy.cpp): a kernel's build then only calls them.
#define ASCRUN_DATA_COPY_INSTANCE(EXTERN, T)                                                               \
    EXTERN template void DataCopy<T>(const LocalTensor<T>&, const GlobalTensor<T>&, const uint32_t);       \
    EXTERN template void DataCopy<T>(const GlobalTensor<T>&, const LocalTensor<T>&, const uint32_t);
#define ASCRUN_DATA_COPY_INSTANCES(EXTERN)                                                                 \
    ASCRUN_DATA_COPY_INSTANCE(EXTERN, half)                                                                \
    ASCRUN_DATA_COPY_INSTANCE(EXTERN, float)                                                               \
    ASCRUN_DATA_COPY_INSTANCE(EXTERN, int32_t)
ASCRUN_DATA_COPY_INSTANCES(extern)

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: DataCopy, contiguous forms (GM->UB, UB->GM, UB->UB with an element count).
//
// Rules checked (GM与UB连续数据搬运 / UBToUB连续数据搬运): UB addresses 32-byte aligned, GM addresses
// aligned to sizeof(T), count * sizeof(T) a multiple of 32 bytes (the hardware silently rounds the
// transfer down otherwise), every byte inside the LocalTensor, the Unified Buffer and the GM
// tensor argument. Later milestones add the DataCopyParams/DataCopyPad forms next to these.
#pragma once

#include "tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace copy {

template <typename T>
constexpr bool supported_v = is_element_v<T>;  // b8/b16/b32/b64 incl. half, bfloat16_t, double

inline void check_block_multiple(const char* api, uint64_t count, size_t elem_bytes) {
    const uint64_t bytes = count * elem_bytes;
    if (bytes % 32 != 0) {
        fault(format("%s: count %llu x %zu bytes = %llu bytes is not a multiple of 32 bytes (count * sizeof(T) must "
                     "be 32-byte aligned; the hardware would silently move only %llu bytes; use DataCopyPad for "
                     "other lengths)",
                     api, static_cast<unsigned long long>(count), elem_bytes, static_cast<unsigned long long>(bytes),
                     static_cast<unsigned long long>(bytes / 32 * 32)));
    }
}

}  // namespace copy
}  // namespace ascrun

namespace AscendC {

// GM -> UB
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(GM->UB)";
    ascrun::BlockContext& b = ascrun::enter();
    ascrun::copy::check_block_multiple(api, count, sizeof(T));
    if (count == 0) return;
    auto* d = ascrun::ub_operand(b, api, "dst", dst, count);
    const auto* s = src.ascrun_access(b, api, 0, count, false);
    std::memcpy(static_cast<void*>(d), static_cast<const void*>(s), static_cast<size_t>(count) * sizeof(T));
}

// UB -> GM
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(UB->GM)";
    ascrun::BlockContext& b = ascrun::enter();
    ascrun::copy::check_block_multiple(api, count, sizeof(T));
    if (count == 0) return;
    const auto* s = ascrun::ub_operand(b, api, "src", src, count);
    auto* d = dst.ascrun_access(b, api, 0, count, true);
    std::memcpy(static_cast<void*>(d), static_cast<const void*>(s), static_cast<size_t>(count) * sizeof(T));
}

// UB -> UB
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    static_assert(ascrun::copy::supported_v<T>, "DataCopy: unsupported element type");
    constexpr const char* api = "DataCopy(UB->UB)";
    ascrun::BlockContext& b = ascrun::enter();
    ascrun::copy::check_block_multiple(api, count, sizeof(T));
    if (count == 0) return;
    auto* d = ascrun::ub_operand(b, api, "dst", dst, count);
    const auto* s = ascrun::ub_operand(b, api, "src", src, count);
    if (d == s) return;
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr(), bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (da < sa + bytes && sa < da + bytes) {
        ascrun::fault(ascrun::format("%s: dst range [%s, %s) overlaps src range [%s, %s)", api,
                                     ascrun::hex(da).c_str(), ascrun::hex(da + bytes).c_str(),
                                     ascrun::hex(sa).c_str(), ascrun::hex(sa + bytes).c_str()));
    }
    std::memcpy(static_cast<void*>(d), static_cast<const void*>(s), static_cast<size_t>(bytes));
}

}  // namespace AscendC

#pragma GCC visibility pop

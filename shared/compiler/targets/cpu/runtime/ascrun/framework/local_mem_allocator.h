// ascrun cpu runtime: LocalMemAllocator (资源管理/内存管理), the bump allocator of static tensor
// programming.
//
// Alloc<pos, T>(tileSize) returns the next tileSize elements of the Unified Buffer from offset 0
// (GetDynamicMemStartPos is 0 on Atlas A2/A3) and moves the free address by exactly tileSize *
// sizeof(T) bytes, as the device does: the next Alloc then starts there, and faults if that is not
// 32-byte aligned (LocalTensor addresses must be). Running past the Unified Buffer faults ("其数量
// 不应超过当前物理位置剩余的内存空间"). One LocalMemAllocator at a time, never with a TPipe
// (LocalMemAllocator简介.md, LocalMemAllocator构造函数.md).
#pragma once

#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
    static_assert(hard == Hardware::UB, "LocalMemAllocator: only Hardware::UB (the Unified Buffer) is modelled on the cpu target");

public:
    LocalMemAllocator() {
        ascrun::BlockContext& b = ascrun::enter();
        if (b.ub_allocator_live) {
            ascrun::fault("LocalMemAllocator<UB>: a second LocalMemAllocator was created while another exists (one "
                          "per hardware position at a time)");
        }
        if (b.pipe != nullptr) {
            ascrun::fault("LocalMemAllocator<UB>: a TPipe is alive (static tensor programming must not be mixed with "
                          "TPipe)");
        }
        b.ub_allocator_live = true;
        owner_ = &b;
    }
    ~LocalMemAllocator() {
        if (owner_ != nullptr && owner_ == ascrun::tls_block) owner_->ub_allocator_live = false;
    }
    LocalMemAllocator(const LocalMemAllocator&) = delete;
    LocalMemAllocator& operator=(const LocalMemAllocator&) = delete;

    // The free address: where the next Alloc starts.
    uint32_t GetCurAddr() const {
        ascrun::enter();
        return head_;
    }

    template <TPosition pos, class T>
    LocalTensor<T> Alloc(uint32_t tileSize) {
        static_assert(ascrun::in_ub(pos),
                      "LocalMemAllocator<UB>::Alloc: logic pos and hardware pos not matched (the Unified Buffer holds "
                      "VECIN, VECOUT and VECCALC)");
        ascrun::enter();
        const uint64_t bytes = static_cast<uint64_t>(tileSize) * sizeof(T);
        if (head_ + bytes > ascrun::kUbBytes) {
            ascrun::fault(ascrun::format("LocalMemAllocator<UB>::Alloc<%s, %s>(%u): %llu bytes from UB offset %s exceed "
                                         "the Unified Buffer (%u bytes left)",
                                         ascrun::position_name(pos), ascrun::TypeName<T>::c(), tileSize,
                                         static_cast<unsigned long long>(bytes), ascrun::hex(head_).c_str(),
                                         ascrun::kUbBytes - head_));
        }
        if (head_ % ascrun::kUbAlign != 0) {
            ascrun::fault(ascrun::format("LocalMemAllocator<UB>::Alloc<%s, %s>(%u): the free address %s is not 32-byte "
                                         "aligned (an earlier Alloc's tileSize * sizeof(T) was not a multiple of 32 "
                                         "bytes; LocalTensor addresses must be)",
                                         ascrun::position_name(pos), ascrun::TypeName<T>::c(), tileSize,
                                         ascrun::hex(head_).c_str()));
        }
        LocalTensor<T> t = LocalTensor<T>::ascrun_make(pos, head_, tileSize, ascrun::BufTag{});
        head_ += static_cast<uint32_t>(bytes);
        return t;
    }

private:
    ascrun::BlockContext* owner_ = nullptr;
    uint32_t head_ = 0;
};

}  // namespace AscendC

#pragma GCC visibility pop

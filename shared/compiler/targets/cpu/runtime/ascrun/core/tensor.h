// ascrun cpu runtime: TPosition, LocalTensor<T> (a range of one of the block's local memories: the
// Unified Buffer, or the cube core's L1, L0A, L0B, L0C) and GlobalTensor<T> (a GM pointer, tied to the
// tensor argument it points into).
//
// A LocalTensor is (position, byte offset in its position's memory, element count), never a host
// pointer: every instruction resolves its operands through ub_operand() (vector instructions, UB
// positions only) or cube_operand() (cube instructions), which check them once per instruction.
// A GlobalTensor keeps its address as an integer (so out-of-range offsets are arithmetic, not C++
// undefined behaviour) and the index of the launch region it belongs to; ascrun_access() checks
// every GM access against that one region.
// Bounds policy (core/core.h Bounds): with "warn", an operand running past its LocalTensor but inside
// the Unified Buffer, or past its tensor argument into the argument's guard zone, is a warning
// and the access happens, as on the device; anything else out of range stays a fault.
#pragma once

#include "ascrun/core/core.h"
#include "ascrun/core/shape_info.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

template <typename T>
class LocalTensor;
template <typename T>
class GlobalTensor;

}  // namespace AscendC

namespace ascrun {

// How messages name a TPosition ("VECIN"). The out-of-line checks of this header are defined once,
// in core/tensor.cpp: they depend on an element type only through its size, alignment and name,
// so kernels do not compile a copy per type.
const char* position_name(AscendC::TPosition p);

// Ends the warning of an operand past its LocalTensor, inside the Unified Buffer (bounds "warn").
constexpr const char* kPastLocalTensor = " (bounds=warn: the Unified Buffer after it was accessed)";

// The positions that live in the Unified Buffer.
constexpr bool in_ub(AscendC::TPosition p) {
    return p == AscendC::TPosition::VECIN || p == AscendC::TPosition::VECOUT || p == AscendC::TPosition::VECCALC;
}

// The positions the cpu target gives memory: the Unified Buffer's and the cube core's L1 (A1, B1,
// C1), L0A (A2), L0B (B2) and L0C (CO1). C2 (BiasTable), CO2 and the rest are not modelled.
constexpr bool position_modelled(AscendC::TPosition p) {
    using P = AscendC::TPosition;
    return in_ub(p) || p == P::A1 || p == P::B1 || p == P::C1 || p == P::A2 || p == P::B2 || p == P::CO1;
}

// The local memory of a modelled position.
constexpr Memory memory_of(AscendC::TPosition p) {
    using P = AscendC::TPosition;
    return (p == P::A1 || p == P::B1 || p == P::C1) ? Memory::L1
           : p == P::A2                             ? Memory::L0A
           : p == P::B2                             ? Memory::L0B
           : p == P::CO1                            ? Memory::L0C
                                                    : Memory::UB;
}

constexpr const char* offset_name(AscendC::TPosition p) { return memory_short_name(memory_of(p)); }

// The fault for a position the cpu target does not model (`what` names the call).
[[noreturn]] __attribute__((cold)) void unmodelled_position(const std::string& what, AscendC::TPosition p);

// Element types a tensor can hold.
template <typename T>
constexpr bool is_element_v = (std::is_arithmetic<T>::value && !std::is_same<T, bool>::value) ||
                              std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;

// How the runtime reads and writes UB/GM elements: the same bytes are viewed as different dtypes
// by different instructions, so accesses must not be subject to type-based alias analysis.
// (half/bfloat16_t are declared may_alias themselves.)
template <typename T, bool = std::is_arithmetic<T>::value>
struct MayAlias {
    typedef T type;
};
template <typename T>
struct MayAlias<T, true> {
    typedef T __attribute__((__may_alias__)) type;
};
template <typename T>
using elem_t = typename MayAlias<T>::type;

static_assert(static_cast<uint32_t>(AscendC::TPosition::MAX) < kPositionSlots, "BlockContext::allocated_on size");

// Which TQue buffer a LocalTensor views (queue_id 0: none) and which allocation of it (slot and
// serial: BlockContext::buffer_serial), and which TQue/TBuf buffer holds its user tag (handle:
// BlockContext::user_tags). Sub-tensors keep their parent's tag, so EnQue/FreeTensor of
// tensor[offset] act on the parent buffer, as on the device.
struct BufTag {
    uint32_t queue_id = 0;
    uint32_t index = 0;
    uint32_t slot = 0;
    uint32_t serial = 0;
    uint32_t handle = 0;
};

// `n` new buffers' user tags, each -1 (TPipe::InitBuffer); returns the first handle.
inline uint32_t new_buffer_handles(BlockContext& b, uint32_t n) {
    const auto first = static_cast<uint32_t>(b.user_tags.size());
    b.user_tags.resize(b.user_tags.size() + n, -1);
    return first;
}

[[noreturn]] __attribute__((cold)) void stale_buffer(const std::string& what, uint32_t addr);

// The checks of LocalTensor(pos, addr, tileSize) for elements of `elem_size` bytes named `type`.
void check_local_tensor(AscendC::TPosition pos, uint32_t addr, uint32_t tileSize, uint32_t elem_size,
                        const char* type);
// The fault of a LocalTensor<type> used by `what` before it was given memory.
[[noreturn]] __attribute__((cold)) void unbound_tensor(const char* type, const char* what);
// GlobalTensor<T>::ascrun_access with T's size, alignment and name: returns the host address.
uintptr_t gm_access(BlockContext& b, const char* api, uintptr_t base, long region, bool set, uint64_t offset,
                    uint64_t count, bool write, uint32_t elem_size, uint32_t elem_align, const char* type);
// ub_checked with the operand's fields and its element size.
uint64_t ub_checked_bytes(BlockContext& b, const char* api, const char* role, bool bound, AscendC::TPosition pos,
                          uint64_t addr, uint32_t size, BufTag tag, uint64_t count, uint32_t elem_size, uint32_t align);
// cube_operand's checks with the operand's fields and its element size.
void cube_checked(BlockContext& b, const char* api, const char* role, bool bound, AscendC::TPosition pos,
                  uint64_t addr, uint32_t size, BufTag tag, Memory mem, const char* positions, uint64_t bytes,
                  uint32_t elem_size, uint32_t align);

// A tensor from a queue may be used from AllocTensor (or DeQue) until its FreeTensor.
template <typename Describe>
inline void check_buffer_live(const BlockContext& b, BufTag tag, uint32_t addr, const Describe& describe) {
    if (tag.slot != 0 && b.buffer_serial[tag.slot] != tag.serial) stale_buffer(describe(), addr);
}

}  // namespace ascrun

namespace AscendC {

using TTagType = int32_t;  // LocalTensor user tags (GetUserTag.md)

template <typename T>
class LocalTensor {
    static_assert(ascrun::is_element_v<T>, "LocalTensor<T>: T must be an arithmetic type, half or bfloat16_t");

public:
    using PrimType = T;

    // Unbound (the device leaves the members undefined): using it in an instruction is a fault.
    LocalTensor() = default;

    // Static tensor programming: `tileSize` elements at byte offset `addr` of the position's memory.
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize) {
        ascrun::check_local_tensor(pos, addr, tileSize, sizeof(T), ascrun::TypeName<T>::c());
        pos_ = pos;
        addr_ = addr;
        size_ = tileSize;
        bound_ = true;
    }

    // The sub-tensor starting `offset` elements in; the offset may not exceed the size (bounds
    // "warn": it may, inside the Unified Buffer; the sub-tensor then has no elements of its own).
    LocalTensor operator[](const uint32_t offset) const {
        require_bound("operator[]");
        const uint64_t addr = addr_ + static_cast<uint64_t>(offset) * sizeof(T);
        if (offset > size_ && (!ascrun::enter().launch->warn_bounds() || !ascrun::in_ub(pos_) ||
                               addr > ascrun::kUbBytes)) {
            ascrun::fault(ascrun::format("LocalTensor<%s>[%u]: the offset is past the end of the tensor's %u elements "
                                         "(%s offset %s)",
                                         ascrun::TypeName<T>::c(), offset, size_, ascrun::offset_name(pos_),
                                         ascrun::hex(addr_).c_str()));
        }
        LocalTensor sub = *this;
        sub.addr_ = static_cast<uint32_t>(addr);  // <= the size of its memory
        sub.size_ = offset > size_ ? 0 : size_ - offset;
        return sub;
    }

    PrimType GetValue(const uint32_t index) const { return *element("GetValue", index); }
    template <typename T1>
    void SetValue(const uint32_t index, const T1 value) const {
        *element("SetValue", index) = static_cast<T>(value);
    }
    // Reference to one element (valid until the block ends).
    ascrun::elem_t<T>& operator()(const uint32_t index) const { return *element("operator()", index); }

    uint32_t GetSize() const { return size_; }
    uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }
    int32_t GetPosition() const { return static_cast<int32_t>(pos_); }
    void SetSize(const uint32_t size) {
        require_bound("SetSize");
        resize("SetSize", static_cast<uint64_t>(size));
    }
    void SetBufferLen(const uint32_t dataLen) {
        require_bound("SetBufferLen");
        resize("SetBufferLen", dataLen / sizeof(T));
    }

    // The shape lives in the tensor object (copied with it and its [] views, not kept by the buffer):
    // a tensor from AllocTensor, DeQue or ReinterpretCast has none until SetShapeInfo.
    void SetShapeInfo(const ShapeInfo& shapeInfo) { shape_info_ = shapeInfo; }
    ShapeInfo GetShapeInfo() const { return shape_info_; }

    // The tag lives in the buffer (TBufType::usertag), so every tensor over it sees the last one set.
    void SetUserTag(const TTagType tag) { *user_tag("SetUserTag") = tag; }
    TTagType GetUserTag() const { return *user_tag("GetUserTag"); }

    // The UB byte address of the tensor (of its element `offset`): the device's physical address.
    uint64_t GetPhyAddr() const { return GetPhyAddr(0); }
    uint64_t GetPhyAddr(const uint32_t offset) const {
        require_bound("GetPhyAddr");
        return addr_ + static_cast<uint64_t>(offset) * sizeof(T);
    }

    // This tensor becomes the bytes of `src` from its element `offset` on (SetAddrWithOffset.md: the
    // offset counts src's elements), viewed as T, within src's bytes, and keeps src's queue buffer.
    template <typename S>
    void SetAddrWithOffset(LocalTensor<S>& src, uint32_t offset) {
        ascrun::enter();
        src.require_bound("SetAddrWithOffset");
        if (offset > src.size_) {
            ascrun::fault(ascrun::format("LocalTensor<%s>::SetAddrWithOffset(LocalTensor<%s>, %u): the offset is past "
                                         "the end of the source tensor's %u elements (UB offset %s)",
                                         ascrun::TypeName<T>::c(), ascrun::TypeName<S>::c(), offset, src.size_,
                                         ascrun::hex(src.addr_).c_str()));
        }
        const uint64_t start = src.addr_ + static_cast<uint64_t>(offset) * sizeof(S);
        if (start % alignof(T) != 0) {
            ascrun::fault(ascrun::format("LocalTensor<%s>::SetAddrWithOffset(LocalTensor<%s>, %u): UB offset %s is not "
                                         "aligned to the %zu-byte %s",
                                         ascrun::TypeName<T>::c(), ascrun::TypeName<S>::c(), offset,
                                         ascrun::hex(start).c_str(), sizeof(T), ascrun::TypeName<T>::c()));
        }
        pos_ = src.pos_;
        addr_ = static_cast<uint32_t>(start);
        size_ = static_cast<uint32_t>((static_cast<uint64_t>(src.size_ - offset) * sizeof(S)) / sizeof(T));
        bound_ = true;
        tag_ = src.tag_;
    }

    // The same bytes viewed as U elements (the size rounds down to whole U elements).
    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> out;
        out.pos_ = pos_;
        out.addr_ = addr_;
        out.size_ = static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(U));
        out.bound_ = bound_;
        out.tag_ = tag_;
        return out;
    }

    // ---- ascrun internals (not Ascend C API) ----
    bool ascrun_bound() const { return bound_; }
    uint32_t ascrun_addr() const { return addr_; }
    TPosition ascrun_pos() const { return pos_; }
    ascrun::BufTag ascrun_tag() const { return tag_; }
    // A tensor over a TQue/TBuf buffer; the caller has checked the range.
    static LocalTensor ascrun_make(TPosition pos, uint32_t addr, uint32_t size, ascrun::BufTag tag) {
        LocalTensor t;
        t.pos_ = pos;
        t.addr_ = addr;
        t.size_ = size;
        t.bound_ = true;
        t.tag_ = tag;
        return t;
    }

private:
    template <typename U>
    friend class LocalTensor;

    void require_bound(const char* what) const {
        if (!bound_) ascrun::unbound_tensor(ascrun::TypeName<T>::c(), what);
    }

    void resize(const char* what, uint64_t size) {
        const uint64_t end = addr_ + size * sizeof(T);
        const ascrun::Memory mem = ascrun::memory_of(pos_);
        if (end > ascrun::memory_bytes(mem)) {
            ascrun::fault(ascrun::format("LocalTensor<%s>::%s(%llu): range [%s, %s) is outside the %s (%s bytes)",
                                         ascrun::TypeName<T>::c(), what, static_cast<unsigned long long>(size),
                                         ascrun::hex(addr_).c_str(), ascrun::hex(end).c_str(),
                                         ascrun::memory_name(mem), ascrun::hex(ascrun::memory_bytes(mem)).c_str()));
        }
        size_ = static_cast<uint32_t>(size);
    }

    TTagType* user_tag(const char* what) const {
        ascrun::BlockContext& b = ascrun::enter();
        require_bound(what);
        if (tag_.handle == 0) {
            ascrun::fault(ascrun::format("LocalTensor<%s>::%s: the tensor has no buffer to hold a tag (the device "
                                         "dereferences a null buffer handle): only tensors from a TQue, TQueBind or "
                                         "TBuf have one, not those built from an address or a LocalMemAllocator",
                                         ascrun::TypeName<T>::c(), what));
        }
        ascrun::check_buffer_live(b, tag_, addr_, [&] {
            return ascrun::format("LocalTensor<%s>::%s: the tensor", ascrun::TypeName<T>::c(), what);
        });
        return &b.user_tags[tag_.handle];
    }

    ascrun::elem_t<T>* element(const char* what, uint32_t index) const {
        ascrun::BlockContext& b = ascrun::enter();
        require_bound(what);
        ascrun::check_buffer_live(b, tag_, addr_, [&] {
            return ascrun::format("LocalTensor<%s>::%s(%u): the tensor", ascrun::TypeName<T>::c(), what, index);
        });
        if (!ascrun::in_ub(pos_)) {  // GetValue.md: "仅在LocalTensor的TPosition为VECIN/VECCALC/VECOUT时支持"
            ascrun::fault(ascrun::format("LocalTensor<%s>::%s(%u): the tensor is in TPosition %s; element access "
                                         "takes VECIN, VECCALC and VECOUT tensors only",
                                         ascrun::TypeName<T>::c(), what, index, ascrun::position_name(pos_)));
        }
        if (index >= size_) {
            auto message = [&] {
                return ascrun::format("LocalTensor<%s>::%s(%u): the index is outside the tensor's %u elements "
                                      "(UB offset %s)",
                                      ascrun::TypeName<T>::c(), what, index, size_, ascrun::hex(addr_).c_str());
            };
            const uint64_t end = addr_ + (static_cast<uint64_t>(index) + 1) * sizeof(T);
            if (!b.launch->warn_bounds() || end > ascrun::kUbBytes) ascrun::fault(message());
            ascrun::warn(b, what, "index", [&] { return message() + ascrun::kPastLocalTensor; });
        }
        if (b.pipes) {  // GetValue reads; SetValue and operator() (a reference) write
            ascrun::pipes::Finding f;
            const bool write = std::strcmp(what, "GetValue") != 0;
            if (b.pipes->scalar(what, write, addr_ + uint64_t{index} * sizeof(T), sizeof(T), &f)) ascrun::hazard(b, f);
        }
        return reinterpret_cast<ascrun::elem_t<T>*>(b.ub + addr_) + index;
    }

    TPosition pos_ = TPosition::VECCALC;
    bool bound_ = false;
    uint32_t addr_ = 0;
    uint32_t size_ = 0;
    ascrun::BufTag tag_;
    ShapeInfo shape_info_;
};

template <typename T>
class GlobalTensor {
    static_assert(ascrun::is_element_v<T>, "GlobalTensor<T>: T must be an arithmetic type, half or bfloat16_t");

public:
    using PrimType = T;

    GlobalTensor() = default;

    // `bufferSize` elements (informational: accesses are checked against the tensor argument).
    void SetGlobalBuffer(__gm__ PrimType* buffer, uint64_t bufferSize) {
        ascrun::BlockContext& b = ascrun::enter();
        addr_ = reinterpret_cast<uintptr_t>(buffer);
        size_ = bufferSize;
        region_ = b.launch->find_region(addr_);
        set_ = true;
    }
    void SetGlobalBuffer(__gm__ PrimType* buffer) { SetGlobalBuffer(buffer, 0); }

    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor sub = *this;
        sub.addr_ = addr_ + static_cast<uintptr_t>(offset * sizeof(T));  // wraps; checked on access
        sub.size_ = size_ > offset ? size_ - offset : 0;
        return sub;
    }

    PrimType GetValue(const uint64_t offset) const {
        ascrun::BlockContext& b = ascrun::enter();
        return *ascrun_access(b, "GlobalTensor::GetValue", offset, 1, false);
    }
    void SetValue(const uint64_t offset, PrimType value) {
        ascrun::BlockContext& b = ascrun::enter();
        *ascrun_access(b, "GlobalTensor::SetValue", offset, 1, true) = value;
    }
    // Reference to one element: counted as a write to its tensor argument.
    __gm__ ascrun::elem_t<T>& operator()(const uint64_t offset) const {
        ascrun::BlockContext& b = ascrun::enter();
        return *ascrun_access(b, "GlobalTensor::operator()", offset, 1, true);
    }

    uint64_t GetSize() const { return size_; }
    const __gm__ PrimType* GetPhyAddr() const { return reinterpret_cast<const PrimType*>(addr_); }
    __gm__ PrimType* GetPhyAddr(const uint64_t offset) const {
        return reinterpret_cast<PrimType*>(addr_ + static_cast<uintptr_t>(offset * sizeof(T)));
    }

    template <typename U>
    GlobalTensor<U> ReinterpretCast() const {
        GlobalTensor<U> out;
        out.addr_ = addr_;
        out.size_ = size_ * sizeof(T) / sizeof(U);
        out.region_ = region_;
        out.set_ = set_;
        return out;
    }

    // ---- ascrun internals ----
    // Checks that `count` elements from element `offset` lie inside this tensor's argument and
    // returns the host pointer to the first one. `api` names the instruction in the message.
    ascrun::elem_t<T>* ascrun_access(ascrun::BlockContext& b, const char* api, uint64_t offset, uint64_t count,
                                     bool write) const {
        return reinterpret_cast<ascrun::elem_t<T>*>(ascrun::gm_access(b, api, addr_, region_, set_, offset, count, write,
                                                                      sizeof(T), alignof(T), ascrun::TypeName<T>::c()));
    }

private:
    template <typename U>
    friend class GlobalTensor;

    uintptr_t addr_ = 0;
    uint64_t size_ = 0;
    long region_ = -1;
    bool set_ = false;
};

}  // namespace AscendC

namespace ascrun {

// Resolves LocalTensor operand `role` of instruction `api`, which touches its first `count`
// elements: checks it and returns the UB pointer. One call per operand per instruction. `align`:
// the start alignment the instruction requires of this operand (32 bytes unless its page says less).
// (ub_operand without telling the pipe model: the checks, and the operand's end in the UB.)
template <typename T>
uint64_t ub_checked(BlockContext& b, const char* api, const char* role, const AscendC::LocalTensor<T>& t,
                    uint64_t count, uint32_t align) {
    return ub_checked_bytes(b, api, role, t.ascrun_bound(), t.ascrun_pos(), t.ascrun_addr(), t.GetSize(),
                            t.ascrun_tag(), count, sizeof(T), align);
}

template <typename T>
elem_t<T>* ub_operand(BlockContext& b, const char* api, const char* role, const AscendC::LocalTensor<T>& t,
                      uint64_t count, uint32_t align = kUbAlign) {
    const uint64_t end = ub_checked(b, api, role, t, count, align);
    pipe_operand(b, api, role, Memory::UB, t.ascrun_addr(), end - t.ascrun_addr());
    return reinterpret_cast<elem_t<T>*>(b.ub + t.ascrun_addr());
}

// An operand the scalar unit reads while it issues the instruction (an address list), checked as
// ub_operand checks: on the scalar pipe for the pipe model.
template <typename T>
const elem_t<T>* ub_issue_operand(BlockContext& b, const char* api, const char* role, const AscendC::LocalTensor<T>& t,
                                  uint64_t count) {
    const uint64_t end = ub_checked(b, api, role, t, count, kUbAlign);
    if (b.pipes) {
        pipes::Finding f;
        if (b.pipes->scalar(api, false, t.ascrun_addr(), end - t.ascrun_addr(), &f)) hazard(b, f);
    }
    return reinterpret_cast<const elem_t<T>*>(b.ub + t.ascrun_addr());
}

// Resolves LocalTensor operand `role` of cube instruction `api`, which must be in local memory `mem`
// (`positions` names its TPositions and memory for the message) and touches bytes [0, `bytes`) from its start:
// checks it and returns its first byte. The cube memories have no bounds "warn" mode: an operand
// past its LocalTensor faults. (A LocalTensor never reaches past its memory: its constructor, SetSize
// and the TPipe check that.)
template <typename T>
uint8_t* cube_operand(BlockContext& b, const char* api, const char* role, const AscendC::LocalTensor<T>& t, Memory mem,
                      const char* positions, uint64_t bytes, uint32_t align) {
    cube_checked(b, api, role, t.ascrun_bound(), t.ascrun_pos(), t.ascrun_addr(), t.GetSize(), t.ascrun_tag(), mem,
                 positions, bytes, sizeof(T), align);
    pipe_operand(b, api, role, mem, t.ascrun_addr(), bytes);
    return b.local_memory(mem) + t.ascrun_addr();
}

// An overlap the hardware does not define, for the vector instructions (count and mask + repeat
// forms; DataCopy, a memory copy, keeps faulting). With bounds "warn", one that exists only through
// bytes past the operands' own elements (a tail tile read or written past its tensor, as pyasc's
// tests do) is a warning like the past-the-end access itself; the elements are then computed in order.
template <typename Message>
void undefined_overlap(const char* api, uint64_t d, uint64_t d_own, uint64_t s, uint64_t s_own,
                       const Message& message) {
    BlockContext& b = enter();
    if (!b.launch->warn_bounds() || (d < s + s_own && s < d + d_own)) fault(message());
    warn(b, api, "overlap", [&] {
        return message() + " (bounds=warn: they overlap only past the tensors' own elements)";
    });
}

// Destination and source of one instruction may coincide exactly or be disjoint. A partial overlap
// is only defined when the destination starts a whole number of 256-byte repeats below the source
// (each repeat then reads its source before a later repeat overwrites it).
// (check_overlap on byte counts: `*_bytes` what the instruction touches, `*_own` the tensor's own bytes)
void check_overlap_bytes(const char* api, const char* dst_role, uint64_t d, uint64_t d_bytes, uint64_t d_own,
                         const char* src_role, uint64_t s, uint64_t s_bytes, uint64_t s_own);

template <typename T, typename U>
void check_overlap(const char* api, const char* dst_role, const AscendC::LocalTensor<T>& dst, uint64_t dst_count,
                   const char* src_role, const AscendC::LocalTensor<U>& src, uint64_t src_count) {
    check_overlap_bytes(api, dst_role, dst.ascrun_addr(), dst_count * sizeof(T), uint64_t{dst.GetSize()} * sizeof(T),
                        src_role, src.ascrun_addr(), src_count * sizeof(U), uint64_t{src.GetSize()} * sizeof(U));
}

// Byte ranges [a, a_end) and [b, b_end) of two operands the instruction does not allow to share
// memory; `why` names the rule in the message.
inline void check_disjoint(const char* api, const char* a_role, uint64_t a, uint64_t a_end, const char* b_role,
                           uint64_t b, uint64_t b_end, const char* why) {
    if (a < b_end && b < a_end) {
        fault(format("%s: %s range [%s, %s) overlaps %s range [%s, %s) (%s)", api, a_role, hex(a).c_str(),
                     hex(a_end).c_str(), b_role, hex(b).c_str(), hex(b_end).c_str(), why));
    }
}

// Instructions take int32_t counts; a negative one is a kernel bug.
inline uint64_t checked_count(const char* api, int64_t count) {
    if (count < 0) fault(format("%s: count %lld is negative", api, static_cast<long long>(count)));
    return static_cast<uint64_t>(count);
}

}  // namespace ascrun

#pragma GCC visibility pop

// ascrun cpu runtime: the TPipe/TQue/TBuf framework.
//
// TPipe hands out Unified Buffer space sequentially from offset 0, each buffer rounded up to 32
// bytes. A TQue owns `num` equal buffers; each is Free, Allocated (AllocTensor), Queued (EnQue)
// or Dequeued (DeQue) and goes back to Free with FreeTensor. Misuse that the device would not
// report (or would turn into a hang or a corrupted buffer) is a fault naming the queue, e.g.
// "TQue<VECOUT, 2>::AllocTensor: all 2 buffers are in use (missing FreeTensor?)".
//
// Limits (TPipe/InitBuffer.md, TQue简介.md, TPipe构造函数.md): one live TPipe per core; at most 64
// buffers per kernel; at most 8 TQue buffers per TPosition (one hardware event ID each); a queue
// holds at most `depth` enqueued tensors.
#pragma once

#include "sync.h"
#include "tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace que {

constexpr uint32_t kMaxBuffersPerPosition = 8;
constexpr uint32_t kMaxBuffersPerPipe = 64;
constexpr uint32_t kPositionCount = static_cast<uint32_t>(AscendC::TPosition::MAX);

enum class BufState : uint8_t { Free, Allocated, Queued, Dequeued };

inline uint32_t round_up_32(uint32_t len) { return static_cast<uint32_t>((static_cast<uint64_t>(len) + 31) / 32 * 32); }

// The untyped state and checks of a TQue (so each TQue<pos, depth> instantiation stays small).
class QueBase {
public:
    // Ascend C queries
    bool VacantInQue() const { return queued_ < static_cast<uint32_t>(depth_ > 0 ? depth_ : 0); }
    bool HasTensorInQue() const { return queued_ > 0; }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(queued_); }
    bool HasIdleBuffer() const {
        for (uint32_t i = 0; i < num_; ++i) {
            if (state_[i] == BufState::Free) return true;
        }
        return false;
    }

    // ---- ascrun internals, used by TPipe ----
    std::string ascrun_label() const { return format("TQue<%s, %d>", position_name(pos_), depth_); }
    AscendC::TPosition ascrun_pos() const { return pos_; }
    bool ascrun_attached(const BlockContext& b) const { return id_ != 0 && b.pipe != nullptr && gen_ == b.pipe_generation; }
    void ascrun_attach(uint32_t gen, uint32_t id, uint32_t base, uint32_t num, uint32_t len) {
        gen_ = gen;
        id_ = id;
        base_ = base;
        num_ = num;
        len_ = len;
        head_ = queued_ = cursor_ = 0;
        for (auto& s : state_) s = BufState::Free;
    }

protected:
    QueBase(AscendC::TPosition pos, int32_t depth) : pos_(pos), depth_(depth) {}

    void require_live(const BlockContext& b, const char* api) const {
        if (id_ == 0) {
            fault(format("%s::%s: the queue has no buffers (call TPipe::InitBuffer for it first)",
                         ascrun_label().c_str(), api));
        }
        if (!ascrun_attached(b)) {
            fault(format("%s::%s: the TPipe that allocated this queue's buffers was reset or destroyed (call "
                         "InitBuffer again)",
                         ascrun_label().c_str(), api));
        }
    }

    uint32_t alloc() {
        if (depth_ == 0) {
            fault(format("%s::AllocTensor: a depth-0 queue is for in-place tensors, which the cpu target does not "
                         "support yet",
                         ascrun_label().c_str()));
        }
        for (uint32_t k = 0; k < num_; ++k) {
            const uint32_t i = (cursor_ + k) % num_;
            if (state_[i] == BufState::Free) {
                state_[i] = BufState::Allocated;
                cursor_ = (i + 1) % num_;
                return i;
            }
        }
        if (num_ == 1) {
            fault(format("%s::AllocTensor: its 1 buffer is in use (missing FreeTensor?)", ascrun_label().c_str()));
        }
        fault(format("%s::AllocTensor: all %u buffers are in use (missing FreeTensor?)", ascrun_label().c_str(),
                     num_));
    }

    // The buffer a tensor views, which must belong to this queue.
    uint32_t owned(const char* api, BufTag tag, uint32_t addr) const {
        if (tag.queue_id != id_ || tag.index >= num_) {
            fault(format("%s::%s: the tensor at UB offset %s was not allocated from this queue",
                         ascrun_label().c_str(), api, hex(addr).c_str()));
        }
        return tag.index;
    }

    void enque(BufTag tag, uint32_t addr) {
        const uint32_t i = owned("EnQue", tag, addr);
        if (state_[i] == BufState::Free) {
            fault(format("%s::EnQue: the tensor's buffer (UB offset %s) was already freed", ascrun_label().c_str(),
                         hex(buffer_addr(i)).c_str()));
        }
        if (state_[i] == BufState::Queued) {
            fault(format("%s::EnQue: the tensor (UB offset %s) is already in the queue", ascrun_label().c_str(),
                         hex(buffer_addr(i)).c_str()));
        }
        if (queued_ >= static_cast<uint32_t>(depth_)) {
            fault(format("%s::EnQue: the queue already holds %u tensor%s, its depth (DeQue before enqueuing more; the "
                         "device's EnQue would fail)",
                         ascrun_label().c_str(), queued_, queued_ == 1 ? "" : "s"));
        }
        fifo_[(head_ + queued_) % kMaxBuffersPerPosition] = static_cast<uint8_t>(i);
        ++queued_;
        state_[i] = BufState::Queued;
    }

    uint32_t deque() {
        if (queued_ == 0) {
            fault(format("%s::DeQue: the queue is empty (no EnQue before this DeQue)", ascrun_label().c_str()));
        }
        const uint32_t i = fifo_[head_];
        head_ = (head_ + 1) % kMaxBuffersPerPosition;
        --queued_;
        state_[i] = BufState::Dequeued;
        return i;
    }

    void free(BufTag tag, uint32_t addr) {
        const uint32_t i = owned("FreeTensor", tag, addr);
        if (state_[i] == BufState::Free) {
            fault(format("%s::FreeTensor: the tensor's buffer (UB offset %s) is already free (FreeTensor twice?)",
                         ascrun_label().c_str(), hex(buffer_addr(i)).c_str()));
        }
        if (state_[i] == BufState::Queued) {
            fault(format("%s::FreeTensor: the tensor (UB offset %s) is still in the queue (DeQue it first)",
                         ascrun_label().c_str(), hex(buffer_addr(i)).c_str()));
        }
        state_[i] = BufState::Free;
    }

    uint32_t buffer_addr(uint32_t i) const { return base_ + i * len_; }

    AscendC::TPosition pos_;
    int32_t depth_;
    uint32_t gen_ = 0, id_ = 0, base_ = 0, num_ = 0, len_ = 0;
    uint32_t head_ = 0, queued_ = 0, cursor_ = 0;
    BufState state_[kMaxBuffersPerPosition] = {};
    uint8_t fifo_[kMaxBuffersPerPosition] = {};
};

}  // namespace que
}  // namespace ascrun

namespace AscendC {

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public ::ascrun::que::QueBase {
    static_assert(::ascrun::in_ub(pos), "TQue: only VECIN, VECOUT and VECCALC queues are supported on the cpu target");
    static_assert(depth >= 0, "TQue: depth must not be negative");

public:
    TQue() : QueBase(pos, depth) {}

    template <typename T>
    LocalTensor<T> AllocTensor() {
        ascrun::BlockContext& b = ascrun::enter();
        require_live(b, "AllocTensor");
        const uint32_t i = alloc();
        return LocalTensor<T>::ascrun_make(pos, buffer_addr(i), len_ / static_cast<uint32_t>(sizeof(T)),
                                           ascrun::BufTag{id_, i});
    }

    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor) {
        ascrun::BlockContext& b = ascrun::enter();
        require_live(b, "EnQue");
        enque(tensor.ascrun_tag(), tensor.ascrun_addr());
        return true;
    }

    template <typename T>
    LocalTensor<T> DeQue() {
        ascrun::BlockContext& b = ascrun::enter();
        require_live(b, "DeQue");
        const uint32_t i = deque();
        return LocalTensor<T>::ascrun_make(pos, buffer_addr(i), len_ / static_cast<uint32_t>(sizeof(T)),
                                           ascrun::BufTag{id_, i});
    }

    template <typename T>
    void FreeTensor(LocalTensor<T>& tensor) {
        ascrun::BlockContext& b = ascrun::enter();
        require_live(b, "FreeTensor");
        free(tensor.ascrun_tag(), tensor.ascrun_addr());
    }
};

// A plain buffer (no queue, no events), usually VECCALC scratch space.
template <TPosition pos = TPosition::VECCALC>
class TBuf {
    static_assert(::ascrun::in_ub(pos), "TBuf: only VECIN, VECOUT and VECCALC buffers are supported on the cpu target");

public:
    template <typename T>
    LocalTensor<T> Get() {
        require_live("Get");
        return LocalTensor<T>::ascrun_make(pos, base_, len_ / static_cast<uint32_t>(sizeof(T)), ascrun::BufTag{});
    }
    template <typename T>
    LocalTensor<T> Get(uint32_t len) {
        require_live("Get");
        if (static_cast<uint64_t>(len) * sizeof(T) > len_) {
            ascrun::fault(ascrun::format("%s::Get<%s>(%u): %llu bytes exceed the buffer's %u bytes", label().c_str(),
                                         ascrun::TypeName<T>::c(), len,
                                         static_cast<unsigned long long>(static_cast<uint64_t>(len) * sizeof(T)), len_));
        }
        return LocalTensor<T>::ascrun_make(pos, base_, len, ascrun::BufTag{});
    }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        require_live("GetWithOffset");
        const uint64_t end = static_cast<uint64_t>(bufOffset) + static_cast<uint64_t>(size) * sizeof(T);
        if (end > len_) {
            ascrun::fault(ascrun::format("%s::GetWithOffset<%s>(%u, %u): bytes [%u, %llu) exceed the buffer's %u bytes",
                                         label().c_str(), ascrun::TypeName<T>::c(), size, bufOffset, bufOffset,
                                         static_cast<unsigned long long>(end), len_));
        }
        if (bufOffset % ascrun::kUbAlign != 0) {
            ascrun::fault(ascrun::format("%s::GetWithOffset<%s>(%u, %u): the offset is not 32-byte aligned",
                                         label().c_str(), ascrun::TypeName<T>::c(), size, bufOffset));
        }
        return LocalTensor<T>::ascrun_make(pos, base_ + bufOffset, size, ascrun::BufTag{});
    }

    // ---- ascrun internals ----
    std::string label() const { return ascrun::format("TBuf<%s>", ascrun::position_name(pos)); }
    bool ascrun_attached(const ascrun::BlockContext& b) const {
        return attached_ && b.pipe != nullptr && gen_ == b.pipe_generation;
    }
    void ascrun_attach(uint32_t gen, uint32_t base, uint32_t len) {
        gen_ = gen;
        base_ = base;
        len_ = len;
        attached_ = true;
    }

private:
    void require_live(const char* api) const {
        ascrun::BlockContext& b = ascrun::enter();
        if (!attached_) {
            ascrun::fault(ascrun::format("%s::%s: the buffer has no memory (call TPipe::InitBuffer for it first)",
                                         label().c_str(), api));
        }
        if (!ascrun_attached(b)) {
            ascrun::fault(ascrun::format("%s::%s: the TPipe that allocated this buffer was reset or destroyed",
                                         label().c_str(), api));
        }
    }

    bool attached_ = false;
    uint32_t gen_ = 0, base_ = 0, len_ = 0;
};

class TPipe {
public:
    TPipe() {
        ascrun::BlockContext& b = ascrun::enter();
        if (b.pipe != nullptr) {
            ascrun::fault("TPipe: a second TPipe was created while another is alive (the device allows one at a "
                          "time and may hang; Destroy the first)");
        }
        b.pipe = this;
        ++b.pipe_generation;
    }
    ~TPipe() { release(); }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    void Init() { require_live("Init"); }

    // An event ID of `evt` with no SetFlag outstanding (TPipe/FetchEventID.md: it is not reserved).
    template <HardEvent evt>
    int8_t FetchEventID() {
        ascrun::BlockContext& b = require_live("FetchEventID");
        for (int32_t id = 0; id < ascrun::kEventIdCount; ++id) {
            if (ascrun::sync::flag_slot(b, "TPipe::FetchEventID", evt, id) == 0) return static_cast<int8_t>(id);
        }
        ascrun::fault(ascrun::format("TPipe::FetchEventID<HardEvent::%s>: all %d event IDs have a SetFlag outstanding",
                                     ascrun::sync::event_name(evt), ascrun::kEventIdCount));
    }

    // `num` buffers of `len` bytes (rounded up to 32) for a TQue.
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
        static_assert(std::is_base_of<ascrun::que::QueBase, Q>::value, "TPipe::InitBuffer(que, num, len) takes a TQue");
        ascrun::BlockContext& b = require_live("InitBuffer");
        const std::string what = ascrun::format("TPipe::InitBuffer(%s, %u, %u)", que.ascrun_label().c_str(),
                                                static_cast<unsigned>(num), len);
        if (que.ascrun_attached(b)) {
            ascrun::fault(what + ": the queue already has buffers from this TPipe (Reset the TPipe to re-allocate)");
        }
        if (num == 0 || len == 0) ascrun::fault(what + ": num and len must be positive");
        const auto p = static_cast<uint32_t>(que.ascrun_pos());
        if (que_buffers_[p] + num > ascrun::que::kMaxBuffersPerPosition) {
            ascrun::fault(ascrun::format("%s: %u TQue buffers on TPosition %s (at most %u: one hardware event ID each)",
                                         what.c_str(), que_buffers_[p] + num, ascrun::position_name(que.ascrun_pos()),
                                         ascrun::que::kMaxBuffersPerPosition));
        }
        const uint32_t rounded = ascrun::que::round_up_32(len);
        const uint32_t base = reserve(what, num, rounded);
        que_buffers_[p] += num;
        que.ascrun_attach(b.pipe_generation, b.next_queue_id++, base, num, rounded);
        return true;
    }

    // `len` bytes (rounded up to 32) for a TBuf.
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len) {
        ascrun::BlockContext& b = require_live("InitBuffer");
        const std::string what = ascrun::format("TPipe::InitBuffer(%s, %u)", buf.label().c_str(), len);
        if (buf.ascrun_attached(b)) {
            ascrun::fault(what + ": the buffer already has memory from this TPipe (Reset the TPipe to re-allocate)");
        }
        if (len == 0) ascrun::fault(what + ": len must be positive");
        const uint32_t rounded = ascrun::que::round_up_32(len);
        buf.ascrun_attach(b.pipe_generation, reserve(what, 1, rounded), rounded);
        return true;
    }

    // Frees every buffer: queues and buffers must be given memory again with InitBuffer.
    void Reset() {
        ascrun::BlockContext& b = require_live("Reset");
        next_ = 0;
        buffers_ = 0;
        for (auto& n : que_buffers_) n = 0;
        ++b.pipe_generation;
    }
    void Destroy() {
        require_live("Destroy");
        release();
    }

private:
    ascrun::BlockContext& require_live(const char* api) {
        ascrun::BlockContext& b = ascrun::enter();
        if (b.pipe != this) {
            ascrun::fault(ascrun::format("TPipe::%s: this TPipe was destroyed", api));
        }
        return b;
    }

    // `count` consecutive buffers of `each` bytes; returns the UB offset of the first.
    uint32_t reserve(const std::string& what, uint32_t count, uint32_t each) {
        const uint64_t total = static_cast<uint64_t>(count) * each;
        if (next_ + total > ascrun::kUbBytes) {
            ascrun::fault(ascrun::format("%s: %u x %u bytes from UB offset %s do not fit in the Unified Buffer (%s "
                                         "bytes, %s left)",
                                         what.c_str(), count, each, ascrun::hex(next_).c_str(),
                                         ascrun::hex(ascrun::kUbBytes).c_str(),
                                         ascrun::hex(ascrun::kUbBytes - next_).c_str()));
        }
        if (buffers_ + count > ascrun::que::kMaxBuffersPerPipe) {
            ascrun::fault(ascrun::format("%s: a kernel may use at most %u buffers in total", what.c_str(),
                                         ascrun::que::kMaxBuffersPerPipe));
        }
        const uint32_t base = next_;
        next_ += static_cast<uint32_t>(total);
        buffers_ += count;
        return base;
    }

    void release() noexcept {
        ascrun::BlockContext* b = ascrun::tls_block;
        if (b != nullptr && b->pipe == this) {
            b->pipe = nullptr;
            ++b->pipe_generation;
        }
    }

    uint32_t next_ = 0;
    uint32_t buffers_ = 0;
    uint32_t que_buffers_[ascrun::que::kPositionCount] = {};
};

inline TPipe* GetTPipePtr() {
    ascrun::BlockContext& b = ascrun::enter();
    return static_cast<TPipe*>(const_cast<void*>(b.pipe));
}

}  // namespace AscendC

#pragma GCC visibility pop

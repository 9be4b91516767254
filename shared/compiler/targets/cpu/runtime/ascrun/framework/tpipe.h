// ascrun cpu runtime: the TPipe/TQueBind/TQue/TBuf/TBufPool framework (资源管理/Pipe和Que框架).
//
// TPipe hands out each local memory (the Unified Buffer for VECIN/VECOUT/VECCALC; L1 for A1/B1/C1,
// L0A for A2, L0B for B2, L0C for CO1) sequentially from offset 0, each buffer rounded up to 32
// bytes; a TBufPool (Unified Buffer only) takes a range of the UB (TPipe::InitBufPool) and hands
// out its own range the same way (TBufPool::InitBuffer, nested TBufPool::InitBufPool; the shared
// form gives a second pool the same range). A TQueBind (TQue is TQueBind<pos, pos>) owns `num`
// equal buffers; each is Free, Allocated (AllocTensor), Queued (EnQue) or Dequeued (DeQue) and
// goes back to Free with FreeTensor. Each AllocTensor gets a serial that its tensors carry
// (BlockContext::buffer_serial), so a tensor used after FreeTensor faults in the instruction that
// uses it.
//
// Misuse the device would not report (or would turn into a hang or a corrupted buffer) is a fault
// naming the queue, e.g. "TQue<VECOUT, 2>::AllocTensor: all 2 buffers are in use (missing
// FreeTensor?)". Limits (TPipe/InitBuffer.md, TQue简介.md, TQue/AllocTensor.md, TPipe构造函数.md,
// TBufPool构造函数.md, TBufPool/InitBuffer-56.md): one live TPipe per core; at most 64 TPipe buffers per
// kernel; at most 8 TQue buffers per TPosition from the TPipe (see TPipe::init_que_buffer) and at
// most 8 tensors allocated at a time per TPosition; at most bufIDSize (<= 16) buffers per TBufPool; a
// queue holds at most `depth` enqueued tensors (a depth-0 queue, for the in-place forms, its
// buffers); at most 8 event IDs per HardEvent.
#pragma once
// The untyped members are defined in framework/tpipe.cpp (compiled once per toolchain).

#include "ascrun/core/tensor.h"
#include "ascrun/sync/intra_core.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
using TEventID = int8_t;
}

namespace ascrun {
namespace que {

constexpr uint32_t kMaxBuffersPerPosition = 8;   // TQue buffers per TPosition, and tensors allocated at a time
constexpr uint32_t kMaxBuffersPerPipe = 64;
constexpr uint32_t kMaxPoolBuffers = 16;         // TBufPool's bufIDSize
constexpr uint32_t kMaxQueueBuffers = kMaxPoolBuffers;
constexpr uint8_t kPlainEnQue = 0xFF;            // an EnQue without user positions

enum class BufState : uint8_t { Free, Allocated, Queued, Dequeued };

inline uint32_t round_up_32(uint32_t len) { return static_cast<uint32_t>((static_cast<uint64_t>(len) + 31) / 32 * 32); }

// Where a TQueBind<src, dst>'s buffers live: the local end of the path.
constexpr AscendC::TPosition buffer_position(AscendC::TPosition src, AscendC::TPosition dst) {
    return src == AscendC::TPosition::GM ? dst : src;
}

// The user positions EnQue<src, dst>/DeQue<src, dst> accept (TQue/EnQue.md: GM->UB(VECIN/VECOUT)->GM).
constexpr bool user_path_supported(AscendC::TPosition src, AscendC::TPosition dst) {
    using P = AscendC::TPosition;
    return (src == P::GM && (dst == P::VECIN || dst == P::VECOUT)) ||
           ((src == P::VECIN || src == P::VECOUT) && dst == P::GM);
}

inline uint8_t user_path_code(AscendC::TPosition src, AscendC::TPosition dst) {
    return static_cast<uint8_t>(static_cast<uint32_t>(src) * kPositionSlots / 2 + static_cast<uint32_t>(dst));
}

// The pipes a queue's flags order (the queue framework sets and waits them: TQue简介.md): the
// pipe that fills a buffer before EnQue (it waits in AllocTensor for the FreeTensor before) and
// the pipe that reads it after DeQue (it signals FreeTensor). All: a position with no flags (VECCALC).
inline pipes::Pipe producer_pipe(AscendC::TPosition p) {
    using P = AscendC::TPosition;
    switch (p) {
        case P::GM: case P::VECIN: case P::A1: case P::B1: case P::C1: return pipes::Pipe::MTE2;
        case P::VECOUT: return pipes::Pipe::V;
        case P::A2: case P::B2: return pipes::Pipe::MTE1;
        case P::CO1: return pipes::Pipe::M;
        case P::CO2: return pipes::Pipe::FIX;
        default: return pipes::Pipe::All;
    }
}
inline pipes::Pipe consumer_pipe(AscendC::TPosition p) {
    using P = AscendC::TPosition;
    switch (p) {
        case P::VECIN: return pipes::Pipe::V;
        case P::GM: case P::VECOUT: case P::CO2: return pipes::Pipe::MTE3;
        case P::A1: case P::B1: case P::C1: return pipes::Pipe::MTE1;
        case P::A2: case P::B2: return pipes::Pipe::M;
        case P::CO1: return pipes::Pipe::FIX;
        default: return pipes::Pipe::All;
    }
}

class PoolBase;

// The untyped state and checks of a TQueBind (so each instantiation stays small).
class QueBase {
public:
    QueBase(const QueBase&) = delete;
    QueBase& operator=(const QueBase&) = delete;

    // Ascend C queries (not for depth-0 queues: TQue/VacantInQue.md and its siblings)
    bool VacantInQue() {
        require_queries("VacantInQue");
        return queued_ < static_cast<uint32_t>(depth_);
    }
    bool HasTensorInQue() {
        require_queries("HasTensorInQue");
        return queued_ > 0;
    }
    int32_t GetTensorCountInQue() {
        require_queries("GetTensorCountInQue");
        return static_cast<int32_t>(queued_);
    }
    bool HasIdleBuffer() {
        require_queries("HasIdleBuffer");
        for (uint32_t i = 0; i < num_; ++i) {
            if (state_[i] == BufState::Free) return true;
        }
        return false;
    }

    // ---- ascrun internals, used by TPipe and TBufPool ----
    std::string ascrun_label() const {
        if (is_tque_) return format("TQue<%s, %d>", position_name(pos_), depth_);
        return format("TQueBind<%s, %s, %d>", position_name(src_), position_name(dst_), depth_);
    }
    AscendC::TPosition ascrun_pos() const { return pos_; }
    bool ascrun_attached(const BlockContext& b) const { return id_ != 0 && b.pipe != nullptr && gen_ == b.pipe_generation; }
    bool ascrun_busy() const {
        for (uint32_t i = 0; i < num_; ++i) {
            if (state_[i] != BufState::Free) return true;
        }
        return false;
    }
    uint32_t ascrun_base() const { return base_; }
    void ascrun_attach(BlockContext& b, PoolBase* pool, uint32_t base, uint32_t num, uint32_t len);
    // Its TBufPool was given memory again (InitBufPool after Reset) or went away.
    void ascrun_drop_pool() {
        pool_ = nullptr;
        pool_reinitialized_ = true;
    }

protected:
    QueBase(AscendC::TPosition src, AscendC::TPosition dst, int32_t depth, bool is_tque)
        : src_(src), dst_(dst), pos_(buffer_position(src, dst)), depth_(depth), is_tque_(is_tque) {}
    ~QueBase();

    BlockContext& require_live(const char* api) const;

    void require_queries(const char* api) const;

    void require_depth(const char* api, bool in_place) const;

    // A free buffer, now Allocated with a fresh serial; returns its index.
    uint32_t alloc(BlockContext& b);

    // The buffer a tensor views, which must belong to this queue and hold the tensor's allocation.
    uint32_t owned(const BlockContext& b, const char* api, BufTag tag, uint32_t addr) const;

    void enque(BlockContext& b, BufTag tag, uint32_t addr, uint8_t path);

    uint32_t deque(BlockContext& b, uint8_t path, const char* form);

    void free(BlockContext& b, BufTag tag, uint32_t addr);

    template <typename T>
    AscendC::LocalTensor<T> tensor(const BlockContext& b, uint32_t i) const {
        return AscendC::LocalTensor<T>::ascrun_make(pos_, buffer_addr(i), len_ / static_cast<uint32_t>(sizeof(T)),
                                                    BufTag{id_, i, slot_ + i, b.buffer_serial[slot_ + i], handle_ + i});
    }

    uint32_t buffer_addr(uint32_t i) const { return base_ + i * len_; }

    // The pipe model's keys of buffer i's EnQue and FreeTensor signals (apart from the flag keys of
    // sync/intra_core.h).
    uint64_t enque_key(uint32_t i) const { return pipes::kQueueKeys + 2 * uint64_t{slot_ + i}; }
    uint64_t free_key(uint32_t i) const { return enque_key(i) + 1; }
    bool has_flags() const { return producer_pipe(src_) != pipes::Pipe::All && consumer_pipe(dst_) != pipes::Pipe::All; }
    // EnQue<src, dst>/DeQue<src, dst>: GM->VECIN/VECOUT is MTE2 to V, VECIN/VECOUT->GM is V to MTE3.
    static pipes::Pipe path_pipes(uint8_t path, bool waiter) {
        const bool in = path < kPositionSlots / 2;  // src GM (position 0)
        if (in) return waiter ? pipes::Pipe::V : pipes::Pipe::MTE2;
        return waiter ? pipes::Pipe::MTE3 : pipes::Pipe::V;
    }

    AscendC::TPosition src_, dst_, pos_;
    int32_t depth_;
    bool is_tque_;
    bool pool_reinitialized_ = false;
    PoolBase* pool_ = nullptr;
    uint32_t gen_ = 0, id_ = 0, base_ = 0, num_ = 0, len_ = 0, slot_ = 0, handle_ = 0;
    uint32_t head_ = 0, queued_ = 0, cursor_ = 0;
    BufState state_[kMaxQueueBuffers] = {};
    uint8_t fifo_[kMaxQueueBuffers] = {};
    uint8_t fifo_path_[kMaxQueueBuffers] = {};
};

// The untyped state of a TBufPool: its range of the Unified Buffer, what it handed out, and the
// queues it gave buffers (TBufPool::Reset checks that none still holds a tensor).
class PoolBase {
public:
    PoolBase(const PoolBase&) = delete;
    PoolBase& operator=(const PoolBase&) = delete;

    std::string ascrun_label() const { return format("TBufPool<%s, %u>", position_name(pos_), id_size_); }
    AscendC::TPosition ascrun_pos() const { return pos_; }
    uint32_t ascrun_id_size() const { return id_size_; }
    bool ascrun_attached(const BlockContext& b) const { return attached_ && b.pipe != nullptr && gen_ == b.pipe_generation; }
    uint32_t ascrun_start() const { return start_; }
    uint32_t ascrun_len() const { return len_; }
    void ascrun_forget(const QueBase* q) {
        for (uint32_t k = 0; k < n_queues_; ++k) {
            if (queues_[k] == q) {
                queues_[k] = queues_[--n_queues_];
                return;
            }
        }
    }

    // Gives the pool [start, start + len) (InitBufPool); queues it served before a Reset lose their buffers.
    void ascrun_attach(const BlockContext& b, const std::string& what, uint32_t start, uint32_t len);

protected:
    PoolBase(AscendC::TPosition pos, uint32_t id_size) : pos_(pos), id_size_(id_size) {}
    ~PoolBase() { drop_queues(); }

    // The pool, which must have memory and not be Reset, before handing some out.
    BlockContext& require_usable(const std::string& what) const;

    // `count` buffers of `each` bytes (`ids` buffer IDs) from the pool's free range; returns the first offset.
    uint32_t take(const std::string& what, uint32_t count, uint32_t each, uint32_t ids);

    void keep(QueBase* q) { queues_[n_queues_++] = q; }  // n_queues_ <= used_ <= id_size_ <= 16

    // TBufPool::Reset: the pool's tensors must all be freed; its range's contents become undefined.
    void reset(const char* api);

    // The pool `child` takes from this one: non-shared, a bufIDSize within what this pool has left.
    uint32_t child_ids(const std::string& what, uint32_t child_ids, bool shared) const;

private:
    void drop_queues() {
        for (uint32_t k = 0; k < n_queues_; ++k) queues_[k]->ascrun_drop_pool();
        n_queues_ = 0;
    }

    AscendC::TPosition pos_;
    uint32_t id_size_;
    bool attached_ = false, reset_ = false;
    uint32_t gen_ = 0, start_ = 0, len_ = 0, cursor_ = 0, used_ = 0;
    QueBase* queues_[kMaxPoolBuffers] = {};
    uint32_t n_queues_ = 0;
};

// Checks shared by TPipe::InitBuffer/InitBufPool and TBufPool::InitBuffer/InitBufPool (`in_pool`: the
// memory comes from, or is, a TBufPool, which the cpu target models in the Unified Buffer only);
// returns the rounded length.
uint32_t check_buffer_request(const std::string& what, AscendC::TPosition pos, uint32_t num, uint32_t len,
                              bool in_pool);

}  // namespace que
}  // namespace ascrun

namespace AscendC {

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind : public ::ascrun::que::QueBase {
    static_assert(depth >= 0, "TQueBind: depth must not be negative");

public:
    TQueBind() : QueBase(src, dst, depth, false) {}

    template <typename T>
    LocalTensor<T> AllocTensor() {
        ascrun::BlockContext& b = require_live("AllocTensor");
        require_depth("AllocTensor", false);
        return tensor<T>(b, alloc(b));
    }
    template <typename T>
    void AllocTensor(LocalTensor<T>& tensor_out) {
        ascrun::BlockContext& b = require_live("AllocTensor");
        require_depth("AllocTensor", true);
        tensor_out = tensor<T>(b, alloc(b));
    }

    template <typename T>
    bool EnQue(const LocalTensor<T>& t) {
        ascrun::BlockContext& b = require_live("EnQue");
        enque(b, t.ascrun_tag(), t.ascrun_addr(), ascrun::que::kPlainEnQue);
        return true;
    }
    // The user-position form (TQue/EnQue.md), for VECIN/VECOUT reuse through one TQueBind.
    template <TPosition srcUserPos, TPosition dstUserPos, typename T>
    bool EnQue(const LocalTensor<T>& t) {
        static_assert(ascrun::que::user_path_supported(srcUserPos, dstUserPos),
                      "EnQue<srcUserPos, dstUserPos>: only GM->VECIN/VECOUT and VECIN/VECOUT->GM are supported");
        ascrun::BlockContext& b = require_live("EnQue");
        enque(b, t.ascrun_tag(), t.ascrun_addr(), ascrun::que::user_path_code(srcUserPos, dstUserPos));
        return true;
    }

    template <typename T>
    LocalTensor<T> DeQue() {
        ascrun::BlockContext& b = require_live("DeQue");
        require_depth("DeQue", false);
        return tensor<T>(b, deque(b, ascrun::que::kPlainEnQue, ""));
    }
    template <typename T>
    void DeQue(LocalTensor<T>& tensor_out) {
        ascrun::BlockContext& b = require_live("DeQue");
        require_depth("DeQue", true);
        tensor_out = tensor<T>(b, deque(b, ascrun::que::kPlainEnQue, "(tensor)"));
    }
    template <TPosition srcUserPos, TPosition dstUserPos, typename T>
    LocalTensor<T> DeQue() {
        static_assert(ascrun::que::user_path_supported(srcUserPos, dstUserPos),
                      "DeQue<srcUserPos, dstUserPos>: only GM->VECIN/VECOUT and VECIN/VECOUT->GM are supported");
        ascrun::BlockContext& b = require_live("DeQue");
        require_depth("DeQue", false);
        const std::string form = ascrun::format("<%s, %s>", ascrun::position_name(srcUserPos),
                                                ascrun::position_name(dstUserPos));
        return tensor<T>(b, deque(b, ascrun::que::user_path_code(srcUserPos, dstUserPos), form.c_str()));
    }

    template <typename T>
    void FreeTensor(LocalTensor<T>& t) {
        ascrun::BlockContext& b = require_live("FreeTensor");
        free(b, t.ascrun_tag(), t.ascrun_addr());
    }

protected:
    TQueBind(bool is_tque) : QueBase(src, dst, depth, is_tque) {}
};

// TQue<pos> is TQueBind<pos, pos> (TQue简介.md: TQue inherits TQueBind).
template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {
public:
    TQue() : TQueBind<pos, pos, depth, mask>(true) {}
};

// A plain buffer (no queue, no events), usually VECCALC scratch space.
template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    template <typename T>
    LocalTensor<T> Get() {
        require_live("Get");
        return LocalTensor<T>::ascrun_make(pos, base_, len_ / static_cast<uint32_t>(sizeof(T)), ascrun::BufTag{0, 0, 0, 0, handle_});
    }
    template <typename T>
    LocalTensor<T> Get(uint32_t len) {
        require_live("Get");
        if (static_cast<uint64_t>(len) * sizeof(T) > len_) {
            ascrun::fault(ascrun::format("%s::Get<%s>(%u): %llu bytes exceed the buffer's %u bytes", label().c_str(),
                                         ascrun::TypeName<T>::c(), len,
                                         static_cast<unsigned long long>(static_cast<uint64_t>(len) * sizeof(T)), len_));
        }
        return LocalTensor<T>::ascrun_make(pos, base_, len, ascrun::BufTag{0, 0, 0, 0, handle_});
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
        return LocalTensor<T>::ascrun_make(pos, base_ + bufOffset, size, ascrun::BufTag{0, 0, 0, 0, handle_});
    }

    // TBuf inherits TQueBind's interface with none of a queue's bookkeeping (kernel_tbuf_impl.h):
    // AllocTensor and DeQue are Get, EnQue and FreeTensor do nothing ("TBuf获取的Tensor无需释放").
    template <typename T>
    LocalTensor<T> AllocTensor() {
        return Get<T>();
    }
    template <typename T>
    void FreeTensor(LocalTensor<T>&) {
        require_live("FreeTensor");
    }
    template <typename T>
    void EnQue(const LocalTensor<T>&) {
        require_live("EnQue");
    }
    template <typename T>
    LocalTensor<T> DeQue() {
        return Get<T>();
    }

    // ---- ascrun internals ----
    std::string label() const { return ascrun::format("TBuf<%s>", ascrun::position_name(pos)); }
    bool ascrun_attached(const ascrun::BlockContext& b) const {
        return attached_ && b.pipe != nullptr && gen_ == b.pipe_generation;
    }
    void ascrun_attach(ascrun::BlockContext& b, uint32_t base, uint32_t len) {
        gen_ = b.pipe_generation;
        handle_ = ascrun::new_buffer_handles(b, 1);
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
    uint32_t gen_ = 0, base_ = 0, len_ = 0, handle_ = 0;
};

// A range of the Unified Buffer for buffers and nested pools (TBufPool简介.md); bufIDSize <= 16.
template <TPosition pos, uint32_t bufIDSize = 4>
class TBufPool : public ::ascrun::que::PoolBase {
    static_assert(bufIDSize <= ::ascrun::que::kMaxPoolBuffers, "TBufPool: bufIDSize is at most 16");

public:
    TBufPool() : PoolBase(pos, bufIDSize) {}

    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
        static_assert(std::is_base_of<ascrun::que::QueBase, Q>::value,
                      "TBufPool::InitBuffer(que, num, len) takes a TQue or TQueBind");
        const std::string what = ascrun::format("%s::InitBuffer(%s, %u, %u)", ascrun_label().c_str(),
                                                que.ascrun_label().c_str(), static_cast<unsigned>(num), len);
        ascrun::BlockContext& b = require_usable(what);
        const uint32_t rounded = ascrun::que::check_buffer_request(what, que.ascrun_pos(), num, len, true);
        if (que.ascrun_attached(b)) fault_has_buffers(what);
        que.ascrun_attach(b, this, take(what, num, rounded, num), num, rounded);
        keep(&que);
        return true;
    }
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len) {
        const std::string what = ascrun::format("%s::InitBuffer(%s, %u)", ascrun_label().c_str(), buf.label().c_str(), len);
        ascrun::BlockContext& b = require_usable(what);
        const uint32_t rounded = ascrun::que::check_buffer_request(what, bufPos, 1, len, true);
        if (buf.ascrun_attached(b)) fault_has_buffers(what);
        buf.ascrun_attach(b, take(what, 1, rounded, 1), rounded);
        return true;
    }

    // A nested pool: the next `len` bytes of this one (non-shared), or shareBuf's range (shared).
    template <class P>
    bool InitBufPool(P& bufPool, uint32_t len) {
        static_assert(std::is_base_of<ascrun::que::PoolBase, P>::value, "TBufPool::InitBufPool takes a TBufPool");
        const std::string what = ascrun::format("%s::InitBufPool(%s, %u)", ascrun_label().c_str(),
                                                bufPool.ascrun_label().c_str(), len);
        ascrun::BlockContext& b = require_usable(what);
        const uint32_t rounded = ascrun::que::check_buffer_request(what, bufPool.ascrun_pos(), 1, len, true);
        child_ids(what, bufPool.ascrun_id_size(), false);
        bufPool.ascrun_attach(b, what, take(what, 1, rounded, 0), rounded);
        return true;
    }
    template <class P, class S>
    bool InitBufPool(P& bufPool, uint32_t len, S& shareBuf) {
        static_assert(std::is_base_of<ascrun::que::PoolBase, P>::value && std::is_base_of<ascrun::que::PoolBase, S>::value,
                      "TBufPool::InitBufPool(bufPool, len, shareBuf) takes TBufPools");
        const std::string what = ascrun::format("%s::InitBufPool(%s, %u, %s)", ascrun_label().c_str(),
                                                bufPool.ascrun_label().c_str(), len, shareBuf.ascrun_label().c_str());
        ascrun::BlockContext& b = require_usable(what);
        ascrun::que::check_buffer_request(what, bufPool.ascrun_pos(), 1, len, true);
        child_ids(what, bufPool.ascrun_id_size(), true);
        share(b, what, bufPool, len, shareBuf);
        return true;
    }

    // Ends this pool's use: its tensors must be freed; its buffers stay, their contents undefined.
    void Reset() { reset("Reset"); }

    // ---- ascrun internals (TPipe::InitBufPool's shared form too) ----
    template <class P, class S>
    static void share(const ascrun::BlockContext& b, const std::string& what, P& bufPool, uint32_t len, S& shareBuf) {
        if (!shareBuf.ascrun_attached(b)) fault_no_share(what);
        if (ascrun::que::round_up_32(len) > shareBuf.ascrun_len()) {
            ascrun::fault(ascrun::format("%s: len is longer than the shared pool's %u bytes", what.c_str(),
                                         shareBuf.ascrun_len()));
        }
        bufPool.ascrun_attach(b, what, shareBuf.ascrun_start(), shareBuf.ascrun_len());
    }

private:
    [[noreturn]] static void fault_has_buffers(const std::string& what) {
        ascrun::fault(what + ": it already has memory from this TPipe (Reset the TPipe to re-allocate)");
    }
    [[noreturn]] static void fault_no_share(const std::string& what) {
        ascrun::fault(what + ": the shared pool has no memory (initialize it with InitBufPool first)");
    }
};

class TPipe {
public:
    TPipe() { init("TPipe"); }
    ~TPipe() { release(); }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    // A no-op on a live TPipe (the constructor calls it); after Destroy it makes the TPipe live again
    // (TPipe/Init.md).
    void Init();

    // An event ID of `evt` held until ReleaseEventID: one neither allocated nor with a SetFlag
    // outstanding.
    template <HardEvent evt>
    TEventID AllocEventID() {
        ascrun::BlockContext& b = require_live("AllocEventID");
        const int32_t id = free_event_id(b, "TPipe::AllocEventID", evt);
        b.event_ids_allocated[static_cast<uint32_t>(evt)] |= static_cast<uint8_t>(1u << id);
        return static_cast<TEventID>(id);
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID id) {
        ascrun::BlockContext& b = require_live("ReleaseEventID");
        ascrun::sync::flag_slot(b, "TPipe::ReleaseEventID", evt, id);  // checks the range
        uint8_t& held = b.event_ids_allocated[static_cast<uint32_t>(evt)];
        if ((held & (1u << id)) == 0) {
            ascrun::fault(ascrun::format("TPipe::ReleaseEventID<HardEvent::%s>(%d): event ID %d is not allocated (it "
                                         "must come from AllocEventID<HardEvent::%s> and be released once)",
                                         ascrun::sync::event_name(evt), id, id, ascrun::sync::event_name(evt)));
        }
        held = static_cast<uint8_t>(held & ~(1u << id));
    }
    // An event ID of `evt` that is free now, not reserved (TPipe/FetchEventID.md).
    template <HardEvent evt>
    TEventID FetchEventID() {
        return static_cast<TEventID>(free_event_id(require_live("FetchEventID"), "TPipe::FetchEventID", evt));
    }

    // `num` buffers of `len` bytes (rounded up to 32) for a TQue or TQueBind.
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
        static_assert(std::is_base_of<ascrun::que::QueBase, Q>::value,
                      "TPipe::InitBuffer(que, num, len) takes a TQue or TQueBind");
        init_que_buffer(que, num, len);
        return true;
    }

    // `len` bytes (rounded up to 32) for a TBuf.
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len) {
        ascrun::BlockContext& b = require_live("InitBuffer");
        const std::string what = ascrun::format("TPipe::InitBuffer(%s, %u)", buf.label().c_str(), len);
        const uint32_t rounded = ascrun::que::check_buffer_request(what, bufPos, 1, len, false);
        if (buf.ascrun_attached(b)) {
            ascrun::fault(what + ": the buffer already has memory from this TPipe (Reset the TPipe to re-allocate)");
        }
        buf.ascrun_attach(b, reserve(what, ascrun::memory_of(bufPos), 1, rounded, 1), rounded);
        return true;
    }

    // A TBufPool of the next `len` bytes (rounded up to 32), or sharing shareBuf's range.
    template <class P>
    bool InitBufPool(P& bufPool, uint32_t len) {
        static_assert(std::is_base_of<ascrun::que::PoolBase, P>::value, "TPipe::InitBufPool takes a TBufPool");
        ascrun::BlockContext& b = require_live("InitBufPool");
        const std::string what = ascrun::format("TPipe::InitBufPool(%s, %u)", bufPool.ascrun_label().c_str(), len);
        const uint32_t rounded = ascrun::que::check_buffer_request(what, bufPool.ascrun_pos(), 1, len, true);
        bufPool.ascrun_attach(b, what, reserve(what, ascrun::Memory::UB, 1, rounded, 0), rounded);
        return true;
    }
    template <class P, class S>
    bool InitBufPool(P& bufPool, uint32_t len, S& shareBuf) {
        static_assert(std::is_base_of<ascrun::que::PoolBase, P>::value && std::is_base_of<ascrun::que::PoolBase, S>::value,
                      "TPipe::InitBufPool(bufPool, len, shareBuf) takes TBufPools");
        ascrun::BlockContext& b = require_live("InitBufPool");
        const std::string what = ascrun::format("TPipe::InitBufPool(%s, %u, %s)", bufPool.ascrun_label().c_str(), len,
                                                shareBuf.ascrun_label().c_str());
        ascrun::que::check_buffer_request(what, bufPool.ascrun_pos(), 1, len, true);
        P::share(b, what, bufPool, len, shareBuf);
        return true;
    }

    // Frees every buffer and event ID: queues, buffers and pools must be given memory again.
    void Reset();
    void Destroy();

private:
    // InitBuffer of a TQue or TQueBind (the checks need only its untyped part).
    void init_que_buffer(ascrun::que::QueBase& que, uint8_t num, uint32_t len);

    void init(const char* api);

    ascrun::BlockContext& require_live(const char* api);

    // The lowest event ID of `evt` neither allocated nor with a SetFlag outstanding; a fault if none.
    static int32_t free_event_id(ascrun::BlockContext& b, const char* api, HardEvent evt);

    // `count` consecutive buffers of `each` bytes (`buffers` of the kernel's 64) in local memory
    // `mem`, which the TPipe hands out from offset 0; returns the offset of the first.
    uint32_t reserve(const std::string& what, ascrun::Memory mem, uint32_t count, uint32_t each, uint32_t buffers);

    // Every queue tensor goes stale; allocation counts and event IDs start over.
    static void forget_buffers(ascrun::BlockContext& b) noexcept;

    void release() noexcept;

    uint32_t next_[1 + ascrun::kCubeMemoryCount] = {};  // the next free offset of each Memory
    uint32_t buffers_ = 0;
    uint32_t que_buffers_[ascrun::kPositionSlots] = {};
};

inline TPipe* GetTPipePtr() {
    ascrun::BlockContext& b = ascrun::enter();
    if (b.pipe == nullptr) ascrun::fault("GetTPipePtr: no TPipe is alive (create one first)");
    return static_cast<TPipe*>(const_cast<void*>(b.pipe));
}

}  // namespace AscendC

#pragma GCC visibility pop

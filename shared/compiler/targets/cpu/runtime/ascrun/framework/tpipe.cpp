// ascrun cpu runtime: the untyped parts of the queue framework (framework/tpipe.h: QueBase,
// PoolBase, TPipe), compiled once per toolchain.
#include "ascrun/framework/tpipe.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace que {

QueBase::~QueBase() {
    if (pool_ != nullptr) pool_->ascrun_forget(this);
}

void QueBase::ascrun_attach(BlockContext& b, PoolBase* pool, uint32_t base, uint32_t num, uint32_t len) {
    if (pool_ != nullptr) pool_->ascrun_forget(this);
    gen_ = b.pipe_generation;
    id_ = b.next_queue_id++;
    base_ = base;
    num_ = num;
    len_ = len;
    slot_ = static_cast<uint32_t>(b.buffer_serial.size());
    b.buffer_serial.resize(b.buffer_serial.size() + num, 0);
    handle_ = new_buffer_handles(b, num);
    head_ = queued_ = cursor_ = 0;
    for (auto& s : state_) s = BufState::Free;
    pool_ = pool;
    pool_reinitialized_ = false;
}

uint32_t check_buffer_request(const std::string& what, AscendC::TPosition pos, uint32_t num, uint32_t len,
                                     bool in_pool) {
    if (!position_modelled(pos)) unmodelled_position(what, pos);
    if (in_pool && !in_ub(pos)) {
        fault(format("%s: TPosition %s: TBufPool is supported on the cpu target for the Unified Buffer only (VECIN, "
                     "VECOUT, VECCALC)",
                     what.c_str(), position_name(pos)));
    }
    if (num == 0 || len == 0) fault(what + ": num and len must be positive");
    if (num > kMaxQueueBuffers) fault(format("%s: at most %u buffers per queue", what.c_str(), kMaxQueueBuffers));
    return round_up_32(len);
}

BlockContext& QueBase::require_live(const char* api) const {
    BlockContext& b = enter();
    if (pool_reinitialized_) {
        fault(format("%s::%s: the TBufPool that gave this queue its buffers was given memory again (InitBufPool "
                     "after Reset) or destroyed: call InitBuffer for the queue again",
                     ascrun_label().c_str(), api));
    }
    if (id_ == 0) {
        fault(format("%s::%s: the queue has no buffers (call TPipe::InitBuffer for it first)",
                     ascrun_label().c_str(), api));
    }
    if (!ascrun_attached(b)) {
        fault(format("%s::%s: the TPipe that allocated this queue's buffers was reset or destroyed (call "
                     "InitBuffer again)",
                     ascrun_label().c_str(), api));
    }
    return b;
}

void QueBase::require_queries(const char* api) const {
    require_live(api);
    if (depth_ == 0) {
        fault(format("%s::%s: not supported on a depth-0 queue (the in-place tensor forms; see TQue/%s.md)",
                     ascrun_label().c_str(), api, api));
    }
}

void QueBase::require_depth(const char* api, bool in_place) const {
    if (in_place && depth_ != 0) {
        fault(format("%s::%s(tensor): the in-place form needs a depth-0 queue (TQueBind/%s.md)",
                     ascrun_label().c_str(), api, api));
    }
    if (!in_place && depth_ == 0) {
        fault(format("%s::%s: a depth-0 queue takes the in-place form %s(tensor) (TQueBind/%s.md)",
                     ascrun_label().c_str(), api, api, api));
    }
}

uint32_t QueBase::alloc(BlockContext& b) {
    uint32_t i = num_;
    for (uint32_t k = 0; k < num_; ++k) {
        const uint32_t c = (cursor_ + k) % num_;
        if (state_[c] == BufState::Free) {
            i = c;
            break;
        }
    }
    if (i == num_) {
        if (num_ == 1) {
            fault(format("%s::AllocTensor: its 1 buffer is in use (missing FreeTensor?)", ascrun_label().c_str()));
        }
        fault(format("%s::AllocTensor: all %u buffers are in use (missing FreeTensor?)", ascrun_label().c_str(),
                     num_));
    }
    uint8_t& on_pos = b.allocated_on[static_cast<uint32_t>(pos_)];
    if (on_pos >= kMaxBuffersPerPosition) {
        fault(format("%s::AllocTensor: %u tensors are already allocated on TPosition %s across its queues (at "
                     "most %u at a time on Atlas A2/A3; FreeTensor some first)",
                     ascrun_label().c_str(), static_cast<unsigned>(on_pos), position_name(pos_),
                     kMaxBuffersPerPosition));
    }
    ++on_pos;
    if (b.pipes && has_flags()) b.pipes->take(free_key(i), producer_pipe(src_));
    state_[i] = BufState::Allocated;
    cursor_ = (i + 1) % num_;
    b.buffer_serial[slot_ + i] = b.next_serial++;
    return i;
}

uint32_t QueBase::owned(const BlockContext& b, const char* api, BufTag tag, uint32_t addr) const {
    if (tag.queue_id != id_ || tag.index >= num_) {
        fault(format("%s::%s: the tensor at UB offset %s was not allocated from this queue",
                     ascrun_label().c_str(), api, hex(addr).c_str()));
    }
    const uint32_t i = tag.index;
    if (state_[i] == BufState::Free) {
        fault(format("%s::%s: the tensor's buffer (UB offset %s) was already freed%s", ascrun_label().c_str(), api,
                     hex(buffer_addr(i)).c_str(),
                     std::strcmp(api, "FreeTensor") == 0 ? " (FreeTensor twice?)" : ""));
    }
    if (b.buffer_serial[slot_ + i] != tag.serial) {
        fault(format("%s::%s: the tensor's buffer (UB offset %s) was freed and allocated again since the tensor "
                     "was taken from it (a stale tensor)",
                     ascrun_label().c_str(), api, hex(buffer_addr(i)).c_str()));
    }
    return i;
}

void QueBase::enque(BlockContext& b, BufTag tag, uint32_t addr, uint8_t path) {
    const uint32_t i = owned(b, "EnQue", tag, addr);
    if (state_[i] == BufState::Queued) {
        fault(format("%s::EnQue: the tensor (UB offset %s) is already in the queue", ascrun_label().c_str(),
                     hex(buffer_addr(i)).c_str()));
    }
    const uint32_t capacity = depth_ > 0 ? static_cast<uint32_t>(depth_) : num_;
    if (queued_ >= capacity) {
        fault(format("%s::EnQue: the queue already holds %u tensor%s, its %s (DeQue before enqueuing more; the "
                     "device's EnQue would fail)",
                     ascrun_label().c_str(), queued_, queued_ == 1 ? "" : "s",
                     depth_ > 0 ? "depth" : "number of buffers"));
    }
    const uint32_t at = (head_ + queued_) % kMaxQueueBuffers;
    fifo_[at] = static_cast<uint8_t>(i);
    fifo_path_[at] = path;
    ++queued_;
    state_[i] = BufState::Queued;
    if (b.pipes && has_flags()) {
        const bool plain = path == kPlainEnQue;
        b.pipes->post(enque_key(i), plain ? producer_pipe(src_) : path_pipes(path, false),
                      plain ? consumer_pipe(dst_) : path_pipes(path, true));
    }
}

uint32_t QueBase::deque(BlockContext& b, uint8_t path, const char* form) {
    if (queued_ == 0) {
        fault(format("%s::DeQue%s: the queue is empty (no EnQue before this DeQue)", ascrun_label().c_str(), form));
    }
    if (fifo_path_[head_] != path) {
        fault(format("%s::DeQue%s: the tensor at the head of the queue was enqueued with %s (DeQue with the "
                     "positions of its EnQue)",
                     ascrun_label().c_str(), form,
                     fifo_path_[head_] == kPlainEnQue ? "EnQue(tensor)" : "other user positions"));
    }
    const uint32_t i = fifo_[head_];
    head_ = (head_ + 1) % kMaxQueueBuffers;
    --queued_;
    state_[i] = BufState::Dequeued;
    if (b.pipes && has_flags()) b.pipes->take(enque_key(i), path == kPlainEnQue ? consumer_pipe(dst_) : path_pipes(path, true));
    return i;
}

void QueBase::free(BlockContext& b, BufTag tag, uint32_t addr) {
    const uint32_t i = owned(b, "FreeTensor", tag, addr);
    if (state_[i] == BufState::Queued) {
        fault(format("%s::FreeTensor: the tensor (UB offset %s) is still in the queue (DeQue it first)",
                     ascrun_label().c_str(), hex(buffer_addr(i)).c_str()));
    }
    state_[i] = BufState::Free;
    if (b.pipes && has_flags()) b.pipes->post(free_key(i), consumer_pipe(dst_), producer_pipe(src_));
    b.buffer_serial[slot_ + i] = 0;
    --b.allocated_on[static_cast<uint32_t>(pos_)];
}

void PoolBase::ascrun_attach(const BlockContext& b, const std::string& what, uint32_t start, uint32_t len) {
    if (ascrun_attached(b) && !reset_) {
        fault(what + ": the pool already has memory (Reset it before giving it memory again)");
    }
    drop_queues();
    gen_ = b.pipe_generation;
    start_ = start;
    len_ = len;
    cursor_ = start;
    used_ = 0;
    attached_ = true;
    reset_ = false;
}

BlockContext& PoolBase::require_usable(const std::string& what) const {
    BlockContext& b = enter();
    if (!attached_) fault(what + ": the pool has no memory (call TPipe::InitBufPool or TBufPool::InitBufPool for it first)");
    if (!ascrun_attached(b)) fault(what + ": the TPipe that gave this pool its memory was reset or destroyed");
    if (reset_) {
        fault(what + ": the pool was Reset (its buffers stay usable; give it memory again with InitBufPool to "
                     "allocate more)");
    }
    return b;
}

uint32_t PoolBase::take(const std::string& what, uint32_t count, uint32_t each, uint32_t ids) {
    const uint64_t total = static_cast<uint64_t>(count) * each;
    if (cursor_ + total > static_cast<uint64_t>(start_) + len_) {
        fault(format("%s: %u x %u bytes from UB offset %s do not fit in the pool's %u bytes at UB offset %s (%u "
                     "left)",
                     what.c_str(), count, each, hex(cursor_).c_str(), len_, hex(start_).c_str(),
                     start_ + len_ - cursor_));
    }
    if (used_ + ids > id_size_) {
        fault(format("%s: the pool would hand out %u buffers, more than its bufIDSize %u", what.c_str(), used_ + ids,
                     id_size_));
    }
    const uint32_t at = cursor_;
    cursor_ += static_cast<uint32_t>(total);
    used_ += ids;
    return at;
}

void PoolBase::reset(const char* api) {
    BlockContext& b = enter();
    const std::string what = ascrun_label() + "::" + api;
    if (!attached_ || !ascrun_attached(b)) fault(what + ": the pool has no memory (nothing to reset)");
    for (uint32_t k = 0; k < n_queues_; ++k) {
        if (queues_[k]->ascrun_busy()) {
            fault(format("%s: %s (UB offset %s) still holds a tensor (AllocTensor/FreeTensor and EnQue/DeQue must "
                         "be paired before switching pools)",
                         what.c_str(), queues_[k]->ascrun_label().c_str(), hex(queues_[k]->ascrun_base()).c_str()));
        }
    }
    std::memset(b.ub + start_, kUbPoison, len_);  // "清空后的TBufPool资源池及分配的Buffer和数据默认无效"
    if (b.pipes) b.pipes->drain_queues();  // as TPipe::Reset: the buffers' free events are waited for
    reset_ = true;
}

uint32_t PoolBase::child_ids(const std::string& what, uint32_t child_ids, bool shared) const {
    const uint32_t left = shared ? id_size_ : id_size_ - used_;
    if (child_ids > left) {
        fault(format("%s: the new pool's bufIDSize %u exceeds the %u buffer IDs %s", what.c_str(), child_ids, left,
                     shared ? "this pool has" : "this pool has left"));
    }
    return child_ids;
}

}  // namespace que
}  // namespace ascrun

namespace AscendC {

void TPipe::Init() {
    ascrun::BlockContext& b = ascrun::enter();
    if (b.pipe != this) init("TPipe::Init");
}

void TPipe::Reset() {
    ascrun::BlockContext& b = require_live("Reset");
    for (auto& n : next_) n = 0;
    buffers_ = 0;
    for (auto& n : que_buffers_) n = 0;
    forget_buffers(b);
    ++b.pipe_generation;
}

void TPipe::Destroy() {
    require_live("Destroy");
    release();
}

void TPipe::init_que_buffer(ascrun::que::QueBase& que, uint8_t num, uint32_t len) {
    ascrun::BlockContext& b = require_live("InitBuffer");
    const std::string what = ascrun::format("TPipe::InitBuffer(%s, %u, %u)", que.ascrun_label().c_str(),
                                            static_cast<unsigned>(num), len);
    const uint32_t rounded = ascrun::que::check_buffer_request(what, que.ascrun_pos(), num, len, false);
    if (que.ascrun_attached(b)) {
        ascrun::fault(what + ": the queue already has buffers from this TPipe (Reset the TPipe to re-allocate)");
    }
    // At most 8 TQue buffers per TPosition on Atlas A2/A3 (asc-devkit docs/zh/api/SIMD-API/基础API/资源管理/
    // Pipe和Que框架/TQue/TQue简介.md, "TQue Buffer限制": "TQue能申请到的最大个数分别为8个或4个", beyond it
    // "AllocTensor/FreeTensor可能会出现分配资源失败"). Why, in asc-devkit's c220 code: a depth-0 queue takes its
    // event IDs in InitBuffer; any other takes one of its free HardEvent (V_MTE2 for VECIN) in FreeTensor and
    // holds it until that buffer's next AllocTensor (impl/basic_api/kernel_tquebind_impl.h), and
    // TPipe::AllocEventID has QUE_MAX_EVENT = 8 per HardEvent (impl/basic_api/kernel_tpipe_impl.h,
    // kernel_macros.h; it asserts in debug builds, the device gets ID 8, which it does not have). A kernel that
    // uses and frees each of 9 buffers of a position runs out at its 9th FreeTensor at the latest, as pyasc's
    // nightly asctile kernels with 9+ copy_in tiles alive do: refused here, where the docs put the limit.
    // Not modelled: FreeAllEvent, which frees the IDs (TQueBind/FreeAllEvent.md); A1/B1 (and A2/B2) sharing
    // one free HardEvent; Ascend950 (dav_3510), whose vector queues take a buffer ID per buffer in InitBuffer
    // instead (AllocMutexID, include/basic_api/kernel_common.h: IDs 0..MAX_MUTEXID = 27 across positions).
    const auto p = static_cast<uint32_t>(que.ascrun_pos());
    if (que_buffers_[p] + num > ascrun::que::kMaxBuffersPerPosition) {
        ascrun::fault(ascrun::format("%s: %u TQue buffers on TPosition %s (at most %u on Atlas A2/A3, Ascend C's "
                                     "TQue简介.md \"TQue Buffer限制\": a freed buffer holds one of its position's %u "
                                     "hardware event IDs until it is allocated again)",
                                     what.c_str(), que_buffers_[p] + num, ascrun::position_name(que.ascrun_pos()),
                                     ascrun::que::kMaxBuffersPerPosition, ascrun::que::kMaxBuffersPerPosition));
    }
    const uint32_t base = reserve(what, ascrun::memory_of(que.ascrun_pos()), num, rounded, num);
    que_buffers_[p] += num;
    que.ascrun_attach(b, nullptr, base, num, rounded);
}

void TPipe::init(const char* api) {
    ascrun::BlockContext& b = ascrun::enter();
    if (b.pipe != nullptr) {
        ascrun::fault(ascrun::format("%s: a second TPipe was made live while another is alive (the device allows "
                                     "one at a time and may hang; Destroy the first)",
                                     api));
    }
    if (b.ub_allocator_live) {
        ascrun::fault(ascrun::format("%s: a LocalMemAllocator exists (static tensor programming must not be mixed "
                                     "with TPipe)",
                                     api));
    }
    for (auto& n : next_) n = 0;
    buffers_ = 0;
    for (auto& n : que_buffers_) n = 0;
    b.pipe = this;
    ++b.pipe_generation;
}

ascrun::BlockContext& TPipe::require_live(const char* api) {
    ascrun::BlockContext& b = ascrun::enter();
    if (b.pipe != this) {
        ascrun::fault(ascrun::format("TPipe::%s: this TPipe was destroyed", api));
    }
    return b;
}

int32_t TPipe::free_event_id(ascrun::BlockContext& b, const char* api, HardEvent evt) {
    const uint8_t held = b.event_ids_allocated[static_cast<uint32_t>(evt)];
    for (int32_t id = 0; id < ascrun::kEventIdCount; ++id) {
        if ((held & (1u << id)) == 0 && ascrun::sync::flag_slot(b, api, evt, id) == 0) return id;
    }
    ascrun::fault(ascrun::format("%s<HardEvent::%s>: all %d event IDs are in use (allocated and not released, or "
                                 "with a SetFlag outstanding)",
                                 api, ascrun::sync::event_name(evt), ascrun::kEventIdCount));
}

uint32_t TPipe::reserve(const std::string& what, ascrun::Memory mem, uint32_t count, uint32_t each, uint32_t buffers) {
    const uint64_t total = static_cast<uint64_t>(count) * each;
    uint32_t& next = next_[static_cast<uint32_t>(mem)];
    const uint32_t size = ascrun::memory_bytes(mem);
    if (next + total > size) {
        ascrun::fault(ascrun::format("%s: %u x %u bytes from %s offset %s do not fit in the %s (%s bytes, %s left)",
                                     what.c_str(), count, each,
                                     ascrun::memory_short_name(mem),
                                     ascrun::hex(next).c_str(), ascrun::memory_name(mem),
                                     ascrun::hex(size).c_str(), ascrun::hex(size - next).c_str()));
    }
    if (buffers_ + buffers > ascrun::que::kMaxBuffersPerPipe) {
        ascrun::fault(ascrun::format("%s: a kernel may use at most %u buffers in total", what.c_str(),
                                     ascrun::que::kMaxBuffersPerPipe));
    }
    const uint32_t base = next;
    next += static_cast<uint32_t>(total);
    buffers_ += buffers;
    return base;
}

void TPipe::forget_buffers(ascrun::BlockContext& b) noexcept {
    if (b.pipes) {
        try {
            b.pipes->drain_queues();  // as the device's Reset/Destroy wait for the buffers' free events
        } catch (...) {
            // out of memory recording the timeline: the hazard state is still right
        }
    }
    for (auto& s : b.buffer_serial) s = 0;
    for (auto& n : b.allocated_on) n = 0;
    for (auto& e : b.event_ids_allocated) e = 0;
}

void TPipe::release() noexcept {
    ascrun::BlockContext* b = ascrun::tls_block;
    if (b != nullptr && b->pipe == this) {
        b->pipe = nullptr;
        ++b->pipe_generation;
        forget_buffers(*b);
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the pipe model (pipes/model.h), compiled once per toolchain.
#include "ascrun/pipes/model.h"

#include <algorithm>
#include <cstring>

namespace ascrun {
namespace pipes {
namespace {

// The operands an instruction writes, by the runtime's role names (dst, dstTensor, dstList[i], the
// reductions' sumTensor/maxTensor, a scratch sharedTmpBuffer); the others it reads.
bool writes(const char* role) {
    return std::strncmp(role, "dst", 3) == 0 || std::strcmp(role, "sumTensor") == 0 ||
           std::strcmp(role, "maxTensor") == 0 || std::strcmp(role, "sharedTmpBuffer") == 0;
}

}  // namespace

// ---- signals kept until their wait -------------------------------------------------------------------

PipeModel::PipeModel(Hazards hazards) : hazards_(hazards), posted_flags_(kFlagKeys) {}
PipeModel::~PipeModel() = default;

PipeModel::Posted& PipeModel::posted(uint64_t key) {
    return key < kQueueKeys ? posted_flags_[key] : posted_queues_[key];
}

void PipeModel::post(uint64_t key, Pipe from, Pipe to) {
    Posted& slot = posted(key);
    slot.stamp = signal(from);
    slot.waiter = to;
    slot.live = true;
}

bool PipeModel::take(uint64_t key, Pipe to) {
    Posted* slot = nullptr;
    if (key >= kQueueKeys) {
        const auto found = posted_queues_.find(key);
        if (found == posted_queues_.end()) return false;
        slot = &found->second;
    } else {
        slot = &posted_flags_[key];
    }
    if (!slot->live) return false;
    slot->live = false;
    wait(to, slot->stamp);
    return true;
}

void PipeModel::drain_queues() {
    for (auto& entry : posted_queues_) {
        if (entry.second.live) wait(entry.second.waiter, entry.second.stamp);
    }
    posted_queues_.clear();
}

// ---- instructions ----------------------------------------------------------------------------------

void PipeModel::open(const char* api, const char* role, Pipe p, uint16_t site) {
    close();
    is_open_ = true;
    open_ = Open{};
    open_.api = api;
    open_.work.pipe = p;
    open_.site = site;
    open_.roles[0] = role;
    open_.n_roles = 1;
    check_.start(p);
}

void PipeModel::close() {
    if (!is_open_) return;
    is_open_ = false;
    timeline_.run(open_.api, open_.work);
}

bool PipeModel::operand(const char* api, const char* role, uint32_t memory, uint64_t addr, uint64_t bytes,
                        Finding* found) {
    auto known = apis_.find(api);
    if (known == apis_.end()) {
        const Pipe pipe = pipe_of(api);
        known = apis_.emplace(api, Api{pipe, 0, Site{}}).first;
        known->second.site = pipe == Pipe::All ? uint16_t{0} : check_.site(pipe, api, tls_site);
        known->second.where = tls_site;
    } else if (!(known->second.where == tls_site) && known->second.pipe != Pipe::All) {  // the api at another statement
        known->second.site = check_.site(known->second.pipe, api, tls_site);
        known->second.where = tls_site;
    }
    const Pipe p = known->second.pipe;
    if (p == Pipe::All) {  // synchronizes itself: ordered with everything before and after it
        barrier_all();
        return false;
    }
    bool same = is_open_ && open_.api == api && open_.work.pipe == p && open_.n_roles < 8;
    for (uint32_t r = 0; same && r < open_.n_roles; ++r) same = std::strcmp(open_.roles[r], role) != 0;
    if (same) {
        open_.roles[open_.n_roles++] = role;
    } else {
        open(api, role, p, known->second.site);
    }
    open_.work.bytes = std::max(open_.work.bytes, bytes);
    const bool write = writes(role);
    if (write) open_.work.dst_memory = memory;
    if (hazards_ == Hazards::Off || pending_[idx(p)].any()) return false;
    return check_.check(p, open_.site, memory, addr, bytes, write, found);
}

bool PipeModel::scalar(const char* api, bool write, uint64_t addr, uint64_t bytes, Finding* found) {
    open(api, "element", Pipe::S, check_.site(Pipe::S, api, tls_site));
    if (hazards_ == Hazards::Off || pending_[kS].any()) return false;
    return check_.check(Pipe::S, open_.site, 0, addr, bytes, write, found);
}

CoreTimeline PipeModel::finish() {
    close();
    return timeline_.finish();
}

// ---- ordering --------------------------------------------------------------------------------------

Stamp PipeModel::signal(Pipe from) {
    close();
    timeline_.issue();  // the SetFlag itself
    Stamp s;
    check_.signal(from, s.clock);
    timeline_.signal(from, &s.time, s.path);
    s.pending = pending_[idx(from)];
    return s;
}

void PipeModel::wait(Pipe to, const Stamp& s) {
    close();
    timeline_.issue();  // the WaitFlag itself
    check_.wait(to, s.clock);
    pending_[idx(to)] |= s.pending;
    timeline_.wait(to, s.time, s.path);
}

void PipeModel::barrier_all() {
    close();
    timeline_.issue();
    check_.barrier_all();
    timeline_.barrier_all();
}

bool PipeModel::hold(Pipe p, uint32_t key) {
    close();
    timeline_.issue();  // the WaitFlag itself
    pending_[idx(p)].set(key);
    return p != Pipe::S;
}

bool PipeModel::release(uint32_t key, Pipe from) {
    if (pending_[idx(from)].test(key)) return false;
    for (Pending& p : pending_) p.reset(key);
    for (Posted& slot : posted_flags_) slot.stamp.pending.reset(key);
    for (auto& entry : posted_queues_) entry.second.stamp.pending.reset(key);
    return true;
}

Pipe PipeModel::waiting() const {
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (pending_[p].any()) return static_cast<Pipe>(p);
    }
    return Pipe::All;
}

}  // namespace pipes
}  // namespace ascrun

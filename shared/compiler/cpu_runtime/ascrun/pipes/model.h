// ascrun cpu runtime: the pipes of a core, as the device runs them: the hazard check and the
// modeled timeline.
//
// The cpu target runs a core's instructions in program order, one after another. The device does
// not: the scalar unit issues each instruction to its pipe (S, V, M, MTE1, MTE2, MTE3, FIX) and the
// pipes run at once, ordered only by SetFlag/WaitFlag, PipeBarrier, the queue framework's
// EnQue/DeQue and AllocTensor/FreeTensor (which set and wait flags), and program order within
// one pipe. This header replays what the core did against that machine:
//
//  - Hazard check. A vector clock per pipe says which instructions of the other pipes are known to
//    have finished. Each byte range of the Unified Buffer and the cube memories remembers its last
//    writer and, per pipe, its last reader (a map of ranges, split where accesses begin and end).
//    An access ordered after neither is a race the device may lose (read-after-write,
//    write-after-read, write-after-write), reported with both API calls, their pipes, the byte
//    range and the flag that was missing. A SetFlag nobody waits for is reported at the core's end.
//    Policy (launch option): off, warn (result.warnings) or fault. Waits that can never end
//    (deadlocks) are faults whatever the policy: the device would hang.
//  - Modeled timeline. Each instruction costs cycles on its pipe (pipes/costs.h: the constants and
//    their sources); it starts when its pipe is free, the scalar unit has issued it, and what it
//    waits for (a flag's SetFlag) is done. Per core: its cycles, each pipe's busy cycles, the
//    critical path's cycles per pipe, and the instructions as trace events. Deterministic: it
//    depends only on the instructions the kernel executed, never on the host.
//
// Which pipe an instruction is on (pipe_of): DataCopy GM->UB/L1 is MTE2, UB->GM MTE3, LoadData
// MTE1, Mmad M, Fixpipe FIX, element access (GetValue/SetValue) S, the other Unified Buffer
// instructions V. The high-level APIs that synchronize themselves (Matmul, DumpTensor,
// DumpAccChkPoint) act as a full barrier. Scalar instructions complete before the scalar unit
// issues the next instruction, so an S access is ordered before everything after it (the other
// direction needs a flag).
#pragma once

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ascrun/pipes/costs.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace pipes {

enum class Pipe : uint8_t { S, V, M, MTE1, MTE2, MTE3, FIX, All };
constexpr uint32_t kPipes = 7;  // the real ones; All is a full barrier
inline const char* pipe_name(Pipe p) {
    static const char* const names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL"};
    return names[static_cast<uint32_t>(p)];
}

enum class Hazards : uint32_t { Off = 0, Warn = 1, Fault = 2 };

// SetFlag/WaitFlag flags: HardEvent x event ID (sync/intra_core.h flag_key)
constexpr uint32_t kFlagKeys = 35 * 8;
using Pending = std::bitset<kFlagKeys>;
// post/take keys of the queue framework (framework/tpipe.h); below: flags
constexpr uint64_t kQueueKeys = uint64_t{1} << 32;

// The pipe an API runs on, from its name (the names are the runtime's own, e.g. "DataCopy(GM->UB)").
inline Pipe pipe_of(const char* api) {
    if (std::strncmp(api, "Matmul", 6) == 0 || std::strncmp(api, "Dump", 4) == 0) return Pipe::All;
    if (std::strncmp(api, "LoadData", 8) == 0) return Pipe::MTE1;
    if (std::strcmp(api, "Mmad") == 0) return Pipe::M;
    if (std::strncmp(api, "Fixpipe", 7) == 0) return Pipe::FIX;
    if (std::strstr(api, "(GM->") != nullptr) return Pipe::MTE2;
    if (std::strstr(api, "->GM") != nullptr) return Pipe::MTE3;
    return Pipe::V;
}

// What an ordering edge carries from the pipe that signals to the pipe that waits: the signaller's
// clock (hazards), the cycle it signals at, the critical path's cycles per pipe up to then, and the
// flags whose SetFlag is still to come that the signaller waits for (so the waiter waits too).
struct Stamp {
    uint32_t clock[kPipes] = {};
    uint64_t time = 0;
    uint64_t path[kPipes] = {};
    Pending pending;
};

// One trace event: an instruction's pipe, its API and its cycles.
struct Event {
    uint8_t pipe;
    const char* api;
    uint64_t start;
    uint64_t end;
};

// A core's results, handed to the launch when the core ends.
struct CoreTimeline {
    uint64_t cycles = 0;
    uint64_t busy[kPipes] = {};
    uint64_t path[kPipes] = {};
    uint64_t instructions = 0;
    std::vector<Event> events;  // the first kTraceEventsPerCore
};

// A launch's cores' timelines, by their place in the launch (any thread, any order).
class LaunchTimeline {
public:
    void add(uint32_t order, const std::string& label, CoreTimeline t) {
        std::lock_guard<std::mutex> lock(mu_);
        if (cores_.size() >= kTimelineCores && order > cores_.rbegin()->first) {
            max_cycles_ = std::max(max_cycles_, t.cycles);
            ++unlisted_;
            return;
        }
        max_cycles_ = std::max(max_cycles_, t.cycles);
        cores_.emplace(order, Entry{label, std::move(t)});
        if (cores_.size() > kTimelineCores) {  // keep the lowest kTimelineCores
            cores_.erase(std::prev(cores_.end()));
            ++unlisted_;
        }
    }

    // {"cycles": the slowest core's, "clock_ghz": ..., "cores": [{"core", "cycles", "busy": {pipe:
    // cycles}, "critical_path": {pipe: cycles}, "instructions"}], "unlisted_cores": n}
    std::string model_json() const;
    // Chrome trace event format: a process per core, a thread per pipe, an "X" event per instruction.
    std::string trace_json() const;

private:
    struct Entry {
        std::string label;
        CoreTimeline t;
    };
    std::mutex mu_;
    std::map<uint32_t, Entry> cores_;
    uint64_t max_cycles_ = 0;
    uint64_t unlisted_ = 0;
};

// A race or sync-hygiene finding: the text, and the (api, operand) key BlockReport merges it by.
struct Finding {
    const char* key_api;
    const char* key_operand;
    std::string message;
};

// One core's pipes.
class PipeModel {
public:
    explicit PipeModel(Hazards hazards) : hazards_(hazards) {}

    // Operand `role` of instruction `api`: `bytes` bytes of `memory` (0 UB, 1 L1, 2 L0A, 3 L0B, 4 L0C)
    // from offset `addr`. Returns a finding if the access races (only the first per access).
    bool operand(const char* api, const char* role, uint32_t memory, uint64_t addr, uint64_t bytes, Finding* found);
    // An element access (GetValue/SetValue) on the scalar pipe.
    bool scalar(const char* api, bool write, uint64_t addr, uint64_t bytes, Finding* found);
    // The multiply-accumulates of the open instruction (Mmad), for its cost.
    void work(uint64_t macs, uint32_t macs_per_cycle) {
        open_.macs = macs;
        open_.macs_per_cycle = macs_per_cycle;
    }

    // Ordering: `from` signals (SetFlag, EnQue, FreeTensor); `to` waits for that signal.
    Stamp signal(Pipe from);
    void wait(Pipe to, const Stamp& s);
    void barrier_all();
    // A signal kept until its wait (a SetFlag's until its WaitFlag, an EnQue's until its DeQue),
    // under a key of the caller's; `take` waits for it and forgets it, false if none was posted.
    // `to`: the pipe that will wait, for drain.
    void post(uint64_t key, Pipe from, Pipe to) {
        Posted& slot = posted(key);
        slot.stamp = signal(from);
        slot.waiter = to;
        slot.live = true;
    }
    bool take(uint64_t key, Pipe to) {
        if (key >= kQueueKeys) {
            const auto found = posted_queues_.find(key);
            if (found == posted_queues_.end()) return false;
            wait(to, found->second.stamp);
            posted_queues_.erase(found);
            return true;
        }
        Posted& slot = posted_flags_[key];
        if (!slot.live) return false;
        slot.live = false;
        wait(to, slot.stamp);
        return true;
    }
    // TPipe::Reset/Destroy wait for the queue framework's outstanding signals (keys from kQueueKeys)
    // before the buffers are handed out again.
    void drain_queues() {
        for (auto& entry : posted_queues_) wait(entry.second.waiter, entry.second.stamp);
        posted_queues_.clear();
    }
    // A WaitFlag of flag `key` on pipe p issued before its SetFlag: p (and whatever waits for p)
    // waits for a SetFlag still to come; their accesses are not checked until it comes (release).
    // False if p is the scalar unit: it would never issue that SetFlag (a deadlock).
    bool hold(Pipe p, uint32_t key);
    // The SetFlag of flag `key` on pipe `from`, which a WaitFlag waits for: false if `from` itself
    // waits for it (a deadlock). Else every pipe's wait for it ends here.
    bool release(uint32_t key, Pipe from);
    // A pipe that waits for a SetFlag still to come, if any (else All): PipeBarrier<PIPE_ALL> then hangs.
    Pipe waiting() const;

    // Closes the core: its timeline.
    CoreTimeline finish();

private:
    // What a byte range of a local memory last saw: its writer and, per pipe, its last reader
    // (epoch: that pipe's instruction count; site: site_labels_ index, 0 for none).
    struct Access {
        uint32_t w_epoch = 0;
        uint16_t w_site = 0;
        uint8_t w_pipe = 0;
        uint32_t r_epoch[kPipes] = {};
        uint16_t r_site[kPipes] = {};
    };
    // Non-overlapping ranges [start, end) of one memory, by start; untouched bytes have none.
    struct Range {
        uint64_t end;
        Access a;
    };
    using Shadow = std::map<uint64_t, Range>;
    struct Open {  // the instruction whose operands are being seen
        const char* api = nullptr;
        Pipe pipe = Pipe::V;
        uint16_t site = 0;
        const char* roles[8] = {};
        uint32_t n_roles = 0;
        uint64_t bytes = 0;  // its largest operand
        uint32_t dst_memory = 0;  // the memory it writes
        uint64_t macs = 0;
        uint32_t macs_per_cycle = 0;
    };

    void open(const char* api, const char* role, Pipe p, uint16_t site);
    void close();
    uint64_t cost(const Open& o) const;
    uint16_t site(Pipe p, const char* api);
    bool check(uint32_t memory, uint64_t addr, uint64_t bytes, bool write, Finding* found);
    static Shadow::iterator split(Shadow& m, uint64_t at);
    const char* intern(std::string s);

    Hazards hazards_;
    uint32_t clock_[kPipes][kPipes] = {};  // clock_[p][q]: the last instruction of q that p is ordered after
    Pending pending_[kPipes];  // per pipe: flags it waits for whose SetFlag is still to come
    struct Posted {
        Stamp stamp;
        Pipe waiter = Pipe::All;
        bool live = false;
    };
    Posted& posted(uint64_t key) { return key < kQueueKeys ? posted_flags_[key] : posted_queues_[key]; }  // (post)
    std::vector<Posted> posted_flags_ = std::vector<Posted>(kFlagKeys);
    std::unordered_map<uint64_t, Posted> posted_queues_;  // only the outstanding ones: a kernel that
                                                          // makes buffers in a loop stays bounded
    Open open_;
    bool is_open_ = false;
    Shadow shadow_[5];
    std::unordered_map<uintptr_t, uint16_t> site_ids_;  // by api pointer x 8 + pipe
    struct Api {
        Pipe pipe;
        uint16_t site;
    };
    std::unordered_map<const char*, Api> apis_;         // pipe_of and site of an operand's api, by pointer
    std::vector<std::string> site_labels_ = std::vector<std::string>(1, "?");
    std::set<std::string> interned_;  // finding keys: stable until the core's report is taken
    // timeline
    uint64_t ready_[kPipes] = {};
    uint64_t path_[kPipes][kPipes] = {};  // the critical path to ready_[p], in cycles per pipe
    CoreTimeline out_;
};

}  // namespace pipes
}  // namespace ascrun

#pragma GCC visibility pop

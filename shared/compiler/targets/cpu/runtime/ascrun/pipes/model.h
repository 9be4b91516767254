// ascrun cpu runtime: the pipes of a core, as the device runs them: the pipe model.
//
// The cpu target runs a core's instructions in program order, one after another. The device does
// not: the scalar unit issues each instruction to its pipe (S, V, M, MTE1, MTE2, MTE3, FIX) and the
// pipes run at once, ordered only by SetFlag/WaitFlag, PipeBarrier, the queue framework's
// EnQue/DeQue and AllocTensor/FreeTensor (which set and wait flags), and program order within
// one pipe. PipeModel replays what the core did against that machine, in parts:
//
//  - pipes/pipe.h: the pipes, and which one each instruction runs on;
//  - pipes/hazards.h, the hazard check: races between pipes that nothing orders, reported per the
//    launch's policy;
//  - pipes/timeline.h, the modeled timeline: each instruction's cycles on its pipe (pipes/costs.h);
//  - pipes/trace.h: the launch's cores' timelines as its model and trace JSON;
//  - here: the instruction whose operands are being seen, the ordering both parts follow (a signal
//    and its wait: SetFlag/WaitFlag, EnQue/DeQue, FreeTensor/AllocTensor; PipeBarrier<PIPE_ALL>)
//    and sync hygiene. A SetFlag nobody waits for is reported at the core's end
//    (sync/intra_core.h). Waits that can never end (deadlocks) are faults whatever the policy: the
//    device would hang.
#pragma once

#include <bitset>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ascrun/pipes/hazards.h"
#include "ascrun/pipes/pipe.h"
#include "ascrun/pipes/timeline.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace pipes {

// SetFlag/WaitFlag flags: HardEvent x event ID (sync/intra_core.h flag_key)
constexpr uint32_t kFlagKeys = 35 * 8;
using Pending = std::bitset<kFlagKeys>;
// post/take keys of the queue framework (framework/tpipe.h); below: flags
constexpr uint64_t kQueueKeys = uint64_t{1} << 32;

// What an ordering edge carries from the pipe that signals to the pipe that waits: the signaller's
// clock (hazards), the cycle it signals at, the critical path's cycles per pipe up to then, and the
// flags whose SetFlag is still to come that the signaller waits for (so the waiter waits too).
struct Stamp {
    uint32_t clock[kPipes] = {};
    uint64_t time = 0;
    uint64_t path[kPipes] = {};
    Pending pending;
};

// One core's pipes.
class PipeModel {
public:
    explicit PipeModel(Hazards hazards);
    ~PipeModel();

    // Operand `role` of instruction `api`: `bytes` bytes of `memory` (0 UB, 1 L1, 2 L0A, 3 L0B, 4 L0C)
    // from offset `addr`. Returns a finding if the access races (only the first per access).
    bool operand(const char* api, const char* role, uint32_t memory, uint64_t addr, uint64_t bytes, Finding* found);
    // An element access (GetValue/SetValue) on the scalar pipe.
    bool scalar(const char* api, bool write, uint64_t addr, uint64_t bytes, Finding* found);
    // The multiply-accumulates of the open instruction (Mmad), for its cost.
    void work(uint64_t macs, uint32_t macs_per_cycle) {
        open_.work.macs = macs;
        open_.work.macs_per_cycle = macs_per_cycle;
    }

    // Ordering: `from` signals (SetFlag, EnQue, FreeTensor); `to` waits for that signal.
    Stamp signal(Pipe from);
    void wait(Pipe to, const Stamp& s);
    void barrier_all();
    // A signal kept until its wait (a SetFlag's until its WaitFlag, an EnQue's until its DeQue),
    // under a key of the caller's; `take` waits for it and forgets it, false if none was posted.
    // `to`: the pipe that will wait, for drain.
    void post(uint64_t key, Pipe from, Pipe to);
    bool take(uint64_t key, Pipe to);
    // TPipe::Reset/Destroy wait for the queue framework's outstanding signals (keys from kQueueKeys)
    // before the buffers are handed out again.
    void drain_queues();
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
    struct Open {  // the instruction whose operands are being seen
        const char* api = nullptr;
        uint16_t site = 0;
        const char* roles[8] = {};
        uint32_t n_roles = 0;
        Work work;
    };

    void open(const char* api, const char* role, Pipe p, uint16_t site);
    void close();

    Hazards hazards_;
    HazardCheck check_;
    Timeline timeline_;
    Pending pending_[kPipes];  // per pipe: flags it waits for whose SetFlag is still to come
    struct Posted {
        Stamp stamp;
        Pipe waiter = Pipe::All;
        bool live = false;
    };
    Posted& posted(uint64_t key);  // (post)
    std::vector<Posted> posted_flags_;  // kFlagKeys of them (sized in the constructor, out of line)
    // The queue framework's, by key: a taken one stays (not live) until drain_queues, so a queue's
    // EnQue/DeQue in a loop reuses its entry; a kernel that makes buffers in a loop (a TPipe each
    // time: its Reset/Destroy drains) stays bounded.
    std::unordered_map<uint64_t, Posted> posted_queues_;
    Open open_;
    bool is_open_ = false;
    struct Api {
        Pipe pipe;
        uint16_t site;
        Site where;  // the kernel's statement `site` is for
    };
    std::unordered_map<const char*, Api> apis_;  // pipe_of and site of an operand's api (at its last statement), by pointer
};

}  // namespace pipes
}  // namespace ascrun

#pragma GCC visibility pop

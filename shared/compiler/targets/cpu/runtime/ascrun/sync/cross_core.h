// ascrun cpu runtime: the cores of one block of a mixed launch (MIX_AIC_1_1, MIX_AIC_1_2) and the
// cross-core flags between them: CrossCoreSetFlag / CrossCoreWaitFlag, and the forms pyasc's
// Matmul code emits (ffts_cross_core_sync, wait_flag_dev).
//
// Reference (CrossCoreSetFlag(ISASI).md, Atlas A2/A3): each flag ID (0-15) is a counter per core.
//  - mode 1: the vector cores of a block: once each has set flag f, a wait for f on each goes on;
//  - mode 2: the cube core and the vector cores of a block: the AIC's set lets each AIV's wait for f
//    go on; once every AIV has set f, the AIC's wait goes on;
//  - mode 0 syncs every core of a type in the whole launch: the cpu target does not model it yet
//    and says so.
// A wait blocks its core until its counter is positive, then takes one. A wait that nothing can
// satisfy any more (every other core of the block has ended or waits too) is the hang the device
// would show: here it is a fault naming the flag and the other cores' states.
#pragma once

#include <condition_variable>
#include <mutex>

#include "ascrun/core/core.h"
#include "ascrun/sync/intra_core.h"

#pragma GCC visibility push(hidden)

namespace ascrun {

constexpr uint32_t kCrossCoreFlags = 16;   // flag IDs 0-15 in modes 0, 1, 2
constexpr uint32_t kMaxBlockCores = 3;     // MIX_AIC_1_2: an AIC and two AIVs
constexpr uint8_t kCrossCoreCounterMax = 15;  // a 4-bit counter per flag

struct CoreGroup {
    enum class State : uint8_t { Running, Waiting, Ended };

    explicit CoreGroup(BlockCores c) : cores(c) {}

    BlockCores cores;
    std::mutex mu;
    std::condition_variable changed;
    State state[kMaxBlockCores] = {};
    uint32_t waits_for[kMaxBlockCores] = {};   // the flag a Waiting core waits for
    std::string label[kMaxBlockCores];
    uint8_t counter[kMaxBlockCores][kCrossCoreFlags] = {};      // sets received, not yet waited for
    uint8_t to_aic[kMaxBlockCores][kCrossCoreFlags] = {};       // mode 2: an AIV's sets towards the AIC
    uint8_t to_aivs[kMaxBlockCores][kCrossCoreFlags] = {};      // mode 1: an AIV's sets towards the AIVs

    // A core's slot: the AIC first, then the AIVs by sub-block index.
    uint32_t slot(const BlockContext& b) const {
        return b.core_type == AscendC::AIC ? 0 : cores.aic + b.sub_block_idx;
    }

    void end(uint32_t s) {
        {
            std::lock_guard<std::mutex> lock(mu);
            state[s] = State::Ended;
        }
        changed.notify_all();
    }
};

namespace cross_core {

inline CoreGroup& group_for(BlockContext& b, const char* api, uint32_t mode, uint32_t flag) {
    if (flag >= kCrossCoreFlags) {
        fault(format("%s: flag ID %u is out of range (0-%u in modes 0, 1 and 2)", api, flag, kCrossCoreFlags - 1));
    }
    if (mode == 0) {
        fault(format("%s: mode 0 (every core of the launch) is not modelled by the cpu target yet", api));
    }
    if (mode != 1 && mode != 2) fault(format("%s: mode %u is not one of Atlas A2/A3's (0, 1, 2)", api, mode));
    const BlockCores c = b.launch->cores();
    if (mode == 2 && !c.mixed()) {
        fault(format("%s: mode 2 syncs a block's AIC with its AIVs, but this kernel's blocks run only %s cores "
                     "(compile it as MIX_AIC_1_1 or MIX_AIC_1_2)",
                     api, c.aic > 0 ? "AIC" : "AIV"));
    }
    if (mode == 1 && (b.core_type != AscendC::AIV || c.aiv < 2)) {
        fault(format("%s: mode 1 syncs the two AIVs of a block: %s", api,
                     b.core_type != AscendC::AIV ? "called on the AIC" : "this kernel's blocks have one AIV"));
    }
    return *b.group;
}

inline void add(CoreGroup& g, uint32_t s, uint32_t flag, const char* api) {
    if (g.counter[s][flag] == kCrossCoreCounterMax) {
        fault(format("%s: flag %u of %s is set %u times without a wait (its counter holds 0-%u)", api, flag,
                     g.label[s].c_str(), kCrossCoreCounterMax + 1, kCrossCoreCounterMax));
    }
    ++g.counter[s][flag];
}

// Moves one set from each AIV's `pending` count to `receivers` once every AIV has one.
inline bool all_aivs_set(CoreGroup& g, uint8_t (&pending)[kMaxBlockCores][kCrossCoreFlags], uint32_t flag) {
    for (uint32_t v = 0; v < g.cores.aiv; ++v) {
        if (pending[g.cores.aic + v][flag] == 0) return false;
    }
    for (uint32_t v = 0; v < g.cores.aiv; ++v) --pending[g.cores.aic + v][flag];
    return true;
}

inline void set(uint32_t mode, uint32_t flag) {
    BlockContext& b = enter();
    const char* api = "CrossCoreSetFlag";
    CoreGroup& g = group_for(b, api, mode, flag);
    const uint32_t s = g.slot(b);
    {
        std::lock_guard<std::mutex> lock(g.mu);
        if (mode == 2 && b.core_type == AscendC::AIC) {
            for (uint32_t v = 0; v < g.cores.aiv; ++v) add(g, g.cores.aic + v, flag, api);
        } else if (mode == 2) {
            ++g.to_aic[s][flag];
            if (all_aivs_set(g, g.to_aic, flag)) add(g, 0, flag, api);
        } else {
            ++g.to_aivs[s][flag];
            if (all_aivs_set(g, g.to_aivs, flag)) {
                for (uint32_t v = 0; v < g.cores.aiv; ++v) add(g, g.cores.aic + v, flag, api);
            }
        }
    }
    g.changed.notify_all();
}

// Why no other core can set the flag any more, or "" while one still runs.
inline std::string stuck(const CoreGroup& g, uint32_t self) {
    std::string why;
    for (uint32_t s = 0; s < g.cores.total(); ++s) {
        if (s == self) continue;
        if (g.state[s] == CoreGroup::State::Running) return "";
        if (g.state[s] == CoreGroup::State::Waiting && g.counter[s][g.waits_for[s]] > 0) return "";  // woken soon
        why += why.empty() ? "" : ", ";
        why += g.label[s] + (g.state[s] == CoreGroup::State::Ended
                                 ? std::string(" has ended")
                                 : format(" waits for flag %u", g.waits_for[s]));
    }
    return why.empty() ? "no other core runs in this block" : why;
}

inline void wait(uint32_t mode, uint32_t flag) {
    BlockContext& b = enter();
    const char* api = "CrossCoreWaitFlag";
    CoreGroup& g = group_for(b, api, mode, flag);
    const uint32_t s = g.slot(b);
    std::unique_lock<std::mutex> lock(g.mu);
    while (g.counter[s][flag] == 0) {
        if (b.launch->aborting()) throw Aborted{};
        const std::string why = stuck(g, s);
        if (!why.empty()) {
            g.state[s] = CoreGroup::State::Running;
            fault(format("%s: flag %u is never set: %s (a deadlock: the device would hang here until the "
                         "launch times out)",
                         api, flag, why.c_str()));
        }
        g.state[s] = CoreGroup::State::Waiting;
        g.waits_for[s] = flag;
        g.changed.notify_all();  // a core waiting may complete another's deadlock
        g.changed.wait(lock);
        g.state[s] = CoreGroup::State::Running;
    }
    --g.counter[s][flag];
}

}  // namespace cross_core
}  // namespace ascrun

// Ascend C's pipe_t is in sync/intra_core.h; the pipe a cross-core flag is issued on does not change what the
// cpu target does (every pipe of a core runs in order), so it is only a template argument here.
namespace AscendC {

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId) {
    ascrun::cross_core::set(modeId, flagId);
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId) {
    ascrun::cross_core::wait(modeId, flagId);
}

}  // namespace AscendC

// The intrinsics pyasc's Matmul code emits: config = 1 | mode << 4 | flag << 8.
inline void ffts_cross_core_sync(pipe_t, uint64_t config) {
    ascrun::cross_core::set(static_cast<uint32_t>((config >> 4) & 0xF), static_cast<uint32_t>((config >> 8) & 0xF));
}

inline void wait_flag_dev(int64_t flagId) {
    // the mode is the setter's: a vector core waits for its AIC, the AIC for its AIVs (mode 2)
    ascrun::cross_core::wait(2, static_cast<uint32_t>(flagId));
}

#pragma GCC visibility pop

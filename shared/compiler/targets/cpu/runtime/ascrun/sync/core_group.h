// ascrun cpu runtime: the cores of one block of a mixed launch and their cross-core flags (the
// state sync/cross_core.h's flags act on). Not part of kernel_operator.h: only the runtime's
// sources (sync/cross_core.cpp, launch/launch.cpp) use it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "ascrun/core/core.h"

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

}  // namespace ascrun

#pragma GCC visibility pop

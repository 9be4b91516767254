// ascrun cpu runtime: the cross-core flags of sync/cross_core.h, compiled once per toolchain.
#include "ascrun/sync/cross_core.h"

#include "ascrun/sync/core_group.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace cross_core {
namespace {

CoreGroup& group_for(BlockContext& b, const char* api, uint32_t mode, uint32_t flag) {
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

void add(CoreGroup& g, uint32_t s, uint32_t flag, const char* api) {
    if (g.counter[s][flag] == kCrossCoreCounterMax) {
        fault(format("%s: flag %u of %s is set %u times without a wait (its counter holds 0-%u)", api, flag,
                     g.label[s].c_str(), kCrossCoreCounterMax + 1, kCrossCoreCounterMax));
    }
    ++g.counter[s][flag];
}

// Moves one set from each AIV's `pending` count to `receivers` once every AIV has one.
bool all_aivs_set(CoreGroup& g, uint8_t (&pending)[kMaxBlockCores][kCrossCoreFlags], uint32_t flag) {
    for (uint32_t v = 0; v < g.cores.aiv; ++v) {
        if (pending[g.cores.aic + v][flag] == 0) return false;
    }
    for (uint32_t v = 0; v < g.cores.aiv; ++v) --pending[g.cores.aic + v][flag];
    return true;
}

// Why no other core can set the flag any more, or "" while one still runs.
std::string stuck(const CoreGroup& g, uint32_t self) {
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

}  // namespace

void set(uint32_t mode, uint32_t flag) {
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

void wait(uint32_t mode, uint32_t flag) {
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

#pragma GCC visibility pop

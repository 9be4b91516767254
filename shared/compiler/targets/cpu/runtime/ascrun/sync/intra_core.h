// ascrun cpu runtime: intra-core synchronization (SetFlag/WaitFlag, PipeBarrier) and
// set_ffts_base_addr.
//
// A block runs its pipes in program order on one thread, so synchronization itself orders nothing
// here; it feeds the pipe model (pipes/model.h: the hazard check and the modeled timeline), and what
// would misbehave on the device is checked: event IDs outside 0..7, a second SetFlag of the same
// event and ID before its WaitFlag (undefined behaviour, hangs a later PipeBarrier), a WaitFlag no
// SetFlag ever satisfies by the end of the block (a hang), and the deadlocks the pipe model finds.
#pragma once

#include <array>

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

// Pipe and event IDs are unscoped, global names in CANN.
enum pipe_t : uint8_t {
    PIPE_S = 0,
    PIPE_V = 1,
    PIPE_M = 2,
    PIPE_MTE1 = 3,
    PIPE_MTE2 = 4,
    PIPE_MTE3 = 5,
    PIPE_ALL = 6,
    PIPE_MTE4 = 7,
    PIPE_MTE5 = 8,
    PIPE_V2 = 9,
    PIPE_FIX = 10,
};

enum event_t : uint8_t {
    EVENT_ID0 = 0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
};

// The FFTS base address only matters for cross-core synchronization on a device.
inline void set_ffts_base_addr(uint64_t addr) {
    (void)addr;
    ascrun::enter();
}

namespace AscendC {

enum class HardEvent : uint8_t {
    MTE2_MTE1 = 0,
    MTE1_MTE2 = 1,
    MTE1_M = 2,
    M_MTE1 = 3,
    MTE2_V = 4,
    V_MTE2 = 5,
    MTE3_V = 6,
    V_MTE3 = 7,
    M_V = 8,
    V_M = 9,
    V_V = 10,
    MTE3_MTE1 = 11,
    MTE1_MTE3 = 12,
    MTE1_V = 13,
    MTE2_M = 14,
    M_MTE2 = 15,
    V_MTE1 = 16,
    M_FIX = 17,
    FIX_M = 18,
    MTE3_MTE2 = 19,
    MTE2_MTE3 = 20,
    S_V = 21,
    V_S = 22,
    S_MTE2 = 23,
    MTE2_S = 24,
    S_MTE3 = 25,
    MTE3_S = 26,
    MTE2_FIX = 27,
    FIX_MTE2 = 28,
    FIX_S = 29,
    M_S = 30,
    FIX_MTE3 = 31,
    MTE1_FIX = 32,
    FIX_MTE1 = 33,
    FIX_FIX = 34,
    MAX,
};

}  // namespace AscendC

namespace ascrun {
namespace sync {

static_assert(static_cast<uint32_t>(AscendC::HardEvent::MAX) == kHardEventCount, "HardEvent table size");

inline const char* event_name(AscendC::HardEvent e) {
    static const char* const names[kHardEventCount] = {
        "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",    "M_MTE1",    "MTE2_V",   "V_MTE2",   "MTE3_V",   "V_MTE3",
        "M_V",       "V_M",       "V_V",       "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",  "MTE2_M",   "M_MTE2",
        "V_MTE1",    "M_FIX",     "FIX_M",     "MTE3_MTE2", "MTE2_MTE3", "S_V",     "V_S",      "S_MTE2",
        "MTE2_S",    "S_MTE3",    "MTE3_S",    "MTE2_FIX",  "FIX_MTE2",  "FIX_S",   "M_S",      "FIX_MTE3",
        "MTE1_FIX",  "FIX_MTE1",  "FIX_FIX"};
    const auto i = static_cast<uint32_t>(e);
    return i < kHardEventCount ? names[i] : "?";
}

inline int8_t& flag_slot(BlockContext& b, const char* api, AscendC::HardEvent e, int32_t id) {
    const auto ev = static_cast<uint32_t>(e);
    if (ev >= kHardEventCount) fault(format("%s: HardEvent value %u is not a valid event", api, ev));
    if (id < 0 || id >= kEventIdCount) {
        fault(format("%s<HardEvent::%s>(%d): event ID %d is out of range (event IDs are 0 to %d)", api, event_name(e),
                     id, id, kEventIdCount - 1));
    }
    return b.flags[ev][id];
}

// " at <file>:<line>" of a flag's last SetFlag or WaitFlag (its flag_slot checked), or "".
inline std::string flag_site_text(const BlockContext& b, AscendC::HardEvent e, int32_t id) {
    const Site& s = b.flag_sites[static_cast<uint32_t>(e)][id];
    return s.known() ? " at " + s.text() : std::string();
}

// The pipes a HardEvent orders: the one that sets it (its first name) and the one that waits,
// read once from the names (MTE2_V: MTE2 sets, V waits).
inline pipes::Pipe event_pipe(AscendC::HardEvent e, bool waiter) {
    static const auto table = [] {
        std::array<std::array<pipes::Pipe, 2>, kHardEventCount> t{};
        for (uint32_t i = 0; i < kHardEventCount; ++i) {
            const std::string name = event_name(static_cast<AscendC::HardEvent>(i));
            const size_t cut = name.find('_');
            for (int side = 0; side < 2; ++side) {
                const std::string part = side == 0 ? name.substr(0, cut) : name.substr(cut + 1);
                t[i][side] = pipes::Pipe::All;
                for (uint32_t p = 0; p < pipes::kPipes; ++p) {
                    if (part == pipes::pipe_name(static_cast<pipes::Pipe>(p))) t[i][side] = static_cast<pipes::Pipe>(p);
                }
            }
        }
        return t;
    }();
    return table[static_cast<uint32_t>(e)][waiter ? 1 : 0];
}

static_assert(kHardEventCount * kEventIdCount == pipes::kFlagKeys, "pipes/model.h kFlagKeys");

inline uint64_t flag_key(AscendC::HardEvent e, int32_t id) {
    return static_cast<uint64_t>(e) * kEventIdCount + static_cast<uint64_t>(id);
}

// Run when a block's kernel body returns: a WaitFlag still waiting would hang the device; a
// SetFlag nobody waited for is a hazard finding (sync hygiene).
inline void check_block_end(BlockContext& b) {
    for (uint32_t e = 0; e < kHardEventCount; ++e) {
        for (int32_t id = 0; id < kEventIdCount; ++id) {
            if (b.flags[e][id] < 0) {
                tls_site = b.flag_sites[e][id];  // the finding is the WaitFlag's
                fault(format("WaitFlag<HardEvent::%s>(%d) is never satisfied: no matching SetFlag before the kernel "
                             "ends (the device would hang)",
                             event_name(static_cast<AscendC::HardEvent>(e)), id));
            }
        }
    }
    if (!b.pipes || b.launch->hazards() == pipes::Hazards::Off) return;
    for (uint32_t e = 0; e < kHardEventCount; ++e) {
        for (int32_t id = 0; id < kEventIdCount; ++id) {
            if (b.flags[e][id] <= 0) continue;
            tls_site = b.flag_sites[e][id];  // the finding is the SetFlag's
            const char* name = event_name(static_cast<AscendC::HardEvent>(e));
            pipes::Finding f;
            f.key_api = "SetFlag";
            f.key_operand = name;  // one finding per event: the first ID is shown, the others counted
            f.message = format("SetFlag<HardEvent::%s>(%d) is never waited for: no WaitFlag<HardEvent::%s>(%d) "
                               "follows it before the kernel ends",
                               name, id, name, id);
            hazard(b, f);
        }
    }
}

}  // namespace sync
}  // namespace ascrun

namespace AscendC {

template <HardEvent event>
void SetFlag(int32_t eventID) {
    ascrun::BlockContext& b = ascrun::enter();
    int8_t& slot = ascrun::sync::flag_slot(b, "SetFlag", event, eventID);
    if (slot > 0) {
        const std::string first = ascrun::sync::flag_site_text(b, event, eventID);
        ascrun::fault(ascrun::format("SetFlag<HardEvent::%s>(%d): set twice without a WaitFlag in between (%s%s"
                                     "undefined behaviour on the device; a later PipeBarrier would hang)",
                                     ascrun::sync::event_name(event), eventID, first.empty() ? "" : "first set",
                                     first.empty() ? "" : (first + "; ").c_str()));
    }
    if (b.pipes) {
        const auto from = ascrun::sync::event_pipe(event, false), to = ascrun::sync::event_pipe(event, true);
        if (slot < 0) {  // its WaitFlag came first: the waiting pipe goes on from here
            const auto key = static_cast<uint32_t>(ascrun::sync::flag_key(event, eventID));
            const ascrun::pipes::Stamp stamp = b.pipes->signal(from);
            if (!b.pipes->release(key, from)) {
                ascrun::fault(ascrun::format(
                    "SetFlag<HardEvent::%s>(%d) is never reached: %s runs it only after the WaitFlag<HardEvent::%s>(%d)%s "
                    "on %s that waits for it (through the flags between the pipes: a deadlock, the device would hang)",
                    ascrun::sync::event_name(event), eventID, ascrun::pipes::pipe_name(from),
                    ascrun::sync::event_name(event), eventID,
                    ascrun::sync::flag_site_text(b, event, eventID).c_str(), ascrun::pipes::pipe_name(to)));
            }
            b.pipes->wait(to, stamp);
        } else {
            b.pipes->post(ascrun::sync::flag_key(event, eventID), from, to);
        }
    }
    ++slot;
    b.flag_sites[static_cast<uint32_t>(event)][eventID] = ascrun::tls_site;
}

template <HardEvent event>
void WaitFlag(int32_t eventID) {
    ascrun::BlockContext& b = ascrun::enter();
    int8_t& slot = ascrun::sync::flag_slot(b, "WaitFlag", event, eventID);
    if (slot < 0) {
        ascrun::fault(ascrun::format("WaitFlag<HardEvent::%s>(%d): a second WaitFlag while the first%s still waits for "
                                     "its SetFlag (the device would hang)",
                                     ascrun::sync::event_name(event), eventID,
                                     ascrun::sync::flag_site_text(b, event, eventID).c_str()));
    }
    if (b.pipes) {
        const auto to = ascrun::sync::event_pipe(event, true);
        const uint64_t key = ascrun::sync::flag_key(event, eventID);
        if (!b.pipes->take(key, to) && !b.pipes->hold(to, static_cast<uint32_t>(key))) {
            ascrun::fault(ascrun::format("WaitFlag<HardEvent::%s>(%d) on the scalar unit comes before its SetFlag: the "
                                         "scalar unit stops until it is set, so it never issues that SetFlag (a "
                                         "deadlock, the device would hang)",
                                         ascrun::sync::event_name(event), eventID));
        }
    }
    --slot;
    b.flag_sites[static_cast<uint32_t>(event)][eventID] = ascrun::tls_site;
}

template <pipe_t pipe>
void PipeBarrier() {
    static_assert(pipe != PIPE_S, "PipeBarrier<PIPE_S> is not supported: the scalar pipe synchronizes itself");
    ascrun::BlockContext& b = ascrun::enter();
    // One pipe's barrier orders that pipe's instructions, which the model already runs in order.
    if (pipe == PIPE_ALL && b.pipes) {
        const ascrun::pipes::Pipe held = b.pipes->waiting();
        if (held != ascrun::pipes::Pipe::All) {
            ascrun::fault(ascrun::format("PipeBarrier<PIPE_ALL> waits for pipe %s, which waits for a SetFlag that comes "
                                         "after this barrier (a deadlock, the device would hang)",
                                         ascrun::pipes::pipe_name(held)));
        }
        b.pipes->barrier_all();
    }
}

}  // namespace AscendC

#pragma GCC visibility pop

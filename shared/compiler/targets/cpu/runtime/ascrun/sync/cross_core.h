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
// The cores' shared state (CoreGroup, sync/core_group.h) and the flag logic are in sync/cross_core.cpp,
// compiled once per toolchain: a kernel only calls set and wait.

#include "ascrun/core/core.h"
#include "ascrun/sync/intra_core.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace cross_core {

// CrossCoreSetFlag / CrossCoreWaitFlag of flag `flag` in mode `mode` on the calling core.
void set(uint32_t mode, uint32_t flag);
void wait(uint32_t mode, uint32_t flag);

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

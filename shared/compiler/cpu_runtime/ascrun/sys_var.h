// ascrun cpu runtime: system variables of the running block (GetBlockIdx, GetBlockNum).
#pragma once

#include "core.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

// Index of the running block, in [0, GetBlockNum()).
inline int64_t GetBlockIdx() { return static_cast<int64_t>(ascrun::enter().block_idx); }

// Number of blocks of the launch (ascrun_launch's core_num).
inline int64_t GetBlockNum() { return static_cast<int64_t>(ascrun::enter().launch->block_num()); }

// Vector-only launches: one AIV per block.
inline int64_t GetTaskRatio() {
    ascrun::enter();
    return 1;
}

}  // namespace AscendC

#pragma GCC visibility pop

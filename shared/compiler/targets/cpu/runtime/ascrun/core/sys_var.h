// ascrun cpu runtime: system variables of the running core (GetBlockIdx, GetBlockNum, GetSubBlockIdx,
// GetSubBlockNum, GetTaskRatio, g_coreType).
#pragma once

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

// Index of the running core among the launch's cores of its type (GetBlockIdx.md): [0, GetBlockNum())
// on an AIC and on the AIV of a 1:1 block; [0, 2 * GetBlockNum()) on the AIVs of 1:2 blocks.
inline int64_t GetBlockIdx() { return static_cast<int64_t>(ascrun::enter().block_idx); }

// Number of blocks of the launch (ascrun_launch's core_num).
inline int64_t GetBlockNum() { return static_cast<int64_t>(ascrun::enter().launch->block_num()); }

// The running core's index among its block's cores of its type: 0 or 1 on the AIVs of a 1:2 block.
inline int64_t GetSubBlockIdx() { return static_cast<int64_t>(ascrun::enter().sub_block_idx); }

// The block's cores of the running core's type (GetSubBlockNum(ISASI).md).
inline int64_t GetSubBlockNum() {
    const ascrun::BlockContext& b = ascrun::enter();
    return b.core_type == AIC ? 1 : static_cast<int64_t>(b.launch->cores().aiv);
}

// Cores of the running core's type per block (GetTaskRatio.md, table 1): 2 on the AIVs of
// MIX_AIC_1_2, else 1.
inline int64_t GetTaskRatio() { return GetSubBlockNum(); }

}  // namespace AscendC

#pragma GCC visibility pop

// The running core's type, a global variable in Ascend C: `g_coreType == AscendC::AIC`.
#define g_coreType (::ascrun::enter().core_type)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)

// ascrun cpu runtime: the register API's checks and faults, compiled once (reg/registers.h,
// reg/load_store.h).
#include "ascrun/reg/load_store.h"
#include "ascrun/reg/logic.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace reg {

void not_on_this_arch(const char* api) {
    fault(format("%s: the register API is Ascend 950's (__NPU_ARCH__ 3510); this kernel is built for %s, which has "
                 "none", api, kArchName));
}

void outside_vec_scope(const char* api) {
    fault(format("%s: a register instruction outside a __VEC_SCOPE__ (the register API runs only inside a VF)", api));
}

void unwritten_register(const char* api, const char* role, const char* kind) {
    fault(format("%s: %s is a %s nothing has written (its value is undefined)", api, role, kind));
}

void bad_mask_pattern(const char* api, int pattern) {
    fault(format("%s: MaskPattern %d is not one of MaskReg.md's patterns (ALL, VL1..VL128, M3, M4, H, Q, ALLF)", api,
                 pattern));
}

void scalar_out_of_range(const char* api, const char* to, double value) {
    fault(format("%s: scalarValue %g is outside %s's range (its conversion is undefined)", api, value, to));
}

void negative_shift(const char* api, long long count) {
    fault(format("%s: shift count %lld is negative (the reference leaves a negative count undefined)", api, count));
}

uint64_t ub_register_span(const char* api, const char* role, uintptr_t addr) {
    if (addr % kNormAlign != 0) {
        fault(format("%s: %s (UB offset %s) is not %u-byte aligned (LoadAlign/StoreAlign's DIST_NORM needs it)", api,
                     role, hex(addr).c_str(), kNormAlign));
    }
    if (addr > kUbBytes || kUbBytes - addr < kVecLen) {
        fault(format("%s: %s (UB offset %s) + the register's %u bytes runs past the Unified Buffer (%u bytes)", api,
                     role, hex(addr).c_str(), kVecLen, kUbBytes));
    }
    return addr;
}

}  // namespace reg
}  // namespace ascrun

#pragma GCC visibility pop

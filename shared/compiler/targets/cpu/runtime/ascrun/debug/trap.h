// ascrun cpu runtime: what pyasc's nightly emits for a kernel compiled with debug=True (asctile's
// device_print and device_assert): InitDump and Trap.
//  - InitDump(mixFlag, dumpStartAddr, gmLen) / InitDump(mixFlag, gmLen): on the device, the dump
//    workspace printf writes into (asc-devkit impl/basic_api/kernel_operator_dump_tensor_impl.h:
//    InitDumpImpl; its CPU-debug build's is empty). The cpu runtime's printf writes the launch's
//    report (debug/print.h), so it sets nothing; a null workspace is a kernel bug all the same.
//  - Trap() (系统变量访问/Trap.md): "NPU模式下会中断AI Core的运行，CPU模式下等同于assert": the core
//    stops, and the launch fails with what it printed before (a failed device_assert prints its
//    message, then traps).
#pragma once

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

inline void InitDump(bool mixFlag, uint32_t gmLen) {
    (void)mixFlag;
    (void)gmLen;
    ::ascrun::enter();
}

inline void InitDump(bool mixFlag, __gm__ uint8_t* dumpStartAddr, uint32_t gmLen) {
    if (dumpStartAddr == nullptr) ::ascrun::fault("InitDump: dumpStartAddr is null");
    InitDump(mixFlag, gmLen);
}

[[noreturn]] inline void Trap() {
    ::ascrun::enter();
    ::ascrun::fault("Trap: the kernel stopped its core (AscendC::Trap; a failed device_assert prints its message "
                    "first: see the log)");
}

}  // namespace AscendC

#pragma GCC visibility pop

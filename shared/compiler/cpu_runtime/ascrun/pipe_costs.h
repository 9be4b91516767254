// ascrun cpu runtime: the cost model of the modeled timeline (pipes.h), for a 910B-class core
// (Atlas A2). Every constant names its source; README.md ("The modeled timeline") has the table.
// A model, not a measurement: calibrate it against a device's trace where one exists (README).
#pragma once

#include <cstdint>

namespace ascrun {
namespace pipes {

constexpr double kClockGhz = 1.85;               // SOURCE_CLOCK
constexpr uint64_t kIssueCycles = 1;             // SOURCE_ISSUE
constexpr uint64_t kScalarAccessCycles = 4;      // SOURCE_SCALAR
constexpr uint64_t kVectorBytesPerCycle = 256;   // SOURCE_VECTOR
constexpr uint64_t kVectorStartupCycles = 10;    // SOURCE_VECTOR_STARTUP
constexpr uint64_t kMte2BytesPerCycle = 32;      // SOURCE_MTE2
constexpr uint64_t kMte3BytesPerCycle = 32;      // SOURCE_MTE3
constexpr uint64_t kMteStartupCycles = 100;      // SOURCE_MTE_STARTUP
constexpr uint64_t kMte1BytesPerCycle = 256;     // SOURCE_MTE1
constexpr uint64_t kFixBytesPerCycle = 128;      // SOURCE_FIX
constexpr uint32_t kCubeFractalsPerCycle = 1;    // SOURCE_CUBE: one 16 x (32 bytes) x 16 fractal product per cycle

// Bounds of what a launch returns.
constexpr uint32_t kTraceEventsPerCore = 2048;   // events per core in the trace; later ones are counted
constexpr uint32_t kTraceCores = 8;              // cores in the trace (the lowest)
constexpr uint32_t kTimelineCores = 64;          // cores listed in the model

}  // namespace pipes
}  // namespace ascrun

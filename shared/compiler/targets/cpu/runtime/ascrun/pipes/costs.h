// ascrun cpu runtime: the cost model of the modeled timeline (pipes/timeline.h), for a 910B-class core
// (Atlas A2, __NPU_ARCH__ 2201) and, where Huawei publishes its own figure, the Ascend 950's (3510,
// core/soc.h); a 950 constant with no published figure is the 910B's, said so. Every constant names
// its source; README.md ("The pipe model") has the table.
// AD: Huawei's Ascend C repository (cannmirror/asc-devkit). "Derived": computed from Huawei's own
// measured figures there; "assumed": nothing published, a stated guess. A model, not a
// measurement: `ascrun worker --self-test` on a CANN host prints device vs model (calibration).
#pragma once

#include <cstdint>

#include "ascrun/core/soc.h"

namespace ascrun {
namespace pipes {

// AD examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance/README.md:
// "主频为1.85GHz" (Atlas A2 training series). 950: no published AI Core clock (GetSystemCycle(ISASI).md's
// 1 GHz is the system counter's): the 910B's.
constexpr double kClockGhz = 1.85;
// AD docs/zh/api/附录/Vector指令理论性能汇总.md, scalar tables: 1 cycle per scalar instruction;
// issuing an instruction to a pipe is taken to cost the same.
constexpr uint64_t kIssueCycles = 1;
// Assumed: a GetValue/SetValue on the Unified Buffer as one scalar instruction (no latency published).
constexpr uint64_t kScalarAccessCycles = 1;
// AD Vector指令理论性能汇总.md table 3: Add half 128 / float 64 elements per cycle = 256 bytes, one
// repeat per cycle (also 高阶性能打磨.md: "向量指令一拍读取256B数据"). Every vector instruction is
// costed at this rate: the slower ones (Exp, Ln, Sqrt, Div: 32 elements per cycle) are not told apart.
// 950: the same 256 bytes (AD docs/zh/api/附录/Reg矢量计算接口理论性能汇总.md table 6: Add half 128,
// float 64 elements per cycle).
constexpr uint64_t kVectorBytesPerCycle = 256;
// Derived: add_high_performance/README.md measures 6.954 us against 5.904 us theoretical for its
// vector part, about 1940 cycles over its ~86 Add calls per core: ~20 cycles per instruction. 950:
// the 910B's (nothing measured published), as for the MTE figures below.
constexpr uint64_t kVectorStartupCycles = 20;
// Derived: the same README's single-core GM->UB figures (32768 copies of 8 KiB in 6208.8 us) give
// ~35 bytes per cycle with the startup below; 32 here. AD 分析性能数据.md: a chip's GM bandwidth is
// ~1.8 TB/s, shared by MTE2 and MTE3 of all cores (not modelled: each core has these to itself).
constexpr uint64_t kMte2BytesPerCycle = 32;
// Assumed: as MTE2 (the same GM; AD gives no separate write figure).
constexpr uint64_t kMte3BytesPerCycle = 32;
// Derived: n x (startup + bytes / bandwidth) fitted to the README's 48-core copies of 8 KiB and
// 32 KiB (215.5 us vs 184.4 us for the same 5.59 MB per core): ~110 cycles per DataCopy.
constexpr uint64_t kMteStartupCycles = 110;
// AD docs/zh/api/附录/Cube指令理论性能汇总.md table 3: LoadData 2D L1->L0A 256, L1->L0B 128 bytes per cycle;
// 950, table 5: LoadData 2D V2 (what its LoadData runs) 256 to either.
constexpr uint64_t kMte1L0ABytesPerCycle = 256;
constexpr uint64_t kMte1L0BBytesPerCycle = kNpuArch == 3510 ? 256 : 128;
// Assumed: a LoadData's fixed cost as a vector instruction's.
constexpr uint64_t kMte1StartupCycles = 20;
// AD Cube指令理论性能汇总.md table 1: per cycle 16x16x16 half/bfloat16 (4096 MACs), 16x16x32 int8,
// 16x16x4 float ("float算力为half算力的1/4", 硬件约束/NPU架构版本2201.md). 950, table 2: the same for
// half, bfloat16 and int8; float 16x16x1 (HF32 off).
constexpr uint32_t kCubeHalfMacsPerCycle = 4096;
constexpr uint32_t kCubeInt8MacsPerCycle = 8192;
constexpr uint32_t kCubeFloatMacsPerCycle = kNpuArch == 3510 ? 256 : 1024;
// Derived: Mmad计算/关键特性说明/UnitFlag.md table 1: 4156 cycles theoretical for M, N, K = 128, 256,
// 512 in 8 Mmads, against 4096 for the MACs alone: ~8 cycles per Mmad. 950: the 910B's.
constexpr uint64_t kMmadStartupCycles = 8;
// AD Cube指令理论性能汇总.md table 7: Fixpipe float -> half at 64 elements (256 bytes of L0C) per
// cycle (listed for L0C->L1; L0C->GM is taken to be the same); 950, table 8: the same 64.
constexpr uint64_t kFixBytesPerCycle = 256;
// Assumed: a Fixpipe to GM starts like a DataCopy to GM.
constexpr uint64_t kFixStartupCycles = kMteStartupCycles;

}  // namespace pipes
}  // namespace ascrun

// The modelled core's constants, chosen by the NPU architecture the kernel was generated for.
// bisheng defines __NPU_ARCH__ in device code (asc-devkit docs/zh/guide/编程指南/语言扩展层/
// SIMD-BuiltIn关键字.md: Atlas A2/A3 2201, Ascend 950PR/950DT 3510); the cpu toolchain defines it
// the same way (shared/compiler/socs.py, toolchain.arch_flags), so one runtime source models both.
//
// Sizes: asc-devkit include/utils/base/sys_constants.h (ASC_*_SIZE) and impl/basic_api/utils/
// kernel_utils_constants.h (TOTAL_*_SIZE), which pyasc's launcher repeats (asc/runtime/launcher.py
// PlatformInfo). The runtime models the whole buffer a kernel may allocate: sys_constants.h's
// 2201 UB and L1 are 256 bytes less (what its own C API reserves), TOTAL_UB_SIZE / TOTAL_L1_SIZE
// are the full 192 KiB / 512 KiB minus KFC's 128 bytes of L1, which only Matmul's kfc uses.
#pragma once

#include <cstdint>

#if !defined(__NPU_ARCH__)
#error "__NPU_ARCH__ is not defined: the cpu toolchain defines it (-D__NPU_ARCH__=2201 or 3510, shared/compiler/socs.py)"
#endif

namespace ascrun {

constexpr uint32_t kNpuArch = __NPU_ARCH__;

#if __NPU_ARCH__ == 2201  // Atlas A2/A3 (Ascend910B*, Ascend910_93*): pyasc's c220
constexpr const char* kArchName = "dav-2201";
constexpr uint32_t kUbBytes = 196608;   // 192 KiB Unified Buffer (TOTAL_UB_SIZE)
constexpr uint32_t kL1Bytes = 524288;   // 512 KiB L1 Buffer (TOTAL_L1_SIZE before the KFC reserve)
constexpr uint32_t kL0ABytes = 65536;   // 64 KiB L0A Buffer (ASC_L0A_SIZE, TOTAL_L0A_SIZE)
constexpr uint32_t kL0BBytes = 65536;   // 64 KiB L0B Buffer (ASC_L0B_SIZE, TOTAL_L0B_SIZE)
constexpr uint32_t kL0CBytes = 131072;  // 128 KiB L0C Buffer (ASC_L0C_SIZE, TOTAL_L0C_SIZE)
constexpr uint32_t kBtBytes = 1024;     // 1 KiB BiasTable Buffer (ASC_BT_SIZE; matmul c2_buffer.h BIAS_TABLE_SIZE)
// 2 KiB Fixpipe Buffer: impl/adv_api/tiling/conv/conv3d_tiling_util.h FB_SIZE (the 910B's platform info)
constexpr uint32_t kFbBytes = 2048;
#elif __NPU_ARCH__ == 3510  // Ascend 950PR/950DT (Ascend950PR_95*): pyasc's c310
constexpr const char* kArchName = "dav-3510";
// 248 KiB Unified Buffer: ASC_UB_SIZE, TOTAL_UB_SIZE (the top 8 KiB of the 256 KiB are the
// compiler's reserve unless __ASC_DISABLE_RESERVED_UBUF__, which the cpu target does not model)
constexpr uint32_t kUbBytes = 253952;
constexpr uint32_t kL1Bytes = 524288;   // 512 KiB L1 Buffer (ASC_L1_SIZE, TOTAL_L1_SIZE)
constexpr uint32_t kL0ABytes = 65536;   // 64 KiB L0A Buffer (ASC_L0A_SIZE)
constexpr uint32_t kL0BBytes = 65536;   // 64 KiB L0B Buffer (ASC_L0B_SIZE)
constexpr uint32_t kL0CBytes = 262144;  // 256 KiB L0C Buffer (ASC_L0C_SIZE, TOTAL_L0C_SIZE)
constexpr uint32_t kBtBytes = 4096;     // 4 KiB BiasTable Buffer (ASC_BT_SIZE; c2_buffer.h BIAS_TABLE_SIZE)
// Fixpipe Buffer: the public sources give no 3510 figure; 2201's 2 KiB, assumed unchanged.
constexpr uint32_t kFbBytes = 2048;
#else
#error "the cpu runtime models __NPU_ARCH__ 2201 (Atlas A2/A3) and 3510 (Ascend 950) only"
#endif

}  // namespace ascrun

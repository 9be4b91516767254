// ascrun cpu runtime: the base every API header builds on.
//
//  - the Ascend C qualifiers (__global__, __aicore__, __gm__, ...), defined empty;
//  - KernelFault, the exception a failed check throws, and Aborted, thrown when another block failed;
//  - LaunchContext (one per ascrun_launch: GM regions, bounds policy, abort flag, first error, report)
//    and BlockContext (one per block: index, Unified Buffer, pipe/queue/flag state, report), reached
//    through a thread_local pointer;
//  - warn(), how a check reports what the device does silently when the launch's policy allows it;
//  - (core/site.h) the kernel's Python statement each core runs, which faults and warnings name.
//
// Every API entry point calls `enter()` once: it finds the block, stops the block if the launch is
// aborting, and is the only per-call overhead besides the API's own range checks.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ascrun/core/half.h"
#include "ascrun/core/site.h"
#include "ascrun/core/soc.h"
#include "ascrun/launch/report.h"
#include "ascrun/pipes/model.h"
#include "ascrun/pipes/trace.h"

// ---- Ascend C qualifiers: meaningless on the cpu --------------------------------------------------
#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __cbuf__
#define __cbuf__
#endif
#ifndef __ca__
#define __ca__
#endif
#ifndef __cb__
#define __cb__
#endif
#ifndef __cc__
#define __cc__
#endif
#ifndef __fbuf__
#define __fbuf__
#endif
#ifndef __inout_pipe__
#define __inout_pipe__(pipe)
#endif
#ifndef __in_pipe__
#define __in_pipe__(pipe)
#endif
#ifndef __out_pipe__
#define __out_pipe__(pipe)
#endif

// Everything the runtime defines stays inside the kernel's shared library: two kernels built
// against different runtime versions can be loaded in one process without sharing symbols.
#pragma GCC visibility push(hidden)

namespace AscendC {
// The core a block's code runs on (`g_coreType == AscendC::AIC`, core/sys_var.h).
enum CoreType : int32_t { AIC = 1, AIV = 2 };
}  // namespace AscendC

namespace ascrun {

// ---- limits of the modelled core (its sizes: core/soc.h, by __NPU_ARCH__) ---------------------------
constexpr uint32_t kUbAlign = 32;          // UB operand start addresses: 32-byte aligned
constexpr uint32_t kUbAllocAlign = 64;     // alignment of the host allocation backing the UB
constexpr uint8_t kUbPoison = 0xA5;        // fill of a fresh UB (the hardware leaves it undefined)
constexpr int32_t kEventIdCount = 8;       // SetFlag/WaitFlag event IDs 0..7
constexpr uint32_t kHardEventCount = 35;   // values of AscendC::HardEvent
constexpr uint32_t kMaxConcurrentBlocks = 64;
constexpr uint32_t kPositionSlots = 32;    // > the values of AscendC::TPosition (core/tensor.h checks)

// ---- the cube core's local memories: L1 (TPosition A1, B1, C1), L0A (A2), L0B (B2), L0C (CO1) ------
// Each block has them besides its Unified Buffer, allocated on first use (BlockContext::local_memory),
// so a vector-only launch pays nothing for them. Their sizes: core/soc.h.
enum class Memory : uint8_t { UB, L1, L0A, L0B, L0C };
constexpr uint32_t kCubeMemoryCount = 4;  // L1, L0A, L0B, L0C

constexpr uint32_t memory_bytes(Memory m) {
    return m == Memory::UB ? kUbBytes : m == Memory::L1 ? kL1Bytes : m == Memory::L0A ? kL0ABytes
                                      : m == Memory::L0B ? kL0BBytes : kL0CBytes;
}
// How messages name offsets in a memory ("UB offset 0x40").
constexpr const char* memory_short_name(Memory m) {
    return m == Memory::UB ? "UB" : m == Memory::L1 ? "L1" : m == Memory::L0A ? "L0A" : m == Memory::L0B ? "L0B" : "L0C";
}
constexpr const char* memory_name(Memory m) {
    return m == Memory::UB ? "Unified Buffer" : m == Memory::L1 ? "L1 Buffer" : m == Memory::L0A ? "L0A Buffer"
                                              : m == Memory::L0B ? "L0B Buffer" : "L0C Buffer";
}

// ---- faults ----------------------------------------------------------------------------------------

// A kernel broke a rule the hardware would not report. Thrown by the checks, caught by the block.
class KernelFault : public std::exception {
public:
    explicit KernelFault(std::string msg) : msg_(std::move(msg)) {}
    const char* what() const noexcept override { return msg_.c_str(); }

private:
    std::string msg_;
};

// Another block faulted: unwind this block quietly. Deliberately not a std::exception.
struct Aborted {};

// printf-style formatting into a std::string (for fault messages only: never on a hot path).
// The out-of-line helpers of this header are defined once, in core/core.cpp: every kernel would
// otherwise compile them again.
__attribute__((format(printf, 1, 2))) std::string format(const char* fmt, ...);

[[noreturn]] __attribute__((cold)) void fault(std::string msg);

// ---- element type names (messages and the launch signature) ---------------------------------------

template <typename T>
struct TypeName {
    static const char* c() {  // the C++ spelling, for messages
        if (std::is_same<T, bool>::value) return "bool";
        if (std::is_floating_point<T>::value) return sizeof(T) == 4 ? "float" : "double";
        if (std::is_integral<T>::value) {
            const bool s = std::is_signed<T>::value;
            switch (sizeof(T)) {
                case 1: return s ? "int8_t" : "uint8_t";
                case 2: return s ? "int16_t" : "uint16_t";
                case 4: return s ? "int32_t" : "uint32_t";
                default: return s ? "int64_t" : "uint64_t";
            }
        }
        return "?";
    }
};
template <>
struct TypeName<half> {
    static const char* c() { return "half"; }
};
template <>
struct TypeName<bfloat16_t> {
    static const char* c() { return "bfloat16_t"; }
};

// ---- launch and block state ------------------------------------------------------------------------

// One tensor argument of the launch: a GM range the kernel may touch, and (bounds "warn") the
// guard zone the caller allocated after it, which accesses past the end reach instead.
struct Region {
    uintptr_t base;
    uint64_t bytes;
    std::string name;
    uint64_t guard = 0;
};

// What a launch does with an access the device performs silently but that leaves its operand:
// Fault stops the block; Warn (GM past a tensor argument into its guard zone, UB past a
// LocalTensor inside the Unified Buffer) records a warning and does what the device does.
enum class Bounds : uint32_t { Fault = 0, Warn = 1 };

// Which cores each block of a launch runs: pyasc's KernelType (asc.runtime.config), the
// reference's KERNEL_TYPE_* (设置Kernel类型). The toolchain compiles it into the kernel's library.
enum class KernelType : uint32_t {
    AIV_ONLY, AIC_ONLY, MIX_AIV_HARD_SYNC, MIX_AIC_HARD_SYNC, MIX_AIV_1_0, MIX_AIC_1_0, MIX_AIC_1_1, MIX_AIC_1_2
};

// Cube cores (0 or 1) and vector cores (0 to 2) per block of a kernel type.
struct BlockCores {
    uint32_t aic;
    uint32_t aiv;
    uint32_t total() const { return aic + aiv; }
    bool mixed() const { return aic > 0 && aiv > 0; }
};
constexpr BlockCores block_cores(KernelType t) {
    switch (t) {
        case KernelType::AIC_ONLY:
        case KernelType::MIX_AIC_HARD_SYNC:
        case KernelType::MIX_AIC_1_0: return {1, 0};
        case KernelType::MIX_AIC_1_1: return {1, 1};
        case KernelType::MIX_AIC_1_2: return {1, 2};
        default: return {0, 1};
    }
}

struct CoreGroup;  // sync/cross_core.h: the cores of one block and their cross-core flags

class LaunchContext {
public:
    // `timeline`: where the cores' modeled timelines go (null: no model); `hazards`: the policy.
    LaunchContext(uint32_t block_num, std::vector<Region> regions, Bounds bounds = Bounds::Fault,
                  KernelType kernel_type = KernelType::AIV_ONLY, pipes::Hazards hazards = pipes::Hazards::Off,
                  pipes::LaunchTimeline* timeline = nullptr);
    ~LaunchContext();

    uint32_t block_num() const { return block_num_; }
    KernelType kernel_type() const { return kernel_type_; }
    BlockCores cores() const { return block_cores(kernel_type_); }
    const std::vector<Region>& regions() const { return regions_; }
    bool warn_bounds() const { return bounds_ == Bounds::Warn; }
    pipes::Hazards hazards() const { return hazards_; }
    // Findings of the hazard check in this launch, every occurrence (a benchmark records none from a racing run).
    void found_hazard() { hazards_found_.fetch_add(1, std::memory_order_relaxed); }
    uint64_t hazards_found() const { return hazards_found_.load(std::memory_order_relaxed); }
    pipes::LaunchTimeline* timeline() const { return timeline_; }
    // A core's pipes are modelled if the launch checks hazards or keeps a timeline.
    bool models_pipes() const { return hazards_ != pipes::Hazards::Off || timeline_ != nullptr; }
    LaunchReport& report() { return report_; }
    bool aborting() const { return abort_.load(std::memory_order_relaxed); }
    void mark_written(size_t region) { written_[region].store(1, std::memory_order_relaxed); }
    bool written(size_t region) const { return written_[region].load(std::memory_order_relaxed) != 0; }

    // The region a GM pointer belongs to: the one it lies in (guard zone included); else the
    // nearest one that ends at most 16 x its size + 1 MiB below it (a pointer computed past the
    // end of an argument, whose accesses are then reported relative to that argument); else none (-1).
    long find_region(uintptr_t p) const;

    // Keeps the first error only; later ones (and the aborting blocks) are dropped.
    void record_error(const std::string& msg) noexcept;
    void abort() noexcept { abort_.store(true, std::memory_order_relaxed); }
    bool has_error() const { return has_error_.load(); }
    const std::string& error() const { return error_; }

private:
    uint32_t block_num_;
    std::vector<Region> regions_;
    std::vector<std::atomic<uint32_t>> written_;
    Bounds bounds_;
    KernelType kernel_type_;
    pipes::Hazards hazards_;
    pipes::LaunchTimeline* timeline_;
    std::atomic<uint64_t> hazards_found_{0};
    LaunchReport report_;
    std::atomic<bool> abort_{false};
    std::mutex mu_;
    std::atomic<bool> has_error_{false};
    std::string error_;
};

// Per-block state. The API headers keep their own sections here so that a block is self-contained.
// sync/buf_id.h: get_buf/rls_buf buffer IDs 0..31 (asc-devkit docs/zh/api/SIMD-API/C-API/sync/
// asc_lock.md: mutex_id in [0, 31]) and what one of a block's IDs is at.
constexpr int32_t kBufIdCount = 32;
struct BufIdState {
    int8_t holder = -1;         // the pipes::Pipe whose get_buf holds it (no rls_buf yet); -1: free
    bool non_blocking = false;  // the holder's get_buf mode (its rls_buf must match)
    bool released = false;      // an rls_buf released it: `release` is that signal
    Site site;                  // the kernel's statement of its last get_buf or rls_buf
    pipes::Stamp release;
};

struct BlockContext {
    LaunchContext* launch = nullptr;
    // The core: its type, GetBlockIdx (a vector core of a 1:2 mixed block b is 2b + sub_block_idx),
    // its index among its block's vector cores, and its block's cores (a mixed launch; else null).
    AscendC::CoreType core_type = AscendC::AIV;
    uint32_t block_idx = 0;
    uint32_t sub_block_idx = 0;
    CoreGroup* group = nullptr;
    uint8_t* ub = nullptr;  // kUbBytes, kUbAllocAlign-aligned
    // The cube memories (L1, L0A, L0B, L0C), each filled with the poison byte when first used.
    std::unique_ptr<uint8_t[]> cube_memory[kCubeMemoryCount];

    // The bytes of local memory `m` (memory_bytes(m) of them).
    uint8_t* local_memory(Memory m) {
        if (m == Memory::UB) return ub;
        uint8_t* mem = cube_memory[static_cast<uint32_t>(m) - 1].get();
        return mem != nullptr ? mem : first_use(m);
    }
    // A cube memory's allocation, poisoned (core/core.cpp).
    uint8_t* first_use(Memory m);

    // sync/intra_core.h: outstanding SetFlag count per (HardEvent, event ID): 0 or 1 normally;
    // negative while a WaitFlag waits for a SetFlag that comes later in program order.
    int8_t flags[kHardEventCount][kEventIdCount] = {};
    // The kernel's statement of each flag's last SetFlag or WaitFlag, which its findings name.
    Site flag_sites[kHardEventCount][kEventIdCount] = {};

    // framework/tpipe.h: the live TPipe (one at a time) and serial numbers that tie queues to it.
    const void* pipe = nullptr;
    uint32_t pipe_generation = 0;  // bumped by every TPipe construction/Reset/Destroy
    uint32_t next_queue_id = 1;
    // Which allocation each TQue buffer holds: buffer_serial[slot] is the serial of the AllocTensor
    // whose tensor may use it, 0 while it is free. A LocalTensor from a queue carries (slot, serial),
    // so a tensor used after FreeTensor (or after its TPipe's Reset) no longer matches. Slot 0: none.
    std::vector<uint32_t> buffer_serial = std::vector<uint32_t>(1, 0);
    uint32_t next_serial = 1;
    // The user tag (LocalTensor::SetUserTag) of each TQue/TBuf buffer, indexed by BufTag::handle;
    // TPipe::InitBuffer sets it to -1, as on the device. Handle 0: none.
    std::vector<int32_t> user_tags = std::vector<int32_t>(1, 0);
    // sync/buf_id.h: each get_buf/rls_buf buffer ID's holder and last release.
    BufIdState buf_ids[kBufIdCount];
    // Tensors allocated and not freed, per TPosition, across its queues (at most 8 on Atlas A2/A3).
    uint8_t allocated_on[kPositionSlots] = {};
    // TPipe::AllocEventID: bit i of event_ids_allocated[e] is event ID i of HardEvent e, held until
    // ReleaseEventID.
    uint8_t event_ids_allocated[kHardEventCount] = {};
    // framework/local_mem_allocator.h: a LocalMemAllocator<Hardware::UB> exists (one at a time, never
    // with a TPipe).
    bool ub_allocator_live = false;

    // vector/mask.h: the vector mask register and mode. Normal mode: bit i of (mask_hi:mask_lo) enables
    // element i of every repeat. Counter mode: mask_lo is the element count of the instruction.
    uint64_t mask_lo = ~uint64_t(0);
    uint64_t mask_hi = ~uint64_t(0);
    bool counter_mode = false;

    // vector/cmpsel.h: the 128-bit CmpMask register, as bytes (bit k = bit k % 8 of byte k / 8): written
    // by Compare without dst, SetCmpMask and Select, read by Select and GetCmpMask. Undefined until
    // then: the UB poison byte.
    uint8_t cmp_mask[16] = {kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison,
                            kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison, kUbPoison};
    // vector/gather.h: the elements the last GatherMask kept (GetGatherMaskRemainCount).
    uint64_t rsvd_cnt = 0;
    // vector/cast.h: the scale SetDeqScale(half) set (binary16 bits), read by Cast int32_t -> half and
    // AddDeqRelu; unset until the first SetDeqScale(half).
    uint16_t deq_scale = 0;
    bool deq_scale_set = false;
    // launch/report.h: what the block printed and the warnings it earned (handed to the launch at its end).
    BlockReport report;
    // pipes/model.h: the core's pipes (hazard check, modeled timeline); null if the launch models neither.
    std::unique_ptr<pipes::PipeModel> pipes;
};

inline thread_local BlockContext* tls_block = nullptr;

// The current block; stops it (by Aborted) if another block already failed.
// (Its two ways out are out of line, in core/core.cpp: enter() is inlined into every API call.)
[[noreturn]] __attribute__((cold)) void outside_launch();
[[noreturn]] __attribute__((cold)) void stop_block();
inline BlockContext& enter() {
    BlockContext* b = tls_block;
    if (b == nullptr) outside_launch();
    if (b->launch->aborting()) stop_block();
    return *b;
}

// A warning about `operand` of `api`: `message()` makes its text, only for the first of its kind
// in the block (a check in a loop stays cheap). Callers decide whether the policy allows going on.
template <typename Message>
void warn(BlockContext& b, const char* api, const char* operand, const Message& message) {
    b.report.warn(api, operand, message);
}

// A race or sync-hygiene finding of the pipe model: a warning, or with hazards "fault" the fault.
void hazard(BlockContext& b, const pipes::Finding& f);

// The pipe model's part of pipe_operand (b.pipes is set).
void modeled_operand(BlockContext& b, const char* api, const char* role, Memory m, uint64_t addr, uint64_t bytes);

// Operand `role` of instruction `api` touches `bytes` bytes of local memory `m` from `addr`: the
// pipe model sees it (one call per operand, after the operand's checks).
inline void pipe_operand(BlockContext& b, const char* api, const char* role, Memory m, uint64_t addr, uint64_t bytes) {
    if (b.pipes) modeled_operand(b, api, role, m, addr, bytes);
}

// How messages name a core: "block 3", or in a mixed launch "AIC 1" / "AIV 3" (GetBlockIdx on it).
std::string core_label(const BlockContext& b);

// Hex for UB offsets and byte ranges in messages.
std::string hex(uint64_t v);

}  // namespace ascrun

#pragma GCC visibility pop

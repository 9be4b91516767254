// ascrun cpu runtime: the out-of-line helpers of core/core.h (message formatting, faults, the pipe
// model's hook), compiled once per toolchain.
#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

namespace ascrun {

LaunchContext::LaunchContext(uint32_t block_num, std::vector<Region> regions, Bounds bounds, KernelType kernel_type,
                             pipes::Hazards hazards, pipes::LaunchTimeline* timeline)
    : block_num_(block_num), regions_(std::move(regions)), written_(regions_.size()), bounds_(bounds),
      kernel_type_(kernel_type), hazards_(hazards), timeline_(timeline) {
    for (auto& w : written_) w.store(0, std::memory_order_relaxed);
}

LaunchContext::~LaunchContext() = default;

long LaunchContext::find_region(uintptr_t p) const {
    long best = -1;
    for (size_t i = 0; i < regions_.size(); ++i) {
        const Region& r = regions_[i];
        if (p >= r.base && p - r.base < r.bytes + r.guard) return static_cast<long>(i);
        if (r.base <= p && (best < 0 || r.base > regions_[static_cast<size_t>(best)].base)) {
            best = static_cast<long>(i);
        }
    }
    if (best >= 0) {
        const Region& r = regions_[static_cast<size_t>(best)];
        const uint64_t past_end = p - r.base - r.bytes;
        if (past_end / 16 > r.bytes + (uint64_t(1) << 20) / 16) best = -1;
    }
    return best;
}

void LaunchContext::record_error(const std::string& msg) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mu_);
        if (!has_error_.exchange(true)) error_ = msg;
    } catch (...) {
        has_error_.store(true);  // out of memory while copying the message: reported without it
    }
    abort_.store(true, std::memory_order_relaxed);
}

uint8_t* BlockContext::first_use(Memory m) {
    std::unique_ptr<uint8_t[]>& mem = cube_memory[static_cast<uint32_t>(m) - 1];
    mem.reset(new uint8_t[memory_bytes(m)]);
    std::memset(mem.get(), kUbPoison, memory_bytes(m));
    return mem.get();
}

void outside_launch() {
    fault("an Ascend C API was called outside a kernel launch (call the kernel through ascrun_launch)");
}

void stop_block() { throw Aborted{}; }

std::string format(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    std::string out;
    if (n > 0) {
        out.resize(static_cast<size_t>(n) + 1);
        std::vsnprintf(&out[0], out.size(), fmt, ap2);
        out.resize(static_cast<size_t>(n));
    }
    va_end(ap2);
    return out;
}

void fault(std::string msg) { throw KernelFault(std::move(msg)); }

void hazard(BlockContext& b, const pipes::Finding& f) {
    if (b.launch->hazards() == pipes::Hazards::Fault) fault(f.message + " (hazards=\"fault\")");
    b.launch->found_hazard();
    warn(b, f.key_api, f.key_operand, [&] { return f.message; });
}

void modeled_operand(BlockContext& b, const char* api, const char* role, Memory m, uint64_t addr, uint64_t bytes) {
    pipes::Finding f;
    if (b.pipes->operand(api, role, static_cast<uint32_t>(m), addr, bytes, &f)) hazard(b, f);
}

std::string core_label(const BlockContext& b) {
    if (!b.launch->cores().mixed()) return "block " + std::to_string(b.block_idx);
    return (b.core_type == AscendC::AIC ? "AIC " : "AIV ") + std::to_string(b.block_idx);
}

std::string hex(uint64_t v) { return format("0x%llx", static_cast<unsigned long long>(v)); }

}  // namespace ascrun

#pragma GCC visibility pop

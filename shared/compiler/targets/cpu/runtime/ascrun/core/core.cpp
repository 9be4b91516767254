// ascrun cpu runtime: the out-of-line helpers of core/core.h (message formatting, faults, the pipe
// model's hook), compiled once per toolchain.
#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

namespace ascrun {

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

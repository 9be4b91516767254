// ascrun cpu runtime: the modeled timeline (pipes/timeline.h), compiled once per toolchain.
#include "ascrun/pipes/timeline.h"

#include <cstring>
#include <utility>

namespace ascrun {
namespace pipes {
namespace {

constexpr uint32_t kL0B = 3;  // the memory numbers of pipes/pipe.h: 0 UB, 1 L1, 2 L0A, 3 L0B, 4 L0C

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t cost(const Work& w) {
    switch (w.pipe) {
        case Pipe::S: return kScalarAccessCycles;
        case Pipe::V: return kVectorStartupCycles + ceil_div(w.bytes, kVectorBytesPerCycle);
        case Pipe::MTE2: return kMteStartupCycles + ceil_div(w.bytes, kMte2BytesPerCycle);
        case Pipe::MTE3: return kMteStartupCycles + ceil_div(w.bytes, kMte3BytesPerCycle);
        case Pipe::MTE1:
            return kMte1StartupCycles +
                   ceil_div(w.bytes, w.dst_memory == kL0B ? kMte1L0BBytesPerCycle : kMte1L0ABytesPerCycle);
        case Pipe::M: return kMmadStartupCycles + (w.macs_per_cycle == 0 ? 0 : ceil_div(w.macs, w.macs_per_cycle));
        case Pipe::FIX: return kFixStartupCycles + ceil_div(w.bytes, kFixBytesPerCycle);
        default: return 0;
    }
}

}  // namespace

void Timeline::run(const char* api, const Work& w) {
    const uint32_t p = idx(w.pipe);
    const uint64_t c = cost(w);
    ready_[kS] += kIssueCycles;
    path_[kS][kS] += kIssueCycles;
    const uint32_t after = ready_[p] >= ready_[kS] ? p : kS;
    const uint64_t start = ready_[after];
    if (after != p) std::memcpy(path_[p], path_[after], sizeof path_[p]);
    path_[p][p] += c;
    ready_[p] = start + c;
    out_.busy[p] += c;
    ++out_.instructions;
    if (out_.events.size() < kTraceEventsPerCore) out_.events.push_back(Event{static_cast<uint8_t>(p), api, start, start + c});
}

void Timeline::issue() {
    ready_[kS] += kIssueCycles;
    path_[kS][kS] += kIssueCycles;
}

void Timeline::signal(Pipe from, uint64_t* time, uint64_t (&path)[kPipes]) const {
    const uint32_t i = idx(from);
    const uint32_t at = ready_[i] >= ready_[kS] ? i : kS;  // it executes once its pipe is done
    *time = ready_[at];
    std::memcpy(path, path_[at], sizeof path);
}

void Timeline::wait(Pipe to, uint64_t time, const uint64_t (&path)[kPipes]) {
    const uint32_t i = idx(to);
    if (time > ready_[i]) {
        ready_[i] = time;
        std::memcpy(path_[i], path, sizeof path);
    }
}

void Timeline::barrier_all() {
    uint32_t last = 0;
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (ready_[p] > ready_[last]) last = p;
    }
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (p != last) {
            ready_[p] = ready_[last];
            std::memcpy(path_[p], path_[last], sizeof path_[p]);
        }
    }
}

CoreTimeline Timeline::finish() {
    uint32_t last = 0;
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (ready_[p] > ready_[last]) last = p;
    }
    out_.cycles = ready_[last];
    std::memcpy(out_.path, path_[last], sizeof out_.path);
    return std::move(out_);
}

}  // namespace pipes
}  // namespace ascrun

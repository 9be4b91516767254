// ascrun cpu runtime: the launch's output of the pipe model (pipes/model.h): its cores' timelines
// (pipes/timeline.h) as the model and trace JSON a launch returns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "ascrun/pipes/timeline.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace pipes {

// Bounds of what a launch returns (and kTraceEventsPerCore, pipes/timeline.h).
constexpr uint32_t kTraceCores = 8;      // cores in the trace (the lowest)
constexpr uint32_t kTimelineCores = 64;  // cores listed in the model

// A launch's cores' timelines, by their place in the launch (any thread, any order).
class LaunchTimeline {
public:
    void add(uint32_t order, const std::string& label, CoreTimeline t) {
        std::lock_guard<std::mutex> lock(mu_);
        if (cores_.size() >= kTimelineCores && order > cores_.rbegin()->first) {
            max_cycles_ = std::max(max_cycles_, t.cycles);
            ++unlisted_;
            return;
        }
        max_cycles_ = std::max(max_cycles_, t.cycles);
        cores_.emplace(order, Entry{label, std::move(t)});
        if (cores_.size() > kTimelineCores) {  // keep the lowest kTimelineCores
            cores_.erase(std::prev(cores_.end()));
            ++unlisted_;
        }
    }

    // {"cycles": the slowest core's, "clock_ghz": ..., "cores": [{"core", "cycles", "busy": {pipe:
    // cycles}, "critical_path": {pipe: cycles}, "instructions"}], "unlisted_cores": n}
    std::string model_json() const;
    // Chrome trace event format: a process per core, a thread per pipe, an "X" event per instruction.
    std::string trace_json() const;

private:
    struct Entry {
        std::string label;
        CoreTimeline t;
    };
    std::mutex mu_;
    std::map<uint32_t, Entry> cores_;
    uint64_t max_cycles_ = 0;
    uint64_t unlisted_ = 0;
};

}  // namespace pipes
}  // namespace ascrun

#pragma GCC visibility pop

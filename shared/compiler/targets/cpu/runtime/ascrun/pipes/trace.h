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
    void add(uint32_t order, const std::string& label, CoreTimeline t);

    // {"cycles": the slowest core's, "clock_ghz": ..., "cores": [{"core", "cycles", "busy": {pipe:
    // cycles}, "critical_path": {pipe: cycles}, "instructions"}], "unlisted_cores": n, "hazards": the
    // hazard check's findings}; "hazards" left out when `hazards` < 0 (the launch did not check).
    std::string model_json(int64_t hazards) const;
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

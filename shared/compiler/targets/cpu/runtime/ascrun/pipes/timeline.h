// ascrun cpu runtime: the modeled timeline of the pipe model (pipes/model.h): when each of a
// core's instructions runs, in cycles.
//
// Each instruction costs cycles on its pipe (pipes/costs.h: the constants and their sources); it
// starts when its pipe is free, the scalar unit has issued it, and what it waits for (a flag's
// SetFlag) is done. Per core: its cycles, each pipe's busy cycles, the critical path's cycles per
// pipe, and the instructions as trace events. Deterministic: it depends only on the instructions
// the kernel executed, never on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "ascrun/pipes/costs.h"
#include "ascrun/pipes/pipe.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace pipes {

constexpr uint32_t kTraceEventsPerCore = 2048;  // events per core in the trace; later ones are counted

// One trace event: an instruction's pipe, its API and its cycles.
struct Event {
    uint8_t pipe;
    const char* api;
    uint64_t start;
    uint64_t end;
};

// A core's results, handed to the launch when the core ends.
struct CoreTimeline {
    uint64_t cycles = 0;
    uint64_t busy[kPipes] = {};
    uint64_t path[kPipes] = {};
    uint64_t instructions = 0;
    std::vector<Event> events;  // the first kTraceEventsPerCore
};

// What an instruction's cost depends on.
struct Work {
    Pipe pipe = Pipe::V;
    uint64_t bytes = 0;  // its largest operand
    uint32_t dst_memory = 0;  // the memory it writes
    uint64_t macs = 0;
    uint32_t macs_per_cycle = 0;
};

// One core's pipes in cycles.
class Timeline {
public:
    // An instruction of API `api`: it runs on its pipe once the pipe is free and it is issued.
    void run(const char* api, const Work& w);
    // The scalar unit issues a SetFlag, WaitFlag or PipeBarrier (it takes an issue slot, no pipe).
    void issue();

    // Ordering: when a signal from `from` happens and the critical path up to it; a wait of `to`
    // for such a signal; PipeBarrier<PIPE_ALL>, which holds every pipe until the last is done.
    void signal(Pipe from, uint64_t* time, uint64_t (&path)[kPipes]) const;
    void wait(Pipe to, uint64_t time, const uint64_t (&path)[kPipes]);
    void barrier_all();

    // Closes the core: its timeline.
    CoreTimeline finish();

private:
    uint64_t ready_[kPipes] = {};
    uint64_t path_[kPipes][kPipes] = {};  // the critical path to ready_[p], in cycles per pipe
    CoreTimeline out_;
};

}  // namespace pipes
}  // namespace ascrun

#pragma GCC visibility pop

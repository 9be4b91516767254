// ascrun cpu runtime: the hazard check of the pipe model (pipes/model.h): races between a core's
// pipes that nothing orders.
//
// A vector clock per pipe says which instructions of the other pipes are known to have finished.
// Each byte range of the Unified Buffer and the cube memories remembers its last writer and, per
// pipe, its last reader (a map of ranges, split where accesses begin and end). An access ordered
// after neither is a race the device may lose (read-after-write, write-after-read,
// write-after-write), reported with both API calls, their pipes, the kernel's statement of the
// earlier one (core/site.h: the report names the later one's), the byte range and the flag that
// was missing. Policy (launch option): off, warn (result.warnings) or fault.
//
// Scalar instructions complete before the scalar unit issues the next instruction, so an S access
// is ordered before everything after it (the other direction needs a flag).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ascrun/core/site.h"
#include "ascrun/pipes/pipe.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace pipes {

enum class Hazards : uint32_t { Off = 0, Warn = 1, Fault = 2 };

// A race or sync-hygiene finding: the text, and the (api, operand) key BlockReport merges it by.
struct Finding {
    const char* key_api;
    const char* key_operand;
    std::string message;
};

// One core's clocks and shadow of its local memories.
class HazardCheck {
public:
    // The site (pipe and API, as messages name it, and the kernel's statement `where`) of
    // instruction `api` on pipe `p`: 0 for none.
    uint16_t site(Pipe p, const char* api, const Site& where);
    // A new instruction on pipe `p`: its clock moves on.
    void start(Pipe p);
    // The instruction on pipe `p` at `site` reads or writes `bytes` bytes of `memory` from `addr`.
    // Returns a finding if the access races (only the first per access).
    bool check(Pipe p, uint16_t site, uint32_t memory, uint64_t addr, uint64_t bytes, bool write, Finding* found);

    // Ordering: the clock a signal from `from` carries; a wait of `to` for such a clock;
    // PipeBarrier<PIPE_ALL>, which orders every pipe after everything before it.
    void signal(Pipe from, uint32_t (&clock)[kPipes]) const;
    void wait(Pipe to, const uint32_t (&clock)[kPipes]);
    void barrier_all();

private:
    // What a byte range of a local memory last saw: its writer and, per pipe, its last reader
    // (epoch: that pipe's instruction count; site: site_labels_ index, 0 for none).
    struct Access {
        uint32_t w_epoch = 0;
        uint16_t w_site = 0;
        uint8_t w_pipe = 0;
        uint32_t r_epoch[kPipes] = {};
        uint16_t r_site[kPipes] = {};
    };
    // Non-overlapping ranges [start, end) of one memory, by start; untouched bytes have none.
    struct Range {
        uint64_t end;
        Access a;
    };
    using Shadow = std::map<uint64_t, Range>;

    static Shadow::iterator split(Shadow& m, uint64_t at);
    const char* intern(std::string s);

    uint32_t clock_[kPipes][kPipes] = {};  // clock_[p][q]: the last instruction of q that p is ordered after
    Shadow shadow_[kMemories];
    struct SiteKey {
        uintptr_t api_pipe;  // api pointer x 8 + pipe
        Site where;
        bool operator==(const SiteKey& o) const { return api_pipe == o.api_pipe && where == o.where; }
    };
    struct SiteHash {
        size_t operator()(const SiteKey& k) const {
            return k.api_pipe ^ (k.where.n * 0x9e3779b97f4a7c15u);
        }
    };
    std::unordered_map<SiteKey, uint16_t, SiteHash> site_ids_;
    std::vector<std::string> site_labels_ = std::vector<std::string>(1, "?");
    std::vector<std::string> site_wheres_ = std::vector<std::string>(1);  // " at <file>:<line>", or ""
    std::set<std::string> interned_;  // finding keys: stable until the core's report is taken
};

}  // namespace pipes
}  // namespace ascrun

#pragma GCC visibility pop

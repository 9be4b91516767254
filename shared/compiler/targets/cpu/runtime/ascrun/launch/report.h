// ascrun cpu runtime: the launch's report, the text the kernel printed and the warnings it earned.
//
//  - BlockReport: one block's printf/DumpTensor records and warnings while it runs. A block keeps
//    at most kBlockLogBytes of text (a core's dump space in pyasc, ONE_CORE_DUMP_SIZE: past it
//    the device prints nothing more from that core), then one marker line. Warnings are
//    deduplicated by (statement, API, operand) with a count; at most kMaxWarnings distinct ones per block.
//  - LaunchReport: the blocks' logs in block order, cut to the first kLaunchLogBytes. Blocks end in
//    any order, so whenever more is kept than fits, the tail of the highest block is dropped: what
//    is kept is always the prefix (in block order) of what has ended, so the result does not
//    depend on the threads' timing, and memory stays bounded however much a kernel prints.
//    Warnings are merged across blocks by (statement, API, operand), which the kernel's code bounds: each
//    shows the lowest block's text, with how often and in how many blocks it happened; at most
//    kMaxWarnings lines, in the order of (lowest block, order within that block).
#pragma once
// The bodies of the non-template members are in launch/report.cpp (compiled once per toolchain).

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ascrun/core/site.h"

#pragma GCC visibility push(hidden)

namespace ascrun {

constexpr uint64_t kBlockLogBytes = uint64_t(1) << 20;   // text one block may print
constexpr uint64_t kLaunchLogBytes = uint64_t(4) << 20;  // text a launch returns
constexpr size_t kMaxWarnings = 100;                     // distinct warnings per block and per launch

class BlockReport {
public:
    // One printed record (a printf or a dump, in full or not at all, as the device's dump does).
    void print(const std::string& text) {
        if (log_full_) return;
        if (log_.size() + text.size() > kBlockLogBytes) {
            log_full_ = true;
            return;
        }
        log_ += text;
    }

    // A record too large for the block's dump space: it and every later one are dropped.
    void overflow() { log_full_ = true; }

    // Counts a warning about `operand` of `api` (both static or launch-lived strings) at the
    // kernel's current statement; the text, `message()`, is made only for the first of its kind, so
    // a warning in a loop stays cheap.
    template <typename Message>
    void warn(const char* api, const char* operand, const Message& message) {
        if (is_new_warning(api, operand)) add_warning(api, operand, message());
    }

private:
    friend class LaunchReport;
    // Counts the warning if it is known (or the block has kMaxWarnings): true if its text should be added.
    bool is_new_warning(const char* api, const char* operand);
    void add_warning(const char* api, const char* operand, std::string message);

    struct Warning {
        Site site;
        const char* api;
        const char* operand;
        std::string message;
        uint64_t count;
    };
    std::string log_;
    bool log_full_ = false;
    std::vector<Warning> warnings_;
    uint64_t more_warnings_ = 0;
};

class LaunchReport {
public:
    // Takes a core's report when it ends (any thread, any order). `order`: the core's place in the
    // launch (its block index, or for a mixed launch block x cores per block + its slot); `label`:
    // how messages name it ("block 3", or "AIC 1" and "AIV 3" in a mixed launch).
    void add(uint32_t order, const std::string& label, const BlockReport& r) noexcept;

    // The kept text, ending with a marker line if some was cut.
    std::string log() const;

    // One warning per line.
    std::string warnings() const;

private:
    void add_log(uint32_t order, const std::string& label, const BlockReport& r);
    void add_warnings(uint32_t order, const std::string& label, const BlockReport& r);

    struct Merged {
        uint32_t order;     // the first core it happened in
        std::string label;  // that core's name
        size_t seq;         // its place among that core's warnings
        std::string where;  // "<file>:<line>: " of its statement, or ""
        std::string message;
        uint64_t count;
        uint64_t cores;
    };

    std::mutex mu_;
    std::map<uint32_t, std::string> logs_;
    uint64_t log_bytes_ = 0;
    bool log_cut_ = false;
    std::map<std::string, Merged> warnings_;  // by (statement, API, operand)
    uint64_t dropped_warnings_ = 0;
};

}  // namespace ascrun

#pragma GCC visibility pop

// ascrun cpu runtime: the launch's report, the text the kernel printed and the warnings it earned.
//
//  - BlockReport: one block's printf/DumpTensor records and warnings while it runs. A block keeps
//    at most kBlockLogBytes of text (a core's dump space in pyasc, ONE_CORE_DUMP_SIZE: past it
//    the device prints nothing more from that core), then one marker line. Warnings are
//    deduplicated by (API, operand) with a count; at most kMaxWarnings distinct ones per block.
//  - LaunchReport: the blocks' logs in block order, cut to the first kLaunchLogBytes. Blocks end in
//    any order, so whenever more is kept than fits, the tail of the highest block is dropped: what
//    is kept is always the prefix (in block order) of what has ended, so the result does not
//    depend on the threads' timing, and memory stays bounded however much a kernel prints.
//    Warnings are merged across blocks by (API, operand), which the kernel's code bounds: each
//    shows the lowest block's text, with how often and in how many blocks it happened; at most
//    kMaxWarnings lines, in the order of (lowest block, order within that block).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

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

    // Counts a warning about `operand` of `api` (both static or launch-lived strings); the text,
    // `message()`, is made only for the first of its kind, so a warning in a loop stays cheap.
    template <typename Message>
    void warn(const char* api, const char* operand, const Message& message) {
        for (Warning& w : warnings_) {
            if (std::strcmp(w.api, api) == 0 && std::strcmp(w.operand, operand) == 0) {
                ++w.count;
                return;
            }
        }
        if (warnings_.size() >= kMaxWarnings) {
            ++more_warnings_;
            return;
        }
        warnings_.push_back(Warning{api, operand, message(), 1});
    }

private:
    friend class LaunchReport;
    struct Warning {
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
    void add(uint32_t order, const std::string& label, const BlockReport& r) noexcept {
        std::lock_guard<std::mutex> lock(mu_);
        try {
            add_log(order, label, r);
            add_warnings(order, label, r);
        } catch (...) {
            log_cut_ = true;  // out of memory: the report is shorter, the launch goes on
        }
    }

    // The kept text, ending with a marker line if some was cut.
    std::string log() const {
        std::string out;
        for (const auto& entry : logs_) out += entry.second;
        if (log_cut_) {
            const size_t line_end = out.rfind('\n');
            out.resize(line_end == std::string::npos ? 0 : line_end + 1);  // no half line
            out += "[ascrun] the log is cut at " + std::to_string(kLaunchLogBytes) + " bytes; the rest was dropped\n";
        }
        return out;
    }

    // One warning per line.
    std::string warnings() const {
        std::vector<const Merged*> order;
        for (const auto& entry : warnings_) order.push_back(&entry.second);
        std::sort(order.begin(), order.end(), [](const Merged* a, const Merged* b) {
            return a->order != b->order ? a->order < b->order : a->seq < b->seq;
        });
        std::string out;
        uint64_t more = dropped_warnings_;
        for (size_t i = 0; i < order.size(); ++i) {
            const Merged& w = *order[i];
            if (i >= kMaxWarnings) {
                ++more;
                continue;
            }
            out += w.label + ": " + w.message;
            if (w.cores > 1) {
                out += " (" + std::to_string(w.count) + " times in " + std::to_string(w.cores) +
                       " blocks; the first shown)";
            } else if (w.count > 1) {
                out += " (" + std::to_string(w.count) + " times; the first shown)";
            }
            out += '\n';
        }
        if (more > 0) out += "... and " + std::to_string(more) + " more warnings\n";
        return out;
    }

private:
    void add_log(uint32_t order, const std::string& label, const BlockReport& r) {
        if (r.log_.empty() && !r.log_full_) return;
        std::string text = r.log_;
        if (r.log_full_) {
            if (!text.empty() && text.back() != '\n') text += '\n';
            text += "[ascrun] " + label + " printed more than " +
                    std::to_string(kBlockLogBytes) + " bytes (a core's dump space); the rest of its output was "
                    "dropped\n";
        }
        std::string& slot = logs_[order];
        slot = std::move(text);
        log_bytes_ += slot.size();
        while (log_bytes_ > kLaunchLogBytes) {  // drop from the end of the highest block
            auto last = std::prev(logs_.end());
            const uint64_t excess = log_bytes_ - kLaunchLogBytes;
            log_cut_ = true;
            if (last->second.size() > excess) {
                last->second.resize(last->second.size() - excess);
                log_bytes_ -= excess;
            } else {
                log_bytes_ -= last->second.size();
                logs_.erase(last);
            }
        }
    }

    void add_warnings(uint32_t order, const std::string& label, const BlockReport& r) {
        dropped_warnings_ += r.more_warnings_;
        for (size_t i = 0; i < r.warnings_.size(); ++i) {
            const BlockReport::Warning& w = r.warnings_[i];
            std::string key = std::string(w.api) + '\0' + w.operand;
            auto found = warnings_.find(key);
            if (found == warnings_.end()) {
                warnings_.emplace(std::move(key), Merged{order, label, i, w.message, w.count, 1});
                continue;
            }
            Merged& m = found->second;
            m.count += w.count;
            m.cores += 1;
            if (order < m.order) {  // the first core's text, whatever order the cores end in
                m.order = order;
                m.label = label;
                m.seq = i;
                m.message = w.message;
            }
        }
    }

    struct Merged {
        uint32_t order;     // the first core it happened in
        std::string label;  // that core's name
        size_t seq;         // its place among that core's warnings
        std::string message;
        uint64_t count;
        uint64_t cores;
    };

    std::mutex mu_;
    std::map<uint32_t, std::string> logs_;
    uint64_t log_bytes_ = 0;
    bool log_cut_ = false;
    std::map<std::string, Merged> warnings_;  // by (API, operand)
    uint64_t dropped_warnings_ = 0;
};

}  // namespace ascrun

#pragma GCC visibility pop

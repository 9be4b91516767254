// ascrun cpu runtime: the report's non-template members (launch/report.h), compiled once per toolchain.
#include "ascrun/launch/report.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#pragma GCC visibility push(hidden)

namespace ascrun {

bool BlockReport::is_new_warning(const char* api, const char* operand) {
    for (Warning& w : warnings_) {
        if (w.site == tls_site && std::strcmp(w.api, api) == 0 && std::strcmp(w.operand, operand) == 0) {
            ++w.count;
            return false;
        }
    }
    if (warnings_.size() >= kMaxWarnings) {
        ++more_warnings_;
        return false;
    }
    return true;
}

void BlockReport::add_warning(const char* api, const char* operand, std::string message) {
    warnings_.push_back(Warning{tls_site, api, operand, std::move(message), 1});
}

void LaunchReport::add(uint32_t order, const std::string& label, const BlockReport& r) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    try {
        add_log(order, label, r);
        add_warnings(order, label, r);
    } catch (...) {
        log_cut_ = true;  // out of memory: the report is shorter, the launch goes on
    }
}

std::string LaunchReport::log() const {
    std::string out;
    for (const auto& entry : logs_) out += entry.second;
    if (log_cut_) {
        const size_t line_end = out.rfind('\n');
        out.resize(line_end == std::string::npos ? 0 : line_end + 1);  // no half line
        out += "[ascrun] the log is cut at " + std::to_string(kLaunchLogBytes) + " bytes; the rest was dropped\n";
    }
    return out;
}

std::string LaunchReport::warnings() const {
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
        out += w.where + w.label + ": " + w.message;
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

void LaunchReport::add_log(uint32_t order, const std::string& label, const BlockReport& r) {
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

void LaunchReport::add_warnings(uint32_t order, const std::string& label, const BlockReport& r) {
    dropped_warnings_ += r.more_warnings_;
    for (size_t i = 0; i < r.warnings_.size(); ++i) {
        const BlockReport::Warning& w = r.warnings_[i];
        const std::string where = w.site.known() ? w.site.text() + ": " : std::string();
        std::string key = where + '\0' + w.api + '\0' + w.operand;
        auto found = warnings_.find(key);
        if (found == warnings_.end()) {
            warnings_.emplace(std::move(key), Merged{order, label, i, where, w.message, w.count, 1});
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

}  // namespace ascrun

#pragma GCC visibility pop

// ascrun cpu runtime: the launch's model and trace JSON (pipes/trace.h), compiled once per toolchain.
#include "ascrun/pipes/trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <utility>

namespace ascrun {
namespace pipes {
namespace {

void json_string(std::string& out, const std::string& s) {
    out += '"';
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    out += '"';
}

void json_pipes(std::string& out, const uint64_t (&v)[kPipes]) {
    out += '{';
    bool first = true;
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (v[p] == 0) continue;
        if (!first) out += ", ";
        first = false;
        json_string(out, pipe_name(static_cast<Pipe>(p)));
        out += ": " + std::to_string(v[p]);
    }
    out += '}';
}

std::string micros(uint64_t cycles) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(cycles) / (kClockGhz * 1000.0));
    return buf;
}

}  // namespace

void LaunchTimeline::add(uint32_t order, const std::string& label, CoreTimeline t) {
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

std::string LaunchTimeline::model_json(int64_t hazards) const {
    std::string out = "{\"cycles\": " + std::to_string(max_cycles_) + ", \"clock_ghz\": " + std::to_string(kClockGhz) +
                      ", \"cores\": [";
    bool first = true;
    for (const auto& entry : cores_) {
        const CoreTimeline& t = entry.second.t;
        if (!first) out += ", ";
        first = false;
        out += "{\"core\": ";
        json_string(out, entry.second.label);
        out += ", \"cycles\": " + std::to_string(t.cycles) + ", \"instructions\": " + std::to_string(t.instructions) +
               ", \"busy\": ";
        json_pipes(out, t.busy);
        out += ", \"critical_path\": ";
        json_pipes(out, t.path);
        out += '}';
    }
    out += "], \"unlisted_cores\": " + std::to_string(unlisted_);
    if (hazards >= 0) out += ", \"hazards\": " + std::to_string(hazards);
    out += "}";
    return out;
}

std::string LaunchTimeline::trace_json() const {
    std::string out = "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"model\": \"ascrun cpu target, 910B-class cost model\", "
                      "\"clock_ghz\": " + std::to_string(kClockGhz) + "}, \"traceEvents\": [";
    bool first = true;
    auto sep = [&] {
        if (!first) out += ",\n";
        first = false;
    };
    uint32_t pid = 0;
    for (const auto& entry : cores_) {
        if (pid == kTraceCores) break;
        const CoreTimeline& t = entry.second.t;
        sep();
        out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + std::to_string(pid) + ", \"args\": {\"name\": ";
        json_string(out, entry.second.label);
        out += "}}";
        for (uint32_t p = 0; p < kPipes; ++p) {
            if (t.busy[p] == 0 && p != kS) continue;
            sep();
            out += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + std::to_string(pid) + ", \"tid\": " +
                   std::to_string(p) + ", \"args\": {\"name\": \"" + pipe_name(static_cast<Pipe>(p)) + "\"}}";
        }
        out.reserve(out.size() + t.events.size() * 200);
        for (const Event& e : t.events) {
            sep();
            out += "{\"name\": ";
            json_string(out, e.api);
            char buf[256];
            const double us = 1.0 / (kClockGhz * 1000.0);
            std::snprintf(buf, sizeof buf,
                          ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.4f, \"dur\": %.4f, "
                          "\"args\": {\"cycle\": %" PRIu64 ", \"cycles\": %" PRIu64 "}}",
                          pipe_name(static_cast<Pipe>(e.pipe)), pid, static_cast<unsigned>(e.pipe),
                          static_cast<double>(e.start) * us, static_cast<double>(e.end - e.start) * us, e.start,
                          e.end - e.start);
            out += buf;
        }
        if (t.instructions > t.events.size()) {
            sep();
            out += "{\"name\": \"" + std::to_string(t.instructions - t.events.size()) +
                   " more instructions not traced\", \"ph\": \"i\", \"s\": \"p\", \"pid\": " + std::to_string(pid) +
                   ", \"tid\": 0, \"ts\": " + micros(t.events.empty() ? 0 : t.events.back().end) + "}";
        }
        ++pid;
    }
    out += "]}";
    return out;
}

}  // namespace pipes
}  // namespace ascrun

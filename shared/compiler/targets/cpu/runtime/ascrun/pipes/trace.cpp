// ascrun cpu runtime: the launch's model and trace JSON (pipes/trace.h), compiled once per toolchain.
#include "ascrun/pipes/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <unordered_map>
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

// The trace's events, thousands per launch, are formatted by hand into a buffer: printf (its float
// formatting above all) was most of what a launch's timeline cost.
char* put(char* p, const char* s) {
    const size_t n = std::strlen(s);
    std::memcpy(p, s, n);
    return p + n;
}

char* put_uint(char* p, uint64_t v) { return std::to_chars(p, p + 20, v).ptr; }

// `cycles` in microseconds with 4 decimals, the text "%.4f" prints (at most 32 characters). At
// 1.85 GHz, 1e4 x cycles / 1850 = 200 x cycles / 37 is never nearer than 1/74 to a rounding tie,
// far more than a double's error below 2^40 cycles; past that, printf.
char* put_micros(char* p, uint64_t cycles) {
    static_assert(kClockGhz == 1.85, "the tie argument above is for 1.85 GHz");
    const double us = static_cast<double>(cycles) * (1.0 / (kClockGhz * 1000.0));
    if (cycles >= (uint64_t{1} << 40)) return p + std::snprintf(p, 33, "%.4f", us);
    const auto tenths_of_ns = static_cast<uint64_t>(std::llround(us * 1e4));
    p = put_uint(p, tenths_of_ns / 10000);
    *p = '.';
    uint64_t f = tenths_of_ns % 10000;
    for (int i = 4; i >= 1; --i, f /= 10) p[i] = static_cast<char>('0' + f % 10);
    return p + 5;
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
    std::unordered_map<const char*, std::string> names;  // an API's event start, by its name's pointer
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
            auto name = names.find(e.api);
            if (name == names.end()) {
                std::string quoted;
                json_string(quoted, e.api);
                name = names.emplace(e.api, "{\"name\": " + quoted).first;
            }
            out += name->second;
            char buf[320];  // the fixed text, 2 numbers of at most 20 characters and 2 of 32
            char* p = put(buf, ", \"cat\": \"");
            p = put(p, pipe_name(static_cast<Pipe>(e.pipe)));
            p = put(p, "\", \"ph\": \"X\", \"pid\": ");
            p = put_uint(p, pid);
            p = put(p, ", \"tid\": ");
            p = put_uint(p, e.pipe);
            p = put(p, ", \"ts\": ");
            p = put_micros(p, e.start);
            p = put(p, ", \"dur\": ");
            p = put_micros(p, e.end - e.start);
            p = put(p, ", \"args\": {\"cycle\": ");
            p = put_uint(p, e.start);
            p = put(p, ", \"cycles\": ");
            p = put_uint(p, e.end - e.start);
            p = put(p, "}}");
            out.append(buf, static_cast<size_t>(p - buf));
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

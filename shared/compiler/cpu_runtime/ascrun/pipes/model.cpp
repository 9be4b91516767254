// ascrun cpu runtime: the pipe model (pipes/model.h), compiled once per toolchain.
#include "ascrun/pipes/model.h"

#include <cinttypes>
#include <cstdio>

namespace ascrun {
namespace pipes {
namespace {

constexpr const char* kMemoryNames[5] = {"UB", "L1", "L0A", "L0B", "L0C"};

constexpr uint32_t idx(Pipe p) { return static_cast<uint32_t>(p); }
constexpr uint32_t kS = idx(Pipe::S);
constexpr uint32_t kL0B = 3;  // PipeModel::operand's memory numbers: 0 UB, 1 L1, 2 L0A, 3 L0B, 4 L0C

// The operands an instruction writes, by the runtime's role names (dst, dstTensor, dstList[i], the
// reductions' sumTensor/maxTensor, a scratch sharedTmpBuffer); the others it reads.
bool writes(const char* role) {
    return std::strncmp(role, "dst", 3) == 0 || std::strcmp(role, "sumTensor") == 0 ||
           std::strcmp(role, "maxTensor") == 0 || std::strcmp(role, "sharedTmpBuffer") == 0;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

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

// ---- hazards ---------------------------------------------------------------------------------------

uint16_t PipeModel::site(Pipe p, const char* api) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(api) * 8 + static_cast<uintptr_t>(p);
    const auto found = site_ids_.find(key);
    if (found != site_ids_.end()) return found->second;
    if (site_labels_.size() >= UINT16_MAX) return 0;
    site_labels_.push_back(std::string(pipe_name(p)) + " " + api);
    const auto id = static_cast<uint16_t>(site_labels_.size() - 1);
    site_ids_.emplace(key, id);
    return id;
}

const char* PipeModel::intern(std::string s) { return interned_.insert(std::move(s)).first->c_str(); }

// Makes `at` a range boundary (if a range spans it) and returns the first range at or after it.
PipeModel::Shadow::iterator PipeModel::split(Shadow& m, uint64_t at) {
    auto it = m.upper_bound(at);
    if (it != m.begin()) {
        auto prev = std::prev(it);
        if (prev->first < at && at < prev->second.end) {
            Range tail = prev->second;
            prev->second.end = at;
            return m.emplace_hint(it, at, tail);
        }
    }
    return it;
}

void PipeModel::open(const char* api, const char* role, Pipe p, uint16_t site) {
    close();
    is_open_ = true;
    open_ = Open{};
    open_.api = api;
    open_.pipe = p;
    open_.site = site;
    open_.roles[0] = role;
    open_.n_roles = 1;
    const uint32_t i = idx(p);
    if (i != kS) {  // the scalar unit's own accesses are done before it issues this
        for (uint32_t q = 0; q < kPipes; ++q) clock_[i][q] = std::max(clock_[i][q], clock_[kS][q]);
    }
    ++clock_[i][i];
}

bool PipeModel::operand(const char* api, const char* role, uint32_t memory, uint64_t addr, uint64_t bytes,
                        Finding* found) {
    auto known = apis_.find(api);
    if (known == apis_.end()) {
        const Pipe pipe = pipe_of(api);
        known = apis_.emplace(api, Api{pipe, pipe == Pipe::All ? uint16_t{0} : site(pipe, api)}).first;
    }
    const Pipe p = known->second.pipe;
    if (p == Pipe::All) {  // synchronizes itself: ordered with everything before and after it
        barrier_all();
        return false;
    }
    bool same = is_open_ && open_.api == api && open_.pipe == p && open_.n_roles < 8;
    for (uint32_t r = 0; same && r < open_.n_roles; ++r) same = std::strcmp(open_.roles[r], role) != 0;
    if (same) {
        open_.roles[open_.n_roles++] = role;
    } else {
        open(api, role, p, known->second.site);
    }
    open_.bytes = std::max(open_.bytes, bytes);
    const bool write = writes(role);
    if (write) open_.dst_memory = memory;
    if (hazards_ == Hazards::Off || pending_[idx(p)].any()) return false;
    return check(memory, addr, bytes, write, found);
}

bool PipeModel::scalar(const char* api, bool write, uint64_t addr, uint64_t bytes, Finding* found) {
    open(api, "element", Pipe::S, site(Pipe::S, api));
    if (hazards_ == Hazards::Off || pending_[kS].any()) return false;
    return check(0, addr, bytes, write, found);
}

bool PipeModel::check(uint32_t memory, uint64_t addr, uint64_t bytes, bool write, Finding* found) {
    if (bytes == 0) return false;
    Shadow& m = shadow_[memory];
    const uint32_t i = idx(open_.pipe);
    const uint64_t lo = addr, hi = addr + bytes;
    // every byte of [lo, hi) in exactly one range
    split(m, hi);
    auto it = split(m, lo);
    for (uint64_t at = lo; at < hi;) {
        if (it == m.end() || it->first > at) {  // a gap nothing touched yet
            const uint64_t end = it == m.end() ? hi : std::min(hi, it->first);
            it = m.emplace_hint(it, at, Range{end, Access{}});
        }
        at = it->second.end;
        ++it;
    }
    enum Kind { kNone, kRaw, kWar, kWaw };
    struct Conflict {
        Kind kind;
        uint32_t pipe;
        uint16_t site;
    };
    auto conflict = [&](const Access& a) -> Conflict {
        if (a.w_site != 0 && a.w_pipe != i && a.w_epoch > clock_[i][a.w_pipe]) {
            return {write ? kWaw : kRaw, a.w_pipe, a.w_site};
        }
        if (write) {
            for (uint32_t q = 0; q < kPipes; ++q) {
                if (q != i && a.r_site[q] != 0 && a.r_epoch[q] > clock_[i][q]) return {kWar, q, a.r_site[q]};
            }
        }
        return {kNone, 0, 0};
    };
    const auto first = m.find(lo), last = m.lower_bound(hi);
    bool raced = false;
    for (auto r = first; r != last && !raced; ++r) {
        const Conflict c = conflict(r->second.a);
        if (c.kind == kNone) continue;
        uint64_t end = r->second.end;
        for (auto n = std::next(r); n != last; ++n) {  // the same conflict on the ranges after it
            const Conflict d = conflict(n->second.a);
            if (d.kind != c.kind || d.pipe != c.pipe || d.site != c.site) break;
            end = n->second.end;
        }
        raced = true;
        const char* verb = c.kind == kRaw ? " reads " : " writes ";
        const char* prior = c.kind == kWar ? " read by " : " written by ";
        const std::string& cur = site_labels_[open_.site];
        const std::string& before = site_labels_[c.site];
        found->key_api = intern(cur + verb + kMemoryNames[memory]);
        found->key_operand = intern(std::string(prior + 1) + before);
        found->message = cur + verb + kMemoryNames[memory] + " [" + hex(r->first) + ", " + hex(end) + ")" + prior +
                         before + " with no " + pipe_name(static_cast<Pipe>(c.pipe)) + "->" + pipe_name(open_.pipe) +
                         " flag between them";
    }
    const uint32_t epoch = clock_[i][i];
    if (write) {  // one range, this write
        m.erase(first, last);
        Access a;
        a.w_epoch = epoch;
        a.w_site = open_.site;
        a.w_pipe = static_cast<uint8_t>(i);
        m.emplace(lo, Range{hi, a});
    } else {
        for (auto r = first; r != last; ++r) {
            r->second.a.r_epoch[i] = epoch;
            r->second.a.r_site[i] = open_.site;
        }
    }
    return raced;
}

// ---- ordering --------------------------------------------------------------------------------------

Stamp PipeModel::signal(Pipe from) {
    close();
    const uint32_t i = idx(from);
    ready_[kS] += kIssueCycles;  // the SetFlag itself
    path_[kS][kS] += kIssueCycles;
    Stamp s;
    std::memcpy(s.clock, clock_[i], sizeof s.clock);
    const uint32_t at = ready_[i] >= ready_[kS] ? i : kS;  // it executes once its pipe is done
    s.time = ready_[at];
    std::memcpy(s.path, path_[at], sizeof s.path);
    s.pending = pending_[i];
    return s;
}

void PipeModel::wait(Pipe to, const Stamp& s) {
    close();
    const uint32_t i = idx(to);
    ready_[kS] += kIssueCycles;  // the WaitFlag itself
    path_[kS][kS] += kIssueCycles;
    for (uint32_t q = 0; q < kPipes; ++q) clock_[i][q] = std::max(clock_[i][q], s.clock[q]);
    pending_[i] |= s.pending;
    if (s.time > ready_[i]) {
        ready_[i] = s.time;
        std::memcpy(path_[i], s.path, sizeof s.path);
    }
}

void PipeModel::barrier_all() {
    close();
    ready_[kS] += kIssueCycles;
    path_[kS][kS] += kIssueCycles;
    uint32_t joined[kPipes] = {};
    uint32_t last = 0;
    for (uint32_t p = 0; p < kPipes; ++p) {
        for (uint32_t q = 0; q < kPipes; ++q) joined[q] = std::max(joined[q], clock_[p][q]);
        if (ready_[p] > ready_[last]) last = p;
    }
    for (uint32_t p = 0; p < kPipes; ++p) {
        std::memcpy(clock_[p], joined, sizeof joined);
        if (p != last) {
            ready_[p] = ready_[last];
            std::memcpy(path_[p], path_[last], sizeof path_[p]);
        }
    }
}

bool PipeModel::hold(Pipe p, uint32_t key) {
    close();
    ready_[kS] += kIssueCycles;  // the WaitFlag itself
    path_[kS][kS] += kIssueCycles;
    pending_[idx(p)].set(key);
    return p != Pipe::S;
}

bool PipeModel::release(uint32_t key, Pipe from) {
    if (pending_[idx(from)].test(key)) return false;
    for (Pending& p : pending_) p.reset(key);
    for (Posted& slot : posted_flags_) slot.stamp.pending.reset(key);
    for (auto& entry : posted_queues_) entry.second.stamp.pending.reset(key);
    return true;
}

Pipe PipeModel::waiting() const {
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (pending_[p].any()) return static_cast<Pipe>(p);
    }
    return Pipe::All;
}

// ---- timeline --------------------------------------------------------------------------------------

uint64_t PipeModel::cost(const Open& o) const {
    switch (o.pipe) {
        case Pipe::S: return kScalarAccessCycles;
        case Pipe::V: return kVectorStartupCycles + ceil_div(o.bytes, kVectorBytesPerCycle);
        case Pipe::MTE2: return kMteStartupCycles + ceil_div(o.bytes, kMte2BytesPerCycle);
        case Pipe::MTE3: return kMteStartupCycles + ceil_div(o.bytes, kMte3BytesPerCycle);
        case Pipe::MTE1:
            return kMte1StartupCycles +
                   ceil_div(o.bytes, o.dst_memory == kL0B ? kMte1L0BBytesPerCycle : kMte1L0ABytesPerCycle);
        case Pipe::M: return kMmadStartupCycles + (o.macs_per_cycle == 0 ? 0 : ceil_div(o.macs, o.macs_per_cycle));
        case Pipe::FIX: return kFixStartupCycles + ceil_div(o.bytes, kFixBytesPerCycle);
        default: return 0;
    }
}

void PipeModel::close() {
    if (!is_open_) return;
    is_open_ = false;
    const uint32_t p = idx(open_.pipe);
    const uint64_t c = cost(open_);
    ready_[kS] += kIssueCycles;
    path_[kS][kS] += kIssueCycles;
    const uint32_t after = ready_[p] >= ready_[kS] ? p : kS;
    const uint64_t start = ready_[after];
    if (after != p) std::memcpy(path_[p], path_[after], sizeof path_[p]);
    path_[p][p] += c;
    ready_[p] = start + c;
    out_.busy[p] += c;
    ++out_.instructions;
    if (out_.events.size() < kTraceEventsPerCore) out_.events.push_back(Event{static_cast<uint8_t>(p), open_.api, start, start + c});
}

CoreTimeline PipeModel::finish() {
    close();
    uint32_t last = 0;
    for (uint32_t p = 0; p < kPipes; ++p) {
        if (ready_[p] > ready_[last]) last = p;
    }
    out_.cycles = ready_[last];
    std::memcpy(out_.path, path_[last], sizeof out_.path);
    return std::move(out_);
}

// ---- the launch's JSON -----------------------------------------------------------------------------

std::string LaunchTimeline::model_json() const {
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
    out += "], \"unlisted_cores\": " + std::to_string(unlisted_) + "}";
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

// ascrun cpu runtime: the pipe model (pipes.h), compiled once per toolchain.
#include "pipes.h"

#include <cinttypes>
#include <cstdio>

namespace ascrun {
namespace pipes {
namespace {

constexpr uint32_t kGranule = 32;  // bytes per shadow entry: the Unified Buffer's block
constexpr uint32_t kMemoryBytes[5] = {196608, 524288, 65536, 65536, 131072};  // UB, L1, L0A, L0B, L0C (core.h)
constexpr const char* kMemoryNames[5] = {"UB", "L1", "L0A", "L0B", "L0C"};

constexpr uint32_t idx(Pipe p) { return static_cast<uint32_t>(p); }
constexpr uint32_t kS = idx(Pipe::S);

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
    const auto key = std::make_pair(static_cast<uint8_t>(p), api);
    const auto found = site_ids_.find(key);
    if (found != site_ids_.end()) return found->second;
    if (site_labels_.size() >= UINT16_MAX) return 0;
    site_labels_.push_back(std::string(pipe_name(p)) + " " + api);
    const auto id = static_cast<uint16_t>(site_labels_.size() - 1);
    site_ids_.emplace(key, id);
    return id;
}

const char* PipeModel::intern(std::string s) { return interned_.insert(std::move(s)).first->c_str(); }

std::vector<PipeModel::Granule>& PipeModel::shadow(uint32_t memory) {
    std::vector<Granule>& s = shadow_[memory];
    if (s.empty()) s.assign(kMemoryBytes[memory] / kGranule, Granule{});
    return s;
}

void PipeModel::open(const char* api, const char* role, Pipe p) {
    close();
    is_open_ = true;
    open_ = Open{};
    open_.api = api;
    open_.pipe = p;
    open_.site = site(p, api);
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
    const Pipe p = pipe_of(api);
    if (p == Pipe::All) {  // synchronizes itself: ordered with everything before and after it
        barrier_all();
        return false;
    }
    bool same = is_open_ && open_.api == api && open_.pipe == p && open_.n_roles < 8;
    for (uint32_t r = 0; same && r < open_.n_roles; ++r) same = std::strcmp(open_.roles[r], role) != 0;
    if (same) {
        open_.roles[open_.n_roles++] = role;
    } else {
        open(api, role, p);
    }
    open_.bytes = std::max(open_.bytes, bytes);
    if (hazards_ == Hazards::Off || pending_[idx(p)].any()) return false;
    return check(memory, addr, bytes, writes(role), found);
}

bool PipeModel::scalar(const char* api, bool write, uint64_t addr, uint64_t bytes, Finding* found) {
    open(api, "element", Pipe::S);
    if (hazards_ == Hazards::Off || pending_[kS].any()) return false;
    return check(0, addr, bytes, write, found);
}

bool PipeModel::check(uint32_t memory, uint64_t addr, uint64_t bytes, bool write, Finding* found) {
    std::vector<Granule>& sh = shadow(memory);
    const uint32_t i = idx(open_.pipe);
    const uint64_t lo = addr / kGranule;
    const uint64_t hi = std::min<uint64_t>(ceil_div(addr + bytes, kGranule), sh.size());
    enum Kind { kNone, kRaw, kWar, kWaw };
    struct Conflict {
        Kind kind;
        uint32_t pipe;
        uint16_t site;
    };
    auto conflict = [&](const Granule& g) -> Conflict {
        if (g.w_site != 0 && g.w_pipe != i && g.w_epoch > clock_[i][g.w_pipe]) {
            return {write ? kWaw : kRaw, g.w_pipe, g.w_site};
        }
        if (write) {
            for (uint32_t q = 0; q < kPipes; ++q) {
                if (q != i && g.r_site[q] != 0 && g.r_epoch[q] > clock_[i][q]) return {kWar, q, g.r_site[q]};
            }
        }
        return {kNone, 0, 0};
    };
    bool raced = false;
    for (uint64_t g = lo; g < hi && !raced; ++g) {
        const Conflict c = conflict(sh[g]);
        if (c.kind == kNone) continue;
        uint64_t end = g + 1;
        while (end < hi) {
            const Conflict d = conflict(sh[end]);
            if (d.kind != c.kind || d.pipe != c.pipe || d.site != c.site) break;
            ++end;
        }
        raced = true;
        const char* verb = c.kind == kRaw ? " reads " : " writes ";
        const char* prior = c.kind == kWar ? " read by " : " written by ";
        const std::string& cur = site_labels_[open_.site];
        const std::string& before = site_labels_[c.site];
        const char* key_api = intern(cur + verb + kMemoryNames[memory]);
        const char* key_operand = intern(std::string(prior + 1) + before);
        found->key_api = key_api;
        found->key_operand = key_operand;
        found->message = cur + verb + kMemoryNames[memory] + " [" + hex(std::max(addr, g * kGranule)) + ", " +
                         hex(std::min(addr + bytes, end * kGranule)) + ")" + prior + before + " with no " +
                         pipe_name(static_cast<Pipe>(c.pipe)) + "->" + pipe_name(open_.pipe) +
                         " flag between them";
    }
    const uint32_t epoch = clock_[i][i];
    for (uint64_t g = lo; g < hi; ++g) {
        Granule& x = sh[g];
        if (write) {
            x = Granule{};
            x.w_epoch = epoch;
            x.w_site = open_.site;
            x.w_pipe = static_cast<uint8_t>(i);
        } else {
            x.r_epoch[i] = epoch;
            x.r_site[i] = open_.site;
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
    for (auto& entry : posted_) entry.second.stamp.pending.reset(key);
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
        case Pipe::MTE1: return ceil_div(o.bytes, kMte1BytesPerCycle);
        case Pipe::M: return o.macs_per_cycle == 0 ? 1 : std::max<uint64_t>(1, ceil_div(o.macs, o.macs_per_cycle));
        case Pipe::FIX: return ceil_div(o.bytes, kFixBytesPerCycle);
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
        for (const Event& e : t.events) {
            sep();
            out += "{\"name\": ";
            json_string(out, e.api);
            out += ", \"cat\": \"" + std::string(pipe_name(static_cast<Pipe>(e.pipe))) + "\", \"ph\": \"X\", \"pid\": " +
                   std::to_string(pid) + ", \"tid\": " + std::to_string(e.pipe) + ", \"ts\": " + micros(e.start) +
                   ", \"dur\": " + micros(e.end - e.start) + ", \"args\": {\"cycle\": " + std::to_string(e.start) +
                   ", \"cycles\": " + std::to_string(e.end - e.start) + "}}";
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

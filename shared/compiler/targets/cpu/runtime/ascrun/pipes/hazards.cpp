// ascrun cpu runtime: the hazard check (pipes/hazards.h), compiled once per toolchain.
#include "ascrun/pipes/hazards.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "ascrun/core/soc.h"

namespace ascrun {
namespace pipes {
namespace {

constexpr const char* kMemoryNames[kMemories] = {"UB", "L1", "L0A", "L0B", "L0C"};

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

}  // namespace

uint16_t HazardCheck::site(Pipe p, const char* api, const Site& where) {
    const SiteKey key{reinterpret_cast<uintptr_t>(api) * 8 + static_cast<uintptr_t>(p), where};
    const auto found = site_ids_.find(key);
    if (found != site_ids_.end()) return found->second;
    if (site_labels_.size() >= UINT16_MAX) return 0;
    site_labels_.push_back(std::string(pipe_name(p)) + " " + api);
    site_wheres_.push_back(where.known() ? " at " + where.text() : std::string());
    const auto id = static_cast<uint16_t>(site_labels_.size() - 1);
    site_ids_.emplace(key, id);
    return id;
}

const char* HazardCheck::intern(std::string s) { return interned_.insert(std::move(s)).first->c_str(); }

// Makes `at` a range boundary (if a range spans it) and returns the first range at or after it.
HazardCheck::Shadow::iterator HazardCheck::split(Shadow& m, uint64_t at) {
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

void HazardCheck::start(Pipe p) {
    const uint32_t i = idx(p);
    if (i != kS) {  // the scalar unit's own accesses are done before it issues this
        for (uint32_t q = 0; q < kPipes; ++q) clock_[i][q] = std::max(clock_[i][q], clock_[kS][q]);
    }
    ++clock_[i][i];
}

bool HazardCheck::check(Pipe p, uint16_t site, uint32_t memory, uint64_t addr, uint64_t bytes, bool write,
                        Finding* found) {
    if (bytes == 0) return false;
    Shadow& m = shadow_[memory];
    const uint32_t i = idx(p);
    const uint64_t lo = addr, hi = addr + bytes;
    // every byte of [lo, hi) in exactly one range; usually [lo, hi) is one already (the buffers of a
    // tile loop are accessed whole, again and again)
    auto first = m.find(lo);
    const bool whole = first != m.end() && first->second.end == hi;
    if (!whole) {
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
        first = m.find(lo);
    }
    const auto last = whole ? std::next(first) : m.lower_bound(hi);
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
        const std::string& cur = site_labels_[site];
        const std::string& before = site_labels_[c.site];
        found->key_api = intern(cur + verb + kMemoryNames[memory]);
        found->key_operand = intern(std::string(prior + 1) + before + site_wheres_[c.site]);
        found->message = cur + verb + kMemoryNames[memory] + " [" + hex(r->first) + ", " + hex(end) + ")" + prior +
                         before + site_wheres_[c.site] + " with no " + pipe_name(static_cast<Pipe>(c.pipe)) + "->" + pipe_name(p) +
                         (kNpuArch == 3510 ? " flag or get_buf/rls_buf pair of one buffer ID between them"
                                           : " flag between them");
    }
    const uint32_t epoch = clock_[i][i];
    if (write) {  // one range, this write
        Access a;
        a.w_epoch = epoch;
        a.w_site = site;
        a.w_pipe = static_cast<uint8_t>(i);
        if (whole) {
            first->second.a = a;
        } else {
            m.erase(first, last);
            m.emplace(lo, Range{hi, a});
        }
    } else {
        for (auto r = first; r != last; ++r) {
            r->second.a.r_epoch[i] = epoch;
            r->second.a.r_site[i] = site;
        }
    }
    return raced;
}

void HazardCheck::signal(Pipe from, uint32_t (&clock)[kPipes]) const {
    std::memcpy(clock, clock_[idx(from)], sizeof clock);
}

void HazardCheck::wait(Pipe to, const uint32_t (&clock)[kPipes]) {
    const uint32_t i = idx(to);
    for (uint32_t q = 0; q < kPipes; ++q) clock_[i][q] = std::max(clock_[i][q], clock[q]);
}

void HazardCheck::barrier_all() {
    uint32_t joined[kPipes] = {};
    for (uint32_t p = 0; p < kPipes; ++p) {
        for (uint32_t q = 0; q < kPipes; ++q) joined[q] = std::max(joined[q], clock_[p][q]);
    }
    for (uint32_t p = 0; p < kPipes; ++p) std::memcpy(clock_[p], joined, sizeof joined);
}

}  // namespace pipes
}  // namespace ascrun

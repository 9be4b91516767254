// ascrun cpu runtime: buffer-ID synchronization, get_buf/rls_buf (Ascend 950, __NPU_ARCH__ 3510), which
// pyasc's C310 code puts around each instruction in place of SetFlag/WaitFlag.
//
// Semantics: asc-devkit docs/zh/api/SIMD-API/基础API/同步控制/核内同步/Mutex(ISASI)/Lock.md and
// Unlock.md (Mutex::Lock/Unlock, which impl/basic_api/kernel_event.h GetBufInternal/RlsBufInternal and
// the C API's asc_lock/asc_unlock, impl/c_api/instr_impl/npu_arch_3510/sync_impl/, issue as
// get_buf/rls_buf(pipe, id, mode)):
//  - get_buf(pipe, id, 0) holds `pipe`'s later instructions until every rls_buf of `id` before it in
//    program order is done; mode 1 does not hold the pipe (asc_lock.md ASC_LOCK_NON_BLOCK);
//  - rls_buf(pipe, id, mode) releases `id` once `pipe`'s earlier instructions are done;
//  - pipes PIPE_S/V/M/MTE1/MTE2/MTE3/FIX (Lock.md table 1), IDs 0..31 (asc_lock.md);
//  - a pair is get_buf then rls_buf of one ID on one pipe with one mode, and pairs of one ID never
//    nest, whatever their pipes (asc_lock.md constraints: otherwise undefined on the device).
// A block runs its pipes in program order, so here a pair orders nothing itself; it feeds the pipe
// model as a SetFlag/WaitFlag does: an rls_buf signals from its pipe, the next get_buf of that ID
// waits for it (the hazard check's clocks and the timeline). Since pairs do not nest, each get_buf
// waits for one signal, the ID's last rls_buf: every earlier one is ordered before it.
// Faults: a bad pipe, ID or mode; an rls_buf without its get_buf; a get_buf of an ID still held; both
// on an arch other than 3510 (Atlas A2/A3 have no buffer IDs: Lock.md's products). An ID still held
// when the block ends is a hazard finding (check_buf_ids_at_end).
#pragma once

#include "ascrun/core/core.h"
#include "ascrun/sync/intra_core.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace sync {

inline const char* pipe_t_name(int64_t pipe) {
    static const char* const names[] = {"PIPE_S",    "PIPE_V",    "PIPE_M",  "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3",
                                        "PIPE_ALL",  "PIPE_MTE4", "PIPE_MTE5", "PIPE_V2", "PIPE_FIX"};
    return pipe >= 0 && pipe <= PIPE_FIX ? names[pipe] : "pipe_t(?)";
}

// The call as the kernel wrote it, for messages: "get_buf(PIPE_V, 2, 0)".
inline std::string buf_call(const char* api, pipe_t pipe, int64_t id, int64_t mode) {
    return format("%s(%s, %lld, %lld)", api, pipe_t_name(pipe), static_cast<long long>(id),
                  static_cast<long long>(mode));
}

// The pipe model's pipe of a get_buf/rls_buf, its arguments checked.
inline pipes::Pipe buf_pipe(const char* api, pipe_t pipe, int64_t id, int64_t mode) {
    if (kNpuArch != 3510) {
        fault(format("%s: buffer-ID synchronization (get_buf/rls_buf, Mutex::Lock/Unlock) is Ascend 950's "
                     "(__NPU_ARCH__ 3510); this kernel is built for %s, which has none",
                     buf_call(api, pipe, id, mode).c_str(), kArchName));
    }
    pipes::Pipe p = pipes::Pipe::All;
    switch (pipe) {
        case PIPE_S: p = pipes::Pipe::S; break;
        case PIPE_V: p = pipes::Pipe::V; break;
        case PIPE_M: p = pipes::Pipe::M; break;
        case PIPE_MTE1: p = pipes::Pipe::MTE1; break;
        case PIPE_MTE2: p = pipes::Pipe::MTE2; break;
        case PIPE_MTE3: p = pipes::Pipe::MTE3; break;
        case PIPE_FIX: p = pipes::Pipe::FIX; break;
        default:
            fault(format("%s: pipe %s has no buffer IDs (get_buf/rls_buf take PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, "
                         "PIPE_MTE2, PIPE_MTE3 or PIPE_FIX)",
                         buf_call(api, pipe, id, mode).c_str(), pipe_t_name(pipe)));
    }
    if (id < 0 || id >= kBufIdCount) {
        fault(format("%s: buffer ID %lld is out of range (buffer IDs are 0 to %d)", buf_call(api, pipe, id, mode).c_str(),
                     static_cast<long long>(id), kBufIdCount - 1));
    }
    if (mode != 0 && mode != 1) {
        fault(format("%s: mode %lld is neither 0 (block the pipe) nor 1 (do not block it)",
                     buf_call(api, pipe, id, mode).c_str(), static_cast<long long>(mode)));
    }
    return p;
}

// " (its get_buf at <file>:<line>)"-style mention of an ID's last call, or "".
inline std::string buf_site_text(const BufIdState& s, const char* what) {
    return s.site.known() ? format(" (%s at %s)", what, s.site.text().c_str()) : std::string();
}

// Run when a block's kernel body returns: an ID still held was never released (sync hygiene).
inline void check_buf_ids_at_end(BlockContext& b) {
    if (!b.pipes || b.launch->hazards() == pipes::Hazards::Off) return;
    for (int32_t id = 0; id < kBufIdCount; ++id) {
        const BufIdState& s = b.buf_ids[id];
        if (s.holder < 0) continue;
        tls_site = s.site;  // the finding is the get_buf's
        const char* pipe = pipes::pipe_name(static_cast<pipes::Pipe>(s.holder));
        pipes::Finding f;
        f.key_api = "get_buf";
        f.key_operand = "never released";  // one finding: the first ID is shown, the others counted
        f.message = format("get_buf(PIPE_%s, %d, %d) is never released: no rls_buf(PIPE_%s, %d, %d) follows it before "
                           "the kernel ends (a later get_buf of buffer ID %d would wait forever)",
                           pipe, id, s.non_blocking ? 1 : 0, pipe, id, s.non_blocking ? 1 : 0, id);
        hazard(b, f);
    }
}

}  // namespace sync
}  // namespace ascrun

inline void get_buf(pipe_t pipe, int64_t id, int64_t mode) {
    ascrun::BlockContext& b = ascrun::enter();
    const ascrun::pipes::Pipe p = ascrun::sync::buf_pipe("get_buf", pipe, id, mode);
    ascrun::BufIdState& s = b.buf_ids[id];
    if (s.holder >= 0) {
        ascrun::fault(ascrun::format(
            "%s: buffer ID %lld is still held by PIPE_%s%s with no rls_buf since: get_buf/rls_buf pairs of one ID may "
            "not nest, whatever their pipes (undefined on the device)",
            ascrun::sync::buf_call("get_buf", pipe, id, mode).c_str(), static_cast<long long>(id),
            ascrun::pipes::pipe_name(static_cast<ascrun::pipes::Pipe>(s.holder)),
            ascrun::sync::buf_site_text(s, "its get_buf").c_str()));
    }
    if (b.pipes && s.released && mode == 0) b.pipes->wait(p, s.release);
    s.holder = static_cast<int8_t>(p);
    s.non_blocking = mode == 1;
    s.site = ascrun::tls_site;
}

inline void rls_buf(pipe_t pipe, int64_t id, int64_t mode) {
    ascrun::BlockContext& b = ascrun::enter();
    const ascrun::pipes::Pipe p = ascrun::sync::buf_pipe("rls_buf", pipe, id, mode);
    ascrun::BufIdState& s = b.buf_ids[id];
    if (s.holder != static_cast<int8_t>(p)) {
        const std::string held = s.holder < 0 ? std::string("no get_buf holds it")
                                              : ascrun::format("PIPE_%s holds it%s",
                                                               ascrun::pipes::pipe_name(
                                                                   static_cast<ascrun::pipes::Pipe>(s.holder)),
                                                               ascrun::sync::buf_site_text(s, "get_buf").c_str());
        ascrun::fault(ascrun::format("%s: buffer ID %lld is not held by %s (%s): an rls_buf follows the get_buf of its "
                                     "ID on the same pipe (undefined on the device)",
                                     ascrun::sync::buf_call("rls_buf", pipe, id, mode).c_str(),
                                     static_cast<long long>(id), ascrun::sync::pipe_t_name(pipe), held.c_str()));
    }
    if (s.non_blocking != (mode == 1)) {
        ascrun::fault(ascrun::format("%s: mode %lld differs from its get_buf's %d%s (a pair has one mode; undefined "
                                     "on the device)",
                                     ascrun::sync::buf_call("rls_buf", pipe, id, mode).c_str(),
                                     static_cast<long long>(mode), s.non_blocking ? 1 : 0,
                                     ascrun::sync::buf_site_text(s, "get_buf").c_str()));
    }
    if (b.pipes) s.release = b.pipes->signal(p);
    s.released = true;
    s.holder = -1;
    s.site = ascrun::tls_site;
}

#pragma GCC visibility pop

// ascrun cpu runtime: the kernel-independent part of ascrun_launch (launch/launch.h). The toolchain
// compiles this file once per toolchain and links it into every kernel's library, so a kernel's
// build compiles only the kernel.
#include <cfenv>
#include <condition_variable>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <thread>

#include "kernel_operator.h"
#include "ascrun/sync/core_group.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace abi {
namespace {

// Writes "<a><b>" into err (NUL-terminated, truncated to err_cap bytes); never allocates.
int finish(char* err, uint32_t err_cap, int code, const char* a, const char* b = "") noexcept {
    if (err != nullptr && err_cap > 0) {
        size_t n = 0;
        for (const char* part : {a, b}) {
            for (; *part != '\0' && n + 1 < err_cap; ++part) err[n++] = *part;
        }
        err[n] = '\0';
    }
    return code;
}
int finish(char* err, uint32_t err_cap, int code, const std::string& msg) noexcept {
    return finish(err, err_cap, code, msg.c_str());
}

// "<file>:<line>: <core>: <what><detail>": the kernel's statement the core was running (none
// before the first, or in a kernel built without site calls).
void report(LaunchContext& lc, const std::string& core, const char* what, const char* detail = "") noexcept {
    try {
        const std::string where = tls_site.known() ? tls_site.text() + ": " : std::string();
        lc.record_error(where + core + ": " + what + detail);
    } catch (...) {
        lc.record_error(std::string());
    }
}

// A block's Unified Buffer: kUbBytes, kUbAllocAlign-aligned.
class UbAllocation {
public:
    UbAllocation()
        : p_(static_cast<uint8_t*>(::operator new(kUbBytes, std::align_val_t(kUbAllocAlign)))) {}
    ~UbAllocation() { ::operator delete(p_, std::align_val_t(kUbAllocAlign)); }
    UbAllocation(const UbAllocation&) = delete;
    UbAllocation& operator=(const UbAllocation&) = delete;
    uint8_t* get() const { return p_; }

private:
    uint8_t* p_;
};

// One core of a block on the calling thread: fresh context and UB contents, the default
// floating-point environment (round to nearest, no flush-to-zero, whatever the host process set),
// faults recorded, never throws. `order`: the core's place in the launch's report.
using Invoke = void (*)(void* const* args);

struct Core {
    AscendC::CoreType type;
    uint32_t block_idx;  // GetBlockIdx on it
    uint32_t sub_block_idx;
    uint32_t order;
};

void run_core(LaunchContext& lc, const Core& core, CoreGroup* group, uint8_t* ub, Invoke invoke,
              void* const* args) noexcept {
    std::fenv_t host_env;
    const bool env_saved = std::fegetenv(&host_env) == 0;
    std::fesetenv(FE_DFL_ENV);
    BlockContext ctx;
    ctx.launch = &lc;
    ctx.core_type = core.type;
    ctx.block_idx = core.block_idx;
    ctx.sub_block_idx = core.sub_block_idx;
    ctx.group = group;
    ctx.ub = ub;
    std::memset(ub, kUbPoison, kUbBytes);
    std::string label;
    try {
        label = core_label(ctx);
    } catch (...) {
        label = "a core";  // out of memory naming it
    }
    tls_block = &ctx;
    tls_site = Site{};
    bool ended = false;
    try {
        if (lc.models_pipes()) ctx.pipes.reset(new pipes::PipeModel(lc.hazards()));
        invoke(args);
        sync::check_block_end(ctx);
        sync::check_buf_ids_at_end(ctx);
        ended = true;
    } catch (const Aborted&) {
        // another core failed first
    } catch (const KernelFault& f) {
        report(lc, label, f.what());
    } catch (const std::exception& e) {
        report(lc, label, "the kernel threw a C++ exception: ", e.what());
    } catch (...) {
        report(lc, label, "the kernel threw an unknown exception");
    }
    tls_site = Site{};  // what follows is the launch's, not a statement's
    lc.report().add(core.order, label, ctx.report);  // what it printed up to its end or fault
    if (ended && lc.timeline() != nullptr) {
        try {
            lc.timeline()->add(core.order, label, ctx.pipes->finish());
        } catch (...) {
            report(lc, label, "ascrun: out of memory keeping the modeled timeline");
        }
    }
    tls_block = nullptr;
    if (group != nullptr) group->end(group->slot(ctx));  // after the fault is recorded: waiters see it
    if (env_saved) std::fesetenv(&host_env);
}

// Block `idx`: its one core on the calling thread, or (a mixed kernel type) its AIC there and each
// AIV on a thread of its own with its own Unified Buffer, all at once, as the device runs them.
void run_block(LaunchContext& lc, uint32_t idx, uint8_t* ub, Invoke invoke, void* const* args) noexcept {
    const BlockCores cores = lc.cores();
    if (!cores.mixed()) {
        const Core core{cores.aic > 0 ? AscendC::AIC : AscendC::AIV, idx, 0, idx};
        run_core(lc, core, nullptr, ub, invoke, args);
        return;
    }
    try {
        CoreGroup group(cores);
        std::vector<Core> aivs;
        for (uint32_t v = 0; v < cores.aiv; ++v) {
            aivs.push_back(Core{AscendC::AIV, idx * cores.aiv + v, v, idx * cores.total() + 1 + v});
            group.label[1 + v] = format("AIV %u", idx * cores.aiv + v);
        }
        group.label[0] = format("AIC %u", idx);
        std::vector<std::thread> threads;
        for (const Core& aiv : aivs) {
            try {
                threads.emplace_back([&lc, &group, aiv, invoke, args] {
                    try {
                        UbAllocation own;
                        run_core(lc, aiv, &group, own.get(), invoke, args);
                    } catch (...) {
                        lc.record_error("ascrun: out of memory allocating a vector core's Unified Buffer");
                        group.end(1 + aiv.sub_block_idx);
                    }
                });
            } catch (...) {
                lc.record_error(format("ascrun: could not start a thread for AIV %u", aiv.block_idx));
                group.end(1 + aiv.sub_block_idx);
            }
        }
        run_core(lc, Core{AscendC::AIC, idx, 0, idx * cores.total()}, &group, ub, invoke, args);
        for (auto& t : threads) t.join();
    } catch (...) {
        lc.record_error("ascrun: out of memory starting a block's cores");
    }
}

// Blocks 0..n-1 on up to kMaxConcurrentBlocks threads: with n <= that, one thread per block.
// Worker w runs blocks w, w+W, ... where W is the number of threads that could be started.
void run_blocks(LaunchContext& lc, Invoke invoke, void* const* args) {
    const uint32_t n = lc.block_num();
    const uint32_t want = n < kMaxConcurrentBlocks ? n : kMaxConcurrentBlocks;
    std::mutex m;
    std::condition_variable cv;
    bool open = false;
    uint32_t workers = 0;

    auto work = [&](uint32_t w, uint32_t count) noexcept {
        try {
            UbAllocation ub;
            for (uint64_t idx = w; idx < n; idx += count) {
                if (lc.aborting()) break;
                run_block(lc, static_cast<uint32_t>(idx), ub.get(), invoke, args);
            }
        } catch (...) {
            lc.record_error("ascrun: out of memory allocating a block's Unified Buffer");
        }
    };
    auto thread_main = [&](uint32_t w) noexcept {
        uint32_t count = 0;
        try {
            std::unique_lock<std::mutex> lock(m);
            cv.wait(lock, [&] { return open; });
            count = workers;
        } catch (...) {
            lc.record_error("ascrun: a block thread could not synchronize with the launch");
            return;
        }
        work(w, count);
    };

    std::vector<std::thread> threads;
    threads.reserve(want);
    for (uint32_t w = 0; w < want; ++w) {
        try {
            threads.emplace_back(thread_main, w);
        } catch (...) {
            break;  // fewer threads: the started ones take the remaining blocks
        }
    }
    {
        std::lock_guard<std::mutex> lock(m);
        workers = static_cast<uint32_t>(threads.size());
        open = true;
    }
    cv.notify_all();
    if (threads.empty()) work(0, 1);  // no thread at all: run the blocks here, in order
    for (auto& t : threads) t.join();
}

// A NUL-terminated malloc'd copy (NULL if empty or out of memory), for AscrunReport.
char* c_copy(const std::string& s, uint64_t* bytes) noexcept {
    *bytes = 0;
    if (s.empty()) return nullptr;
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p == nullptr) return nullptr;
    std::memcpy(p, s.c_str(), s.size() + 1);
    *bytes = s.size();
    return p;
}

}  // namespace

std::string join_codes(const char* const* codes, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) out += ',';
        out += codes[i];
    }
    return out;
}

void free_report(AscrunReport* report) noexcept {
    if (report == nullptr) return;
    std::free(report->log);
    std::free(report->warnings);
    std::free(report->model);
    std::free(report->trace);
    *report = AscrunReport{};
}

int launch(uint32_t nparams, Invoke invoke, KernelType kernel_type, uint32_t core_num, void** args, AscrunRegion* regions,
           uint32_t n_regions, uint32_t bounds, uint32_t hazards, uint32_t model, AscrunReport* report, char* err,
           uint32_t err_cap) noexcept {
    if (report != nullptr) *report = AscrunReport{};
    try {
        if (core_num == 0 || core_num > kMaxCoreNum) {
            return finish(err, err_cap, 2,
                          format("ascrun_launch: core_num must be 1 to %u, got %u", kMaxCoreNum, core_num));
        }
        if (nparams > 0 && args == nullptr) {
            return finish(err, err_cap, 2, format("ascrun_launch: args is NULL but the kernel has %u parameters", nparams));
        }
        for (uint32_t i = 0; i < nparams; ++i) {
            if (args[i] == nullptr) {
                return finish(err, err_cap, 2, format("ascrun_launch: args[%u] is NULL", i));
            }
        }
        if (n_regions > 0 && regions == nullptr) {
            return finish(err, err_cap, 2, format("ascrun_launch: regions is NULL but n_regions is %u", n_regions));
        }
        if (bounds > static_cast<uint32_t>(Bounds::Warn)) {
            return finish(err, err_cap, 2,
                          format("ascrun_launch: bounds must be 0 (fault) or 1 (warn), got %u", bounds));
        }
        if (hazards > static_cast<uint32_t>(pipes::Hazards::Fault)) {
            return finish(err, err_cap, 2,
                          format("ascrun_launch: hazards must be 0 (off), 1 (warn) or 2 (fault), got %u", hazards));
        }
        if (model > 1) return finish(err, err_cap, 2, format("ascrun_launch: model must be 0 or 1, got %u", model));
        if (report == nullptr) return finish(err, err_cap, 2, "ascrun_launch: report is NULL");
        std::vector<Region> regs;
        regs.reserve(n_regions);
        for (uint32_t i = 0; i < n_regions; ++i) {
            const AscrunRegion& r = regions[i];
            const uintptr_t base = reinterpret_cast<uintptr_t>(r.base);
            const uint64_t span = r.bytes + r.guard_bytes;
            if ((base == 0 && span > 0) || span < r.bytes || base + span < base) {
                return finish(err, err_cap, 2, format("ascrun_launch: region %u has an invalid range", i));
            }
            regs.push_back(Region{base, r.bytes, r.name != nullptr ? std::string(r.name) : format("#%u", i),
                                  r.guard_bytes});
        }
        pipes::LaunchTimeline timeline;
        LaunchContext lc(core_num, std::move(regs), static_cast<Bounds>(bounds), kernel_type,
                         static_cast<pipes::Hazards>(hazards), model != 0 ? &timeline : nullptr);
        run_blocks(lc, invoke, args);

        for (uint32_t i = 0; i < n_regions; ++i) regions[i].written = lc.written(i) ? 1u : 0u;
        report->log = c_copy(lc.report().log(), &report->log_bytes);
        report->warnings = c_copy(lc.report().warnings(), &report->warnings_bytes);
        if (model != 0 && !lc.has_error()) {
            const bool checked = lc.hazards() != pipes::Hazards::Off;
            report->model = c_copy(timeline.model_json(checked ? static_cast<int64_t>(lc.hazards_found()) : -1),
                                   &report->model_bytes);
            report->trace = c_copy(timeline.trace_json(), &report->trace_bytes);
        }
        if (lc.has_error()) {
            const std::string& e = lc.error();
            return finish(err, err_cap, 1, e.empty() ? "a block faulted (out of memory formatting the message)" : e.c_str());
        }
        return finish(err, err_cap, 0, "");
    } catch (const std::exception& e) {
        return finish(err, err_cap, 1, "ascrun_launch: runtime error: ", e.what());
    } catch (...) {
        return finish(err, err_cap, 1, "ascrun_launch: unknown runtime error");
    }
}

}  // namespace abi
}  // namespace ascrun

#pragma GCC visibility pop

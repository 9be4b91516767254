// ascrun cpu runtime: the launch ABI of a kernel shared library.
//
// The toolchain appends `ASCRUN_EXPORT_KERNEL(<kernel>)` to the generated source; it defines
//
//   extern "C" const char* ascrun_signature(void);
//       One code per kernel parameter, comma-separated: "ptr:<dtype>" for a pointer, "<dtype>" for
//       a scalar; dtype is float32 float16 bfloat16 float64 int8 uint8 int16 uint16 int32 uint32
//       int64 uint64 bool. Derived from the kernel's C++ type, e.g.
//       "ptr:float32,ptr:float32,ptr:float32,int32,ptr:uint64". A pointer to a struct (a pyasc
//       Struct parameter, which the kernel copies from GM byte by byte) is
//       "ptr:struct:<sizeof>:<alignof>"; its args[i] points at a void* to that many bytes.
//
//   extern "C" uint32_t ascrun_abi_version(void);
//       kAbiVersion (2): the layout of the structs and calls below. Version 1 (no such function)
//       had ascrun_launch(core_num, args, regions, n_regions, err, err_cap) and no guard_bytes.
//
//   extern "C" int ascrun_launch(uint32_t core_num, void** args, AscrunRegion* regions,
//                                uint32_t n_regions, uint32_t bounds, AscrunReport* report,
//                                char* err, uint32_t err_cap);
//       args[i] points at parameter i's value (for a pointer parameter: at a void* holding it).
//       regions are the tensor arguments; the kernel's GM accesses must stay inside them, and on
//       return regions[i].written is 1 if the kernel stored to region i, else 0.
//       bounds: 0 ("fault") every out-of-range access faults; 1 ("warn") an access past the end of
//       a region but inside the guard_bytes the caller allocated after it, or past a LocalTensor
//       but inside the Unified Buffer, is a warning and happens (core.h Bounds).
//       Runs blocks 0..core_num-1 (each on a thread with its own 192 KiB Unified Buffer), joins
//       them and returns 0; or 1 with the first fault ("block N: ...") in err (NUL-terminated,
//       truncated to err_cap bytes); or 2 with a message if the call itself is invalid.
//       With 0 or 1, *report holds what the blocks printed (printf, DumpTensor: report.h, in block
//       order, at most 4 MiB) and the warnings, one per line; both NUL-terminated, allocated by
//       the runtime (NULL, 0 if empty) and released with ascrun_free_report.
//
//   extern "C" void ascrun_free_report(AscrunReport* report);
#pragma once

#include <cfenv>
#include <cstdlib>
#include <condition_variable>
#include <initializer_list>
#include <new>
#include <thread>
#include <tuple>

#include "core.h"
#include "sync.h"

extern "C" {
struct AscrunRegion {
    void* base;
    uint64_t bytes;
    uint64_t guard_bytes;  // bytes after it the caller allocated as a guard zone (bounds "warn"), else 0
    const char* name;
    uint32_t written;  // out: 1 if the kernel stored to this region
};

struct AscrunReport {  // out
    char* log;
    uint64_t log_bytes;
    char* warnings;
    uint64_t warnings_bytes;
};
}

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace abi {

constexpr uint32_t kMaxCoreNum = 65535;
constexpr uint32_t kAbiVersion = 2;

template <typename T>
constexpr bool dependent_false_v = false;

template <typename T>
const char* dtype_code() {
    using U = typename std::remove_cv<T>::type;
    if constexpr (std::is_same<U, bool>::value) {
        return "bool";
    } else if constexpr (std::is_same<U, half>::value) {
        return "float16";
    } else if constexpr (std::is_same<U, bfloat16_t>::value) {
        return "bfloat16";
    } else if constexpr (std::is_same<U, float>::value) {
        return "float32";
    } else if constexpr (std::is_same<U, double>::value) {
        return "float64";
    } else if constexpr (std::is_integral<U>::value) {
        constexpr bool s = std::is_signed<U>::value;
        switch (sizeof(U)) {
            case 1: return s ? "int8" : "uint8";
            case 2: return s ? "int16" : "uint16";
            case 4: return s ? "int32" : "uint32";
            default: return s ? "int64" : "uint64";
        }
    } else {
        static_assert(dependent_false_v<T>, "ascrun: a kernel parameter has a type without a dtype code");
        return "";
    }
}

template <typename T>
std::string param_code() {
    if constexpr (std::is_pointer<T>::value) {
        using P = typename std::remove_cv<typename std::remove_pointer<T>::type>::type;
        if constexpr (std::is_class<P>::value && !std::is_same<P, half>::value && !std::is_same<P, bfloat16_t>::value) {
            // a pyasc Struct parameter (`__gm__ S*`): the caller sends exactly sizeof(S) bytes
            return format("ptr:struct:%zu:%zu", sizeof(P), alignof(P));
        } else {
            return std::string("ptr:") + dtype_code<P>();
        }
    } else {
        return dtype_code<T>();
    }
}

template <typename... A>
const char* signature(void (*)(A...)) {
    static const std::string sig = [] {
        const std::string codes[] = {std::string(), param_code<A>()...};
        std::string out;
        for (size_t i = 1; i < sizeof...(A) + 1; ++i) {
            if (i > 1) out += ',';
            out += codes[i];
        }
        return out;
    }();
    return sig.c_str();
}

template <typename T>
T load_arg(const void* cell) {
    if constexpr (std::is_pointer<T>::value) {
        void* p = nullptr;
        std::memcpy(&p, cell, sizeof(p));
        return static_cast<T>(p);
    } else if constexpr (std::is_same<typename std::remove_cv<T>::type, bool>::value) {
        uint8_t v = 0;  // any nonzero byte is true (a bool with another bit pattern would be UB)
        std::memcpy(&v, cell, 1);
        return v != 0;
    } else {
        T v;
        std::memcpy(static_cast<void*>(&v), cell, sizeof(T));
        return v;
    }
}

template <typename... A, size_t... I>
std::tuple<A...> load_args(void* const* args, std::index_sequence<I...>) {
    return std::tuple<A...>(load_arg<A>(args[I])...);
}

// Writes "<a><b>" into err (NUL-terminated, truncated to err_cap bytes); never allocates.
inline int finish(char* err, uint32_t err_cap, int code, const char* a, const char* b = "") noexcept {
    if (err != nullptr && err_cap > 0) {
        size_t n = 0;
        for (const char* part : {a, b}) {
            for (; *part != '\0' && n + 1 < err_cap; ++part) err[n++] = *part;
        }
        err[n] = '\0';
    }
    return code;
}
inline int finish(char* err, uint32_t err_cap, int code, const std::string& msg) noexcept {
    return finish(err, err_cap, code, msg.c_str());
}

inline void report(LaunchContext& lc, uint32_t block, const char* what, const char* detail = "") noexcept {
    try {
        lc.record_error(format("block %u: %s%s", block, what, detail));
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

// One block on the calling thread: fresh context and UB contents, the default floating-point
// environment (round to nearest, no flush-to-zero, whatever the host process set), faults
// recorded, never throws.
template <typename Body>
void run_block(LaunchContext& lc, uint32_t idx, uint8_t* ub, const Body& body) noexcept {
    std::fenv_t host_env;
    const bool env_saved = std::fegetenv(&host_env) == 0;
    std::fesetenv(FE_DFL_ENV);
    BlockContext ctx;
    ctx.launch = &lc;
    ctx.block_idx = idx;
    ctx.ub = ub;
    std::memset(ub, kUbPoison, kUbBytes);
    tls_block = &ctx;
    try {
        body();
        sync::check_block_end(ctx);
    } catch (const Aborted&) {
        // another block failed first
    } catch (const KernelFault& f) {
        report(lc, idx, f.what());
    } catch (const std::exception& e) {
        report(lc, idx, "the kernel threw a C++ exception: ", e.what());
    } catch (...) {
        report(lc, idx, "the kernel threw an unknown exception");
    }
    lc.report().add(idx, ctx.report);  // what it printed up to its end or fault
    tls_block = nullptr;
    if (env_saved) std::fesetenv(&host_env);
}

// Blocks 0..n-1 on up to kMaxConcurrentBlocks threads: with n <= that, one thread per block.
// Worker w runs blocks w, w+W, ... where W is the number of threads that could be started.
template <typename Body>
void run_blocks(LaunchContext& lc, const Body& body) {
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
                run_block(lc, static_cast<uint32_t>(idx), ub.get(), body);
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
inline char* c_copy(const std::string& s, uint64_t* bytes) noexcept {
    *bytes = 0;
    if (s.empty()) return nullptr;
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p == nullptr) return nullptr;
    std::memcpy(p, s.c_str(), s.size() + 1);
    *bytes = s.size();
    return p;
}

inline void free_report(AscrunReport* report) noexcept {
    if (report == nullptr) return;
    std::free(report->log);
    std::free(report->warnings);
    *report = AscrunReport{nullptr, 0, nullptr, 0};
}

template <typename... A>
int launch(void (*kernel)(A...), uint32_t core_num, void** args, AscrunRegion* regions, uint32_t n_regions,
           uint32_t bounds, AscrunReport* report, char* err, uint32_t err_cap) noexcept {
    if (report != nullptr) *report = AscrunReport{nullptr, 0, nullptr, 0};
    try {
        if (core_num == 0 || core_num > kMaxCoreNum) {
            return finish(err, err_cap, 2,
                          format("ascrun_launch: core_num must be 1 to %u, got %u", kMaxCoreNum, core_num));
        }
        constexpr size_t nparams = sizeof...(A);
        if (nparams > 0 && args == nullptr) {
            return finish(err, err_cap, 2, format("ascrun_launch: args is NULL but the kernel has %zu parameters", nparams));
        }
        for (size_t i = 0; i < nparams; ++i) {
            if (args[i] == nullptr) {
                return finish(err, err_cap, 2, format("ascrun_launch: args[%zu] is NULL", i));
            }
        }
        if (n_regions > 0 && regions == nullptr) {
            return finish(err, err_cap, 2, format("ascrun_launch: regions is NULL but n_regions is %u", n_regions));
        }
        if (bounds > static_cast<uint32_t>(Bounds::Warn)) {
            return finish(err, err_cap, 2,
                          format("ascrun_launch: bounds must be 0 (fault) or 1 (warn), got %u", bounds));
        }
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
        const std::tuple<A...> values = load_args<A...>(args, std::index_sequence_for<A...>{});

        LaunchContext lc(core_num, std::move(regs), static_cast<Bounds>(bounds));
        run_blocks(lc, [&] { std::apply(kernel, values); });

        for (uint32_t i = 0; i < n_regions; ++i) regions[i].written = lc.written(i) ? 1u : 0u;
        report->log = c_copy(lc.report().log(), &report->log_bytes);
        report->warnings = c_copy(lc.report().warnings(), &report->warnings_bytes);
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

#define ASCRUN_EXPORT_KERNEL(kernel)                                                                      \
    extern "C" __attribute__((visibility("default"))) const char* ascrun_signature(void) {               \
        return ::ascrun::abi::signature(&kernel);                                                        \
    }                                                                                                    \
    extern "C" __attribute__((visibility("default"))) uint32_t ascrun_abi_version(void) {                \
        return ::ascrun::abi::kAbiVersion;                                                               \
    }                                                                                                    \
    extern "C" __attribute__((visibility("default"))) int ascrun_launch(                                 \
        uint32_t core_num, void** args, AscrunRegion* regions, uint32_t n_regions, uint32_t bounds,      \
        AscrunReport* report, char* err, uint32_t err_cap) {                                             \
        return ::ascrun::abi::launch(&kernel, core_num, args, regions, n_regions, bounds, report, err,   \
                                     err_cap);                                                           \
    }                                                                                                    \
    extern "C" __attribute__((visibility("default"))) void ascrun_free_report(AscrunReport* report) {    \
        ::ascrun::abi::free_report(report);                                                              \
    }

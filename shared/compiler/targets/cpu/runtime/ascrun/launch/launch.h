// ascrun cpu runtime: the launch ABI of a kernel shared library (the kernel-independent part of
// ascrun_launch is in launch/launch.cpp).
//
// The toolchain appends `ASCRUN_EXPORT_KERNEL(<kernel>, <kernel type>)` to the generated source (the
// kernel type is pyasc's KernelType name, core/core.h KernelType); it defines
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
//       kAbiVersion (3): the layout of the structs and calls below. Version 2 had no hazards, model
//       and report model/trace; version 1 (no such function) had
//       ascrun_launch(core_num, args, regions, n_regions, err, err_cap) and no guard_bytes.
//
//   extern "C" int ascrun_launch(uint32_t core_num, void** args, AscrunRegion* regions,
//                                uint32_t n_regions, uint32_t bounds, uint32_t hazards,
//                                uint32_t model, AscrunReport* report, char* err, uint32_t err_cap);
//       args[i] points at parameter i's value (for a pointer parameter: at a void* holding it).
//       regions are the tensor arguments; the kernel's GM accesses must stay inside them, and on
//       return regions[i].written is 1 if the kernel stored to region i, else 0.
//       bounds: 0 ("fault") every out-of-range access faults; 1 ("warn") an access past the end of
//       a region but inside the guard_bytes the caller allocated after it, or past a LocalTensor
//       but inside the Unified Buffer, is a warning and happens (core/core.h Bounds).
//       hazards: 0 off, 1 warn, 2 fault: what the pipe model's races and sync-hygiene findings are
//       (pipes/hazards.h). model: 1 to return the modeled timeline (report model and trace), else 0.
//       Runs blocks 0..core_num-1, each core of a block (one AIV, one AIC, or for a mixed kernel type
//       an AIC and one or two AIVs, all at once) on a thread with its own Unified Buffer (core/soc.h kUbBytes); joins
//       them and returns 0; or 1 with the first fault ("block N: ...") in err (NUL-terminated,
//       truncated to err_cap bytes); or 2 with a message if the call itself is invalid.
//       With 0 or 1, *report holds what the blocks printed (printf, DumpTensor: launch/report.h, in block
//       order, at most 4 MiB) and the warnings, one per line; with model 1 and 0 returned, the model's
//       figures and trace (JSON, pipes/trace.h LaunchTimeline); all NUL-terminated, allocated by the
//       runtime (NULL, 0 if empty) and released with ascrun_free_report.
//
//   extern "C" void ascrun_free_report(AscrunReport* report);
#pragma once

#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include "ascrun/core/core.h"

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
    char* model;  // the modeled timeline's figures (JSON), if asked for
    uint64_t model_bytes;
    char* trace;  // its instructions as a Chrome trace (JSON), if asked for
    uint64_t trace_bytes;
};
}

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace abi {

constexpr uint32_t kMaxCoreNum = 65535;
constexpr uint32_t kAbiVersion = 3;

template <typename T>
constexpr bool dependent_false_v = false;

// The code of a pointer to T ("ptr:float32"); dtype_code<T>() is its tail (string literals, so
// nothing is built at run time).
template <typename T>
const char* pointer_code() {
    using U = typename std::remove_cv<T>::type;
    if constexpr (std::is_same<U, bool>::value) {
        return "ptr:bool";
    } else if constexpr (std::is_same<U, half>::value) {
        return "ptr:float16";
    } else if constexpr (std::is_same<U, bfloat16_t>::value) {
        return "ptr:bfloat16";
    } else if constexpr (std::is_same<U, float>::value) {
        return "ptr:float32";
    } else if constexpr (std::is_same<U, double>::value) {
        return "ptr:float64";
    } else if constexpr (std::is_integral<U>::value) {
        constexpr bool s = std::is_signed<U>::value;
        switch (sizeof(U)) {
            case 1: return s ? "ptr:int8" : "ptr:uint8";
            case 2: return s ? "ptr:int16" : "ptr:uint16";
            case 4: return s ? "ptr:int32" : "ptr:uint32";
            default: return s ? "ptr:int64" : "ptr:uint64";
        }
    } else {
        static_assert(dependent_false_v<T>, "ascrun: a kernel parameter has a type without a dtype code");
        return "";
    }
}

template <typename T>
const char* dtype_code() {
    return pointer_code<T>() + 4;  // past "ptr:"
}

// A parameter's code, in storage that lives as long as the library.
template <typename T>
const char* param_code() {
    if constexpr (std::is_pointer<T>::value) {
        using P = typename std::remove_cv<typename std::remove_pointer<T>::type>::type;
        if constexpr (std::is_class<P>::value && !std::is_same<P, half>::value && !std::is_same<P, bfloat16_t>::value) {
            // a pyasc Struct parameter (`__gm__ S*`): the caller sends exactly sizeof(S) bytes
            static const std::string code = format("ptr:struct:%zu:%zu", sizeof(P), alignof(P));
            return code.c_str();
        } else {
            return pointer_code<P>();
        }
    } else {
        return dtype_code<T>();
    }
}

// (launch/launch.cpp) the codes joined by commas.
std::string join_codes(const char* const* codes, size_t n);

template <typename... A>
const char* signature(void (*)(A...)) {
    static const std::string sig = [] {
        const char* const codes[] = {"", param_code<A>()...};
        return join_codes(codes + 1, sizeof...(A));
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

// The kernel's parameters loaded from args, then the kernel called (once per block).
template <typename... A>
void call(void (*kernel)(A...), void* const* args) {
    std::apply(kernel, load_args<A...>(args, std::index_sequence_for<A...>{}));
}

template <typename... A>
constexpr uint32_t param_count(void (*)(A...)) {
    return sizeof...(A);
}

// The kernel-independent rest of ascrun_launch, compiled once per toolchain (launch/launch.cpp) rather
// than in every kernel: checks the call, runs blocks 0..core_num-1 (each core of a block of
// kernel_type calling invoke(args)),
// fills regions' written flags and the report.
int launch(uint32_t nparams, void (*invoke)(void* const* args), KernelType kernel_type, uint32_t core_num, void** args,
           AscrunRegion* regions, uint32_t n_regions, uint32_t bounds, uint32_t hazards, uint32_t model,
           AscrunReport* report, char* err, uint32_t err_cap) noexcept;
void free_report(AscrunReport* report) noexcept;

}  // namespace abi
}  // namespace ascrun

#pragma GCC visibility pop

#define ASCRUN_EXPORT_KERNEL(kernel, kernel_type)                                                         \
    extern "C" __attribute__((visibility("default"))) const char* ascrun_signature(void) {               \
        return ::ascrun::abi::signature(&kernel);                                                        \
    }                                                                                                    \
    extern "C" __attribute__((visibility("default"))) uint32_t ascrun_abi_version(void) {                \
        return ::ascrun::abi::kAbiVersion;                                                               \
    }                                                                                                    \
    extern "C" __attribute__((visibility("default"))) int ascrun_launch(                                 \
        uint32_t core_num, void** args, AscrunRegion* regions, uint32_t n_regions, uint32_t bounds,      \
        uint32_t hazards, uint32_t model, AscrunReport* report, char* err, uint32_t err_cap) {           \
        return ::ascrun::abi::launch(                                                                    \
            ::ascrun::abi::param_count(&kernel), [](void* const* a) { ::ascrun::abi::call(&kernel, a); }, \
            ::ascrun::KernelType::kernel_type, core_num, args, regions, n_regions, bounds, hazards, model, \
            report, err, err_cap);                                                                       \
    }                                                                                                    \
    extern "C" __attribute__((visibility("default"))) void ascrun_free_report(AscrunReport* report) {    \
        ::ascrun::abi::free_report(report);                                                              \
    }

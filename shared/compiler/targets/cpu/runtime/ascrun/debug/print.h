// ascrun cpu runtime: on-board printing: printf/PRINTF, DumpTensor (with ShapeInfo), DumpAccChkPoint,
// PrintTimeStamp. Each call appends one record to the block's report (launch/report.h); the launch
// returns the records of all blocks in block order, as the host prints them after an NPU run.
//
// Reference: 上板打印/printf.md (and Utils-API printf), DumpTensor.md, DumpAccChkPoint.md,
// PrintTimeStamp.md, 辅助数据结构/ShapeInfo.md; how the device encodes a record: the asc-devkit
// impl (impl/utils/debug/asc_aicore_printf_impl.h, asc_aicore_dump_impl.h).
//  - printf: the text is prefixed "[AIV Block <idx>/<num>] " (the impl prepends it to the format of
//    every vector-core printf). Every argument travels as a 64-bit slot: integers sign- or zero-
//    extended, half/float/bfloat16_t as float, strings by value, pointers as addresses; the
//    conversions the reference lists (d i u x f F s p, with flags, width, precision and l/ll) print
//    that slot, so %x of a negative int prints 64 bits. Anything else faults: another conversion,
//    a count of arguments other than the conversions', a float for an integer conversion or back.
//    double arguments do not compile (as on the device).
//  - DumpTensor / DumpAccChkPoint: "DumpTensor: desc=D, addr=0x.., data_type=T, position=UB|GM,
//    dump_size=N" then the elements in brackets ("%f" for half/float/bfloat16_t, decimal for
//    integers), shaped by a ShapeInfo when one is given ("-" where dumpSize is short). addr is the
//    UB offset, or for GM the byte offset in its tensor argument (the device prints its own GM
//    address). A dump of more than 30 KB prints nothing (a warning says so); dumpSize 0 prints nothing.
//  - PrintTimeStamp prints only when the kernel is built with -DASCENDC_TIME_STAMP_ON, which
//    pyasc does not pass: a no-op.
#pragma once

#include <algorithm>
#include <cctype>

#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace debug {

constexpr uint64_t kMaxDumpBytes = 30 * 1024;  // a single DumpTensor / DumpAccChkPoint
constexpr uint32_t kMaxFieldWidth = 4096;       // printf width and precision (no record is that wide)

// One printf argument as the device's 64-bit slot holds it.
struct Slot {
    enum Kind : uint8_t { Int, Uint, Float, Str, Ptr } kind;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    const char* s = nullptr;
};

template <typename T>
constexpr bool dependent_false_v = false;

template <typename A>
Slot slot(const A& a) {
    using U = typename std::remove_cv<A>::type;
    Slot v{};
    if constexpr (std::is_array<U>::value) {
        static_assert(std::is_same<typename std::remove_cv<typename std::remove_extent<U>::type>::type, char>::value,
                      "printf: an array argument must be a string");
        v.kind = Slot::Str;
        v.s = a;
    } else if constexpr (std::is_same<U, half>::value || std::is_same<U, bfloat16_t>::value ||
                         std::is_same<U, float>::value) {
        v.kind = Slot::Float;
        v.f = static_cast<float>(a);
    } else if constexpr (std::is_same<U, double>::value) {
        static_assert(dependent_false_v<A>, "printf: double is not supported (the device prints half, float and "
                                            "bfloat16_t)");
    } else if constexpr (std::is_pointer<U>::value) {
        if constexpr (std::is_same<typename std::remove_cv<typename std::remove_pointer<U>::type>::type, char>::value) {
            v.kind = Slot::Str;
            v.s = a;
        } else {
            v.kind = Slot::Ptr;
            v.u = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(a));
        }
    } else if constexpr (std::is_enum<U>::value) {
        v.kind = Slot::Uint;
        v.u = static_cast<uint64_t>(a);
    } else if constexpr (std::is_integral<U>::value && std::is_signed<U>::value) {
        v.kind = Slot::Int;
        v.i = static_cast<int64_t>(a);
    } else if constexpr (std::is_integral<U>::value) {
        v.kind = Slot::Uint;
        v.u = static_cast<uint64_t>(a);
    } else {
        static_assert(dependent_false_v<A>, "printf: arguments must be integers, half/float/bfloat16_t, strings or "
                                            "pointers");
    }
    return v;
}

// snprintf with a format built at run time (one conversion, checked by the caller).
template <typename V>
void append(std::string& out, const std::string& spec, V value) {
    char small[128];
    const int n = std::snprintf(small, sizeof small, spec.c_str(), value);
    if (n < 0) fault("printf: the C library could not format a conversion");
    if (static_cast<size_t>(n) < sizeof small) {
        out.append(small, static_cast<size_t>(n));
        return;
    }
    std::string big(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(&big[0], big.size(), spec.c_str(), value);
    out.append(big.data(), static_cast<size_t>(n));
}

// The device's printf: `fmt` with `args` substituted, by the rules in this header's comment.
inline std::string format_printf(const char* fmt, const Slot* args, size_t nargs) {
    std::string out;
    size_t used = 0;
    auto bad = [&](const std::string& what) {
        std::string shown;  // the format as written in the source: escapes shown, not applied
        for (const char* c = fmt; *c != '\0'; ++c) {
            const unsigned char u = static_cast<unsigned char>(*c);
            shown += *c == '\n' ? std::string("\\n") : *c == '"' || *c == '\\' ? std::string("\\") + *c
                     : u < 0x20 ? format("\\x%02x", u) : std::string(1, *c);
        }
        fault(format("printf(\"%s\"): %s", shown.c_str(), what.c_str()));
    };
    for (const char* p = fmt; *p != '\0';) {
        if (*p != '%') {
            out += *p++;
            continue;
        }
        ++p;
        if (*p == '%') {
            out += '%';
            ++p;
            continue;
        }
        std::string spec = "%";
        std::string flags;
        while (*p != '\0' && std::strchr("-+ #0", *p) != nullptr) flags += *p++;
        spec += flags;
        auto number = [&](const char* what) {  // a width or precision: digits only
            uint32_t value = 0;
            while (std::isdigit(static_cast<unsigned char>(*p))) {
                value = value * 10 + static_cast<uint32_t>(*p - '0');
                if (value > kMaxFieldWidth) bad(format("a field %s over %u", what, kMaxFieldWidth));
                spec += *p++;
            }
            if (*p == '*') bad(format("a %s taken from the arguments (*) is not supported by the device", what));
        };
        number("width");
        if (*p == '.') {
            spec += *p++;
            number("precision");
        }
        for (int l = 0; l < 2 && *p == 'l'; ++l) ++p;  // every slot is 64-bit: %ld, %lld are %d
        const char conv = *p;
        if (conv == '\0') bad("the format ends inside a conversion");
        ++p;
        if (std::strchr("diuxfFsp", conv) == nullptr) {
            bad(format("%%%c is not a conversion the device supports (d i u x f F s p, with l or ll)", conv));
        }
        // flags C leaves undefined for the conversion (e.g. %#d, %0s)
        const char* allowed = conv == 'x' || conv == 'f' || conv == 'F' ? "-+ #0"
                              : conv == 's' || conv == 'p'              ? "-"
                                                                        : "-+ 0";
        for (char f : flags) {
            if (std::strchr(allowed, f) == nullptr) bad(format("flag '%c' is not defined for %%%c", f, conv));
        }
        if (used == nargs) bad(format("more conversions than the %zu arguments", nargs));
        const Slot& a = args[used++];
        const bool integer = a.kind == Slot::Int || a.kind == Slot::Uint;
        auto expect = [&](bool ok, const char* kind) {
            if (!ok) bad(format("conversion %zu (%%%c) takes %s", used, conv, kind));
        };
        switch (conv) {
            case 'd':
            case 'i':
                expect(integer, "an integer");
                append(out, spec + "lld",
                       static_cast<long long>(a.kind == Slot::Int ? a.i : static_cast<int64_t>(a.u)));
                break;
            case 'u':
            case 'x':
                expect(integer, "an integer");
                append(out, spec + (conv == 'u' ? "llu" : "llx"),
                       static_cast<unsigned long long>(a.kind == Slot::Int ? static_cast<uint64_t>(a.i) : a.u));
                break;
            case 'f':
            case 'F':
                expect(a.kind == Slot::Float, "a half, float or bfloat16_t");
                append(out, spec + conv, a.f);
                break;
            case 's':
                expect(a.kind == Slot::Str && a.s != nullptr, "a string");
                append(out, spec + "s", a.s);
                break;
            default:  // 'p'
                expect(a.kind == Slot::Ptr, "a pointer");
                append(out, spec + "s", ("0x" + format("%llx", static_cast<unsigned long long>(a.u))).c_str());
                break;
        }
    }
    if (used != nargs) bad(format("%zu arguments for %zu conversions", nargs, used));
    return out;
}

template <typename T>
const char* dump_type_name() {
    using U = typename std::remove_cv<T>::type;
    static_assert(!std::is_same<U, double>::value, "DumpTensor: double is not a type the device dumps");
    if (std::is_same<U, half>::value) return "float16";
    if (std::is_same<U, bfloat16_t>::value) return "bfloat16";
    if (std::is_same<U, float>::value) return "float32";
    const bool s = std::is_signed<U>::value;
    switch (sizeof(U)) {
        case 1: return s ? "int8" : "uint8";
        case 2: return s ? "int16" : "uint16";
        case 4: return s ? "int32" : "uint32";
        default: return s ? "int64" : "uint64";
    }
}

template <typename T>
void append_value(std::string& out, T v) {
    char text[64];
    int n;
    if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
        n = std::snprintf(text, sizeof text, "%lld", static_cast<long long>(v));
    } else if constexpr (std::is_integral<T>::value) {
        n = std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(v));
    } else {
        n = std::snprintf(text, sizeof text, "%f", static_cast<double>(static_cast<float>(v)));
    }
    out.append(text, n > 0 ? static_cast<size_t>(n) : 0);
}

// Elements [first, first + count) of the shaped view at level `dim`, nested as the host prints.
template <typename T>
void append_shaped(std::string& out, const elem_t<T>* data, uint64_t have, const AscendC::ShapeInfo& s, uint8_t dim,
                   uint64_t first, uint64_t count) {
    out += '[';
    if (dim + 1 == s.shapeDim) {
        for (uint64_t k = 0; k < count; ++k) {
            if (k > 0) out += ", ";
            if (first + k < have) {
                append_value<T>(out, data[first + k]);
            } else {
                out += '-';
            }
        }
    } else {
        const uint64_t inner = count / s.shape[dim];
        for (uint32_t k = 0; k < s.shape[dim]; ++k) {
            if (k > 0) out += ",\n";
            append_shaped<T>(out, data, have, s, static_cast<uint8_t>(dim + 1), first + k * inner, inner);
        }
    }
    out += ']';
}

// Appends the dump of `count` elements at `data` (already checked) to the block's report.
template <typename T>
void dump(BlockContext& b, const char* api, uint32_t desc, uint64_t addr, const char* position,
          const elem_t<T>* data, uint32_t count, const AscendC::ShapeInfo* shape) {
    const uint64_t bytes = (static_cast<uint64_t>(count) * sizeof(T) + 31) / 32 * 32;
    if (bytes > kMaxDumpBytes) {
        warn(b, api, "dumpSize", [&] {
            return format("%s: desc=%u: %u elements (%llu bytes) exceed the %llu bytes one dump may print: nothing "
                          "printed, as on the device",
                          api, desc, count, static_cast<unsigned long long>(bytes),
                          static_cast<unsigned long long>(kMaxDumpBytes));
        });
        return;
    }
    std::string text = format("DumpTensor: desc=%u, addr=0x%llx, data_type=%s, position=%s, dump_size=%u\n", desc,
                              static_cast<unsigned long long>(addr), dump_type_name<T>(), position, count);
    if (shape != nullptr && shape->shapeDim > 0) {
        std::string dims;
        uint64_t shape_size = 1;  // saturates past kBlockLogBytes: no overflow
        for (uint8_t d = 0; d < shape->shapeDim; ++d) {
            shape_size = std::min<uint64_t>(shape_size * shape->shape[d], kBlockLogBytes + 1);
            dims += (d > 0 ? ", " : "") + std::to_string(shape->shape[d]);
        }
        if (shape_size > kBlockLogBytes) {  // a record of over a million elements cannot fit a block's log
            b.report.overflow();
            return;
        }
        if (shape_size < count) {
            text += format("shape is [%s], dumpSize is %u, dumpSize is greater than shapeSize.\n", dims.c_str(), count);
        } else if (shape_size > count) {
            text += format("shape is [%s], dumpSize is %u, data is not enough.\n", dims.c_str(), count);
        }
        if (shape_size == 0) {
            text += "[]\n";
        } else {
            append_shaped<T>(text, data, count, *shape, 0, 0, shape_size);
            text += '\n';
        }
    } else {
        text += '[';
        for (uint32_t k = 0; k < count; ++k) {
            if (k > 0) text += ", ";
            append_value<T>(text, data[k]);
        }
        text += "]\n";
    }
    b.report.print(text);
}

inline void check_shape(const char* api, const AscendC::ShapeInfo* shape) {
    if (shape != nullptr && !shape->ascrun_defined) {
        fault(format("%s: the ShapeInfo was default-constructed, which leaves its shape undefined on the device "
                     "(construct it from a shape, e.g. asc.ShapeInfo(asc.array(asc.uint32, [rows, cols])))",
                     api));
    }
}

template <typename T>
void dump_local(const char* api, const AscendC::LocalTensor<T>& t, uint32_t desc, uint32_t count,
                const AscendC::ShapeInfo* shape) {
    static_assert(is_element_v<T>, "DumpTensor: unsupported element type");
    BlockContext& b = enter();
    check_shape(api, shape);
    if (count == 0) return;  // the device prints nothing
    const elem_t<T>* data = ub_operand(b, api, "tensor", t, count);
    dump<T>(b, api, desc, t.ascrun_addr(), "UB", data, count, shape);
}

template <typename T>
void dump_global(const char* api, const AscendC::GlobalTensor<T>& t, uint32_t desc, uint32_t count,
                 const AscendC::ShapeInfo* shape) {
    static_assert(is_element_v<T>, "DumpTensor: unsupported element type");
    BlockContext& b = enter();
    check_shape(api, shape);
    if (count == 0) return;
    const elem_t<T>* data = t.ascrun_access(b, api, 0, count, false);
    const uintptr_t p = reinterpret_cast<uintptr_t>(data);
    const Region& r = b.launch->regions()[static_cast<size_t>(b.launch->find_region(p))];  // checked above
    dump<T>(b, api, desc, p - r.base, "GM", data, count, shape);
}

}  // namespace debug
}  // namespace ascrun

namespace AscendC {

template <class... Args>
void printf(__gm__ const char* fmt, Args&&... args) {
    ascrun::BlockContext& b = ascrun::enter();
    const ascrun::debug::Slot slots[] = {ascrun::debug::Slot{}, ascrun::debug::slot(args)...};
    const uint32_t cores = b.launch->block_num() * (b.core_type == AIC ? 1 : b.launch->cores().aiv);
    std::string text = ascrun::format("[%s Block %u/%u] ", b.core_type == AIC ? "AIC" : "AIV", b.block_idx, cores);
    text += ascrun::debug::format_printf(fmt, slots + 1, sizeof...(Args));
    b.report.print(text);
}

// Kept by the reference for compatibility; the same as printf.
template <class... Args>
void PRINTF(__gm__ const char* fmt, Args&&... args) {
    printf(fmt, std::forward<Args>(args)...);
}

template <typename T>
void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
    ascrun::debug::dump_local("DumpTensor", tensor, desc, dumpSize, nullptr);
}
template <typename T>
void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
    ascrun::debug::dump_global("DumpTensor", tensor, desc, dumpSize, nullptr);
}
template <typename T>
void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, const ShapeInfo& shapeInfo) {
    ascrun::debug::dump_local("DumpTensor", tensor, desc, dumpSize, &shapeInfo);
}
template <typename T>
void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, const ShapeInfo& shapeInfo) {
    ascrun::debug::dump_global("DumpTensor", tensor, desc, dumpSize, &shapeInfo);
}

// DumpTensor of tensor[countOff] (its address must meet the operand's alignment rule).
template <typename T>
void DumpAccChkPoint(const LocalTensor<T>& tensor, uint32_t index, uint32_t countOff, uint32_t dumpSize) {
    ascrun::debug::dump_local("DumpAccChkPoint", tensor[countOff], index, dumpSize, nullptr);
}
template <typename T>
void DumpAccChkPoint(const GlobalTensor<T>& tensor, uint32_t index, uint32_t countOff, uint32_t dumpSize) {
    ascrun::debug::dump_global("DumpAccChkPoint", tensor[countOff], index, dumpSize, nullptr);
}

inline void PrintTimeStamp(uint32_t) { ascrun::enter(); }

}  // namespace AscendC

#pragma GCC visibility pop

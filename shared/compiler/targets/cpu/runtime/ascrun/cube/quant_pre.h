// ascrun cpu runtime: Fixpipe's quantPre (QuantMode_t), the conversion on the way out of L0C.
//
// Which mode converts which (L0C, dst) type pair: 随路量化.md and the QuantMode_t comments of
// L0C到GM数据搬运（Fixpipe）.md / L0C到L1数据搬运（Fixpipe）.md (asc-devkit docs/zh/api/SIMD-API/基础API/
// 矩阵计算（ISASI）/矩阵计算的搬出/). The cpu target converts with NoQuant (same type), F322F16 and F322BF16
// (float -> half / bfloat16_t, "cast mode为CAST_RINT模式": round to nearest, ties to even, Cast.md's
// CAST_RINT; overflow gives infinity, CTRL[48]'s saturation mode is not modelled). The scalar (deqScalar)
// and tensor (cbufWorkspace) quantizations are refused: their intermediate roundings and the offset's sign
// are not settled by the reference (the sample scripts of fixpipe_l0c2gm only approximate them).
//
// The values are the compiler's builtin QuantMode_t, not the order the pages list the names in:
// F322BF16 is 16 (pyasc's ascir Attributes.td, AscendC_QuantModeAttr, which asctile lowers to). pyasc's
// Python asc.QuantModes numbers the listing instead (its F322BF16 is 2, the compiler's VQF322HIF8_PRE),
// so the messages say so for the values 2..8.
#pragma once

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

// Builtin, unqualified (pyasc spells QuantMode_t so); the names the reference documents.
enum QuantMode_t {
    NoQuant = 0,
    F322F16 = 1,
    VQF322HIF8_PRE = 2,
    QF322HIF8_PRE = 3,
    VQF322HIF8_PRE_HYBRID = 4,
    QF322HIF8_PRE_HYBRID = 5,
    VREQ8 = 8,
    REQ8 = 9,
    VDEQF16 = 10,
    DEQF16 = 11,
#if __NPU_ARCH__ == 3510  // 12..15 are other modes on the other architectures
    VQF322FP8_PRE = 12,
    QF322FP8_PRE = 13,
    VQF322F32_PRE = 14,
    QF322F32_PRE = 15,
#endif
    F322BF16 = 16,
    VQF322B8_PRE = 23,
    QF322B8_PRE = 24,
    VQF322F16_PRE = 31,
    QF322F16_PRE = 32,
    VQF322BF16_PRE = 33,
    QF322BF16_PRE = 34,
    VQS322BF16_PRE = 35,
    QS322BF16_PRE = 36,
};

namespace AscendC {
using ::QuantMode_t;
}

namespace ascrun {
namespace cube {

// The element types of the quantPre table (hifloat8_t / fp8_e4m3fn_t: the cpu target has no such types).
enum class QType : uint8_t { F32, S32, F16, BF16, S8, U8, Other };

template <typename T>
constexpr QType qtype() {
    return std::is_same<T, float>::value        ? QType::F32
           : std::is_same<T, int32_t>::value    ? QType::S32
           : std::is_same<T, half>::value       ? QType::F16
           : std::is_same<T, bfloat16_t>::value ? QType::BF16
           : std::is_same<T, int8_t>::value     ? QType::S8
           : std::is_same<T, uint8_t>::value    ? QType::U8
                                                : QType::Other;
}

enum class QKind : uint8_t { Cast, Scalar, Tensor };

struct QuantRule {
    int value;
    const char* name;
    QType src;
    QType dst, dst2;  // dst2: the second dst type (int8_t / uint8_t), else the same as dst
    QKind kind;
    bool only950;  // "Ascend 950PR/Ascend 950DT产品还额外支持以下量化模式" (随路量化.md)
};

// Modes whose dst type the cpu target lacks (FP8, HIF8) have dst Other: they never match a pair.
inline constexpr QuantRule kQuantRules[] = {
    {0, "NoQuant", QType::F32, QType::F32, QType::F32, QKind::Cast, false},
    {0, "NoQuant", QType::S32, QType::S32, QType::S32, QKind::Cast, false},
    {1, "F322F16", QType::F32, QType::F16, QType::F16, QKind::Cast, false},
    {16, "F322BF16", QType::F32, QType::BF16, QType::BF16, QKind::Cast, false},
    {11, "DEQF16", QType::S32, QType::F16, QType::F16, QKind::Scalar, false},
    {10, "VDEQF16", QType::S32, QType::F16, QType::F16, QKind::Tensor, false},
    {24, "QF322B8_PRE", QType::F32, QType::S8, QType::U8, QKind::Scalar, false},
    {23, "VQF322B8_PRE", QType::F32, QType::S8, QType::U8, QKind::Tensor, false},
    {9, "REQ8", QType::S32, QType::S8, QType::U8, QKind::Scalar, false},
    {8, "VREQ8", QType::S32, QType::S8, QType::U8, QKind::Tensor, false},
    {13, "QF322FP8_PRE", QType::F32, QType::Other, QType::Other, QKind::Scalar, true},
    {12, "VQF322FP8_PRE", QType::F32, QType::Other, QType::Other, QKind::Tensor, true},
    {3, "QF322HIF8_PRE", QType::F32, QType::Other, QType::Other, QKind::Scalar, true},
    {2, "VQF322HIF8_PRE", QType::F32, QType::Other, QType::Other, QKind::Tensor, true},
    {5, "QF322HIF8_PRE_HYBRID", QType::F32, QType::Other, QType::Other, QKind::Scalar, true},
    {4, "VQF322HIF8_PRE_HYBRID", QType::F32, QType::Other, QType::Other, QKind::Tensor, true},
    {36, "QS322BF16_PRE", QType::S32, QType::BF16, QType::BF16, QKind::Scalar, true},
    {35, "VQS322BF16_PRE", QType::S32, QType::BF16, QType::BF16, QKind::Tensor, true},
    {32, "QF322F16_PRE", QType::F32, QType::F16, QType::F16, QKind::Scalar, true},
    {31, "VQF322F16_PRE", QType::F32, QType::F16, QType::F16, QKind::Tensor, true},
    {34, "QF322BF16_PRE", QType::F32, QType::BF16, QType::BF16, QKind::Scalar, true},
    {33, "VQF322BF16_PRE", QType::F32, QType::BF16, QType::BF16, QKind::Tensor, true},
    {15, "QF322F32_PRE", QType::F32, QType::F32, QType::F32, QKind::Scalar, true},
    {14, "VQF322F32_PRE", QType::F32, QType::F32, QType::F32, QKind::Tensor, true},
};

// The rule of `value` for src -> dst, else (any_src) the first rule of `value`, or nullptr.
inline const QuantRule* quant_rule(int value, QType src, QType dst, bool any_src) {
    for (const QuantRule& r : kQuantRules) {
        if (r.value == value && (any_src || (r.src == src && (r.dst == dst || r.dst2 == dst)))) return &r;
    }
    return nullptr;
}

// The modes this architecture has for src -> dst, as "A (1), B (2) or C (3)".
inline std::string modes_for(QType src, QType dst) {
    std::vector<std::string> names;
    for (const QuantRule& r : kQuantRules) {
        if (r.src == src && (r.dst == dst || r.dst2 == dst) && (!r.only950 || kNpuArch == 3510)) {
            names.push_back(format("%s (%d)", r.name, r.value));
        }
    }
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return s;
}

// pyasc's asc.QuantModes numbers 0..8 in the reference's listing order; 0 and 1 agree with the compiler.
inline std::string pyasc_hint(int value) {
    static const char* const listing[] = {"NoQuant", "F322F16", "F322BF16", "DEQF16", "VDEQF16",
                                          "QF322B8_PRE", "VQF322B8_PRE", "REQ8", "VREQ8"};
    if (value < 2 || value > 8) return "";
    int builtin = -1;
    for (const QuantRule& r : kQuantRules) {
        if (std::strcmp(r.name, listing[value]) == 0) builtin = r.value;
    }
    return format(" (pyasc's asc.QuantModes.%s is %d, the reference's listing order; the compiler's QuantMode_t::%s "
                  "is %d)",
                  listing[value], value, listing[value], builtin);
}

// quantPre against the (L0C U, dst T) pair; faults with the API's name unless the cpu target converts it.
template <typename T, typename U>
void check_quant(const char* api, QuantMode_t q) {
    constexpr QType src = qtype<U>(), dst = qtype<T>();
    const int v = static_cast<int>(q);
    const QuantRule* named = quant_rule(v, src, dst, true);
    if (named == nullptr || (named->only950 && kNpuArch != 3510)) {
        fault(format("%s: quantPre %d is not an %s QuantMode_t mode%s", api, v,
                     kNpuArch == 3510 ? "Ascend 950" : "Atlas A2/A3", pyasc_hint(v).c_str()));
    }
    const QuantRule* r = quant_rule(v, src, dst, false);
    if (r == nullptr) {
        const std::string modes = modes_for(src, dst);
        fault(format("%s: quantPre %s (%d) does not convert %s -> %s, which %s%s%s", api, named->name, v,
                     TypeName<U>::c(), TypeName<T>::c(), modes.empty() ? "no quantPre converts" : "takes ",
                     modes.c_str(), pyasc_hint(v).c_str()));
    }
    if (r->kind != QKind::Cast) {
        fault(format("%s: quantPre %s (%s quantization, %s) is not supported on the cpu target", api, r->name,
                     r->kind == QKind::Scalar ? "scalar" : "tensor",
                     r->kind == QKind::Scalar ? "deqScalar" : "cbufWorkspace"));
    }
}

// ReLU, then the cast quantPre names (check_quant has matched it to the types): half and bfloat16_t
// round to nearest even (core/half.h).
template <typename T, typename U>
T fixpipe_element(U x, bool relu) {
    if (relu && x < U(0)) x = U(0);
    return static_cast<T>(x);
}

}  // namespace cube
}  // namespace ascrun

#pragma GCC visibility pop

// ascrun cpu runtime: the register API's registers and masks (Ascend 950PR/DT, arch C310), what
// asctile's vf_fusion emits inside a VF: `__VEC_SCOPE__`, `Reg::RegTensor<T>`, `Reg::MaskReg`,
// `MaskPattern`, `CreateMask`, `UpdateMask`, `MaskMergeMode`.
//
// A RegTensor is VL bytes of elements; a MaskReg is VL/8 bytes, one bit per byte lane: element i of
// a b16 (b32) operation is selected by bit 2i (4i), as the device reads it (寄存器数据类型/MaskReg.md),
// so a mask made for one width reads as the device would for another. A register read before
// anything was written to it, or any register instruction outside a `__VEC_SCOPE__` or in a kernel
// built for an arch other than 3510, faults naming the call (the device would read garbage / the
// compiler refuses a VF instruction outside a VF / Atlas A2/A3 have no register API).
//
// The pages cited in reg/ are cannmirror/asc-devkit's docs/zh/api/SIMD-API/基础API/Reg矢量计算/.
#pragma once

#include <limits>
#include <type_traits>

#include "ascrun/core/core.h"
#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace reg {

// VL: "RegTensor位宽为VL（Vector Length），长度为256B" (基础API/Reg矢量计算/寄存器数据类型/RegTensor.md)
constexpr uint32_t kVecLen = 256;
// MaskReg: "宽度为RegTensor的八分之一（VL/8）" (寄存器数据类型/MaskReg.md)
constexpr uint32_t kMaskBits = kVecLen;
constexpr uint32_t kMaskWords = kMaskBits / 64;

// Elements of T in one register (VL_T in MaskReg.md's UpdateMask).
template <typename T>
constexpr uint32_t lanes() {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "RegTensor elements are b8/b16/b32/b64 (RegTensor.md)");
    return kVecLen / sizeof(T);
}

// Depth of `__VEC_SCOPE__`s the running core is in (each core is one thread).
inline thread_local uint32_t tls_vec_scope = 0;

// Opens the body of one `__VEC_SCOPE__` (a VF) and closes it when the body ends, a fault included.
class VecScope {
public:
    VecScope() { ++tls_vec_scope; }
    ~VecScope() { --tls_vec_scope; }
    VecScope(const VecScope&) = delete;
    VecScope& operator=(const VecScope&) = delete;
    bool first() { return !done_ && (done_ = true); }

private:
    bool done_ = false;
};

// The out-of-line faults of this family (reg/registers.cpp).
[[noreturn]] void not_on_this_arch(const char* api);
[[noreturn]] void outside_vec_scope(const char* api);
[[noreturn]] void unwritten_register(const char* api, const char* role, const char* kind);
[[noreturn]] void bad_mask_pattern(const char* api, int pattern);
[[noreturn]] void scalar_out_of_range(const char* api, const char* to, double value);

// A scalar the kernel passes as its element type E: a float out of E's range (NaN included) has no
// value there (converting it is undefined behaviour in C++), so it faults; integers wrap as on the device.
template <typename E, typename U>
inline E scalar_as(const char* api, const char* to, U value) {
    if constexpr (std::is_floating_point<U>::value && std::is_integral<E>::value) {
        const double v = static_cast<double>(value);
        if (!(v >= static_cast<double>(std::numeric_limits<E>::min()) &&
              v < static_cast<double>(std::numeric_limits<E>::max()) + 1.0)) {
            scalar_out_of_range(api, to, v);
        }
    }
    return static_cast<E>(value);
}

// Every register instruction begins here: the block, and the VF it must be in. The register API is
// the Ascend 950's: RegTensor.md lists no other product (Atlas A2/A3: 不支持).
inline BlockContext& enter_vf(const char* api) {
    BlockContext& b = enter();
    if (kNpuArch != 3510) not_on_this_arch(api);
    if (tls_vec_scope == 0) outside_vec_scope(api);
    return b;
}

}  // namespace reg
}  // namespace ascrun

// A VF's body runs once, inside a VecScope: `__VEC_SCOPE__ { ... };` as asctile writes it.
#define __VEC_SCOPE__ for (::ascrun::reg::VecScope ascrun_vec_scope_; ascrun_vec_scope_.first();)

namespace AscendC {
namespace Reg {

// ZEROING: unselected elements of dstReg become 0; MERGING: they keep dstReg's value
// (辅助数据类型/MaskMergeMode.md; the instructions' default is ZEROING, e.g. 基础算术/Add.md).
enum class MaskMergeMode { ZEROING, MERGING };

// CreateMask's patterns (寄存器数据类型/MaskReg.md, CreateMask参数说明).
enum class MaskPattern { ALL, VL1, VL2, VL3, VL4, VL8, VL16, VL32, VL64, VL128, M3, M4, H, Q, ALLF = 15 };

template <typename T>
struct RegTensor {
    using ActualT = T;  // the element type (the reference's own name for it)
    // The VL bytes as T; written by instructions only (ascrun::reg reads them through `read`).
    ascrun::elem_t<T> lane[ascrun::reg::lanes<T>()];
    bool written = false;

    const ascrun::elem_t<T>* read(const char* api, const char* role) const {
        if (!written) ascrun::reg::unwritten_register(api, role, "RegTensor");
        return lane;
    }
    ascrun::elem_t<T>* write() {
        written = true;
        return lane;
    }
};

struct MaskReg {
    uint64_t bit[ascrun::reg::kMaskWords] = {};
    bool written = false;

    // Whether element `i` of a T operation is selected: bit i * sizeof(T) (MaskReg.md).
    template <typename T>
    bool selects(uint32_t i) const {
        const uint32_t b = i * sizeof(T);
        return (bit[b / 64] >> (b % 64)) & 1u;
    }
    // Selects elements [0, n) of T and no other.
    template <typename T>
    void select_first(uint32_t n) {
        for (uint64_t& w : bit) w = 0;
        for (uint32_t i = 0; i < n; ++i) bit[i * sizeof(T) / 64] |= uint64_t{1} << (i * sizeof(T) % 64);
        written = true;
    }
    const MaskReg& checked(const char* api) const {
        if (!written) ascrun::reg::unwritten_register(api, "mask", "MaskReg");
        return *this;
    }
};

// MaskReg.md: a mask selecting the elements of `mode`.
template <typename T, MaskPattern mode = MaskPattern::ALL>
inline MaskReg CreateMask() {
    ascrun::reg::enter_vf("Reg::CreateMask");
    constexpr uint32_t n = ascrun::reg::lanes<T>();
    MaskReg m;
    switch (mode) {
        case MaskPattern::ALL: m.select_first<T>(n); break;
        case MaskPattern::ALLF: m.select_first<T>(0); break;
        case MaskPattern::VL1: m.select_first<T>(1); break;
        case MaskPattern::VL2: m.select_first<T>(2); break;
        case MaskPattern::VL3: m.select_first<T>(3); break;
        case MaskPattern::VL4: m.select_first<T>(4); break;
        case MaskPattern::VL8: m.select_first<T>(8); break;
        case MaskPattern::VL16: m.select_first<T>(16); break;
        case MaskPattern::VL32: m.select_first<T>(32); break;
        case MaskPattern::VL64: m.select_first<T>(64 < n ? 64 : n); break;
        case MaskPattern::VL128: m.select_first<T>(128 < n ? 128 : n); break;
        case MaskPattern::H: m.select_first<T>(n / 2); break;
        case MaskPattern::Q: m.select_first<T>(n / 4); break;
        case MaskPattern::M3:
        case MaskPattern::M4: {
            const uint32_t every = mode == MaskPattern::M3 ? 3 : 4;  // "3的倍数设置为有效数据"
            m.select_first<T>(0);
            for (uint32_t i = 0; i < n; i += every) m.bit[i * sizeof(T) / 64] |= uint64_t{1} << (i * sizeof(T) % 64);
            break;
        }
        default: ascrun::reg::bad_mask_pattern("Reg::CreateMask", static_cast<int>(mode));
    }
    return m;
}

// MaskReg.md: selects the first min(scalarValue, VL_T) elements, then
// scalarValue = (scalarValue < VL_T) ? 0 : (scalarValue - VL_T).
template <typename T>
inline MaskReg UpdateMask(uint32_t& scalarValue) {
    ascrun::reg::enter_vf("Reg::UpdateMask");
    constexpr uint32_t n = ascrun::reg::lanes<T>();
    MaskReg m;
    m.select_first<T>(scalarValue < n ? scalarValue : n);
    scalarValue = scalarValue < n ? 0 : scalarValue - n;
    return m;
}

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

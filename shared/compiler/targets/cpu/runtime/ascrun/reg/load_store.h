// ascrun cpu runtime: the register API's moves between the Unified Buffer and registers:
// `Reg::LoadAlign` (UB -> RegTensor) and `Reg::StoreAlign` (RegTensor -> UB, the mask's elements
// only), the single-register forms with the normal distribution (DIST_NORM), as asctile emits them.
//
// The address is a `__ubuf__ T*` whose value is the UB byte offset (what LocalTensor::GetPhyAddr
// returns, as on the device): it must be 32-byte aligned and its VL bytes inside the Unified Buffer,
// else the call faults. A load reads the whole VL whatever the tensor behind it (asctile loads a
// 100-element tile's second register past the tile's end); a store writes the selected elements only.
// Both are operands of the V pipe for the pipe model (a VF runs on the vector unit).
#pragma once

#include "ascrun/reg/registers.h"

#pragma GCC visibility push(hidden)

namespace AscendC {
namespace Reg {

// The distributions of 连续对齐搬入（LoadAlign）.md table 3 (single register) and table 6 (two).
enum class LoadDist {
    DIST_NORM, DIST_BRC_B8, DIST_BRC_B16, DIST_BRC_B32, DIST_US_B8, DIST_US_B16, DIST_DS_B8, DIST_DS_B16,
    DIST_UNPACK_B8, DIST_UNPACK_B16, DIST_BLK, DIST_E2B_B16, DIST_E2B_B32, DIST_UNPACK_B32, DIST_UNPACK4_B8,
    DIST_DINTLV_B8, DIST_DINTLV_B16, DIST_DINTLV_B32,
};
// 连续对齐搬出（StoreAlign）.md tables 3 and 6; DIST_NORM is DIST_NORM_B8/B16/B32 by sizeof(T).
enum class StoreDist {
    DIST_NORM_B8, DIST_NORM_B16, DIST_NORM_B32, DIST_FIRST_ELEMENT_B8, DIST_FIRST_ELEMENT_B16,
    DIST_FIRST_ELEMENT_B32, DIST_PACK_B16, DIST_PACK_B32, DIST_PACK_B64, DIST_PACK4_B32, DIST_NORM,
    DIST_INTLV_B8, DIST_INTLV_B16, DIST_INTLV_B32,
};

}  // namespace Reg
}  // namespace AscendC

namespace ascrun {
namespace reg {

// DIST_NORM's address alignment, LoadAlign.md table 3 and StoreAlign.md table 3 ("DIST_NORM ... 32").
constexpr uint32_t kNormAlign = 32;

// The UB offset `addr` of operand `role` of `api`, checked: aligned to kNormAlign, VL bytes inside the
// Unified Buffer (reg/registers.cpp). Returns the offset.
uint64_t ub_register_span(const char* api, const char* role, uintptr_t addr);

template <AscendC::Reg::StoreDist dist, typename T>
constexpr bool is_norm_store() {
    using D = AscendC::Reg::StoreDist;
    return dist == D::DIST_NORM || (dist == D::DIST_NORM_B8 && sizeof(T) == 1) ||
           (dist == D::DIST_NORM_B16 && sizeof(T) == 2) || (dist == D::DIST_NORM_B32 && sizeof(T) == 4);
}

}  // namespace reg
}  // namespace ascrun

namespace AscendC {
namespace Reg {

// 连续对齐搬入（LoadAlign）.md, single register, normal form: dstReg = the VL bytes at srcAddr.
template <typename T, LoadDist dist = LoadDist::DIST_NORM, typename U>
inline void LoadAlign(U& dstReg, __ubuf__ T* srcAddr) {
    static_assert(dist == LoadDist::DIST_NORM, "ascrun models LoadAlign's DIST_NORM distribution only");
    static_assert(std::is_same<typename U::ActualT, T>::value, "LoadAlign: the RegTensor's element type is not T");
    constexpr const char* api = "Reg::LoadAlign";
    ascrun::BlockContext& b = ascrun::reg::enter_vf(api);
    const uint64_t at = ascrun::reg::ub_register_span(api, "srcAddr", reinterpret_cast<uintptr_t>(srcAddr));
    ascrun::pipe_operand(b, api, "src", ascrun::Memory::UB, at, ascrun::reg::kVecLen);
    std::memcpy(dstReg.write(), b.ub + at, ascrun::reg::kVecLen);
}

// 连续对齐搬出（StoreAlign）.md, single register, normal form: the elements of srcReg the mask
// selects go to their places from dstAddr; the others' bytes are left as they were.
template <typename T, StoreDist dist = StoreDist::DIST_NORM, typename U>
inline void StoreAlign(__ubuf__ T* dstAddr, U& srcReg, MaskReg& mask) {
    static_assert(ascrun::reg::is_norm_store<dist, T>(),
                  "ascrun models StoreAlign's DIST_NORM distribution (DIST_NORM_B8/B16/B32 for T's width) only");
    static_assert(std::is_same<typename U::ActualT, T>::value, "StoreAlign: the RegTensor's element type is not T");
    constexpr const char* api = "Reg::StoreAlign";
    ascrun::BlockContext& b = ascrun::reg::enter_vf(api);
    const uint64_t at = ascrun::reg::ub_register_span(api, "dstAddr", reinterpret_cast<uintptr_t>(dstAddr));
    const auto* src = srcReg.read(api, "srcReg");
    const MaskReg& m = mask.checked(api);
    auto* dst = reinterpret_cast<ascrun::elem_t<T>*>(b.ub + at);
    uint32_t end = 0;  // past the last element written: the bytes the pipe model sees
    for (uint32_t i = 0; i < ascrun::reg::lanes<T>(); ++i) {
        if (m.selects<T>(i)) {
            dst[i] = src[i];
            end = i + 1;
        }
    }
    if (end != 0) ascrun::pipe_operand(b, api, "dst", ascrun::Memory::UB, at, end * sizeof(T));
}

}  // namespace Reg
}  // namespace AscendC

#pragma GCC visibility pop

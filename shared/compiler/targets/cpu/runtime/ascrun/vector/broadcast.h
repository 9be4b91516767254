// ascrun cpu runtime: Broadcast of the high-level API (高阶API/张量变换/Broadcast.md), the Ascend 950's
// dynamic-shape forms, which pyasc's nightly emits for asctile.broadcast_to: GetBroadcastTilingInfo<T>(rank,
// dstShape, srcShape, srcInnerPad, tiling), then Broadcast(dst, src, dstShape, srcShape, &tiling): dst = src
// broadcast to dstShape, both ND and dense (row-major). rank in [1, 9], srcInnerPad false only ("当前仅支持
// 取值为false"); every axis has srcShape[i] == dstShape[i] or srcShape[i] == 1, which broadcasts ("dstShape[i]
// >= srcShape[i]. 当srcShape[i]的值为1，且dstShape[i]不等于srcShape[i]时，表示i轴为广播轴"). The tiling
// holds the shapes it was made for; a Broadcast with other shapes faults. Faults also: an operand past its
// tensor, src and dst sharing bytes ("不支持源操作数与目的操作数地址重叠"). The Atlas A2/A3 forms
// Broadcast<T, dim, axis> are not modelled (pyasc does not emit them).
#pragma once

#include <cstring>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

// The tiling GetBroadcastTilingInfo computes ("其成员变量用户无需关注" as for the pages' other structs):
// here, the shapes it was computed for.
struct BroadcastTiling {
    uint32_t rank = 0;  // 0: not computed by GetBroadcastTilingInfo
    uint32_t dstShape[9] = {};
    uint32_t srcShape[9] = {};
};

}  // namespace AscendC

namespace ascrun {
namespace broadcast {

constexpr uint32_t kMaxRank = 9;  // Broadcast.md: "rank当前支持的范围为[1, 9]"

// Broadcast.md, supported dtypes on the Ascend 950: "b8、b16、b32、b64位宽对应的数据类型".
template <typename T>
constexpr bool c310_supports = (std::is_arithmetic<T>::value || one_of_v<T, half, bfloat16_t>) &&
                               (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
template <typename T>
constexpr bool on_950 = mask::kAscend950 && sizeof(T) != 0;  // dependent: fails only where called

// The shape rules. Answers the element counts.
inline void check_shapes(const char* api, uint32_t rank, const uint32_t* dst, const uint32_t* src, uint64_t& n_dst,
                         uint64_t& n_src) {
    n_dst = 1;
    n_src = 1;
    for (uint32_t i = 0; i < rank; ++i) {
        if (src[i] != dst[i] && src[i] != 1) {
            fault(format("%s: srcShape[%u] = %u cannot broadcast to dstShape[%u] = %u (an axis is either equal or "
                         "1 in srcShape)", api, i, src[i], i, dst[i]));
        }
        n_dst *= dst[i];
        n_src *= src[i];
        // past what a Unified Buffer could hold the count is refused before the next product: the kernel's
        // shapes would otherwise wrap 64 bits to a small count that the operand checks let through
        if (n_dst > kUbBytes || n_src > kUbBytes) {
            fault(format("%s: %s holds more than the %u elements a Unified Buffer could", api,
                         n_dst > kUbBytes ? "dstShape" : "srcShape", kUbBytes));
        }
    }
}

template <typename T>
void run(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t rank,
         const uint32_t* dst_shape, const uint32_t* src_shape) {
    BlockContext& b = enter();
    uint64_t n_dst = 0, n_src = 0;
    check_shapes(api, rank, dst_shape, src_shape, n_dst, n_src);
    if (n_dst == 0) return;
    elem_t<T>* d = ub_operand(b, api, "dst", dst, n_dst);
    const elem_t<T>* s = ub_operand(b, api, "src", src, n_src);
    const uint64_t da = dst.ascrun_addr(), sa = src.ascrun_addr();
    check_disjoint(api, "dst", da, da + n_dst * sizeof(T), "src", sa, sa + n_src * sizeof(T),
                   "the source and destination may not overlap");
    for (uint64_t i = 0; i < n_dst; ++i) {  // dst's row-major index -> src's, a broadcast axis at 0
        uint64_t rest = i, src_index = 0, src_stride = 1;
        for (uint32_t k = rank; k-- > 0;) {
            const uint64_t coord = rest % dst_shape[k];
            rest /= dst_shape[k];
            if (src_shape[k] != 1) src_index += coord * src_stride;
            src_stride *= src_shape[k];
        }
        std::memcpy(static_cast<void*>(d + i), static_cast<const void*>(s + src_index), sizeof(T));
    }
}

}  // namespace broadcast
}  // namespace ascrun

namespace AscendC {

// constDstShape, constSrcShape and constSrcInnerPad are reserved ("该参数预留，传入默认值nullptr即可").
template <class T, int constRank = -1, uint32_t* constDstShape = nullptr, uint32_t* constSrcShape = nullptr>
void GetBroadcastTilingInfo(uint32_t rank, const uint32_t* dstShape, const uint32_t* srcShape, bool srcInnerPad,
                            BroadcastTiling& tiling) {
    static_assert(::ascrun::broadcast::on_950<T>, "GetBroadcastTilingInfo: Ascend 950 only (Broadcast.md)");
    static_assert(::ascrun::broadcast::c310_supports<T>, "GetBroadcastTilingInfo: T must be of 1, 2, 4 or 8 bytes");
    constexpr const char* api = "GetBroadcastTilingInfo";
    if (rank < 1 || rank > ::ascrun::broadcast::kMaxRank) {
        ::ascrun::fault(::ascrun::format("%s: rank %u is outside [1, 9] (Broadcast.md)", api, rank));
    }
    if (constRank > 0 && static_cast<uint32_t>(constRank) != rank) {
        ::ascrun::fault(::ascrun::format("%s: constRank %d differs from rank %u (Broadcast.md: they must match)", api,
                                         constRank, rank));
    }
    if (srcInnerPad) {
        ::ascrun::fault(::ascrun::format("%s: srcInnerPad must be false (Broadcast.md: \"当前仅支持取值为false\")", api));
    }
    uint64_t n_dst = 0, n_src = 0;
    ::ascrun::broadcast::check_shapes(api, rank, dstShape, srcShape, n_dst, n_src);
    tiling.rank = rank;
    for (uint32_t i = 0; i < rank; ++i) {
        tiling.dstShape[i] = dstShape[i];
        tiling.srcShape[i] = srcShape[i];
    }
}

template <class T, int constRank = -1, uint32_t* constDstShape = nullptr, uint32_t* constSrcShape = nullptr,
          bool constSrcInnerPad = false>
void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t* dstShape,
               const uint32_t* srcShape, BroadcastTiling* tiling) {
    static_assert(::ascrun::broadcast::on_950<T>, "Broadcast(BroadcastTiling): Ascend 950 only (Broadcast.md)");
    static_assert(::ascrun::broadcast::c310_supports<T>, "Broadcast: T must be of 1, 2, 4 or 8 bytes");
    constexpr const char* api = "Broadcast";
    if (tiling == nullptr || tiling->rank == 0) {
        ::ascrun::fault("Broadcast: the tiling was not computed by GetBroadcastTilingInfo");
    }
    if (tiling->rank > ::ascrun::broadcast::kMaxRank) {  // its fields are the kernel's to write
        ::ascrun::fault(::ascrun::format("Broadcast: the tiling's rank is %u, outside [1, 9] (GetBroadcastTilingInfo "
                                         "computes it)", tiling->rank));
    }
    for (uint32_t i = 0; i < tiling->rank; ++i) {
        if (tiling->dstShape[i] != dstShape[i] || tiling->srcShape[i] != srcShape[i]) {
            ::ascrun::fault(::ascrun::format(
                "Broadcast: axis %u of dstShape/srcShape is %u/%u, the tiling's %u/%u (GetBroadcastTilingInfo with "
                "these shapes first)", i, dstShape[i], srcShape[i], tiling->dstShape[i], tiling->srcShape[i]));
        }
    }
    ::ascrun::broadcast::run(api, dst, src, tiling->rank, dstShape, srcShape);
}

}  // namespace AscendC

#pragma GCC visibility pop

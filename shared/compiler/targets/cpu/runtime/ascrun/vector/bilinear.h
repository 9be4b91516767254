// ascrun cpu runtime: BilinearInterpolation (基础算术/BilinearInterpolation(ISASI).md), half, with a
// continuous or a bit mask, as the Atlas A2/A3 implementation composes it:
//   1. Gatherb: for each of the hRepeat * vRepeat repeats r, the 8 32-byte blocks of src0 at byte
//      offsets src0Offset[8r .. 8r+7] go to sharedTmpBuffer (256 bytes a repeat);
//   2. Brcb: src1's first floor(size / 8) * 8 elements, each broadcast to a 32-byte block, follow them;
//   3. Mul, in counter mode over every gathered element (the mask does not apply): repeatMode false
//      multiplies repeat r's 128 elements by src1[r], repeatMode true its block j by src1[8r + j];
//   4. Add, with the mask: in vertical repeat i, the products of horizontal repeats 1 .. hRepeat-1
//      are added in order onto those of the first, in half (rounded after each addition);
//   5. Adds(dst, sum, 0), with the mask: vertical repeat i's block j goes to dst element
//      i * vROffset + j * dstBlkStride * 16 (so -0 becomes +0). Unselected dst elements keep theirs.
// All sources are read before dst is written (they may overlap it). sharedTmpBuffer must hold
// hRepeat * vRepeat * 256 + floor(src1.GetSize() / 8) * 256 bytes (what the steps write; the
// reference's "src0.GetSize() * 32 + src1.GetSize() * 32" bounds it from above) and is left
// undefined: the poison byte. Afterwards the mask register holds the mask (Adds sets it last), in
// normal mode.
// Faults: T other than half (does not compile); hRepeat or vRepeat 0; vROffset outside [128, 65535)
// or not a whole number of 32-byte blocks; a continuous mask over 128; an offset not 32-byte aligned
// or a block outside src0 (Gatherb's rules); src1 holding fewer weights than the repeats take;
// operands past their tensors (bounds policy); sharedTmpBuffer overlapping an operand; a call in
// counter mode (the Gatherb step is not defined there).
#pragma once

#include <cstring>
#include <vector>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"
#include "ascrun/vector/mask.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace bilinear {

constexpr const char* kApi = "BilinearInterpolation";
constexpr uint32_t kPerRepeat = 128;  // half elements in 256 bytes
constexpr uint32_t kPerBlock = 16;    // half elements in 32 bytes

template <typename T>
void run(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
         const AscendC::LocalTensor<uint32_t>& src0Offset, const AscendC::LocalTensor<T>& src1, uint64_t mask_lo,
         uint64_t mask_hi, uint8_t hRepeat, bool repeatMode, uint16_t dstBlkStride, uint16_t vROffset, uint8_t vRepeat,
         const AscendC::LocalTensor<uint8_t>& sharedTmpBuffer) {
    static_assert(std::is_same<T, half>::value, "BilinearInterpolation: T must be half (Atlas A2/A3)");
    BlockContext& b = enter();
    if (b.counter_mode) {
        fault(format("%s: called in counter mode, where its Gatherb step is not defined; call SetMaskNorm first",
                     kApi));
    }
    if (hRepeat == 0 || vRepeat == 0) {
        fault(format("%s: hRepeat %u and vRepeat %u must both be in [1, 255]", kApi, hRepeat, vRepeat));
    }
    if (vROffset < 128 || vROffset * sizeof(T) % 32 != 0) {
        fault(format("%s: vROffset %u is outside [128, 65535) or not a whole number of 32-byte blocks (%u bytes)",
                     kApi, vROffset, static_cast<uint32_t>(vROffset * sizeof(T))));
    }
    const uint64_t repeats = uint64_t{hRepeat} * vRepeat;
    const uint64_t n_src0 = src0.GetSize();
    const uint64_t n_weights = src1.GetSize() / 8 * 8;  // Brcb takes src1 in groups of 8
    const uint64_t weights_needed = repeatMode ? repeats * 8 : repeats;
    if (n_weights < weights_needed) {
        fault(format("%s: src1 holds %u elements (Brcb broadcasts %llu), but %llu repeats with repeatMode %s take "
                     "%llu",
                     kApi, src1.GetSize(), static_cast<unsigned long long>(n_weights),
                     static_cast<unsigned long long>(repeats), repeatMode ? "true" : "false",
                     static_cast<unsigned long long>(weights_needed)));
    }
    const uint64_t tmp_bytes = repeats * 256 + n_weights * 32;
    const elem_t<T>* s0 = ub_operand(b, kApi, "src0", src0, n_src0);
    const elem_t<uint32_t>* offsets = ub_operand(b, kApi, "src0Offset", src0Offset, repeats * 8);
    const elem_t<T>* weights = ub_operand(b, kApi, "src1", src1, n_weights);
    uint8_t* tmp = ub_operand(b, kApi, "sharedTmpBuffer", sharedTmpBuffer, tmp_bytes);

    // The highest selected element sets the extent of dst.
    const bool none_selected = mask_lo == 0 && mask_hi == 0;
    const uint32_t last_selected = mask_hi != 0 ? 127 - __builtin_clzll(mask_hi) : 63 - __builtin_clzll(mask_lo | 1);
    const uint64_t dst_count = none_selected ? 0
                                             : (uint64_t{vRepeat} - 1) * vROffset +
                                                   (uint64_t{last_selected} / kPerBlock * dstBlkStride + 1) * kPerBlock;
    elem_t<T>* d = ub_operand(b, kApi, "dst", dst, dst_count);

    const uint64_t t0 = sharedTmpBuffer.ascrun_addr(), t_end = t0 + tmp_bytes;
    auto apart = [&](const char* role, uint64_t addr, uint64_t bytes) {
        check_disjoint(kApi, "sharedTmpBuffer", t0, t_end, role, addr, addr + bytes,
                       "the gathered products are written there");
    };
    apart("src0", src0.ascrun_addr(), n_src0 * sizeof(T));
    apart("src0Offset", src0Offset.ascrun_addr(), repeats * 8 * sizeof(uint32_t));
    apart("src1", src1.ascrun_addr(), n_weights * sizeof(T));
    apart("dst", dst.ascrun_addr(), dst_count * sizeof(T));
    for (uint64_t k = 0; k < repeats * 8; ++k) {
        const uint32_t o = offsets[k];
        if (o % 32 != 0 || uint64_t{o} + 32 > n_src0 * sizeof(T)) {
            fault(format("%s: src0Offset[%llu] = %u %s (offsets are bytes of 32-byte blocks inside src0, which "
                         "holds %llu bytes)",
                         kApi, static_cast<unsigned long long>(k), o,
                         o % 32 != 0 ? "is not 32-byte aligned" : "addresses a block outside src0",
                         static_cast<unsigned long long>(n_src0 * sizeof(T))));
        }
    }

    b.mask_lo = mask_lo;  // the register after: Adds wrote the mask last
    b.mask_hi = mask_hi;
    // Every result before any dst write: dst may overlap the sources.
    std::vector<std::pair<uint64_t, half>> results;
    for (uint64_t i = 0; i < vRepeat && !none_selected; ++i) {
        for (uint32_t e = 0; e < kPerRepeat; ++e) {
            const bool selected = ((e < 64 ? mask_lo >> e : mask_hi >> (e - 64)) & 1) != 0;
            if (!selected) continue;
            const uint32_t block = e / kPerBlock;
            half sum = half(0.0f);
            for (uint64_t q = 0; q < hRepeat; ++q) {
                const uint64_t r = i * hRepeat + q;
                const half gathered = s0[offsets[r * 8 + block] / sizeof(T) + e % kPerBlock];
                const half product = gathered * weights[repeatMode ? r * 8 + block : r];
                sum = q == 0 ? product : product + sum;
            }
            const uint64_t at = i * vROffset + uint64_t{block} * dstBlkStride * kPerBlock + e % kPerBlock;
            results.emplace_back(at, sum + half(0.0f));
        }
    }
    for (const auto& result : results) d[result.first] = result.second;
    std::memset(tmp, kUbPoison, tmp_bytes);
}

}  // namespace bilinear
}  // namespace ascrun

namespace AscendC {

// Continuous mask: the first `mask` elements of each 128-element repeat.
template <typename T>
inline void BilinearInterpolation(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                  const LocalTensor<uint32_t>& src0Offset, const LocalTensor<T>& src1, uint64_t mask,
                                  uint8_t hRepeat, bool repeatMode, uint16_t dstBlkStride, uint16_t vROffset,
                                  uint8_t vRepeat, const LocalTensor<uint8_t>& sharedTmpBuffer) {
    ascrun::enter();
    if (mask > ascrun::bilinear::kPerRepeat) {
        ascrun::fault(ascrun::format("%s: mask %llu is outside [0, 128] (continuous mask: the number of leading "
                                     "elements of each repeat)",
                                     ascrun::bilinear::kApi, static_cast<unsigned long long>(mask)));
    }
    uint64_t lo, hi;
    ascrun::mask::prefix_bits(mask, lo, hi);
    ascrun::bilinear::run(dst, src0, src0Offset, src1, lo, hi, hRepeat, repeatMode, dstBlkStride, vROffset, vRepeat,
                          sharedTmpBuffer);
}

// Bit mask: bit j of mask[1]:mask[0] selects element j of each repeat.
template <typename T>
inline void BilinearInterpolation(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                  const LocalTensor<uint32_t>& src0Offset, const LocalTensor<T>& src1,
                                  uint64_t mask[], uint8_t hRepeat, bool repeatMode, uint16_t dstBlkStride,
                                  uint16_t vROffset, uint8_t vRepeat, const LocalTensor<uint8_t>& sharedTmpBuffer) {
    ascrun::bilinear::run(dst, src0, src0Offset, src1, mask[0], mask[1], hRepeat, repeatMode, dstBlkStride, vROffset,
                          vRepeat, sharedTmpBuffer);
}

}  // namespace AscendC

#pragma GCC visibility pop

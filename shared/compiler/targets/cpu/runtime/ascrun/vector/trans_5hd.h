// ascrun cpu runtime: TransDataTo5HD (数据排布转换/TransDataTo5HD.md; the per-repeat rule of C-API
// asc_transto5hd.md), in its three forms: uint64_t address arrays, LocalTensor<uint64_t> address
// tensors (GetPhyAddr values, i.e. UB byte offsets) and arrays of 16 LocalTensors.
//
// Each repeat reads the 32-byte block at each of the 16 source addresses and writes the 16
// destination blocks; repeat r uses address + r * repRepStride * 32 bytes, except that with
// repeatTimes 1 the single repeat uses address + repStride * 32 ("repeatTimes为1时 ... 有效起始位置为
// ... 加上dstRepStride/srcRepStride"); repeatTimes 0 is a NOP. Within a repeat, with src[i][k] element
// k of source block i:
//   16-bit T: dst block j element i = src[i][j] (a 16 x 16 transpose);
//   32-bit T: 8 steps k, each forming 2 blocks from the 16 sources: dst block 2k element m =
//             src[m][k], dst block 2k + 1 element m = src[8 + m][k] (the order the asc-devkit's
//             float ConfusionTranspose relies on: consecutive dst blocks make row k of a transpose);
//   8-bit T:  16 steps j, each forming half a block: dst block j byte (dstHighHalf ? 16 : 0) + i =
//             src[i][j + (srcHighHalf ? 16 : 0)]; the other half of the dst block keeps its bytes.
// dstHighHalf/srcHighHalf act on 8-bit T only, as the reference says.
//
// Faults: T outside the Atlas A2/A3 list (does not compile); an address not 32-byte aligned or a
// block outside the Unified Buffer; in the LocalTensor forms, a block past its tensor (bounds
// policy) or a tensor outside the UB positions; a block written in a repeat that the same or a later
// repeat reads (通用地址重叠约束: the reads would see the writes); two destinations of one repeat on
// the same block (the writes would collide).
#pragma once

#include <cstring>
#include <vector>

#include "ascrun/core/tensor.h"
#include "ascrun/vector/arith.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

struct TransDataTo5HDParams {
    constexpr TransDataTo5HDParams() = default;
    constexpr TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn,
                                   const uint16_t dstRepStrideIn, const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn),
          srcHighHalf(srcHighHalfIn),
          repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}

    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
};

}  // namespace AscendC

namespace ascrun {
namespace trans_5hd {

constexpr const char* kApi = "TransDataTo5HD";
constexpr uint32_t kList = AscendC::NCHW_CONV_ADDR_LIST_SIZE;
constexpr uint32_t kBlock = 32;

// Bytes from a list address to the start of its block in repeat r.
inline uint64_t repeat_offset(uint32_t r, const AscendC::TransDataTo5HDParams& p, uint16_t stride) {
    const uint64_t step = p.repeatTimes == 1 ? 1 : r;
    return step * stride * kBlock;
}

// Bytes from a list address to the end of its last block.
inline uint64_t span_bytes(const AscendC::TransDataTo5HDParams& p, uint16_t stride) {
    return p.repeatTimes == 0 ? 0 : repeat_offset(p.repeatTimes - 1u, p, stride) + kBlock;
}

inline void check_list(const char* role, const uint64_t* list, uint64_t span) {
    for (uint32_t i = 0; i < kList; ++i) {
        if (list[i] % kBlock != 0) {
            fault(format("%s: %s[%u] address %s is not 32-byte aligned", kApi, role, i, hex(list[i]).c_str()));
        }
        if (list[i] > kUbBytes || span > kUbBytes - list[i]) {
            fault(format("%s: %s[%u]: blocks [%s, %s) are outside the Unified Buffer (%s bytes)", kApi, role, i,
                         hex(list[i]).c_str(), hex(list[i] + span).c_str(), hex(kUbBytes).c_str()));
        }
    }
}

// The repeats, on checked (aligned, in-UB) addresses.
template <typename T>
void run(BlockContext& b, const uint64_t* dst, const uint64_t* src, const AscendC::TransDataTo5HDParams& p) {
    constexpr uint32_t kBlocks = kUbBytes / kBlock;
    const uint32_t repeats = p.repeatTimes;
    // The last repeat reading each UB block, and the last one writing it.
    std::vector<int32_t> last_read(kBlocks, -1), written_in(kBlocks, -1);
    for (uint32_t r = 0; r < repeats; ++r) {
        for (uint32_t i = 0; i < kList; ++i) last_read[(src[i] + repeat_offset(r, p, p.srcRepStride)) / kBlock] = r;
    }
    for (uint32_t r = 0; r < repeats; ++r) {
        for (uint32_t j = 0; j < kList; ++j) {
            const uint64_t at = dst[j] + repeat_offset(r, p, p.dstRepStride);
            const int32_t read_in = last_read[at / kBlock];
            if (read_in >= static_cast<int32_t>(r)) {
                fault(format("%s: repeat %u writes dstList[%u]'s block at UB offset %s, which srcList reads in "
                             "repeat %d (dst blocks must not be read by the same or a later repeat)",
                             kApi, r, j, hex(at).c_str(), read_in));
            }
            if (written_in[at / kBlock] == static_cast<int32_t>(r)) {
                fault(format("%s: repeat %u writes the block at UB offset %s twice (dstList[%u] and an earlier "
                             "entry)",
                             kApi, r, hex(at).c_str(), j));
            }
            written_in[at / kBlock] = r;
        }
    }

    constexpr uint32_t kPerBlock = kBlock / sizeof(T);
    for (uint32_t r = 0; r < repeats; ++r) {
        uint8_t in[kList][kBlock];
        for (uint32_t i = 0; i < kList; ++i) {
            std::memcpy(in[i], b.ub + src[i] + repeat_offset(r, p, p.srcRepStride), kBlock);
        }
        for (uint32_t j = 0; j < kList; ++j) {
            uint8_t* out = b.ub + dst[j] + repeat_offset(r, p, p.dstRepStride);
            if constexpr (sizeof(T) == 1) {
                const uint32_t dst_half = p.dstHighHalf ? kBlock / 2 : 0, src_half = p.srcHighHalf ? kBlock / 2 : 0;
                for (uint32_t i = 0; i < kList; ++i) out[dst_half + i] = in[i][src_half + j];
            } else if constexpr (sizeof(T) == 2) {
                for (uint32_t i = 0; i < kPerBlock; ++i) std::memcpy(out + i * 2, in[i] + j * 2, 2);
            } else {
                const uint32_t k = j / 2, first_source = (j % 2) * kPerBlock;
                for (uint32_t m = 0; m < kPerBlock; ++m) std::memcpy(out + m * 4, in[first_source + m] + k * 4, 4);
            }
        }
    }
}

template <typename T>
void check_type() {
    static_assert(one_of_v<T, int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float>,
                  "TransDataTo5HD: T must be int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t or float "
                  "(Atlas A2/A3)");
}

template <typename T>
void from_addresses(const uint64_t* dst, const uint64_t* src, const AscendC::TransDataTo5HDParams& p) {
    check_type<T>();
    BlockContext& b = enter();
    check_list("dstList", dst, span_bytes(p, p.dstRepStride));
    check_list("srcList", src, span_bytes(p, p.srcRepStride));
    run<T>(b, dst, src, p);
}

}  // namespace trans_5hd
}  // namespace ascrun

namespace AscendC {

template <typename T>
inline void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& nchwconvParams) {
    ascrun::trans_5hd::from_addresses<T>(dstList, srcList, nchwconvParams);
}

// dst and src hold the 16 addresses each.
template <typename T>
inline void TransDataTo5HD(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src,
                           const TransDataTo5HDParams& nchwconvParams) {
    using namespace ascrun::trans_5hd;
    ascrun::BlockContext& b = ascrun::enter();
    uint64_t dst_list[kList], src_list[kList];
    // Issuing the instruction loads the addresses into its address registers (an assumption: see
    // pipes/model.h), so the scalar unit reads the lists, not the vector pipe.
    std::memcpy(dst_list, ascrun::ub_issue_operand(b, kApi, "dst", dst, kList), sizeof(dst_list));
    std::memcpy(src_list, ascrun::ub_issue_operand(b, kApi, "src", src, kList), sizeof(src_list));
    from_addresses<T>(dst_list, src_list, nchwconvParams);
}

template <typename T>
inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& nchwconvParams) {
    using namespace ascrun::trans_5hd;
    check_type<T>();
    ascrun::BlockContext& b = ascrun::enter();
    const uint64_t dst_span = span_bytes(nchwconvParams, nchwconvParams.dstRepStride);
    const uint64_t src_span = span_bytes(nchwconvParams, nchwconvParams.srcRepStride);
    uint64_t dst_list[kList], src_list[kList];
    static const char* const kDstRoles[kList] = {"dstList[0]", "dstList[1]", "dstList[2]", "dstList[3]",
                                                 "dstList[4]", "dstList[5]", "dstList[6]", "dstList[7]",
                                                 "dstList[8]", "dstList[9]", "dstList[10]", "dstList[11]",
                                                 "dstList[12]", "dstList[13]", "dstList[14]", "dstList[15]"};
    static const char* const kSrcRoles[kList] = {"srcList[0]", "srcList[1]", "srcList[2]", "srcList[3]",
                                                 "srcList[4]", "srcList[5]", "srcList[6]", "srcList[7]",
                                                 "srcList[8]", "srcList[9]", "srcList[10]", "srcList[11]",
                                                 "srcList[12]", "srcList[13]", "srcList[14]", "srcList[15]"};
    for (uint32_t i = 0; i < kList; ++i) {
        ascrun::ub_operand(b, kApi, kDstRoles[i], dstList[i], dst_span / sizeof(T));
        ascrun::ub_operand(b, kApi, kSrcRoles[i], srcList[i], src_span / sizeof(T));
        dst_list[i] = dstList[i].ascrun_addr();
        src_list[i] = srcList[i].ascrun_addr();
    }
    run<T>(b, dst_list, src_list, nchwconvParams);
}

}  // namespace AscendC

#pragma GCC visibility pop

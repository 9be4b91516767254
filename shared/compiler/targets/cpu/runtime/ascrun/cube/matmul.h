// ascrun cpu runtime: the Matmul high-level API (lib/matmul_intf.h; the reference's Matmul-Kernel侧接口):
// matmul::Matmul<A, B, C, Bias, CFG> with MatmulType, MatmulConfig and REGIST_MATMUL_OBJ.
//
// What a kernel observes is computed as the device's cube unit defines it: A (M x K) times B (K x N),
// products of half / bfloat16 / float inputs accumulated in float (int8 inputs in int32) in L0C,
// plus the bias, converted to C's type on the way out. The tiling is checked against the core's
// buffers as Init on the device would need it to fit (L1, L0A, L0B, L0C); a tiling that does not
// fit faults instead of corrupting memory. Base blocks come out in the tiling's iterateOrder.
//
// Mixed kernels: on the device the AIC serves the Matmul calls its AIVs send. Here the AIV that calls
// computes the result itself (the same values), and the AIC leaves the kernel at REGIST_MATMUL_OBJ,
// as the reference's macro makes it do after serving.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "ascrun/core/core.h"
#include "ascrun/core/tensor.h"
#include "ascrun/cube/tiling.h"
#include "ascrun/framework/tpipe.h"

#pragma GCC visibility push(hidden)

enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class LayoutMode : int32_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class BatchMode : int32_t { NONE = 0, BATCH_LESS_THAN_L1, BATCH_LARGE_THAN_L1, SINGLE_LARGE_THAN_L1 };
enum class IterateOrder : int32_t { ORDER_M = 0, ORDER_N, UNDEF };
enum class ScheduleType : int32_t { INNER_PRODUCT = 0, OUTER_PRODUCT };
enum class BatchOutMode : int32_t { SINGLE_BATCH = 0, MULTI_BATCH, DYNAMIC };

// MatmulConfig.md, in the order pyasc's translation writes it (an aggregate of 50 values).
struct MatmulConfig {
    bool doNorm;
    bool doBasicBlock;
    bool doMultiDataLoad;
    uint32_t basicM;
    uint32_t basicN;
    uint32_t basicK;
    bool intrinsicsCheck;
    bool isNBatch;
    bool enVecND2NZ;
    bool doSpecialBasicBlock;
    uint32_t doMTE2Preload;
    uint32_t singleCoreM;
    uint32_t singleCoreN;
    uint32_t singleCoreK;
    uint32_t stepM;
    uint32_t stepN;
    uint32_t baseMN;
    uint32_t singleCoreMN;
    bool enUnitFlag;
    bool isPerTensor;
    bool hasAntiQuantOffset;
    bool doIBShareNorm;
    bool doSpecialMDL;
    bool enableInit;
    BatchMode batchMode;
    bool enableEnd;
    bool enableGetTensorC;
    bool enableSetOrgShape;
    bool enableSetBias;
    bool enableSetTail;
    bool enableQuantVector;
    bool enableSetDefineData;
    uint8_t iterateMode;
    bool enableReuse;
    bool enableUBReuse;
    bool enableL1CacheUB;
    bool intraBlockPartSum;
    IterateOrder iterateOrder;
    ScheduleType scheduleType;
    bool enableDoubleCache;
    bool isBiasBatch;
    bool enableStaticPadZeros;
    bool isPartialOutput;
    bool enableMixDualMaster;
    bool isA2B2Shared;
    bool isEnableChannelSplit;
    bool enableKdimReorderLoad;
    bool isCO1Shared;
    uint32_t sharedCO1BufferSize;
    BatchOutMode batchOutMode;
};

constexpr MatmulConfig CFG_NORM{true, false, false, 0, 0, 0, false, false, false, false, 0, 0, 0, 0, 0, 0, 0, 0,
                                true, false, false, false, false, true, BatchMode::BATCH_LESS_THAN_L1, true, true,
                                true, true, true, true, true, 255, true, false, false, false, IterateOrder::UNDEF,
                                ScheduleType::INNER_PRODUCT, false, true, false, false, false, false, false, false,
                                false, 65536, BatchOutMode::SINGLE_BATCH};

namespace ascrun {
namespace matmul {

// The L0C accumulator of an input type: int32 for int8, float otherwise.
template <typename T>
using acc_t = typename std::conditional<std::is_same<T, int8_t>::value, int32_t, float>::type;

// An operand element as the cube reads it: exact in the accumulator's type (int8 and int32 in
// int32; half, bfloat16_t and float in float).
template <typename Acc, typename T>
Acc widen(T v) {
    if constexpr (std::is_integral<Acc>::value) {
        return static_cast<Acc>(v);
    } else {
        return static_cast<float>(v);
    }
}

// acc + a * b as L0C accumulates: int32 wraps (computed unsigned: no C++ overflow), float rounds.
template <typename Acc>
Acc multiply_add(Acc acc, Acc a, Acc b) {
    if constexpr (std::is_integral<Acc>::value) {
        return static_cast<Acc>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
    } else {
        return acc + a * b;
    }
}

// dst[0..count) = src's elements as the cube reads them; in runs of 8 between pointers that do not
// alias, which the compiler vectorises at -O2 (half's conversion is branch-free).
template <typename Acc, typename T>
void widen_row(const T* __restrict src, Acc* __restrict dst, int64_t count) {
    int64_t c = 0;
    for (; c + 8 <= count; c += 8) {
        for (int64_t j = 0; j < 8; ++j) dst[c + j] = widen<Acc>(src[c + j]);
    }
    for (; c < count; ++c) dst[c] = widen<Acc>(src[c]);
}

// N accumulators as one vector of the compiler's: float, or int32 computed unsigned as
// multiply_add does. An operation on a vector is the same operation on each lane, so a lane's sum
// is the scalar one, bit for bit.
template <typename Acc, int N>
struct Lanes {
    using lane = float;
    typedef float type __attribute__((vector_size(N * 4)));
};
template <int N>
struct Lanes<int32_t, N> {
    using lane = uint32_t;
    typedef uint32_t type __attribute__((vector_size(N * 4)));
};

// B is packed in panels of kPanel columns, K rows each (the blocks' first columns are multiples of
// 16, baseN's check, so a block's panels are whole ones); a tile is up to kTileRows rows of A
// times one panel.
constexpr int64_t kPanel = 16;
constexpr int64_t kTileRows = 4;

// tile[r][j] += A[r][p] * panel[p][j] for p = 0..k-1 in order, rows r < R (A's rows `lda` apart),
// in vectors of N lanes held in registers: each element's sum runs as the scalar loop's would.
template <int R, int N, typename Acc>
__attribute__((always_inline)) inline void accumulate_rows(const Acc* a, int64_t lda, const Acc* panel, int64_t k,
                                                           Acc (*tile)[kPanel]) {
    using V = typename Lanes<Acc, N>::type;
    using Lane = typename Lanes<Acc, N>::lane;
    constexpr int C = kPanel / N;  // vectors a row
    V acc[R][C];
#pragma GCC unroll 16
    for (int i = 0; i < R * C; ++i) std::memcpy(&acc[i / C][i % C], &tile[i / C][i % C * N], sizeof(V));
    for (int64_t p = 0; p < k; ++p) {
        V b[C];
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) std::memcpy(&b[c], panel + p * kPanel + c * N, sizeof(V));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const Lane x = static_cast<Lane>(a[r * lda + p]);
#pragma GCC unroll 4
            for (int c = 0; c < C; ++c) acc[r][c] += x * b[c];
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < R * C; ++i) std::memcpy(&tile[i / C][i % C * N], &acc[i / C][i % C], sizeof(V));
}

// The first `rows` rows of a tile, in 16-byte vectors (SSE2 on x86-64, NEON on arm64): two rows at
// a time, as eight accumulators and a panel row's four vectors fill 13 of the 16 registers.
template <typename Acc>
void accumulate_tile_16(const Acc* a, int64_t lda, const Acc* panel, int64_t k, Acc (&tile)[kTileRows][kPanel],
                        int64_t rows) {
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) accumulate_rows<2, 4>(a + r * lda, lda, panel, k, tile + r);
    if (r < rows) accumulate_rows<1, 4>(a + r * lda, lda, panel, k, tile + r);
}

#if defined(__x86_64__)
// The same with AVX's 32-byte vectors where the CPU has them: four rows at once, 2.5 times as fast.
// AVX brings no fused multiply-add, so products are rounded before the sum, as everywhere else.
template <typename Acc>
__attribute__((target("avx"))) void accumulate_tile_32(const Acc* a, int64_t lda, const Acc* panel, int64_t k,
                                                       Acc (&tile)[kTileRows][kPanel], int64_t rows) {
    switch (rows) {
        case 4: accumulate_rows<4, 8>(a, lda, panel, k, tile); break;
        case 3: accumulate_rows<3, 8>(a, lda, panel, k, tile); break;
        case 2: accumulate_rows<2, 8>(a, lda, panel, k, tile); break;
        default: accumulate_rows<1, 8>(a, lda, panel, k, tile); break;
    }
}
#endif

// The first `rows` (1..kTileRows) rows of a tile, the widest way this CPU can.
template <typename Acc>
void accumulate_tile(const Acc* a, int64_t lda, const Acc* panel, int64_t k, Acc (&tile)[kTileRows][kPanel],
                     int64_t rows) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx")) return accumulate_tile_32(a, lda, panel, k, tile, rows);
#endif
    accumulate_tile_16(a, lda, panel, k, tile, rows);
}

// The tiling fields a Matmul reads, checked once in Init. `a_bytes`, `b_bytes`: input element sizes.
inline void check_tiling(const TCubeTiling& t, uint32_t a_bytes, uint32_t b_bytes, bool bias, const char* api) {
    const struct {
        const char* name;
        int32_t value;
    } positive[] = {{"usedCoreNum", t.usedCoreNum}, {"M", t.M}, {"N", t.N}, {"Ka", t.Ka}, {"Kb", t.Kb},
                    {"singleCoreM", t.singleCoreM}, {"singleCoreN", t.singleCoreN}, {"singleCoreK", t.singleCoreK},
                    {"baseM", t.baseM}, {"baseN", t.baseN}, {"baseK", t.baseK}};
    for (const auto& f : positive) {
        if (f.value <= 0) {
            fault(format("%s: the tiling's %s is %d; it must be positive (fill the TCubeTiling with the host's "
                         "MultiCoreMatmulTiling.get_tiling)",
                         api, f.name, f.value));
        }
    }
    // Depths, steps and double-buffer counts of 0 mean one (pyasc's kernels that build their tiling
    // in the kernel leave stepKa, stepKb and dbL0* at 0); negative ones are corrupt.
    const struct {
        const char* name;
        int32_t value;
    } counts[] = {{"depthA1", t.depthA1}, {"depthB1", t.depthB1}, {"stepM", t.stepM}, {"stepN", t.stepN},
                  {"stepKa", t.stepKa}, {"stepKb", t.stepKb}, {"dbL0A", t.dbL0A}, {"dbL0B", t.dbL0B},
                  {"dbL0C", t.dbL0C}};
    for (const auto& f : counts) {
        if (f.value < 0) fault(format("%s: the tiling's %s is %d; it must not be negative", api, f.name, f.value));
    }
    auto at_least_one = [](int32_t v) { return uint64_t(v > 0 ? v : 1); };
    if (t.Ka != t.Kb) fault(format("%s: the tiling's Ka (%d) and Kb (%d) differ", api, t.Ka, t.Kb));
    if (t.baseM % 16 != 0 || t.baseN % 16 != 0) {
        fault(format("%s: the tiling's baseM (%d) and baseN (%d) must be multiples of 16 (a fractal's side)", api,
                     t.baseM, t.baseN));
    }
    if (t.baseK * a_bytes % 32 != 0) {
        fault(format("%s: the tiling's baseK (%d) must span whole 32-byte fractal rows (%u-byte elements)", api,
                     t.baseK, a_bytes));
    }
    auto kib = [](uint64_t bytes) { return format("%.1f KiB", bytes / 1024.0); };
    const uint64_t l0a = uint64_t(t.baseM) * t.baseK * a_bytes * at_least_one(t.dbL0A);
    const uint64_t l0b = uint64_t(t.baseK) * t.baseN * b_bytes * at_least_one(t.dbL0B);
    const uint64_t l0c = uint64_t(t.baseM) * t.baseN * 4 * at_least_one(t.dbL0C);
    const uint64_t l1 = at_least_one(t.depthA1) * t.baseM * t.baseK * a_bytes +
                        at_least_one(t.depthB1) * t.baseN * t.baseK * b_bytes + (bias ? uint64_t(t.baseN) * 4 : 0);
    const struct {
        const char* buffer;
        uint64_t need;
        uint64_t has;
        const char* what;
    } fits[] = {{"L0A", l0a, kL0ABytes, "baseM x baseK x dbL0A"},
                {"L0B", l0b, kL0BBytes, "baseK x baseN x dbL0B"},
                {"L0C", l0c, kL0CBytes, "baseM x baseN x dbL0C accumulators"},
                {"L1", l1, kL1Bytes, "depthA1 A tiles + depthB1 B tiles (+ bias)"}};
    for (const auto& f : fits) {
        if (f.need > f.has) {
            fault(format("%s: the tiling needs %s of %s (%s) but %s has %s", api, kib(f.need).c_str(), f.buffer,
                         f.what, f.buffer, kib(f.has).c_str()));
        }
    }
}

}  // namespace matmul
}  // namespace ascrun

namespace AscendC {
constexpr int32_t TOTAL_L1_SIZE = static_cast<int32_t>(ascrun::kL1Bytes);
constexpr int32_t TOTAL_L0C_SIZE = static_cast<int32_t>(ascrun::kL0CBytes);
}  // namespace AscendC

namespace matmul {

template <AscendC::TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
    constexpr static AscendC::TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
};

// An operand set by SetTensorA/B or SetBias: a GM tensor or a Unified Buffer one (ND).
template <typename T>
struct Operand {
    bool set = false;
    bool in_gm = true;
    AscendC::GlobalTensor<T> gm;
    AscendC::LocalTensor<T> ub;
};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = MatmulType<AscendC::TPosition::GM, CubeFormat::ND,
          float>, const MatmulConfig& MM_CFG = CFG_NORM>
class Matmul {
    using SrcA = typename A_TYPE::T;
    using SrcB = typename B_TYPE::T;
    using Dst = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    using Acc = ascrun::matmul::acc_t<SrcA>;

public:
    void Init(const TCubeTiling* tiling, AscendC::TPipe* tpipe = nullptr) {
        (void)tpipe;
        ascrun::enter();
        if (tiling == nullptr) ascrun::fault("Matmul::Init: the tiling is null");
        ascrun::matmul::check_tiling(*tiling, sizeof(SrcA), sizeof(SrcB), tiling->isBias != 0, "Matmul::Init");
        tiling_ = *tiling;
        org_m_ = tiling_.M, org_n_ = tiling_.N, org_ka_ = tiling_.Ka, org_kb_ = tiling_.Kb;
        single_m_ = tiling_.singleCoreM, single_n_ = tiling_.singleCoreN, single_k_ = tiling_.singleCoreK;
        bias_enabled_ = tiling_.isBias != 0;
        inited_ = true;
        reset_iteration();
    }

    void SetTensorA(const AscendC::GlobalTensor<SrcA>& gm, bool isTransposeA = false) {
        require("SetTensorA");
        a_ = Operand<SrcA>{true, true, gm, {}};
        trans_a_ = isTransposeA;
        reset_iteration();
    }
    void SetTensorA(const AscendC::LocalTensor<SrcA>& ub, bool isTransposeA = false) {
        require("SetTensorA");
        a_ = Operand<SrcA>{true, false, {}, ub};
        trans_a_ = isTransposeA;
        reset_iteration();
    }
    void SetTensorB(const AscendC::GlobalTensor<SrcB>& gm, bool isTransposeB = false) {
        require("SetTensorB");
        b_ = Operand<SrcB>{true, true, gm, {}};
        trans_b_ = isTransposeB;
        reset_iteration();
    }
    void SetTensorB(const AscendC::LocalTensor<SrcB>& ub, bool isTransposeB = false) {
        require("SetTensorB");
        b_ = Operand<SrcB>{true, false, {}, ub};
        trans_b_ = isTransposeB;
        reset_iteration();
    }
    void SetBias(const AscendC::GlobalTensor<BiasT>& gm) {
        require("SetBias");
        bias_ = Operand<BiasT>{true, true, gm, {}};
        bias_enabled_ = true;
        reset_iteration();
    }
    void SetBias(const AscendC::LocalTensor<BiasT>& ub) {
        require("SetBias");
        bias_ = Operand<BiasT>{true, false, {}, ub};
        bias_enabled_ = true;
        reset_iteration();
    }
    void DisableBias() {
        require("DisableBias");
        bias_enabled_ = false;
    }
    void ClearBias() { DisableBias(); }

    // The shape this core computes (SetTail.md, SetSingleShape.md): -1 keeps the tiling's.
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
        require("SetTail");
        if (tailM >= 0) single_m_ = tailM;
        if (tailN >= 0) single_n_ = tailN;
        if (tailK >= 0) single_k_ = tailK;
        reset_iteration();
    }
    void SetSingleShape(int singleM, int singleN, int singleK) { SetTail(singleM, singleN, singleK); }

    // The whole matrices' shapes, which give the operands' row strides (SetOrgShape.md).
    void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK); }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
        require("SetOrgShape");
        (void)orgKc;
        org_m_ = orgM, org_n_ = orgN, org_ka_ = orgKa, org_kb_ = orgKb;
        reset_iteration();
    }

    // The next base block (baseM x baseN) in the tiling's order, computed into the accumulators;
    // false once every block of the single-core shape has been.
    template <bool sync = true>
    bool Iterate(bool enPartialSum = false) {
        require("Iterate");
        load("Iterate");
        const int64_t blocks_m = ceil_div(single_m_, tiling_.baseM), blocks_n = ceil_div(single_n_, tiling_.baseN);
        if (next_ >= blocks_m * blocks_n) return false;
        const bool order_n = tiling_.iterateOrder == static_cast<int32_t>(IterateOrder::ORDER_N);
        block_m_ = order_n ? next_ / blocks_n : next_ % blocks_m;
        block_n_ = order_n ? next_ % blocks_n : next_ / blocks_m;
        ++next_;
        compute_block(enPartialSum);
        return true;
    }

    // The current block into a Unified Buffer tensor, ND with rows of baseN elements.
    template <bool sync = true>
    void GetTensorC(const AscendC::LocalTensor<Dst>& c, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
        ascrun::BlockContext& b = require("GetTensorC");
        (void)enSequentialWrite;
        if (next_ == 0) ascrun::fault("Matmul::GetTensorC: no block yet (call Iterate first)");
        const uint64_t count = uint64_t(tiling_.baseM) * tiling_.baseN;
        Dst* out = ascrun::ub_operand(b, "Matmul::GetTensorC", "dst", c, count);
        for (int64_t i = 0; i < rows_; ++i) {
            store_row(&out[i * tiling_.baseN], &acc_[i * tiling_.baseN], cols_, enAtomic);
        }
    }

    // The current block into its place in a GM matrix of orgN columns.
    template <bool sync = true>
    void GetTensorC(const AscendC::GlobalTensor<Dst>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
        ascrun::BlockContext& b = require("GetTensorC");
        if (next_ == 0) ascrun::fault("Matmul::GetTensorC: no block yet (call Iterate first)");
        const int64_t row0 = enSequentialWrite ? 0 : block_m_ * tiling_.baseM;
        const int64_t col0 = enSequentialWrite ? 0 : block_n_ * tiling_.baseN;
        const int64_t stride = enSequentialWrite ? cols_ : org_n_;
        for (int64_t i = 0; i < rows_; ++i) {
            Dst* out = gm.ascrun_access(b, "Matmul::GetTensorC", (row0 + i) * stride + col0, cols_, true);
            store_row(out, &acc_[i * tiling_.baseN], cols_, enAtomic);
        }
    }

    // Every block of the single-core shape into a GM matrix of orgN columns (IterateAll.md).
    template <bool sync = true>
    void IterateAll(const AscendC::GlobalTensor<Dst>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    bool waitIterateAll = false, bool fakeMsg = false) {
        (void)waitIterateAll, (void)fakeMsg;
        while (Iterate<sync>()) GetTensorC<sync>(gm, enAtomic, enSequentialWrite);
    }

    // batch = max(batchA, batchB) products of matrices stored one after another (LayoutMode NORMAL):
    // product i takes A i / (batch / batchA) and B i / (batch / batchB), and goes to C i
    // (IterateBatch.md). A matrix stride of 0 means the matrix's size.
    template <bool sync = true, bool waitIterateBatch = false>
    void IterateBatch(const AscendC::GlobalTensor<Dst>& gm, uint32_t batchA, uint32_t batchB, bool enSequentialWrite,
                      uint32_t matrixStrideA = 0, uint32_t matrixStrideB = 0, uint32_t matrixStrideC = 0) {
        require("IterateBatch");
        const uint32_t batch = std::max(batchA, batchB);
        if (batchA == 0 || batchB == 0 || batch % batchA != 0 || batch % batchB != 0) {
            ascrun::fault(ascrun::format("Matmul::IterateBatch: batchA %u and batchB %u must be positive and divide the "
                                         "larger",
                                         batchA, batchB));
        }
        if (!a_.in_gm || !b_.in_gm) ascrun::fault("Matmul::IterateBatch: A and B must be in GM");
        const Operand<SrcA> a = a_;
        const Operand<SrcB> b = b_;
        const uint64_t stride_a = matrixStrideA ? matrixStrideA : uint64_t(org_m_) * org_ka_;
        const uint64_t stride_b = matrixStrideB ? matrixStrideB : uint64_t(org_kb_) * org_n_;
        const uint64_t stride_c = matrixStrideC ? matrixStrideC : uint64_t(org_m_) * org_n_;
        for (uint32_t i = 0; i < batch; ++i) {
            a_.gm = a.gm[stride_a * (i / (batch / batchA))];
            b_.gm = b.gm[stride_b * (i / (batch / batchB))];
            reset_iteration();
            IterateAll<sync>(gm[stride_c * i], 0, enSequentialWrite);
        }
        a_ = a, b_ = b;
        reset_iteration();
    }

    void End() {
        require("End");
        reset_iteration();
    }

private:
    static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

    ascrun::BlockContext& require(const char* api) {
        ascrun::BlockContext& b = ascrun::enter();
        if (!inited_) {
            ascrun::fault(ascrun::format("Matmul::%s: the Matmul was never initialised (REGIST_MATMUL_OBJ with a "
                                         "tiling, or Init)",
                                         api));
        }
        return b;
    }

    void reset_iteration() {
        next_ = 0;
        loaded_ = false;
    }

    // Calls row(r, elements) for each row of an operand that is a row-major matrix `rows` x `cols`
    // with row stride `ld`, each row checked (GM) or the whole span at once (UB).
    template <typename T, typename Row>
    void for_each_row(ascrun::BlockContext& b, const char* role, const Operand<T>& op, int64_t rows, int64_t cols,
                      int64_t ld, Row&& row) {
        if (op.in_gm) {
            for (int64_t r = 0; r < rows; ++r) row(r, op.gm.ascrun_access(b, role, r * ld, cols, false));
        } else {
            const T* p = ascrun::ub_operand(b, role, "src", op.ub, uint64_t((rows - 1) * ld + cols));
            for (int64_t r = 0; r < rows; ++r) row(r, p + r * ld);
        }
    }

    // A (single_m x single_k, rows of single_k) and B (single_k x single_n, in panels of kPanel
    // columns) of this core as the cube reads them, widened once here rather than per product.
    void load(const char* api) {
        using ascrun::matmul::kPanel;
        using ascrun::matmul::widen_row;
        if (loaded_) return;
        ascrun::BlockContext& b = ascrun::enter();
        if (!a_.set || !b_.set) {
            ascrun::fault(ascrun::format("Matmul::%s: SetTensorA and SetTensorB come first", api));
        }
        const int64_t m = single_m_, n = single_n_, k = single_k_;
        if (m <= 0 || n <= 0 || k <= 0) {
            ascrun::fault(ascrun::format("Matmul::%s: the single-core shape %lld x %lld x %lld is empty", api,
                                         (long long)m, (long long)n, (long long)k));
        }
        std::vector<Acc> line;  // a stored row of a transposed operand, before it is scattered
        // A is M x Ka row-major (transposed: Ka x M)
        a_vals_.resize(static_cast<size_t>(m * k));
        if (trans_a_) {
            line.resize(static_cast<size_t>(m));
            for_each_row(b, "Matmul(A)", a_, k, m, org_m_, [&](int64_t p, const SrcA* src) {
                widen_row(src, line.data(), m);
                for (int64_t i = 0; i < m; ++i) a_vals_[i * k + p] = line[i];
            });
        } else {
            for_each_row(b, "Matmul(A)", a_, m, k, org_ka_,
                         [&](int64_t i, const SrcA* src) { widen_row(src, &a_vals_[i * k], k); });
        }
        // B is Kb x N row-major (transposed: N x Kb). Panel q holds columns q * kPanel.. of row p
        // at (q * k + p) * kPanel, zeros past N.
        b_panels_.assign(static_cast<size_t>(ceil_div(n, kPanel) * k * kPanel), Acc(0));
        if (trans_b_) {
            line.resize(static_cast<size_t>(k));
            for_each_row(b, "Matmul(B)", b_, n, k, org_kb_, [&](int64_t j, const SrcB* src) {
                widen_row(src, line.data(), k);
                Acc* column = &b_panels_[(j / kPanel * k) * kPanel + j % kPanel];
                for (int64_t p = 0; p < k; ++p) column[p * kPanel] = line[p];
            });
        } else {
            for_each_row(b, "Matmul(B)", b_, k, n, org_n_, [&](int64_t p, const SrcB* src) {
                for (int64_t j = 0; j < n; j += kPanel) {
                    widen_row(src + j, &b_panels_[(j / kPanel * k + p) * kPanel], std::min(kPanel, n - j));
                }
            });
        }
        bias_vals_.clear();
        if (bias_enabled_) {
            if (!bias_.set) ascrun::fault(ascrun::format("Matmul::%s: the tiling has isBias but SetBias was not called", api));
            bias_vals_.resize(static_cast<size_t>(n));
            for_each_row(b, "Matmul(bias)", bias_, 1, n, n,
                         [&](int64_t, const BiasT* src) { widen_row(src, bias_vals_.data(), n); });
        }
        loaded_ = true;
    }

    // acc_ = bias + A[block rows] x B[block cols], accumulated in Acc over K (or added to acc_), a
    // tile of kTileRows rows x one panel of B at a time.
    void compute_block(bool partial_sum) {
        using ascrun::matmul::kPanel;
        using ascrun::matmul::kTileRows;
        const int64_t k = single_k_;
        const int64_t r0 = block_m_ * tiling_.baseM, c0 = block_n_ * tiling_.baseN;
        rows_ = std::min<int64_t>(tiling_.baseM, single_m_ - r0);
        cols_ = std::min<int64_t>(tiling_.baseN, single_n_ - c0);
        acc_.resize(static_cast<size_t>(tiling_.baseM) * tiling_.baseN);
        const int64_t base_n = tiling_.baseN;
        for (int64_t j0 = 0; j0 < cols_; j0 += kPanel) {
            const Acc* panel = &b_panels_[static_cast<size_t>((c0 + j0) / kPanel * k * kPanel)];
            const int64_t w = std::min(kPanel, cols_ - j0);
            for (int64_t i0 = 0; i0 < rows_; i0 += kTileRows) {
                const int64_t h = std::min(kTileRows, rows_ - i0);
                Acc tile[kTileRows][kPanel] = {};
                for (int64_t i = 0; i < h; ++i) {
                    for (int64_t j = 0; j < w; ++j) {
                        tile[i][j] = partial_sum ? acc_[(i0 + i) * base_n + j0 + j]
                                                 : (bias_vals_.empty() ? Acc(0) : bias_vals_[c0 + j0 + j]);
                    }
                }
                ascrun::matmul::accumulate_tile(&a_vals_[static_cast<size_t>((r0 + i0) * k)], k, panel, k, tile, h);
                for (int64_t i = 0; i < h; ++i) {
                    for (int64_t j = 0; j < w; ++j) acc_[(i0 + i) * base_n + j0 + j] = tile[i][j];
                }
            }
        }
    }

    // A row of accumulators out to C's type (Fixpipe's conversion: round to nearest even), or added
    // to what is there (enAtomic 1: atomic add); plain stores in runs of 8, which -O2 vectorises.
    static void store_row(Dst* __restrict out, const Acc* __restrict acc, int64_t count, uint8_t enAtomic) {
        if (enAtomic == 1) {
            for (int64_t j = 0; j < count; ++j) {
                out[j] = static_cast<Dst>(ascrun::matmul::multiply_add(ascrun::matmul::widen<Acc>(out[j]), acc[j],
                                                                       Acc(1)));
            }
            return;
        }
        int64_t j = 0;
        for (; j + 8 <= count; j += 8) {
            for (int64_t l = 0; l < 8; ++l) out[j + l] = static_cast<Dst>(acc[j + l]);
        }
        for (; j < count; ++j) out[j] = static_cast<Dst>(acc[j]);
    }

    TCubeTiling tiling_{};
    bool inited_ = false;
    int64_t org_m_ = 0, org_n_ = 0, org_ka_ = 0, org_kb_ = 0;
    int64_t single_m_ = 0, single_n_ = 0, single_k_ = 0;
    Operand<SrcA> a_;
    Operand<SrcB> b_;
    Operand<BiasT> bias_;
    bool trans_a_ = false, trans_b_ = false, bias_enabled_ = false;
    bool loaded_ = false;
    std::vector<Acc> a_vals_, b_panels_, bias_vals_;
    int64_t next_ = 0, block_m_ = 0, block_n_ = 0, rows_ = 0, cols_ = 0;
    std::vector<Acc> acc_;
};

}  // namespace matmul

namespace ascrun {
namespace matmul {

// Whether REGIST_MATMUL_OBJ goes on in this core's code: not on the AIC of a mixed kernel, which on
// the device serves its AIVs' Matmul calls inside the macro and then returns.
inline bool registers_here() {
    BlockContext& b = enter();
    return !(b.core_type == AscendC::AIC && b.launch->cores().mixed());
}

inline void regist(AscendC::TPipe*, __gm__ uint8_t*) {}

template <class MM, class... Rest>
void regist(AscendC::TPipe* pipe, __gm__ uint8_t* workspace, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
    if (tiling != nullptr) mm.Init(tiling, pipe);  // a null tiling: the kernel calls Init itself
    regist(pipe, workspace, std::forward<Rest>(rest)...);
}

template <class MM>
void regist(AscendC::TPipe* pipe, __gm__ uint8_t* workspace, MM& mm) {
    (void)pipe, (void)workspace, (void)mm;
}

}  // namespace matmul
}  // namespace ascrun

// REGIST_MATMUL_OBJ(tpipe, workspace, mm1, tiling1, mm2, tiling2, ...) (REGIST_MATMUL_OBJ.md).
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)                                              \
    if (!::ascrun::matmul::registers_here()) return;                                          \
    ::ascrun::matmul::regist((tpipe), reinterpret_cast<__gm__ uint8_t*>(workspace), __VA_ARGS__)

#pragma GCC visibility pop

// ascrun cpu runtime: the atomic operations of stores to GM (基础API/原子操作: SetAtomicAdd.md,
// SetAtomicMax(ISASI).md, SetAtomicMin(ISASI).md, SetAtomicType.md, DisableDmaAtomic.md; SetAtomicNone
// is DisableDmaAtomic's former name, 附录/接口变更说明.md). Once set, every UB->GM DataCopy and
// DataCopyPad of the core combines each element it stores with what GM holds ("将待拷贝的内容和GM已有
// 内容进行求和，然后将求和结果写入GM"; Max/Min: "将最大值写入GM"), as the operation's type T, until
// DisableDmaAtomic. The combination is atomic across the launch's cores (one lock). GM is not cleared
// first ("该接口执行前不会自动清零GM数据"). Fixpipe's stores are not affected here.
// Faults: a store whose bytes are not whole elements of the atomic type.
#pragma once

#include <cstring>

#include "ascrun/core/core.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace atomic {

enum class Op : uint8_t { None = 0, Add, Max, Min };
enum class Type : uint8_t { None = 0, Int8, Int16, Half, BFloat16, Int32, Float };

// SetAtomicAdd.md, SetAtomicMax(ISASI).md, SetAtomicMin(ISASI).md: "支持的数据类型为int8_t、int16_t、half、
// bfloat16_t、int32_t、float" (Atlas A2/A3 and the Ascend 950 alike).
template <typename T>
constexpr Type type_of = std::is_same<T, int8_t>::value       ? Type::Int8
                         : std::is_same<T, int16_t>::value    ? Type::Int16
                         : std::is_same<T, half>::value       ? Type::Half
                         : std::is_same<T, bfloat16_t>::value ? Type::BFloat16
                         : std::is_same<T, int32_t>::value    ? Type::Int32
                         : std::is_same<T, float>::value      ? Type::Float
                                                              : Type::None;

inline void set(Op op, Type type) {
    BlockContext& b = enter();
    b.atomic_op = static_cast<uint8_t>(op);
    b.atomic_type = static_cast<uint8_t>(type);
}

// Stores `bytes` from `src` to GM at `dst` as the core's atomic mode says (a plain copy with none).
void combine(BlockContext& b, const char* api, uint8_t* dst, const uint8_t* src, uint64_t bytes);

inline void gm_store(BlockContext& b, const char* api, uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    if (b.atomic_op == static_cast<uint8_t>(Op::None)) {
        std::memcpy(dst, src, static_cast<size_t>(bytes));
    } else {
        combine(b, api, dst, src, bytes);
    }
}

}  // namespace atomic
}  // namespace ascrun

namespace AscendC {

#define ASCRUN_SET_ATOMIC(NAME, OP)                                                                             \
    template <typename T>                                                                                       \
    void NAME() {                                                                                               \
        static_assert(::ascrun::atomic::type_of<T> != ::ascrun::atomic::Type::None,                             \
                      #NAME ": T must be one of int8_t, int16_t, half, bfloat16_t, int32_t, float");            \
        ::ascrun::atomic::set(::ascrun::atomic::Op::OP, ::ascrun::atomic::type_of<T>);                          \
    }
ASCRUN_SET_ATOMIC(SetAtomicAdd, Add)
ASCRUN_SET_ATOMIC(SetAtomicMax, Max)
ASCRUN_SET_ATOMIC(SetAtomicMin, Min)
#undef ASCRUN_SET_ATOMIC

inline void DisableDmaAtomic() { ::ascrun::atomic::set(::ascrun::atomic::Op::None, ::ascrun::atomic::Type::None); }
inline void SetAtomicNone() { DisableDmaAtomic(); }

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the atomic stores of sync/atomic.h, compiled once per toolchain.
#include "ascrun/sync/atomic.h"

#include <mutex>

#include "ascrun/core/half.h"
#include "ascrun/vector/arith.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace atomic {
namespace {

std::mutex& store_lock() {
    static std::mutex mu;
    return mu;
}

template <typename T>
void combine_as(Op op, uint8_t* dst, const uint8_t* src, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
        T old, add;
        std::memcpy(&old, dst + i * sizeof(T), sizeof(T));
        std::memcpy(&add, src + i * sizeof(T), sizeof(T));
        const T r = op == Op::Add ? arith::add(old, add) : op == Op::Max ? arith::max(old, add) : arith::min(old, add);
        std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
    }
}

const char* op_name(Op op) { return op == Op::Add ? "SetAtomicAdd" : op == Op::Max ? "SetAtomicMax" : "SetAtomicMin"; }

}  // namespace

void combine(BlockContext& b, const char* api, uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    const Op op = static_cast<Op>(b.atomic_op);
    const Type type = static_cast<Type>(b.atomic_type);
    const uint64_t size = type == Type::Int8 ? 1 : type == Type::Int32 || type == Type::Float ? 4 : 2;
    if (bytes % size != 0) {
        fault(format("%s: %llu bytes stored under %s are not whole elements of its %llu-byte type", api,
                     static_cast<unsigned long long>(bytes), op_name(op), static_cast<unsigned long long>(size)));
    }
    const uint64_t n = bytes / size;
    std::lock_guard<std::mutex> hold(store_lock());
    switch (type) {
        case Type::Int8: combine_as<int8_t>(op, dst, src, n); break;
        case Type::Int16: combine_as<int16_t>(op, dst, src, n); break;
        case Type::Half: combine_as<half>(op, dst, src, n); break;
        case Type::BFloat16: combine_as<bfloat16_t>(op, dst, src, n); break;
        case Type::Int32: combine_as<int32_t>(op, dst, src, n); break;
        case Type::Float: combine_as<float>(op, dst, src, n); break;
        case Type::None: std::memcpy(dst, src, static_cast<size_t>(bytes)); break;
    }
}

}  // namespace atomic
}  // namespace ascrun

#pragma GCC visibility pop

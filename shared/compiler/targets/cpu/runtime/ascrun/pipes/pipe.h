// ascrun cpu runtime: the pipes of a core and which one each instruction runs on, the words the
// parts of the pipe model share (pipes/model.h).
//
// Which pipe an instruction is on (pipe_of): DataCopy GM->UB/L1 is MTE2, UB->GM MTE3, LoadData
// MTE1, Mmad M, Fixpipe FIX, element access (GetValue/SetValue) S, the other Unified Buffer
// instructions V. The high-level APIs that synchronize themselves (Matmul, DumpTensor,
// DumpAccChkPoint) act as a full barrier.
#pragma once

#include <cstdint>
#include <cstring>

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace pipes {

enum class Pipe : uint8_t { S, V, M, MTE1, MTE2, MTE3, FIX, All };
constexpr uint32_t kPipes = 7;  // the real ones; All is a full barrier
inline const char* pipe_name(Pipe p) {
    static const char* const names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL"};
    return names[static_cast<uint32_t>(p)];
}
constexpr uint32_t idx(Pipe p) { return static_cast<uint32_t>(p); }
constexpr uint32_t kS = idx(Pipe::S);  // the scalar unit, which issues every instruction

// The local memories an operand can be in, numbered as core/core.h's Memory: 0 UB, 1 L1, 2 L0A,
// 3 L0B, 4 L0C.
constexpr uint32_t kMemories = 5;

// The pipe an API runs on, from its name (the names are the runtime's own, e.g. "DataCopy(GM->UB)").
inline Pipe pipe_of(const char* api) {
    if (std::strncmp(api, "Matmul", 6) == 0 || std::strncmp(api, "Dump", 4) == 0) return Pipe::All;
    if (std::strncmp(api, "LoadData", 8) == 0) return Pipe::MTE1;
    if (std::strcmp(api, "Mmad") == 0) return Pipe::M;
    if (std::strncmp(api, "Fixpipe", 7) == 0) return Pipe::FIX;
    if (std::strstr(api, "(GM->") != nullptr) return Pipe::MTE2;
    if (std::strstr(api, "->GM") != nullptr) return Pipe::MTE3;
    return Pipe::V;
}

}  // namespace pipes
}  // namespace ascrun

#pragma GCC visibility pop

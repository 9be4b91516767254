// ascrun cpu runtime: the binary count forms vector/binary.h declares extern, compiled once per toolchain.
#include "ascrun/vector/binary.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace vec {

ASCRUN_BINARY_COUNT_INSTANCES()

}  // namespace vec
}  // namespace ascrun

#pragma GCC visibility pop

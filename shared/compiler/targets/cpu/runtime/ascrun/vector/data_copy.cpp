// ascrun cpu runtime: the type-independent parts of DataCopy (vector/data_copy.h) and the count forms
// it declares extern, compiled once per toolchain.
#include "ascrun/vector/data_copy.h"

#pragma GCC visibility push(hidden)

namespace ascrun {
namespace copy {

uint64_t moved_elements(BlockContext& b, const char* api, uint64_t count, size_t elem_bytes) {
    const uint64_t bytes = count * elem_bytes, moved = bytes / 32 * 32;
    if (moved != bytes) {
        warn(b, api, "count", [&] {
            return format("%s: count %llu x %zu bytes = %llu bytes is not a multiple of 32 bytes: moved %llu bytes "
                          "(%llu elements), rounded down as the device does (DataCopyPad moves other lengths)",
                          api, static_cast<unsigned long long>(count), elem_bytes,
                          static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(moved),
                          static_cast<unsigned long long>(moved / elem_bytes));
        });
    }
    return moved / elem_bytes;
}

}  // namespace copy
}  // namespace ascrun

namespace AscendC {

ASCRUN_DATA_COPY_INSTANCES()

}  // namespace AscendC

#pragma GCC visibility pop

// ascrun cpu runtime: the out-of-line checks of core/tensor.h, compiled once per toolchain. Each
// takes what it needs of an element type (size, alignment, name) as values.
#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace ascrun {

const char* position_name(AscendC::TPosition p) {
    using P = AscendC::TPosition;
    switch (p) {
        case P::GM: return "GM";
        case P::A1: return "A1";
        case P::A2: return "A2";
        case P::B1: return "B1";
        case P::B2: return "B2";
        case P::C1: return "C1";
        case P::C2: return "C2";
        case P::CO1: return "CO1";
        case P::CO2: return "CO2";
        case P::VECIN: return "VECIN";
        case P::VECOUT: return "VECOUT";
        case P::VECCALC: return "VECCALC";
        case P::SPM: return "SPM";
        case P::TSCM: return "TSCM";
        case P::C2PIPE2GM: return "C2PIPE2GM";
        case P::C2PIPE2LOCAL: return "C2PIPE2LOCAL";
        default: return "?";
    }
}

void unmodelled_position(const std::string& what, AscendC::TPosition p) {
    fault(format("%s: TPosition %s is not supported on the cpu target (only VECIN, VECOUT and VECCALC in the "
                 "Unified Buffer, A1, B1 and C1 in the L1 Buffer, A2 in L0A, B2 in L0B and CO1 in L0C)",
                 what.c_str(), position_name(p)));
}

void stale_buffer(const std::string& what, uint32_t addr) {
    fault(format("%s (UB offset %s) views a TQue buffer that was freed: used after FreeTensor, or after its TPipe "
                 "was reset or destroyed",
                 what.c_str(), hex(addr).c_str()));
}

void check_local_tensor(AscendC::TPosition pos, uint32_t addr, uint32_t tileSize, uint32_t elem_size,
                        const char* type) {
    enter();
    const uint64_t end = static_cast<uint64_t>(addr) + static_cast<uint64_t>(tileSize) * elem_size;
    if (!position_modelled(pos)) {
        unmodelled_position(format("LocalTensor<%s>(%s, %s, %u)", type, position_name(pos), hex(addr).c_str(), tileSize),
                            pos);
    }
    const Memory mem = memory_of(pos);
    if (end > memory_bytes(mem)) {
        fault(format("LocalTensor<%s>(%s, %s, %u): range [%s, %s) is outside the %s (%s bytes)", type,
                     position_name(pos), hex(addr).c_str(), tileSize, hex(addr).c_str(), hex(end).c_str(),
                     memory_name(mem), hex(memory_bytes(mem)).c_str()));
    }
    if (addr % kUbAlign != 0) {
        fault(format("LocalTensor<%s>(%s, %s, %u): the start address is not 32-byte aligned (LocalTensor addresses "
                     "must be multiples of 32 bytes)",
                     type, position_name(pos), hex(addr).c_str(), tileSize));
    }
}

void unbound_tensor(const char* type, const char* what) {
    fault(format("LocalTensor<%s>::%s: the tensor was never initialized (default-constructed and not assigned from a "
                 "constructor, AllocTensor, DeQue or Get)",
                 type, what));
}

uintptr_t gm_access(BlockContext& b, const char* api, uintptr_t base, long region, bool set, uint64_t offset,
                    uint64_t count, bool write, uint32_t elem_size, uint32_t elem_align, const char* type) {
    if (!set) {
        fault(format("%s: the GlobalTensor<%s> has no buffer (SetGlobalBuffer was not called)", api, type));
    }
    const uintptr_t addr = base + static_cast<uintptr_t>(offset * elem_size);
    if (addr % elem_align != 0) {
        fault(format("%s: GM address %s is not aligned to the %zu-byte size of %s (GM operands must be aligned to "
                     "their element size)",
                     api, hex(addr).c_str(), static_cast<size_t>(elem_size), type));
    }
    if (region < 0) {
        fault(format("%s: GM address %s is not inside any tensor argument of the launch", api, hex(addr).c_str()));
    }
    const Region& r = b.launch->regions()[static_cast<size_t>(region)];
    const uint64_t bytes = count * elem_size;
    const uint64_t off = static_cast<uint64_t>(addr - r.base);  // huge if below the base
    if (addr < r.base || off > r.bytes || bytes > r.bytes - off) {
        auto message = [&] {
            const int64_t first = static_cast<int64_t>(addr - r.base) / static_cast<int64_t>(elem_size);
            return format("%s: elements [%lld, %lld) of tensor argument '%s' are outside its %llu elements", api,
                          static_cast<long long>(first), static_cast<long long>(first + static_cast<int64_t>(count)),
                          r.name.c_str(), static_cast<unsigned long long>(r.bytes / elem_size));
        };
        const uint64_t limit = r.bytes + r.guard;
        const bool after = addr >= r.base;
        if (!after) fault(message());
        if (!b.launch->warn_bounds()) {
            // the device reads and writes past a tensor's end without a word (pyasc's tail tiles do)
            fault(message() + " (a device would go on past the end: bounds=\"warn\", --ascrun-bounds warn or "
                              "--bounds warn, runs on as it does)");
        }
        if (off > limit || bytes > limit - off) {
            fault(message() + format(" and past the %llu-byte guard zone after it (bounds=warn)",
                                     static_cast<unsigned long long>(r.guard)));
        }
        warn(b, api, r.name.c_str(), [&] {
            return message() + (write ? " (bounds=warn: the part past its end went to a guard zone, dropped after "
                                        "the launch)"
                                      : " (bounds=warn: the part past its end came from a guard zone)");
        });
    }
    if (write) b.launch->mark_written(static_cast<size_t>(region));
    return addr;
}

uint64_t ub_checked_bytes(BlockContext& b, const char* api, const char* role, bool bound, AscendC::TPosition pos,
                          uint64_t addr, uint32_t size, BufTag tag, uint64_t count, uint32_t elem_size, uint32_t align) {
    if (!bound) {
        fault(format("%s: %s LocalTensor was never initialized (default-constructed and not assigned from a "
                     "constructor, AllocTensor, DeQue or Get)",
                     api, role));
    }
    if (!in_ub(pos)) {
        fault(format("%s: %s LocalTensor is in TPosition %s; this instruction takes Unified Buffer tensors "
                     "(VECIN, VECOUT, VECCALC)",
                     api, role, position_name(pos)));
    }
    if (b.core_type == AscendC::AIC) {
        fault(format("%s: a Unified Buffer operand on the cube core (AIC), which has no Unified Buffer: run vector "
                     "code on the AIVs (`if asc.ascend_is_aiv():`)",
                     api));
    }
    const uint64_t end = count > kUbBytes ? ~uint64_t(0) : addr + count * elem_size;  // no overflow
    if (count > size) {
        auto message = [&] {
            return format("%s: %s: %llu elements from UB offset %s exceed the LocalTensor's %u elements", api, role,
                          static_cast<unsigned long long>(count), hex(addr).c_str(), size);
        };
        if (!b.launch->warn_bounds()) fault(message());
        if (end <= kUbBytes) {  // else the Unified Buffer check below faults
            warn(b, api, role, [&] { return message() + kPastLocalTensor; });
        }
    }
    if (end > kUbBytes) {
        fault(format("%s: %s LocalTensor range [%s, %s) is outside the Unified Buffer (%s bytes)", api, role,
                     hex(addr).c_str(), hex(end).c_str(), hex(kUbBytes).c_str()));
    }
    if (addr % align != 0) {
        fault(format("%s: %s LocalTensor starts at UB offset %s, which is not %u-byte aligned (%s must "
                     "start on a %u-byte boundary)",
                     api, role, hex(addr).c_str(), align,
                     align == kUbAlign ? "Unified Buffer operands" : "this operand", align));
    }
    check_buffer_live(b, tag, static_cast<uint32_t>(addr), [&] { return format("%s: %s LocalTensor", api, role); });
    return end;
}

void cube_checked(BlockContext& b, const char* api, const char* role, bool bound, AscendC::TPosition pos,
                  uint64_t addr, uint32_t size, BufTag tag, Memory mem, const char* positions, uint64_t bytes,
                  uint32_t elem_size, uint32_t align) {
    if (b.core_type == AscendC::AIV) {
        fault(format("%s: an L1/L0 operand on a vector core (AIV), which has no cube memories: cube instructions run "
                     "on the AIC of an AIC_ONLY or mixed kernel (pyasc makes a kernel without a Matmul object "
                     "AIV_ONLY: give it @asc.jit(kernel_type=config.KernelType.AIC_ONLY))",
                     api));
    }
    if (!bound) {
        fault(format("%s: %s LocalTensor was never initialized (default-constructed and not assigned from a "
                     "constructor, AllocTensor, DeQue or Get)",
                     api, role));
    }
    if (!position_modelled(pos) || memory_of(pos) != mem) {
        fault(format("%s: %s LocalTensor is in TPosition %s; this operand must be in %s", api, role,
                     position_name(pos), positions));
    }
    const uint64_t own = uint64_t{size} * elem_size;
    if (bytes > own) {
        fault(format("%s: %s: %llu bytes from %s offset %s exceed the LocalTensor's %llu bytes (%u elements)", api, role,
                     static_cast<unsigned long long>(bytes), offset_name(pos), hex(addr).c_str(),
                     static_cast<unsigned long long>(own), size));
    }
    if (addr % align != 0) {
        fault(format("%s: %s LocalTensor starts at %s offset %s, which is not %u-byte aligned (this operand must "
                     "start on a %u-byte boundary)",
                     api, role, offset_name(pos), hex(addr).c_str(), align, align));
    }
    check_buffer_live(b, tag, static_cast<uint32_t>(addr), [&] { return format("%s: %s LocalTensor", api, role); });
}

void check_overlap_bytes(const char* api, const char* dst_role, uint64_t d, uint64_t d_bytes, uint64_t d_own,
                         const char* src_role, uint64_t s, uint64_t s_bytes, uint64_t s_own) {
    const uint64_t d_end = d + d_bytes, s_end = s + s_bytes;
    if (d == s || d_end <= s || s_end <= d) return;
    if (d < s && (s - d) % 256 == 0) return;
    undefined_overlap(api, d, d_own, s, s_own, [&] {
        return format("%s: %s range [%s, %s) partially overlaps %s range [%s, %s) (operands must coincide or be "
                      "disjoint)",
                      api, dst_role, hex(d).c_str(), hex(d_end).c_str(), src_role, hex(s).c_str(), hex(s_end).c_str());
    });
}

}  // namespace ascrun

#pragma GCC visibility pop

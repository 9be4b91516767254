"""Kernels for the launch report: on-board printing (printf, DumpTensor, DumpAccChkPoint,
PrintTimeStamp), DataCopy's count form rounded down, and the bounds policy (GM and UB overruns).
Modes and sizes are runtime scalars, so each kernel is one build."""
import asc


@asc.jit
def print_kernel(x: asc.GlobalAddress, h: asc.GlobalAddress, k: asc.GlobalAddress, n: int, mode: int, rounds: int,
                 scale: float):
    """Block b dumps x, h, k (float32, float16, int32) at element b * n. mode 0: every print form;
    1: `rounds` printfs of a long line (the log caps); 2-8, 10-12: what the device does not define
    (4 prints a line first); 9: one dump of n elements; 13: x's address with %p."""
    b = asc.get_block_idx()
    x_gm = asc.GlobalTensor()
    h_gm = asc.GlobalTensor()
    k_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + b * n)
    h_gm.set_global_buffer(h + b * n)
    k_gm.set_global_buffer(k + b * n)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    hl = asc.LocalTensor(h.dtype, asc.TPosition.VECIN, 65536, n)
    kl = asc.LocalTensor(k.dtype, asc.TPosition.VECIN, 98304, n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(hl, h_gm, n)
    asc.data_copy(kl, k_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if mode == 0:
        asc.printf("block %d of %d: n=%d scale=%f\n", b, asc.get_block_num(), n, scale)
        asc.printf("%s %u %x %5d|%-4d|%.2f %%\n", "text", n, -n, n, b, scale)
        asc.dump_tensor(xl, 1, 4)
        asc.dump_tensor(h_gm, 2, 3)
        asc.dump_tensor(kl, 3, 5)
        asc.dump_tensor(xl, 4, 6, asc.ShapeInfo(asc.array(asc.uint32, [2, 3])))
        asc.dump_tensor(kl, 5, 4, asc.ShapeInfo(asc.array(asc.uint32, [2, 3])))
        asc.dump_tensor(kl, 6, 8, asc.ShapeInfo(asc.array(asc.uint32, [3, 2])))
        asc.dump_acc_chk_point(xl, 7, 8, 2)
        asc.dump_acc_chk_point(k_gm, 8, 3, 2)
        asc.print_time_stamp(70000)
        asc.dump_tensor(xl, 9, 0)
    elif mode == 1:
        for i in range(rounds):
            asc.printf("round %d: 0123456789012345678901234567890123456789012345678901234567890123456789\n", i)
    elif mode == 2:
        asc.printf("%e\n", scale)
    elif mode == 3:
        asc.printf("%d\n", scale)
    elif mode == 4:
        asc.printf("about to fail\n")
        asc.printf("%d %d\n", n)
    elif mode == 5:
        asc.dump_tensor(xl, 10, n, asc.ShapeInfo())
    elif mode == 6:
        asc.printf("%d\n", n, n)
    elif mode == 7:
        asc.printf("%#d\n", n)
    elif mode == 8:
        asc.dump_tensor(xl, 12, n, asc.ShapeInfo(asc.array(asc.uint32, [1, 1, 1, 1, 1, 1, 1, 1, 1])))
    elif mode == 9:
        asc.dump_tensor(xl, 11, n)
    elif mode == 10:
        asc.printf("%*d\n", n, n)
    elif mode == 11:
        asc.printf("%5000d\n", n)
    elif mode == 12:
        asc.printf("100%")
    else:
        asc.printf("%p %-20p|\n", x, x)


@asc.jit
def copy_count_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, count_in: int, count_ub: int,
                      count_out: int):
    """GM -> UB (count_in), UB -> UB (count_ub), UB -> GM (count_out) with the count form; the UB
    holds 0 before."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 4096, n)
    asc.duplicate(a, 0.0, n)
    asc.duplicate(c, 0.0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(a, x_gm, count_in)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(c, a, count_ub)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, c, count_out)


@asc.jit
def overrun_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, tile: int, half_tile: int, skip: int, peek: int):
    """z = x + x in tiles of `tile` elements per block, in LocalTensors declared with `half_tile`
    elements (the Add and both copies run past them, inside the Unified Buffer). Blocks past the
    arrays' ends read and write past them; a block reads from `skip` elements before its tile.
    peek > 0: then z[tile * b + 1] = element `peek` of the x tile, through a sub-tensor."""
    b = asc.get_block_idx()
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + b * tile)
    z_gm.set_global_buffer(z + b * tile)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, half_tile)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 32768, half_tile)
    asc.data_copy(xl, x_gm[-skip:], tile)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.add(zl, xl, xl, tile)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, tile)
    if peek > 0:
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        z_gm.set_value(1, xl[peek:].get_value(0))


@asc.jit
def tail_overlap_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int, zaddr: int,
                        count_form: int):
    """Add of 128 halves over three n-element half tensors (x at 0, y right after, z at zaddr), in
    the mask form (a full 128-lane mask) or the count form: with n = 64 it reads y on into z, as
    pyasc's test_vadd_bits does."""
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    z_gm.set_global_buffer(z, n)
    xl = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, n)
    yl = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 2 * n, n)
    zl = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, zaddr, n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(yl, y_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if count_form:
        asc.add(zl, xl, yl, 128)
    else:
        asc.add(zl, xl, yl, mask=128, repeat_times=1, repeat_params=asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)

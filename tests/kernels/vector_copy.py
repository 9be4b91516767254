"""Kernels for DataCopy with DataCopyParams and for DataCopyPad (GM <-> UB, UB -> UB)."""
import asc


@asc.jit
def strided_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], count: asc.ConstExpr[int],
                   length: asc.ConstExpr[int], in_gap: asc.ConstExpr[int], ub_gap: asc.ConstExpr[int],
                   ub_gap2: asc.ConstExpr[int], out_gap: asc.ConstExpr[int]):
    """GM -> UB (gaps in_gap on GM, ub_gap on UB), UB -> UB (ub_gap -> ub_gap2), UB -> GM (ub_gap2 ->
    out_gap), all with DataCopyParams(count, length, ...) (lengths and gaps in 32-byte blocks). z is
    read first: what no block covers keeps its value."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
    asc.duplicate(a, 0, n)
    asc.duplicate(b, 0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(a, x_gm, asc.DataCopyParams(count, length, in_gap, ub_gap))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(b, a, asc.DataCopyParams(count, length, ub_gap, ub_gap2))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, b, asc.DataCopyParams(count, length, ub_gap2, out_gap))


@asc.jit
def pad_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, u: asc.GlobalAddress, n: asc.ConstExpr[int],
               count: asc.ConstExpr[int], nbytes: asc.ConstExpr[int], src_gap: asc.ConstExpr[int],
               ub_gap: asc.ConstExpr[int], out_gap: asc.ConstExpr[int], is_pad: asc.ConstExpr[bool],
               left: asc.ConstExpr[int], right: asc.ConstExpr[int], value: asc.ConstExpr, ext: asc.ConstExpr[bool]):
    """DataCopyPad GM -> UB (rows of nbytes bytes, src_gap bytes apart on GM, padded rows ub_gap blocks
    apart in UB) then UB -> GM of the same rows (out_gap bytes apart on GM). u receives the whole UB
    tile (with its pads) through a plain DataCopy."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    u_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    u_gm.set_global_buffer(u, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.duplicate(a, 0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if ext:
        asc.data_copy_pad(a, x_gm, asc.DataCopyExtParams(count, nbytes, src_gap, ub_gap, 0),
                          asc.DataCopyPadExtParams(x.dtype, is_pad, left, right, value))
    else:
        asc.data_copy_pad(a, x_gm, asc.DataCopyParams(count, nbytes, src_gap, ub_gap),
                          asc.DataCopyPadParams(is_pad, left, right, value))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(u_gm, a, n)
    if ext:
        asc.data_copy_pad(z_gm, a, asc.DataCopyExtParams(count, nbytes, ub_gap, out_gap, 0))
    else:
        asc.data_copy_pad(z_gm, a, asc.DataCopyParams(count, nbytes, ub_gap, out_gap))

"""Kernel for the high-level API's element-wise math (Erf, Tanh), placing its operands itself.

x is the source, z the destination (read first: elements past count keep their values), one block.
src, dst and the temporary buffer are LocalTensors of n elements (tmp: tmp_bytes) at runtime UB
offsets, so one build covers the placements and the faults. op (ConstExpr): "erf" or "tanh". form
(ConstExpr): "count" (calCount, framework's space), "all" (the whole srcTensor), "tmp_count"
(sharedTmpBuffer and calCount), "tmp_all" (sharedTmpBuffer, the whole srcTensor).
"""
import asc


@asc.jit
def math_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], count: int, src_addr: int,
                dst_addr: int, tmp_addr: int, tmp_bytes: int, op: asc.ConstExpr[str], form: asc.ConstExpr[str]):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, src_addr, n)
    dst = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, dst_addr, n)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, tmp_addr, tmp_bytes)
    asc.data_copy(dst, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(src, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if op == "erf":
        if form == "count":
            asc.adv.erf(dst, src, count)
        elif form == "all":
            asc.adv.erf(dst, src)
        elif form == "tmp_count":
            asc.adv.erf(dst, src, count, tmp)
        else:
            asc.adv.erf(dst, src, temp_buffer=tmp)
    else:
        if form == "count":
            asc.adv.tanh(dst, src, count)
        elif form == "all":
            asc.adv.tanh(dst, src)
        elif form == "tmp_count":
            asc.adv.tanh(dst, src, count, tmp)
        else:
            asc.adv.tanh(dst, src, temp_buffer=tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, dst, n)

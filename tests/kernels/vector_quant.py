"""Kernel for AscendQuant (per tensor) with sharedTmpBuffer, placing its operands itself.

x is the source, z the int8 destination (read first: elements past count keep their values), one
block. src, dst and the temporary buffer are LocalTensors at runtime UB offsets (src_addr, dst_addr,
tmp_addr; dst may start at src, which the reference allows), so one build covers the placements and
the faults. cfg (ConstExpr, one build each): 0 no AscendQuantConfig, 1 {calcCount 100, workLocalSize
512}, 2 {calcCount 32, workLocalSize 1024}. with_tmp 0 (cfg 0): the form without sharedTmpBuffer.
"""
import asc


@asc.jit
def quant_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], count: int, src_addr: int,
                 dst_addr: int, tmp_addr: int, tmp_bytes: int, scale: float, offset: float, with_tmp: int,
                 cfg: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, src_addr, n)
    dst = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, dst_addr, n)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, tmp_addr, tmp_bytes)
    asc.data_copy(dst, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(src, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if cfg == 1:
        asc.adv.quant(dst, src, scale, offset, count, tmp, config=asc.adv.QuantConfig(100, 0, 0, 512))
    elif cfg == 2:
        asc.adv.quant(dst, src, scale, offset, count, tmp, config=asc.adv.QuantConfig(32, 0, 0, 1024))
    elif with_tmp == 1:
        asc.adv.quant(dst, src, scale, offset, count, tmp)
    else:
        asc.adv.quant(dst, src, scale, offset, count)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, dst, n)

"""Kernel for SoftMax (ND, with sum and max) on LocalTensors at runtime UB offsets, one block.

x is the source, z the destination, s and mx the sum and max outputs (each read first: what the
instruction does not write keeps its value); all hold n elements. The source gets the ShapeInfo
[rows, k] with original shape [rows, ori_k] (set_shape 0: none). dst_addr may be 0, the source's own
offset. (pyasc 1.1.1 drops softmax's temp_buffer from the call it emits, so there is no such form.)
One build per (dtype, sum dtype) and per basic (ConstExpr: isBasicBlock).
"""
import asc


@asc.jit
def softmax_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, s: asc.GlobalAddress, mx: asc.GlobalAddress,
                   n: asc.ConstExpr[int], rows: int, k: int, ori_k: int, set_shape: int, dst_addr: int, sum_addr: int,
                   max_addr: int, basic: asc.ConstExpr[bool]):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    s_gm = asc.GlobalTensor()
    m_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    s_gm.set_global_buffer(s, n)
    m_gm.set_global_buffer(mx, n)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    dst = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, dst_addr, n)
    sum_t = asc.LocalTensor(s.dtype, asc.TPosition.VECOUT, sum_addr, n)
    max_t = asc.LocalTensor(mx.dtype, asc.TPosition.VECOUT, max_addr, n)
    asc.data_copy(dst, z_gm, n)
    asc.data_copy(sum_t, s_gm, n)
    asc.data_copy(max_t, m_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(src, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if set_shape == 1:
        src.set_shape_info(asc.ShapeInfo(asc.array(asc.uint32, (rows, k)), asc.array(asc.uint32, (rows, ori_k))))
    tiling = asc.adv.SoftmaxTiling()
    asc.adv.softmax(dst, sum_t, max_t, src, tiling, basic_block=basic)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, dst, n)
    asc.data_copy(s_gm, sum_t, n)
    asc.data_copy(m_gm, max_t, n)

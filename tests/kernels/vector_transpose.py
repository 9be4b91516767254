"""Kernel for Transpose, 16 x 16 form."""
import asc


@asc.jit
def transpose_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, overlap: asc.ConstExpr[bool]):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 256)
    z_gm.set_global_buffer(z, 256)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 512)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 1024, 256)
    asc.data_copy(a, x_gm, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if overlap:
        asc.transpose(a[128:], a)
    else:
        asc.transpose(b, a)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, b, 256)

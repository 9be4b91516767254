"""Kernel for Cast (count form) with a round mode."""
import asc


@asc.jit
def cast_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], count: asc.ConstExpr[int],
                mode: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, n * 8, n)
    asc.data_copy(a, x_gm, n)
    asc.data_copy(b, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.cast(b, a, asc.RoundMode(mode), count)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, b, n)

"""z = x + y on bfloat16 tensors, computed in float (bfloat16_t has no Add on Atlas A2/A3): Cast up,
Add, Cast back with CAST_RINT (round to nearest even). One block; asc.bfloat16 is pyasc's nightly's."""
import asc


@asc.jit
def bf16_add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    z_gm.set_global_buffer(z, n)
    xb = asc.LocalTensor(asc.bfloat16, asc.TPosition.VECIN, 0, n)
    yb = asc.LocalTensor(asc.bfloat16, asc.TPosition.VECIN, 2 * n, n)
    xf = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 4 * n, n)
    yf = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 8 * n, n)
    zb = asc.LocalTensor(asc.bfloat16, asc.TPosition.VECOUT, 12 * n, n)
    asc.data_copy(xb, x_gm, n)
    asc.data_copy(yb, y_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.cast(xf, xb, asc.RoundMode.CAST_NONE, n)
    asc.cast(yf, yb, asc.RoundMode.CAST_NONE, n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.add(xf, xf, yf, n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.cast(zb, xf, asc.RoundMode.CAST_RINT, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zb, n)

"""Small kernels for the count-form vector instructions and block intrinsics, one tile per block."""
from typing import Tuple

import asc


@asc.jit
def binary_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                  op: asc.ConstExpr[str]):
    offset = asc.get_block_idx() * n
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, n)
    y_gm.set_global_buffer(y + offset, n)
    z_gm.set_global_buffer(z + offset, n)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, 1)
    in_y = asc.TQue(asc.TPosition.VECIN, 1)
    out_z = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(in_x, 1, n * x.dtype.sizeof())
    pipe.init_buffer(in_y, 1, n * y.dtype.sizeof())
    pipe.init_buffer(out_z, 1, n * z.dtype.sizeof())
    x_local = in_x.alloc_tensor(x.dtype)
    y_local = in_y.alloc_tensor(y.dtype)
    asc.data_copy(x_local, x_gm, n)
    asc.data_copy(y_local, y_gm, n)
    in_x.enque(x_local)
    in_y.enque(y_local)
    xs = in_x.deque(x.dtype)
    ys = in_y.deque(y.dtype)
    zs = out_z.alloc_tensor(z.dtype)
    if op == "add":
        asc.add(zs, xs, ys, n)
    elif op == "sub":
        asc.sub(zs, xs, ys, n)
    elif op == "mul":
        asc.mul(zs, xs, ys, n)
    elif op == "div":
        asc.div(zs, xs, ys, n)
    elif op == "max":
        asc.max(zs, xs, ys, n)
    elif op == "min":
        asc.min(zs, xs, ys, n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    out_z.enque(zs)
    in_x.free_tensor(xs)
    in_y.free_tensor(ys)
    zo = out_z.deque(z.dtype)
    asc.data_copy(z_gm, zo, n)
    out_z.free_tensor(zo)


@asc.jit
def scalar_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], add: float, mul: float):
    """z = (x + add) * mul, with adds/muls in count form."""
    offset = asc.get_block_idx() * n
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, n)
    z_gm.set_global_buffer(z + offset, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    z_local = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
    asc.data_copy(x_local, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(z_local, x_local, add, n)
    asc.muls(z_local, z_local, mul, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, z_local, n)


@asc.jit
def block_num_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """z = x * block_num + block_idx, per block (int32)."""
    offset = asc.get_block_idx() * n
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, n)
    z_gm.set_global_buffer(z + offset, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    z_local = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
    asc.data_copy(x_local, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.muls(z_local, x_local, asc.get_block_num(), n)
    asc.adds(z_local, z_local, asc.get_block_idx(), n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, z_local, n)


@asc.jit
def spin_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, rounds: int):
    """z = x + 1, recomputed `rounds` times: a huge `rounds` never ends in practice."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    z_gm.set_global_buffer(z, 64)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
    z_local = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 256, 64)
    asc.data_copy(x_local, x_gm, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(rounds):
        asc.adds(z_local, x_local, 1.0, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, z_local, 64)


@asc.jit
def tile_shape(n: int) -> Tuple[int, int]:
    """A helper annotated as pyasc's matmul tutorials annotate theirs."""
    return n, n * 2


@asc.jit
def typed_helper_copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """z = x over 64 elements, the count from a helper with a typing annotation."""
    half, n = tile_shape(32)
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    t = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(t, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, t, n)

"""Kernels that break the rules the cpu runtime enforces; each must fail with a clear message."""
import asc


@asc.jit
def ub_overflow_kernel(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    # 4096 floats starting at 180 KiB run past the 192 KiB Unified Buffer.
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 180 * 1024, n)
    asc.data_copy(x_local, x_gm, n)


@asc.jit
def gm_overrun_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    # Every block copies n elements from offset block_idx * n: blocks past the arrays' end overrun.
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + asc.get_block_idx() * n)
    z_gm.set_global_buffer(z + asc.get_block_idx() * n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(x_local, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, x_local, n)


@asc.jit
def deque_empty_kernel(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    que = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que, 1, n * x.dtype.sizeof())
    x_local = que.deque(x.dtype)
    que.free_tensor(x_local)


@asc.jit
def alloc_twice_kernel(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    que = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que, 1, n * x.dtype.sizeof())
    first = que.alloc_tensor(x.dtype)
    second = que.alloc_tensor(x.dtype)
    que.free_tensor(first)
    que.free_tensor(second)

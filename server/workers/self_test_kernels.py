"""The kernels of `ascrun worker --self-test`, each with its arguments and its numpy reference:
pyasc's tutorial Add (examples/add.py, 8 cores), then one kernel each for a reduction, a cast and
the mask + repeat form of a vector instruction. CASES: name -> a function returning
(kernel, core_num, fresh arguments, the expected outputs by parameter name)."""
from typing import Any, Callable, Dict, Tuple

import numpy as np

import asc

N = 1024  # elements of the one-block kernels
TILE_NUM = 8  # examples/add.py's tiling
BUFFER_NUM = 2
MASK, REPEAT = 40, 4  # the masked add: the first 40 of each 64 float32 lanes, 4 repeats

Case = Tuple[Any, int, tuple, Dict[str, np.ndarray]]


@asc.jit
def vadd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)

    tile_length = block_length // TILE_NUM // BUFFER_NUM
    data_type = x.dtype
    buffer_size = tile_length * BUFFER_NUM * data_type.sizeof()

    x_local = asc.LocalTensor(data_type, asc.TPosition.VECIN, 0, tile_length * BUFFER_NUM)
    y_local = asc.LocalTensor(data_type, asc.TPosition.VECIN, buffer_size, tile_length * BUFFER_NUM)
    z_local = asc.LocalTensor(data_type, asc.TPosition.VECOUT, buffer_size + buffer_size, tile_length * BUFFER_NUM)

    for i in range(TILE_NUM * BUFFER_NUM):
        buf_id = i % BUFFER_NUM
        asc.data_copy(x_local[buf_id * tile_length:], x_gm[i * tile_length:], tile_length)
        asc.data_copy(y_local[buf_id * tile_length:], y_gm[i * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.MTE2_V, buf_id)
        asc.wait_flag(asc.HardEvent.MTE2_V, buf_id)
        asc.add(z_local[buf_id * tile_length:], x_local[buf_id * tile_length:], y_local[buf_id * tile_length:],
                tile_length)
        asc.set_flag(asc.HardEvent.V_MTE3, buf_id)
        asc.wait_flag(asc.HardEvent.V_MTE3, buf_id)
        asc.data_copy(z_gm[i * tile_length:], z_local[buf_id * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, buf_id)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, buf_id)


@asc.jit
def reduce_sum_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """z[0] = the sum of x (ReduceSum, count form); z's other 7 elements are copied through."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, 8)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    work = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, n * x.dtype.sizeof(), n)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 2 * n * x.dtype.sizeof(), 8)
    asc.data_copy(src, x_gm, n)
    asc.data_copy(dst, z_gm, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.reduce_sum(dst, src, work, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, dst, 8)


@asc.jit
def cast_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """z = float16(x), rounded to nearest even (Cast, count form, CAST_NONE)."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
    asc.data_copy(a, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.cast(b, a, asc.RoundMode.CAST_NONE, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, b, n)


@asc.jit
def masked_add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                      mask: asc.ConstExpr[int], repeat: asc.ConstExpr[int]):
    """Add with a continuous mask over `repeat` repeats of 256 bytes; z is read first, so the lanes
    the mask leaves out keep their values."""
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    z_gm.set_global_buffer(z, n)
    nb = n * x.dtype.sizeof()
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    yl = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, nb, n)
    zl = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 2 * nb, n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(yl, y_gm, n)
    asc.data_copy(zl, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.add(zl, xl, yl, mask, repeat, asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8))
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)


def _add() -> Case:
    rng = np.random.default_rng(2025)
    x, y = rng.random(8 * 2048, dtype=np.float32), rng.random(8 * 2048, dtype=np.float32)
    return vadd_kernel, 8, (x, y, np.zeros_like(x), 2048), {"z": x + y}


def _reduce_sum() -> Case:
    # whole numbers: every order of summation gives the exact sum
    x = np.random.default_rng(1).integers(-1000, 1000, N).astype(np.float32)
    z = np.full(8, 7, np.float32)
    expected = z.copy()
    expected[0] = x.sum(dtype=np.float64)
    return reduce_sum_kernel, 1, (x, z, N), {"z": expected}


def _cast() -> Case:
    x = np.random.default_rng(2).uniform(-60000, 60000, N).astype(np.float32)
    x[:6] = [0.5, 1.5, 2.5, -2.5, 2049.0, 2051.0]  # 2049 and 2051 are ties in float16: to even (2048, 2052)
    return cast_kernel, 1, (x, np.zeros(N, np.float16), N), {"z": x.astype(np.float16)}


def _masked_add() -> Case:
    rng = np.random.default_rng(3)
    x, y = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    z = np.full(N, -1, np.float32)
    expected = z.copy()
    for r in range(REPEAT):
        lanes = slice(r * 64, r * 64 + MASK)
        expected[lanes] = x[lanes] + y[lanes]
    return masked_add_kernel, 1, (x, y, z, N, MASK, REPEAT), {"z": expected}


CASES: Dict[str, Callable[[], Case]] = {"add": _add, "reduce_sum": _reduce_sum, "cast_f32_f16": _cast,
                                        "masked_add": _masked_add}

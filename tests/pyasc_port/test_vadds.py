# Port of pyasc python/test/generalization/basic/test_vadds.py: adds (tensor + scalar), count form.
import pytest
import torch

import asc
import asc.lib.runtime as rt

from .inputs import VADD_CASES, operand, scalar_operand

pytestmark = pytest.mark.kernel


@asc.jit
def vadds_kernel(x: asc.GlobalAddress, scalar, z: asc.GlobalAddress, block_length: asc.ConstExpr[int],
                buffer_num: asc.ConstExpr[int], tile_length: asc.ConstExpr[int], tile_num: asc.ConstExpr[int]):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset)
    z_gm.set_global_buffer(z + offset)
    pipe = asc.TPipe()
    in_queue_x = asc.TQue(asc.TPosition.VECIN, buffer_num)
    out_queue_z = asc.TQue(asc.TPosition.VECOUT, buffer_num)
    pipe.init_buffer(que=in_queue_x, num=buffer_num, len=tile_length * x.dtype.sizeof())
    pipe.init_buffer(que=out_queue_z, num=buffer_num, len=tile_length * z.dtype.sizeof())
    for i in range(tile_num):
        copy_in(i, x_gm, in_queue_x, tile_length)
        compute(scalar, z_gm, in_queue_x, out_queue_z, tile_length)
        copy_out(i, z_gm, out_queue_z, tile_length)


@asc.jit
def copy_in(i: int, x_gm: asc.GlobalAddress, in_queue_x: asc.TQue, tile_length: asc.ConstExpr[int]):
    x_local = in_queue_x.alloc_tensor(x_gm.dtype)
    asc.data_copy(x_local, x_gm[i * tile_length:], count=tile_length)
    in_queue_x.enque(x_local)


@asc.jit
def compute(scalar, z_gm: asc.GlobalTensor, in_queue_x: asc.TQue, out_queue_z: asc.TQue,
                tile_length: asc.ConstExpr[int]):
    x_local = in_queue_x.deque(z_gm.dtype)
    z_local = out_queue_z.alloc_tensor(z_gm.dtype)
    asc.adds(z_local, x_local, scalar, count=tile_length)
    out_queue_z.enque(z_local)
    in_queue_x.free_tensor(x_local)


@asc.jit
def copy_out(i: int, z_gm: asc.GlobalTensor, out_queue_z: asc.TQue, tile_length: asc.ConstExpr[int]):
    z_local = out_queue_z.deque(z_gm.dtype)
    asc.data_copy(z_gm[i * tile_length:], z_local, count=tile_length)
    out_queue_z.free_tensor(z_local)


def vadds_launch(x: torch.Tensor, scalar) -> torch.Tensor:
    z = torch.zeros_like(x)
    use_core_num = 16
    block_length = (z.numel() + use_core_num - 1) // use_core_num
    tile_length = 512
    tile_num = (block_length + tile_length - 1) // tile_length
    buffer_num = 1
    vadds_kernel[use_core_num, rt.current_stream()](x, scalar, z, block_length, buffer_num, tile_length, tile_num)
    return z


CASES = VADD_CASES


@pytest.mark.parametrize("dtype, size", CASES)
def test_vadds(dtype, size):
    x, scalar = operand(dtype, size), scalar_operand(dtype)
    z = vadds_launch(x, scalar)
    assert torch.allclose(z, x + scalar)

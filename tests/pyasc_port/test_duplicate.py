# Port of pyasc python/test/generalization/basic/test_duplicate.py: duplicate (fill with a scalar), count form.
import pytest
import torch

import asc
import asc.lib.runtime as rt

from .inputs import FLOATS

pytestmark = pytest.mark.kernel


@asc.jit
def duplicate_kernel(scalar, z: asc.GlobalAddress, block_length: asc.ConstExpr[int],
                buffer_num: asc.ConstExpr[int], tile_length: asc.ConstExpr[int], tile_num: asc.ConstExpr[int]):
    offset = asc.get_block_idx() * block_length
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z + offset)
    pipe = asc.TPipe()
    out_queue_z = asc.TQue(asc.TPosition.VECOUT, buffer_num)
    pipe.init_buffer(que=out_queue_z, num=buffer_num, len=tile_length * z.dtype.sizeof())
    for i in range(tile_num):
        compute(scalar, z_gm, out_queue_z, tile_length)
        copy_out(i, z_gm, out_queue_z, tile_length)


@asc.jit
def compute(scalar, z_gm: asc.GlobalTensor, out_queue_z: asc.TQue, tile_length: asc.ConstExpr[int]):
    z_local = out_queue_z.alloc_tensor(z_gm.dtype)
    asc.duplicate(z_local, scalar, count=tile_length)
    out_queue_z.enque(z_local)


@asc.jit
def copy_out(i: int, z_gm: asc.GlobalTensor, out_queue_z: asc.TQue, tile_length: asc.ConstExpr[int]):
    z_local = out_queue_z.deque(z_gm.dtype)
    asc.data_copy(z_gm[i * tile_length:], z_local, count=tile_length)
    out_queue_z.free_tensor(z_local)


def duplicate_launch(scalar, size) -> torch.Tensor:
    z = torch.zeros(size)  # float32 whatever the case's dtype, as in pyasc's test
    use_core_num = 16
    block_length = (z.numel() + use_core_num - 1) // use_core_num
    tile_length = 512
    tile_num = (block_length + tile_length - 1) // tile_length
    buffer_num = 1
    duplicate_kernel[use_core_num, rt.current_stream()](scalar, z, block_length, buffer_num, tile_length, tile_num)
    return z


CASES = [
    pytest.param(torch.float32, (1000,)),
    pytest.param(torch.float32, (1,)),
    pytest.param(torch.float16, (2048,)),
    pytest.param(torch.int32, (8192,)),
    pytest.param(torch.int16, (8192,)),
]


@pytest.mark.parametrize("dtype, size", CASES)
def test_duplicate(dtype, size):
    if dtype in FLOATS:
        scalar = torch.randn((), dtype=dtype).item()
    else:
        scalar = torch.randint(1, 99, (), dtype=dtype).item()
    z = duplicate_launch(scalar, size)
    assert torch.allclose(z, torch.full(size, scalar, dtype=z.dtype))

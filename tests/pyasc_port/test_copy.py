# Port of pyasc python/test/generalization/basic/test_copy.py: duplicate 0, then copy with mask 64 and 4 repeats.
import pytest
import torch

import asc
import asc.lib.runtime as rt

from .inputs import VADD_CASES, operand

pytestmark = pytest.mark.kernel


@asc.jit
def copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, data_size: asc.ConstExpr[int]):

    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    pipe = asc.TPipe()
    in_queue_x = asc.TQue(asc.TPosition.VECIN, 1)
    out_queue_z = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_queue_x, num=1, len=data_size * x.dtype.sizeof())
    pipe.init_buffer(que=out_queue_z, num=1, len=data_size * z.dtype.sizeof())
    copy_in(x_gm, in_queue_x, data_size)
    compute(z_gm, in_queue_x, out_queue_z, data_size)
    copy_out(z_gm, out_queue_z, data_size)


@asc.jit
def copy_in(x_gm: asc.GlobalTensor, in_queue_x: asc.TQue, data_size: asc.ConstExpr[int]):
    x_local = in_queue_x.alloc_tensor(x_gm.dtype)
    asc.data_copy(x_local, x_gm, count=data_size)
    in_queue_x.enque(x_local)


@asc.jit
def compute(z_gm: asc.GlobalTensor, in_queue_x: asc.TQue, out_queue_z: asc.TQue, data_size: asc.ConstExpr[int]):
    src_local = in_queue_x.deque(z_gm.dtype)
    dst_local = out_queue_z.alloc_tensor(src_local.dtype)
    asc.duplicate(dst_local, 0, data_size)
    mask = 64
    repeat_time = 4
    params = asc.CopyRepeatParams(
        dst_stride=1,
        src_stride=1,
        dst_repeat_size=8,
        src_repeat_size=8
    )
    asc.copy(dst_local, src_local, mask, repeat_time, params)
    out_queue_z.enque(dst_local)
    in_queue_x.free_tensor(src_local)


@asc.jit
def copy_out(z_gm: asc.GlobalTensor, out_queue_z: asc.TQue, data_size: asc.ConstExpr[int]):
    z_local = out_queue_z.deque(z_gm.dtype)
    asc.data_copy(z_gm, z_local, count=data_size)
    out_queue_z.free_tensor(z_local)


def copy_launch(x: torch.Tensor) -> torch.Tensor:
    z = torch.zeros_like(x)
    use_core_num = 1
    copy_kernel[use_core_num, rt.current_stream()](x, z, x.numel())
    return z


def expected_copy(x: torch.Tensor, size) -> torch.Tensor:
    """Repeat i copies 64 elements from src element i * 8 blocks to the same dst element; repeats
    that would run past the tensor are left out, as pyasc's test models it."""
    expected = torch.zeros_like(x)
    mask, repeat_time, repeat_size_in_blocks = 64, 4, 8
    repeat_stride = repeat_size_in_blocks * (32 // x.dtype.itemsize)
    for i in range(repeat_time):
        start = i * repeat_stride
        if start + mask > size[0]:
            break
        expected[start:start + mask] = x[start:start + mask]
    return expected


CASES = [*VADD_CASES[:-1], pytest.param(torch.int32, (1000,))]  # pyasc's list ends in another size here


@pytest.mark.parametrize("dtype, size", CASES)
def test_copy(dtype, size):
    x = operand(dtype, size)
    z = copy_launch(x)
    assert torch.allclose(z, expected_copy(x, size))

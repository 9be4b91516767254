"""Vector cases in the shape of pyasc's generalization/basic tests (torch tensors, dtype x shape
parameters, 16 cores, 512-element tiles): vadd (add) and vadds (adds, count form). As there, the
backend is NPU and the tensors are made with device="npu" (host tensors under ascrun)."""
import pytest

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config

try:
    import torch
except ModuleNotFoundError:
    pytest.skip("torch is not installed", allow_module_level=True)


@asc.jit
def vadd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: asc.ConstExpr[int],
                tile_length: asc.ConstExpr[int], tile_num: asc.ConstExpr[int]):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset)
    y_gm.set_global_buffer(y + offset)
    z_gm.set_global_buffer(z + offset)
    pipe = asc.TPipe()
    in_queue_x = asc.TQue(asc.TPosition.VECIN, 1)
    in_queue_y = asc.TQue(asc.TPosition.VECIN, 1)
    out_queue_z = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_queue_x, num=1, len=tile_length * x.dtype.sizeof())
    pipe.init_buffer(que=in_queue_y, num=1, len=tile_length * y.dtype.sizeof())
    pipe.init_buffer(que=out_queue_z, num=1, len=tile_length * z.dtype.sizeof())
    for i in range(tile_num):
        x_local = in_queue_x.alloc_tensor(x.dtype)
        y_local = in_queue_y.alloc_tensor(y.dtype)
        asc.data_copy(x_local, x_gm[i * tile_length:], count=tile_length)
        asc.data_copy(y_local, y_gm[i * tile_length:], count=tile_length)
        in_queue_x.enque(x_local)
        in_queue_y.enque(y_local)
        xs = in_queue_x.deque(x.dtype)
        ys = in_queue_y.deque(y.dtype)
        zs = out_queue_z.alloc_tensor(z.dtype)
        asc.add(zs, xs, ys, count=tile_length)
        out_queue_z.enque(zs)
        in_queue_x.free_tensor(xs)
        in_queue_y.free_tensor(ys)
        z_local = out_queue_z.deque(z.dtype)
        asc.data_copy(z_gm[i * tile_length:], z_local, count=tile_length)
        out_queue_z.free_tensor(z_local)


@asc.jit
def vadds_kernel(x: asc.GlobalAddress, scalar, z: asc.GlobalAddress, block_length: asc.ConstExpr[int],
                 tile_length: asc.ConstExpr[int], tile_num: asc.ConstExpr[int]):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset)
    z_gm.set_global_buffer(z + offset)
    pipe = asc.TPipe()
    in_queue_x = asc.TQue(asc.TPosition.VECIN, 1)
    out_queue_z = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_queue_x, num=1, len=tile_length * x.dtype.sizeof())
    pipe.init_buffer(que=out_queue_z, num=1, len=tile_length * z.dtype.sizeof())
    for i in range(tile_num):
        x_local = in_queue_x.alloc_tensor(x.dtype)
        asc.data_copy(x_local, x_gm[i * tile_length:], count=tile_length)
        in_queue_x.enque(x_local)
        xs = in_queue_x.deque(x.dtype)
        zs = out_queue_z.alloc_tensor(z.dtype)
        asc.adds(zs, xs, scalar, count=tile_length)
        out_queue_z.enque(zs)
        in_queue_x.free_tensor(xs)
        z_local = out_queue_z.deque(z.dtype)
        asc.data_copy(z_gm[i * tile_length:], z_local, count=tile_length)
        out_queue_z.free_tensor(z_local)


def tiling(total_length: int):
    use_core_num = 16
    block_length = (total_length + use_core_num - 1) // use_core_num
    tile_length = 512
    return use_core_num, block_length, tile_length, (block_length + tile_length - 1) // tile_length


def make_input(dtype, size, device):
    if dtype in {torch.float16, torch.float32}:
        return torch.randn(size, dtype=dtype, device=device)
    return torch.randint(-100, 99, size, dtype=dtype, device=device)


param_list = [
    [torch.float32, (8192,)],
    [torch.float16, (16384,)],
    [torch.int16, (128, 64)],
]

BACKENDS = [
    config.Backend.NPU,
]


@pytest.mark.parametrize("dtype, size", param_list)
@pytest.mark.parametrize("backend", BACKENDS)
def test_vadd(dtype, size, backend: config.Backend):
    config.set_platform(backend)
    device = "npu" if config.Backend(backend) == config.Backend.NPU else "cpu"
    x = make_input(dtype, size, device)
    y = make_input(dtype, size, device)
    z = torch.zeros_like(x)
    core_num, block_length, tile_length, tile_num = tiling(z.numel())
    vadd_kernel[core_num, rt.current_stream()](x, y, z, block_length, tile_length, tile_num)
    assert z.dtype == dtype and z.device == x.device
    assert torch.allclose(z, x + y)


@pytest.mark.parametrize("dtype, size", param_list[:1])
@pytest.mark.parametrize("backend", BACKENDS)
def test_vadds(dtype, size, backend: config.Backend):
    config.set_platform(backend)
    device = "npu" if config.Backend(backend) == config.Backend.NPU else "cpu"
    x = make_input(dtype, size, device)
    scalar = torch.randn((), dtype=dtype, device=device).item()
    z = torch.zeros_like(x)
    core_num, block_length, tile_length, tile_num = tiling(z.numel())
    vadds_kernel[core_num, rt.current_stream()](x, scalar, z, block_length, tile_length, tile_num)
    assert torch.allclose(z, x + scalar)

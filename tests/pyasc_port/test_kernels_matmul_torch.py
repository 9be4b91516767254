# Port of pyasc python/test/kernels/test_matmul_torch.py: the TCubeTiling built inside the kernel from ConstExprs,
# no bias, LeakyRelu on each base block (torch tensors).
import pytest
import torch

import asc
import asc.lib.runtime as rt

from .matmul_parts import block_to_gm, calc_offsets, leaky_relu

pytestmark = pytest.mark.kernel


@asc.jit
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, alpha: float,
                  size_m: asc.ConstExpr[int], size_k: asc.ConstExpr[int], size_n: asc.ConstExpr[int],
                  size_base_m: asc.ConstExpr[int], size_base_k: asc.ConstExpr[int], size_base_n: asc.ConstExpr[int],
                  size_single_m: asc.ConstExpr[int], size_single_k: asc.ConstExpr[int],
                  size_single_n: asc.ConstExpr[int], used_core_num: asc.ConstExpr[int], workspace: asc.GlobalAddress):
    tiling = asc.adv.TCubeTiling(used_core_num=used_core_num, m=size_m, k_a=size_k, k_b=size_k, n=size_n,
                                 base_m=size_base_m, base_k=size_base_k, base_n=size_base_n,
                                 single_core_m=size_single_m, single_core_k=size_single_k, single_core_n=size_single_n,
                                 depth_a1=1, depth_b1=1, step_m=1, step_n=1, share_mode=0, share_ub_size=0,
                                 share_l1_size=asc.property(asc.TOTAL_L1_SIZE),
                                 share_l0c_size=asc.property(asc.TOTAL_L0C_SIZE))
    offset_a, offset_b, offset_c, _ = calc_offsets(tiling)
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + offset_a)
    b_global.set_global_buffer(b + offset_b)
    c_global.set_global_buffer(c + offset_c)
    pipe = asc.TPipe()
    relu_out_queue = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=relu_out_queue, num=2, len=tiling.base_m * tiling.base_n * c.dtype.sizeof())
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, c_global.dtype),
    )
    asc.adv.register_matmul(pipe, workspace, matmul)
    matmul.init(tiling)
    matmul.set_tensor_a(a_global)
    matmul.set_tensor_b(b_global)
    with matmul.iterate() as count:
        relu_out_local = relu_out_queue.alloc_tensor(c.dtype)
        matmul.get_tensor_c(relu_out_local, en_sequential_write=True)
        asc.leaky_relu(relu_out_local, relu_out_local, alpha, count=tiling.base_m * tiling.base_n)
        relu_out_queue.enque(relu_out_local)
        relu_out_local = relu_out_queue.deque(c.dtype)
        block_to_gm(c_global, relu_out_local, count, tiling)
        relu_out_queue.free_tensor(relu_out_local)
    matmul.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_matmul():
    torch.manual_seed(0)  # pyasc draws unseeded; with some draws float32 rounding exceeds its atol of 1e-3
    m, k, n = 256, 256, 256
    a = (torch.randn((m, k), dtype=torch.float32) - .5) * 10
    b = (torch.randn((k, n), dtype=torch.float32) - .5) * 10
    alpha = 0.01
    c = torch.empty((m, n), dtype=a.dtype)
    used_core_num = asc.ceildiv(m, 64) * asc.ceildiv(n, 64)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    matmul_kernel[used_core_num, rt.current_stream()](
        a, b, c, alpha, size_m=m, size_k=k, size_n=n, size_base_m=64, size_base_k=64, size_base_n=64,
        size_single_m=64, size_single_k=k, size_single_n=64, used_core_num=used_core_num, workspace=workspace)
    assert torch.allclose(c, leaky_relu(a @ b, alpha), atol=1e-3)

# Port of pyasc python/test/generalization/adv/test_matmul_iterate_batch.py: IterateBatch over 2 x 2 NORMAL-layout
# batches.
import pytest
import torch

import asc
import asc.lib.runtime as rt

from .matmul_parts import calc_offsets, host_tiling

pytestmark = pytest.mark.kernel

BATCH_A = 2
BATCH_B = 2
BATCH = 2


@asc.jit
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                  tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress):
    tiling.share_l1_size = asc.property(asc.TOTAL_L1_SIZE)
    tiling.share_l0c_size = asc.property(asc.TOTAL_L0C_SIZE)
    offset_a, offset_b, offset_c, _ = calc_offsets(tiling)
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + offset_a)
    b_global.set_global_buffer(b + offset_b)
    c_global.set_global_buffer(c + offset_c)
    pipe = asc.TPipe()
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype, False, asc.LayoutMode.NORMAL),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype, False, asc.LayoutMode.NORMAL),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c_global.dtype, False, asc.LayoutMode.NORMAL),
    )
    asc.adv.register_matmul(pipe, workspace, matmul, tiling)
    matmul.set_tensor_a(a_global)
    matmul.set_tensor_b(b_global)
    matmul.iterate_batch(c_global, BATCH_A, BATCH_B, False)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def random_matrices(count, shape, dtype):
    return torch.vstack([(torch.rand(shape, dtype=dtype) - .5) * 10 for _ in range(count)])


@pytest.mark.parametrize("dtype, size", [(torch.float32, (64, 64, 64)), (torch.float16, (32, 32, 32))])
def test_matmul_iterate_batch(dtype, size):
    m, k, n = size
    a = random_matrices(BATCH_A, (m, k), dtype)
    b = random_matrices(BATCH_B, (k, n), dtype)
    # product i takes A i // (BATCH // BATCH_A) and B i // (BATCH // BATCH_B)
    expected = torch.vstack([
        a[i // (BATCH // BATCH_A) * m:][:m].to(torch.float32) @ b[i // (BATCH // BATCH_B) * k:][:k].to(torch.float32)
        for i in range(BATCH)])
    c = torch.zeros((BATCH * m, n), dtype=torch.float32)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    tiling = host_tiling(m, n, k, dtype, batch_layouts=(BATCH_A, BATCH_B, BATCH))
    matmul_kernel[tiling.used_core_num, rt.current_stream()](a, b, c, tiling, workspace)
    assert torch.allclose(c, expected, atol=1e-3)

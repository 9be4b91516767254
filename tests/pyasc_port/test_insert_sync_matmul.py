# Port of pyasc python/test/kernels/insert_sync/test_matmul.py: kernels/test_matmul.py's kernel compiled with
# insert_sync and base blocks in LocalTensorAuto instead of a queue.
import numpy as np
import pytest

import asc
import asc.lib.runtime as rt

from .matmul_parts import block_to_gm, calc_offsets, kernel_test_tiling, leaky_relu

pytestmark = pytest.mark.kernel


@asc.jit(insert_sync=True)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, alpha: float,
                  tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress, bias: asc.GlobalAddress,
                  blocksize: asc.ConstExpr):
    tiling.share_l1_size = asc.property(asc.TOTAL_L1_SIZE)
    tiling.share_l0c_size = asc.property(asc.TOTAL_L0C_SIZE)
    offset_a, offset_b, offset_c, offset_bias = calc_offsets(tiling)
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    bias_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + offset_a)
    b_global.set_global_buffer(b + offset_b)
    c_global.set_global_buffer(c + offset_c)
    bias_global.set_global_buffer(bias + offset_bias)
    pipe = asc.TPipe()
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, c_global.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias_global.dtype),
        matmul_config=asc.adv.MatmulConfig(),
    )
    asc.adv.register_matmul(pipe, workspace, matmul)
    matmul.init(tiling)
    matmul.set_tensor_a(a_global)
    matmul.set_tensor_b(b_global)
    matmul.set_bias(bias_global)
    with matmul.iterate() as count:
        relu_out_local = asc.LocalTensorAuto(c.dtype, blocksize)
        matmul.get_tensor_c(relu_out_local, en_sequential_write=True)
        asc.leaky_relu(relu_out_local, relu_out_local, alpha, count=tiling.base_m * tiling.base_n)
        block_to_gm(c_global, relu_out_local, count, tiling)
    matmul.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_matmul():
    rng = np.random.default_rng(seed=2025)
    m, k, n = 256, 256, 256
    a = (rng.random((m, k), dtype="float32") - .5) * 10
    b = (rng.random((k, n), dtype="float32") - .5) * 10
    bias = (rng.random((1, n), dtype="float32") - .5) * 10
    alpha = 0.01
    c = np.empty((m, n), dtype=a.dtype)
    tiling = kernel_test_tiling(m, n, k, bias=True)
    workspace = np.zeros(16 * 1024 * 1024, dtype="uint8")
    matmul_kernel[tiling.used_core_num, rt.current_stream()](a, b, c, alpha, tiling, workspace, bias, 64 * 64)
    np.testing.assert_allclose(c, leaky_relu(a @ b + bias, alpha), atol=1e-3)

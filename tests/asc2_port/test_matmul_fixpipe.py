"""Port of asc2's kernels/test_matmul_fixpipe.py: a @ b straight into L0A/L0B, relu and the cast to
float16 on the way out of L0C (the fixpipe), against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def matmul_kernel(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
                  a_shape: asctile.ConstExpr, b_shape: asctile.ConstExpr, c_shape: asctile.ConstExpr):
    a_gm = asctile.global_tensor(a_ptr, a_shape)
    b_gm = asctile.global_tensor(b_ptr, b_shape)
    c_gm = asctile.global_tensor(c_ptr, c_shape)
    a = asctile.copy_in(a_gm, [0, 0], a_shape, asctile.TensorLocation.L0A)
    b = asctile.copy_in(b_gm, [0, 0], b_shape, asctile.TensorLocation.L0B)
    c = asctile.relu(a @ b).to(asctile.float16)
    asctile.copy_out(c, c_gm, [0, 0])


@pytest.mark.parametrize("m, k, n, dtype", [
    (64, 128, 128, torch.float32),
    (64, 128, 256, torch.float16),
    (64, 128, 256, torch.bfloat16),
], ids=["float32", "float16", "bfloat16"])
def test_matmul_fixpipe(run, m, k, n, dtype):
    torch.manual_seed(0)
    a = (torch.rand((m, k), dtype=dtype) - .5) * 10
    b = (torch.rand((k, n), dtype=dtype) - .5) * 10
    c = torch.zeros((m, n), dtype=torch.float16)
    run(matmul_kernel, 1, a, b, c, a.shape, b.shape, c.shape)
    c_ref = (a.to(torch.float32) @ b.to(torch.float32)).relu().to(torch.float16)
    torch.testing.assert_close(c, c_ref, atol=1e-3, rtol=1e-3)

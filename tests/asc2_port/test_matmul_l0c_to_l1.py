"""Port of asc2's kernels/test_matmul_l0c_to_l1.py: c = a @ b cast in L0C, copied to L1 and on to
L0A, then c @ b, against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def matmul_kernel(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
                  a_shape: asctile.ConstExpr, b_shape: asctile.ConstExpr, c_shape: asctile.ConstExpr,
                  dtype: asctile.ConstExpr):
    a_gm = asctile.global_tensor(a_ptr, a_shape)
    b_gm = asctile.global_tensor(b_ptr, b_shape)
    c_gm = asctile.global_tensor(c_ptr, c_shape)
    a = asctile.copy_in(a_gm, [0, 0], a_shape, asctile.TensorLocation.L0A)
    b = asctile.copy_in(b_gm, [0, 0], b_shape, asctile.TensorLocation.L0B)
    c = (a @ b).to(dtype)
    c_l1 = asctile.copy(c, [0, 0], c_shape, asctile.TensorLocation.L1)
    c_l0a = asctile.copy(c_l1, [0, 0], c_shape, asctile.TensorLocation.L0A)
    asctile.copy_out(c_l0a @ b, c_gm, [0, 0])


@pytest.mark.parametrize("m, k, n, torch_dtype, dtype", [
    (32, 64, 64, torch.float16, asctile.float16),
    (64, 64, 64, torch.bfloat16, asctile.bfloat16),
], ids=["float16", "bfloat16"])
def test_matmul_l0c_to_l1(run, m, k, n, torch_dtype, dtype):
    torch.manual_seed(0)
    a = (torch.rand((m, k), dtype=torch_dtype) - .5) * 10
    b = (torch.rand((k, n), dtype=torch_dtype) - .5) * 10
    c = torch.zeros((m, n), dtype=torch.float32)
    run(matmul_kernel, 1, a, b, c, a.shape, b.shape, c.shape, dtype)
    c_ref = (a.to(torch.float32) @ b.to(torch.float32)).to(torch_dtype)
    c_ref = c_ref.to(torch.float32) @ b.to(torch.float32)
    torch.testing.assert_close(c, c_ref, atol=1e-3, rtol=1e-3)

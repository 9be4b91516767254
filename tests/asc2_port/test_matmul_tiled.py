"""Port of asc2's kernels/test_matmul_tiled.py: a and b to L1 whole, k split in k_tiles slices
copied to L0A/L0B and accumulated with matmul_acc into a zeros_acc (asc2's matmul_acc(a, b, acc) is
asctile's matmul_acc(acc, a, b)), against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def matmul_kernel(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
                  a_shape: asctile.ConstExpr, b_shape: asctile.ConstExpr, c_shape: asctile.ConstExpr,
                  k_tiles: asctile.ConstExpr):
    a_gm = asctile.global_tensor(a_ptr, a_shape)
    b_gm = asctile.global_tensor(b_ptr, b_shape)
    c_gm = asctile.global_tensor(c_ptr, c_shape)
    acc = asctile.zeros_acc(c_shape, dtype=asctile.float32)
    k_offset = a_shape[1] // k_tiles
    a_l1 = asctile.copy_in(a_gm, [0, 0], a_shape, asctile.TensorLocation.L1)
    b_l1 = asctile.copy_in(b_gm, [0, 0], b_shape, asctile.TensorLocation.L1)
    for i in asctile.range(k_tiles, unroll_factor=2):
        a_i = asctile.copy(a_l1, [0, i * k_offset], [a_shape[0], k_offset], asctile.TensorLocation.L0A)
        b_i = asctile.copy(b_l1, [i * k_offset, 0], [k_offset, b_shape[1]], asctile.TensorLocation.L0B)
        asctile.matmul_acc(acc, a_i, b_i)
    asctile.copy_out(acc, c_gm, [0, 0])


@pytest.mark.parametrize("k_tiles", [2, 4, 8])
def test_matmul_tiled(run, k_tiles):
    torch.manual_seed(0)
    m, k, n = 64, 128, 256
    a = torch.rand((m, k), dtype=torch.float16)
    b = torch.rand((k, n), dtype=torch.float16)
    c = torch.zeros((m, n), dtype=torch.float32)
    run(matmul_kernel, 1, a, b, c, a.shape, b.shape, c.shape, k_tiles)
    torch.testing.assert_close(c, a.to(torch.float32) @ b.to(torch.float32))

"""Port of asc2's kernels/test_softmax.py: softmax row by row from reduce_max, exp, reduce_sum
(64 x 1024 float32, blocks striding over the rows), against torch. The original fuses the vector
ops (vf_fusion=True), which pyasc refuses for the 910B's c220 architecture: there the same body
runs unfused (softmax_kernel), on the Ascend950 fused (softmax_fused)."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def softmax_body(x_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress, num_rows: int, num_cols: int,
                 tile_size: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [num_rows, num_cols])
    out_gm = asctile.global_tensor(out_ptr, [num_rows, num_cols])
    for i in asctile.range(asctile.block_idx(), num_rows, asctile.block_num()):
        row = asctile.copy_in(x_gm, [i, 0], [1, tile_size])
        numerator = asctile.exp(row - asctile.reduce_max(row))
        out = numerator / asctile.reduce_sum(numerator)
        asctile.copy_out(out, out_gm, [i, 0])


@asctile.jit
def softmax_kernel(x_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress, num_rows: int, num_cols: int,
                   tile_size: asctile.ConstExpr[int]):
    softmax_body(x_ptr, out_ptr, num_rows, num_cols, tile_size)


@asctile.jit(vf_fusion=True)
def softmax_fused(x_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress, num_rows: int, num_cols: int,
                  tile_size: asctile.ConstExpr[int]):
    softmax_body(x_ptr, out_ptr, num_rows, num_cols, tile_size)


def test_softmax(run, soc):
    torch.manual_seed(0)
    x = torch.rand((64, 1024), dtype=torch.float32)
    out = torch.empty_like(x)
    run(softmax_kernel if soc == "Ascend910B1" else softmax_fused, 16, x, out, 64, 1024, 1024)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))

"""Port of asc2's kernels/test_softmax_fused.py: asctile.softmax over blocks of rows (64 x 1024
float32, 4 rows a block), against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def softmax_kernel(x_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress, num_rows: int,
                   num_cols: asctile.ConstExpr[int], block_size: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [num_rows, num_cols])
    out_gm = asctile.global_tensor(out_ptr, [num_rows, num_cols])
    start_rows = asctile.block_idx() * block_size
    rows = asctile.copy_in(x_gm, [start_rows, 0], [block_size, num_cols])
    asctile.copy_out(asctile.softmax(rows), out_gm, [start_rows, 0])


def test_softmax(run):
    torch.manual_seed(0)
    core_num = 16
    x = torch.rand((64, 1024), dtype=torch.float32)
    out = torch.empty_like(x)
    run(softmax_kernel, core_num, x, out, 64, 1024, asctile.ceildiv(64, core_num))
    torch.testing.assert_close(out, torch.softmax(x, dim=1))

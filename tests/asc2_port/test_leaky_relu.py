"""Port of asc2's kernels/test_leaky_relu.py: where(x >= 0, x, x * alpha) on bfloat16 in tiles of
128 over 16 blocks, the loop unrolled by 2, against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def leaky_relu_kernel(x_ptr: asctile.GlobalAddress, alpha: float, out_ptr: asctile.GlobalAddress, size: int,
                      tile_size: asctile.ConstExpr[int], tile_per_block: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [size])
    out_gm = asctile.global_tensor(out_ptr, [size])
    base_offset = asctile.block_idx() * tile_size * tile_per_block
    for i in asctile.range(tile_per_block, unroll_factor=2):
        tile_offset = base_offset + i * tile_size
        x = asctile.copy_in(x_gm, [tile_offset], [tile_size])
        out = asctile.where(x >= 0, x, x * alpha)
        asctile.copy_out(out, out_gm, [tile_offset])


def test_leaky_relu(run):
    torch.manual_seed(0)
    size, core_num, tile_size = 8192, 16, 128
    x = torch.rand(size, dtype=torch.bfloat16) * 10.0 - 5.0
    alpha = torch.tensor(0.1, dtype=torch.bfloat16)
    out = torch.empty_like(x)
    tile_per_block = asctile.ceildiv(asctile.ceildiv(size, tile_size), core_num)
    run(leaky_relu_kernel, core_num, x, alpha.item(), out, size, tile_size, tile_per_block)
    torch.testing.assert_close(out, torch.where(x >= 0, x, x * alpha))

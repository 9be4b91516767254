"""Port of asc2's operations/test_reduce_ops.py: reduce_prod/min/sum/max of a 64 x 32 float32 tile
over dimension 0 or 1 (1 only on the C310 architecture, as upstream), with and without keep_dims, and
reduce_max of a partial tile (the first 1, 7 or 17 of 32 elements), against torch. The shape goes
as its dimensions."""
import pytest
import torch

from .conftest import require_c310

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

REFERENCE = {"reduce_prod": torch.prod, "reduce_min": torch.amin, "reduce_sum": torch.sum, "reduce_max": torch.amax}
ROWS, COLS = 64, 32


@asctile.jit
def kernel(input_ptr: asctile.GlobalAddress, output_ptr: asctile.GlobalAddress, reduce_dim: asctile.ConstExpr[int],
           rows: asctile.ConstExpr[int], cols: asctile.ConstExpr[int], op: asctile.ConstExpr,
           keep_dims: asctile.ConstExpr[bool]):
    tile = asctile.copy_in(asctile.global_tensor(input_ptr, [rows, cols]), [0, 0], [rows, cols])
    output = op(tile, reduce_dim, keep_dims=keep_dims)
    if keep_dims:
        if reduce_dim == 0:
            asctile.copy_out(output, asctile.global_tensor(output_ptr, [1, cols]), [0, 0])
        else:
            asctile.copy_out(output, asctile.global_tensor(output_ptr, [rows, 1]), [0, 0])
    elif reduce_dim == 0:
        asctile.copy_out(output, asctile.global_tensor(output_ptr, [cols]), [0])
    else:
        asctile.copy_out(output, asctile.global_tensor(output_ptr, [rows]), [0])


@pytest.mark.parametrize("op, keep_dims, dim", [
    ("reduce_prod", False, 0), ("reduce_prod", False, 1), ("reduce_min", False, 0), ("reduce_min", False, 1),
    ("reduce_sum", False, 0), ("reduce_sum", False, 1), ("reduce_max", False, 0), ("reduce_max", False, 1),
    ("reduce_prod", True, 0),
], ids=str)
def test_reduce(run, soc, op, keep_dims, dim):
    if dim:
        require_c310(soc)
    torch.manual_seed(0)
    x = torch.randn((ROWS, COLS), dtype=torch.float32) * 2.0
    expected = REFERENCE[op](x, dim, keepdim=keep_dims)
    output = torch.zeros(expected.shape, dtype=torch.float32)
    run(kernel, 1, x, output, dim, ROWS, COLS, getattr(asctile, op), keep_dims)
    torch.testing.assert_close(output, expected)


@asctile.jit
def reduce_tile_kernel(x_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress, size: int,
                       tile_size: asctile.ConstExpr[int]):
    tile = asctile.copy_in(asctile.global_tensor(x_ptr, [size]), [0], [tile_size])
    result = asctile.full([1], asctile.reduce_max(tile), dtype=tile.dtype)
    asctile.copy_out(result, asctile.global_tensor(out_ptr, [1]), [0])


@pytest.mark.parametrize("tile_size", [1, 7, 17])
def test_reduce_partial_tile(run, tile_size):
    torch.manual_seed(0)
    x = torch.rand(32, dtype=torch.float32) * -10.0
    x[tile_size:] = 1000.0
    out = torch.empty(1, dtype=torch.float32)
    run(reduce_tile_kernel, 1, x, out, 32, tile_size)
    torch.testing.assert_close(out, torch.amax(x[:tile_size]).unsqueeze(0))

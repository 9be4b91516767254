"""Port of asc2's kernels/test_gelu.py: GELU row by row (30 rows of 1024, blocks striding over the
rows), the tanh approximation through exp and the exact form through erf, against torch."""
import math

import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def gelu_kernel(x_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress, num_rows: asctile.ConstExpr,
                num_columns: asctile.ConstExpr, tile_size: asctile.ConstExpr, approximate: asctile.ConstExpr):
    x_gm = asctile.global_tensor(x_ptr, [num_rows, num_columns])
    out_gm = asctile.global_tensor(out_ptr, [num_rows, num_columns])
    for i in asctile.range(asctile.block_idx(), num_rows, asctile.block_num()):
        row = asctile.copy_in(x_gm, [i, 0], [1, tile_size])
        if approximate:
            pi = 3.141592653589793238462643383279502884
            k1 = 2 * asctile.sqrt(2 / pi)
            k2 = 2 * asctile.sqrt(2 / pi) * 0.044715
            param = row * (row * row * k2 + k1)
            out = row - row / (asctile.exp(param) + 1)  # x * sigmoid(2u) = x * (1 + tanh(u)) / 2
        else:
            k = asctile.sqrt(0.5)
            out = row * (asctile.erf(row * k) + 1) * 0.5
        asctile.copy_out(out, out_gm, [i, 0])


def gelu_torch(x: torch.Tensor, approximate: bool) -> torch.Tensor:
    if approximate:
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu(run, approximate):
    torch.manual_seed(0)
    x = torch.rand((30, 1024), dtype=torch.float32)
    out = torch.empty_like(x)
    run(gelu_kernel, 16, x, out, 30, 1024, 1024, approximate)
    torch.testing.assert_close(out, gelu_torch(x, approximate), rtol=1e-3, atol=1e-5)

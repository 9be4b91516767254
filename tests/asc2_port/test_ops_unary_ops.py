"""Port of asc2's operations/test_unary_ops.py: each unary op on 32 float32 elements in [1, 100],
against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

OPS = {"abs": torch.abs, "ceil": torch.ceil, "cos": torch.cos, "cosh": torch.cosh, "erf": torch.erf,
       "exp": torch.exp, "exp2": torch.exp2, "floor": torch.floor, "log": torch.log, "negative": torch.neg,
       "relu": torch.relu, "rsqrt": torch.rsqrt, "sin": torch.sin, "sinh": torch.sinh, "sqrt": torch.sqrt,
       "tan": torch.tan, "tanh": torch.tanh}


@asctile.jit
def kernel(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, block_length: asctile.ConstExpr[int],
           op: asctile.ConstExpr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [32]), [0], [block_length])
    asctile.copy_out(op(xt), asctile.global_tensor(z_ptr, [32]), [0])


@pytest.mark.parametrize("op", sorted(OPS))
def test_unary_operations(run, op):
    torch.manual_seed(0)
    size = 32
    x = torch.randn((size,), dtype=torch.float32).clamp(1, 100)
    z = torch.zeros(size, dtype=torch.float32)
    run(kernel, 1, x, z, size, getattr(asctile, op))
    assert torch.allclose(z, OPS[op](x), atol=1e-3), f"Failed {op}: {z} != {OPS[op](x)}"

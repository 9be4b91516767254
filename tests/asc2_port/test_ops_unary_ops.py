"""Port of asc2's operations/test_unary_ops.py: each unary op on 32 float32 elements in [1, 100],
against torch. The op goes to the kernel by name (ascrun takes no function as a ConstExpr)."""
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
           op: asctile.ConstExpr[str]):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [32]), [0], [block_length])
    if op == "abs":
        zt = asctile.abs(xt)
    elif op == "ceil":
        zt = asctile.ceil(xt)
    elif op == "cos":
        zt = asctile.cos(xt)
    elif op == "cosh":
        zt = asctile.cosh(xt)
    elif op == "erf":
        zt = asctile.erf(xt)
    elif op == "exp":
        zt = asctile.exp(xt)
    elif op == "exp2":
        zt = asctile.exp2(xt)
    elif op == "floor":
        zt = asctile.floor(xt)
    elif op == "log":
        zt = asctile.log(xt)
    elif op == "negative":
        zt = asctile.negative(xt)
    elif op == "relu":
        zt = asctile.relu(xt)
    elif op == "rsqrt":
        zt = asctile.rsqrt(xt)
    elif op == "sin":
        zt = asctile.sin(xt)
    elif op == "sinh":
        zt = asctile.sinh(xt)
    elif op == "sqrt":
        zt = asctile.sqrt(xt)
    elif op == "tan":
        zt = asctile.tan(xt)
    else:
        zt = asctile.tanh(xt)
    asctile.copy_out(zt, asctile.global_tensor(z_ptr, [32]), [0])


@pytest.mark.parametrize("op", sorted(OPS))
def test_unary_operations(run, op):
    torch.manual_seed(0)
    size = 32
    x = torch.randn((size,), dtype=torch.float32).clamp(1, 100)
    z = torch.zeros(size, dtype=torch.float32)
    run(kernel, 1, x, z, size, op)
    assert torch.allclose(z, OPS[op](x), atol=1e-3), f"Failed {op}: {z} != {OPS[op](x)}"

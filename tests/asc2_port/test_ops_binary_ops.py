"""Port of asc2's operations/test_binary_ops.py: each binary op tile-tile (VV), tile-scalar (VS) and
scalar-tile (SV) on 32 elements, against torch; bfloat16 only on the C310 architecture, as upstream.
The scalar goes as a Python number (upstream: a zero-dimension tensor)."""
import pytest
import torch

from .conftest import require_c310

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

VV, VS, SV = "VV", "VS", "SV"
ALL, NUMBERS = [VV, VS, SV], [torch.bfloat16, torch.float32, torch.int32]
OPS = [("add", torch.add, ALL, NUMBERS), ("div", torch.div, ALL, [torch.float32]), ("mul", torch.mul, ALL, NUMBERS),
       ("sub", torch.sub, ALL, NUMBERS), ("left_shift", torch.bitwise_left_shift, [VS], [torch.int32]),
       ("right_shift", torch.bitwise_right_shift, [VS], [torch.int32]),
       ("maximum", torch.maximum, ALL, NUMBERS), ("minimum", torch.minimum, ALL, NUMBERS)]
REFERENCE = {name: torch_op for name, torch_op, _, _ in OPS}


@asctile.jit
def kernel(x_ptr, y_ptr, z_ptr, block_length: asctile.ConstExpr[int], fmt: asctile.ConstExpr[str],
           op: asctile.ConstExpr):
    if fmt == "VV":
        xt = asctile.copy_in(asctile.global_tensor(x_ptr, [32]), [0], [block_length])
        yt = asctile.copy_in(asctile.global_tensor(y_ptr, [32]), [0], [block_length])
    elif fmt == "VS":
        xt = asctile.copy_in(asctile.global_tensor(x_ptr, [32]), [0], [block_length])
        yt = y_ptr
    else:
        xt = x_ptr
        yt = asctile.copy_in(asctile.global_tensor(y_ptr, [32]), [0], [block_length])
    asctile.copy_out(op(xt, yt), asctile.global_tensor(z_ptr, [32]), [0])


def vector(dtype: torch.dtype, size: int) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn((size,), dtype=dtype).clamp(1, 100)
    return torch.randint(1, 100, (size,), dtype=dtype)


@pytest.mark.parametrize("op, fmt, dtype", [(name, fmt, dtype) for name, _, fmts, dtypes in OPS
                                            for fmt in fmts for dtype in dtypes], ids=str)
def test_binary_operations(run, soc, op, fmt, dtype):
    if dtype == torch.bfloat16:
        require_c310(soc)
    torch.manual_seed(0)
    size = 32
    scalar = 2 if not dtype.is_floating_point else 2.0
    x = vector(dtype, size) if fmt != SV else scalar
    y = vector(dtype, size) if fmt != VS else scalar
    z = torch.zeros(size, dtype=dtype)
    run(kernel, 1, x, y, z, size, fmt, getattr(asctile, op))
    expected = REFERENCE[op](*(v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype) for v in (x, y)))
    if dtype == torch.float32:
        assert torch.allclose(z, expected, atol=1e-3), f"Failed {op}"
    else:
        assert torch.equal(z, expected), f"Failed {op}: {z} != {expected}"

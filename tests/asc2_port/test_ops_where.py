"""Port of asc2's operations/test_where.py: where(cmp(x, y), x, y) and where(cmp(x, scalar), 0, 1)
for each comparison on 32 elements, against torch; dtypes other than float16 and float32 only on the
C310 architecture, as upstream. The scalar goes as a Python number (upstream: a zero-dimension
tensor)."""
import pytest
import torch

from .conftest import require_c310

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

SIZE = 32
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int16, torch.int32]
COMPARISONS = {"equal": torch.eq, "not_equal": torch.ne, "greater": torch.gt, "greater_equal": torch.ge,
               "less": torch.lt, "less_equal": torch.le}


@asctile.jit
def where_kernel(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
                 op: asctile.ConstExpr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [SIZE]), [0], [SIZE])
    yt = asctile.copy_in(asctile.global_tensor(y_ptr, [SIZE]), [0], [SIZE])
    asctile.copy_out(asctile.where(op(xt, yt), xt, yt), asctile.global_tensor(z_ptr, [SIZE]), [0])


@asctile.jit
def where_scalar_kernel(x_ptr: asctile.GlobalAddress, scalar, z_ptr: asctile.GlobalAddress,
                        op: asctile.ConstExpr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [SIZE]), [0], [SIZE])
    zt = asctile.where(op(xt, scalar), asctile.cast(0.0, x_ptr.dtype), asctile.cast(1.0, x_ptr.dtype))
    asctile.copy_out(zt, asctile.global_tensor(z_ptr, [SIZE]), [0])


def create_tensor(dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.rand(SIZE, dtype=dtype)
    return torch.randint(-100, 100, (SIZE,), dtype=dtype)


def c310_unless_half_or_float(soc, dtype):
    if dtype not in (torch.float16, torch.float32):
        require_c310(soc)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", list(COMPARISONS))
def test_where_ops(run, soc, op, dtype):
    c310_unless_half_or_float(soc, dtype)
    torch.manual_seed(0)
    x, y = create_tensor(dtype), create_tensor(dtype)
    result = torch.zeros_like(x)
    run(where_kernel, 1, x, y, result, getattr(asctile, op))
    torch.testing.assert_close(result, torch.where(COMPARISONS[op](x, y), x, y))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", list(COMPARISONS))
def test_where_scalar_ops(run, soc, op, dtype):
    c310_unless_half_or_float(soc, dtype)
    torch.manual_seed(0)
    x = create_tensor(dtype)
    scalar = 0 if not dtype.is_floating_point else 0.5
    result = torch.zeros_like(x)
    run(where_scalar_kernel, 1, x, scalar, result, getattr(asctile, op))
    expected = torch.where(COMPARISONS[op](x, torch.tensor(scalar, dtype=dtype)), torch.tensor(0, dtype=dtype),
                           torch.tensor(1, dtype=dtype))
    torch.testing.assert_close(result, expected)

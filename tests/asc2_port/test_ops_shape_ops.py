"""Port of asc2's operations/test_shape_ops.py: broadcast_to (C310 only, without static allocation,
as upstream), reshape, ravel, expand_dims and squeeze of a loaded tile on float16, float32 and int32,
and a one-element full broadcast to the output's shape, against torch. Each shape op has its
kernel, its shapes written in."""
import pytest
import torch

from .conftest import require_c310

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

DTYPES = [torch.float16, torch.float32, torch.int32]


@asctile.jit(static_alloc=False)
def broadcast_kernel(x_ptr, z_ptr, rows: asctile.ConstExpr[int]):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [1, 32]), [0, 0], [1, 32])
    asctile.copy_out(asctile.broadcast_to(xt, rows, 32), asctile.global_tensor(z_ptr, [rows, 32]), [0, 0])


@asctile.jit
def reshape_to_1d_kernel(x_ptr, z_ptr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [2, 32]), [0, 0], [2, 32])
    asctile.copy_out(asctile.reshape(xt, 64), asctile.global_tensor(z_ptr, [64]), [0])


@asctile.jit
def reshape_to_2d_kernel(x_ptr, z_ptr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [64]), [0], [64])
    asctile.copy_out(asctile.reshape(xt, 4, 16), asctile.global_tensor(z_ptr, [4, 16]), [0, 0])


@asctile.jit
def ravel_kernel(x_ptr, z_ptr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [2, 32]), [0, 0], [2, 32])
    asctile.copy_out(asctile.ravel(xt), asctile.global_tensor(z_ptr, [64]), [0])


@asctile.jit
def expand_dims_kernel(x_ptr, z_ptr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [32]), [0], [32])
    asctile.copy_out(asctile.expand_dims(xt, 0), asctile.global_tensor(z_ptr, [1, 32]), [0, 0])


@asctile.jit
def squeeze_kernel(x_ptr, z_ptr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [1, 32]), [0, 0], [1, 32])
    asctile.copy_out(asctile.squeeze(xt, 0), asctile.global_tensor(z_ptr, [32]), [0])


# name, kernel, its ConstExpr arguments, the input's shape, torch's reference
SHAPE_OPS = [
    ("broadcast_to-4", broadcast_kernel, [4], [1, 32], lambda x: torch.broadcast_to(x, [4, 32])),
    ("broadcast_to-50", broadcast_kernel, [50], [1, 32], lambda x: torch.broadcast_to(x, [50, 32])),
    ("reshape-64", reshape_to_1d_kernel, [], [2, 32], lambda x: torch.reshape(x, [64])),
    ("reshape-4x16", reshape_to_2d_kernel, [], [64], lambda x: torch.reshape(x, [4, 16])),
    ("ravel", ravel_kernel, [], [2, 32], torch.ravel),
    ("expand_dims", expand_dims_kernel, [], [32], lambda x: torch.unsqueeze(x, dim=0)),
    ("squeeze", squeeze_kernel, [], [1, 32], lambda x: torch.squeeze(x, dim=0)),
]


def create_input(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype).clamp(1, 100)
    return torch.randint(1, 100, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, kernel, constants, shape, reference", SHAPE_OPS, ids=[op[0] for op in SHAPE_OPS])
def test_shape_op(run, soc, name, kernel, constants, shape, reference, dtype):
    if name.startswith("broadcast_to"):
        require_c310(soc)
    torch.manual_seed(0)
    x = create_input(shape, dtype)
    expected = reference(x)
    z = create_input(expected.shape, dtype)
    run(kernel, 1, x, z, *constants)
    torch.testing.assert_close(z, expected, atol=1e-3, rtol=1e-3)


@asctile.jit
def broadcast_dup_kernel(out_ptr, rows: asctile.ConstExpr[int], cols: asctile.ConstExpr[int]):
    if rows == 0:
        out_tensor = asctile.global_tensor(out_ptr, [cols])
        asctile.copy_out(asctile.full([1], 777, out_tensor.dtype).broadcast_to(cols), out_tensor, [0])
    else:
        out_tensor = asctile.global_tensor(out_ptr, [rows, cols])
        asctile.copy_out(asctile.full([1], 777, out_tensor.dtype).broadcast_to(rows, cols), out_tensor, [0, 0])


@pytest.mark.parametrize("shape", ([32], [3, 32]), ids=str)
@pytest.mark.parametrize("dtype", (torch.float16, torch.float32, torch.int16, torch.int32), ids=str)
def test_broadcast_dup(run, shape, dtype):
    out = torch.zeros(shape, dtype=dtype)
    run(broadcast_dup_kernel, 1, out, *([0] + shape)[-2:])
    torch.testing.assert_close(out, torch.full_like(out, 777), atol=1e-6, rtol=1e-6)

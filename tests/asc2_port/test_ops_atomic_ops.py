"""Port of asc2's operations/test_atomic_ops.py: 4 blocks each add 10 to their quarter of x and
atomic_add/max/min it into the same 32 elements of z, on float32, float16 and int32, against torch."""
import pytest
import torch

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

USE_CORE_NUM = 4
REFERENCE = {"atomic_add": torch.add, "atomic_max": torch.maximum, "atomic_min": torch.minimum}


@asctile.jit
def kernel(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, size: asctile.ConstExpr[int],
           tile_length: asctile.ConstExpr[int], op: asctile.ConstExpr):
    xt = asctile.copy_in(asctile.global_tensor(x_ptr, [size]), [asctile.block_idx() * tile_length], [tile_length])
    xt += asctile.full_like(xt, 10)  # upstream's temporary tile, which keeps its queue synchronization valid
    op(xt, asctile.global_tensor(z_ptr, [tile_length]), [0])


def create_input(shape, dtype):
    if dtype == torch.float32:
        return torch.randn(tuple(shape), dtype=dtype).clamp(1, 100)
    return torch.randint(1, 100, tuple(shape), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32], ids=str)
@pytest.mark.parametrize("op", list(REFERENCE))
def test_atomic_op(run, op, dtype):
    torch.manual_seed(0)
    size = 128
    tile_length = size // USE_CORE_NUM
    x = create_input([size], dtype)
    z = create_input([tile_length], dtype)
    expected = z.clone()
    run(kernel, USE_CORE_NUM, x, z, size, tile_length, getattr(asctile, op))
    for i in range(USE_CORE_NUM):
        expected = REFERENCE[op](expected, x[i * tile_length:(i + 1) * tile_length] + 10)
    torch.testing.assert_close(z, expected, atol=1e-3, rtol=1e-3)

"""asctile kernels as a pytest file: vadd (vadd.py's) for several sizes and tiles, and relu, each
against numpy."""
import numpy as np
import pytest

asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

from .vadd import vadd_launch  # noqa: E402


@asctile.jit
def relu(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, size: asctile.ConstExpr[int],
         tile_size: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [size])
    z_gm = asctile.global_tensor(z_ptr, [size])
    per_core = size // asctile.block_num()
    for i in asctile.range(per_core // tile_size):
        offset = asctile.block_idx() * per_core + i * tile_size
        asctile.copy_out(asctile.relu(asctile.copy_in(x_gm, [offset], [tile_size])), z_gm, [offset])


@pytest.fixture(autouse=True)
def platform():
    asctile.set_platform(asctile.Backend.Model, asctile.Platform.Ascend910B1)


@pytest.mark.parametrize("size, core_num, tile_size", [(2048, 1, 256), (8192, 8, 128)])
def test_vadd(size, core_num, tile_size):
    rng = np.random.default_rng(seed=size)
    x, y = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
    np.testing.assert_array_equal(vadd_launch(x, y, core_num, tile_size), x + y)


def test_relu():
    x = np.linspace(-4, 4, 4096, dtype=np.float32)
    z = np.zeros_like(x)
    relu[4](x, z, x.size, 256)
    np.testing.assert_array_equal(z, np.maximum(x, 0))

"""Port of asc2's kernels/test_vadd.py: z = x + y, tiles of 128 over 16 blocks, against numpy."""
import numpy as np
import pytest

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def vadd_kernel(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, out_ptr: asctile.GlobalAddress,
                size: int, tile_size: asctile.ConstExpr[int], tile_per_block: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [size])
    y_gm = asctile.global_tensor(y_ptr, [size])
    out_gm = asctile.global_tensor(out_ptr, [size])
    base_offset = asctile.block_idx() * tile_size * tile_per_block
    for i in asctile.range(tile_per_block):
        tile_offset = base_offset + i * tile_size
        x = asctile.copy_in(x_gm, [tile_offset], [tile_size])
        y = asctile.copy_in(y_gm, [tile_offset], [tile_size])
        asctile.copy_out(x + y, out_gm, [tile_offset])


def test_vadd(run):
    rng = np.random.default_rng(seed=2026)
    size, core_num, tile_size = 8192, 16, 128
    x = rng.random(size, dtype=np.float32) * 10
    y = rng.random(size, dtype=np.float32) * 10
    out = np.zeros_like(x)
    run(vadd_kernel, core_num, x, y, out, size, tile_size, asctile.ceildiv(asctile.ceildiv(size, tile_size), core_num))
    np.testing.assert_allclose(out, x + y)

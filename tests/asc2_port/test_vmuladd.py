"""Port of asc2's kernels/test_vmuladd.py: out = x * y + z in tiles of 32, the loop unrolled by the
buffer factor (2), against numpy. The original fuses the vector ops (vf_fusion=True), which pyasc
refuses for the 910B's c220 architecture ("VF fusion is not supported for the c220 architecture"):
there the same body runs unfused (vmuladd_kernel), on the Ascend950 fused (vmuladd_fused)."""
import numpy as np
import pytest

pytestmark = pytest.mark.kernel
asctile = pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")


@asctile.jit
def vmuladd_body(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
                 out_ptr: asctile.GlobalAddress, size: int, tile_size: asctile.ConstExpr[int],
                 tile_per_block: asctile.ConstExpr[int], buffer_factor: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [size])
    y_gm = asctile.global_tensor(y_ptr, [size])
    z_gm = asctile.global_tensor(z_ptr, [size])
    out_gm = asctile.global_tensor(out_ptr, [size])
    base_offset = asctile.block_idx() * tile_size * tile_per_block
    for i in asctile.range(tile_per_block, unroll_factor=buffer_factor):
        tile_offset = base_offset + i * tile_size
        x = asctile.copy_in(x_gm, [tile_offset], [tile_size])
        y = asctile.copy_in(y_gm, [tile_offset], [tile_size])
        z = asctile.copy_in(z_gm, [tile_offset], [tile_size])
        asctile.copy_out(x * y + z, out_gm, [tile_offset])


@asctile.jit
def vmuladd_kernel(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
                   out_ptr: asctile.GlobalAddress, size: int, tile_size: asctile.ConstExpr[int],
                   tile_per_block: asctile.ConstExpr[int], buffer_factor: asctile.ConstExpr[int]):
    vmuladd_body(x_ptr, y_ptr, z_ptr, out_ptr, size, tile_size, tile_per_block, buffer_factor)


@asctile.jit(vf_fusion=True)
def vmuladd_fused(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
                  out_ptr: asctile.GlobalAddress, size: int, tile_size: asctile.ConstExpr[int],
                  tile_per_block: asctile.ConstExpr[int], buffer_factor: asctile.ConstExpr[int]):
    vmuladd_body(x_ptr, y_ptr, z_ptr, out_ptr, size, tile_size, tile_per_block, buffer_factor)


def test_vmuladd(run, soc):
    rng = np.random.default_rng(seed=2026)
    size, core_num, tile_size = 8192, 16, 32
    x, y, z = (rng.random(size, dtype=np.float32) * 10 for _ in range(3))
    out = np.zeros_like(x)
    kernel = vmuladd_kernel if soc == "Ascend910B1" else vmuladd_fused
    run(kernel, core_num, x, y, z, out, size, tile_size, asctile.ceildiv(asctile.ceildiv(size, tile_size), core_num), 2)
    np.testing.assert_allclose(out, x * y + z, rtol=1e-6)

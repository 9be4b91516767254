"""z = x + y in tiles with asctile: `python vadd.py` on a pyasc-dev machine, `ascrun exec vadd.py` anywhere."""
import numpy as np

from asc.experimental import asctile


@asctile.jit
def vadd(x_ptr: asctile.GlobalAddress, y_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,
         size: asctile.ConstExpr[int], tile_size: asctile.ConstExpr[int]):
    x_gm = asctile.global_tensor(x_ptr, [size])
    y_gm = asctile.global_tensor(y_ptr, [size])
    z_gm = asctile.global_tensor(z_ptr, [size])
    per_core = size // asctile.block_num()
    for i in asctile.range(per_core // tile_size):
        offset = asctile.block_idx() * per_core + i * tile_size
        x = asctile.copy_in(x_gm, [offset], [tile_size])
        y = asctile.copy_in(y_gm, [offset], [tile_size])
        asctile.copy_out(x + y, z_gm, [offset])


def vadd_launch(x: np.ndarray, y: np.ndarray, core_num: int = 8, tile_size: int = 128) -> np.ndarray:
    z = np.zeros_like(x)
    vadd[core_num](x, y, z, x.size, tile_size)
    return z


if __name__ == "__main__":
    asctile.set_platform(asctile.Backend.Model, asctile.Platform.Ascend910B1, 0)
    rng = np.random.default_rng(seed=2026)
    x = rng.random(8192, dtype=np.float32)
    y = rng.random(8192, dtype=np.float32)
    z = vadd_launch(x, y)
    np.testing.assert_array_equal(z, x + y)
    print("asctile vadd: z == x + y for 8192 float32")

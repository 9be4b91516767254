"""pyasc's tutorial 01_add (GlobalTensor/LocalTensor, data_copy, add, set_flag/wait_flag;
8 cores x 8 tiles x double buffer), run with ascrun on the cpu target: no NPU, no CANN.

    python examples/add.py [--size N] [--cores C]
"""
import argparse

import numpy as np

import asc
import ascrun

USE_CORE_NUM = 8
BUFFER_NUM = 2  # BUFFER_NUM should be 1 or 2
TILE_NUM = 8


@asc.jit
def vadd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)

    tile_length = block_length // TILE_NUM // BUFFER_NUM
    data_type = x.dtype
    buffer_size = tile_length * BUFFER_NUM * data_type.sizeof()

    x_local = asc.LocalTensor(data_type, asc.TPosition.VECIN, 0, tile_length * BUFFER_NUM)
    y_local = asc.LocalTensor(data_type, asc.TPosition.VECIN, buffer_size, tile_length * BUFFER_NUM)
    z_local = asc.LocalTensor(data_type, asc.TPosition.VECOUT, buffer_size + buffer_size, tile_length * BUFFER_NUM)

    for i in range(TILE_NUM * BUFFER_NUM):
        buf_id = i % BUFFER_NUM
        asc.data_copy(x_local[buf_id * tile_length:], x_gm[i * tile_length:], tile_length)
        asc.data_copy(y_local[buf_id * tile_length:], y_gm[i * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.MTE2_V, buf_id)
        asc.wait_flag(asc.HardEvent.MTE2_V, buf_id)
        asc.add(z_local[buf_id * tile_length:], x_local[buf_id * tile_length:], y_local[buf_id * tile_length:],
                tile_length)
        asc.set_flag(asc.HardEvent.V_MTE3, buf_id)
        asc.wait_flag(asc.HardEvent.V_MTE3, buf_id)
        asc.data_copy(z_gm[i * tile_length:], z_local[buf_id * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, buf_id)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, buf_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8 * 2048)
    parser.add_argument("--cores", type=int, default=USE_CORE_NUM)
    opts = parser.parse_args()
    rng = np.random.default_rng(2025)
    x = rng.random(opts.size, dtype=np.float32)
    y = rng.random(opts.size, dtype=np.float32)
    for attempt in ("first run", "second run"):
        z = np.zeros_like(x)
        result = ascrun.run_local(vadd_kernel, opts.cores, x, y, z, opts.size // opts.cores)
        ok = np.allclose(z, x + y)
        times = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.timings.items())
        caches = ", ".join(f"{k} {v}" for k, v in result.cache.items())
        print(f"{attempt}: z == x + y for {opts.size} float32 on {opts.cores} cores: {'OK' if ok else 'MISMATCH'}")
        print(f"  timings: {times}\n  cache: {caches}")
        if not ok:
            raise SystemExit(1)


if __name__ == "__main__":
    main()

"""pyasc's tutorial 01_add with its synchronization changed by runtime arguments, for the hazard
check and the modeled timeline (tests/test_hazards.py). One artifact serves every variant.

- `drop`: 0 keeps all six flags (the tutorial as written); 1 to 6 leaves out the 1st to 6th
  set_flag/wait_flag call of the loop body.
- `wrong_id`: 1 makes the MTE2->V wait use the other buffer's event ID.
- `extra_set`: 1 sets MTE3_MTE2 once more after the loop, with no wait for it.
- `pipelined`: 1 moves the MTE3->MTE2 wait from the end of a tile to before the copy-in that
  reuses the tile's buffers, so the next tile's copy-in overlaps this tile's add and copy-out (the
  tutorial as written waits for every copy-out before the next copy-in: a serial chain).
"""
import asc

TILE_NUM = 8


@asc.jit
def vadd_sync_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int,
                     buffer_num: asc.ConstExpr[int], drop: int, wrong_id: int, extra_set: int, pipelined: int):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)

    tile_length = block_length // TILE_NUM // buffer_num
    data_type = x.dtype
    buffer_size = tile_length * buffer_num * data_type.sizeof()

    x_local = asc.LocalTensor(data_type, asc.TPosition.VECIN, 0, tile_length * buffer_num)
    y_local = asc.LocalTensor(data_type, asc.TPosition.VECIN, buffer_size, tile_length * buffer_num)
    z_local = asc.LocalTensor(data_type, asc.TPosition.VECOUT, buffer_size + buffer_size, tile_length * buffer_num)

    tiles = TILE_NUM * buffer_num
    for i in range(tiles):
        buf_id = i % buffer_num
        if pipelined == 1:
            if i >= buffer_num:
                asc.wait_flag(asc.HardEvent.MTE3_MTE2, buf_id)
        asc.data_copy(x_local[buf_id * tile_length:], x_gm[i * tile_length:], tile_length)
        asc.data_copy(y_local[buf_id * tile_length:], y_gm[i * tile_length:], tile_length)
        if drop != 1:
            asc.set_flag(asc.HardEvent.MTE2_V, buf_id)
        if drop != 2:
            if wrong_id == 1:
                asc.wait_flag(asc.HardEvent.MTE2_V, 1 - buf_id)
            else:
                asc.wait_flag(asc.HardEvent.MTE2_V, buf_id)
        asc.add(z_local[buf_id * tile_length:], x_local[buf_id * tile_length:], y_local[buf_id * tile_length:],
                tile_length)
        if drop != 3:
            asc.set_flag(asc.HardEvent.V_MTE3, buf_id)
        if drop != 4:
            asc.wait_flag(asc.HardEvent.V_MTE3, buf_id)
        asc.data_copy(z_gm[i * tile_length:], z_local[buf_id * tile_length:], tile_length)
        if pipelined == 1:
            if i < tiles - buffer_num:
                asc.set_flag(asc.HardEvent.MTE3_MTE2, buf_id)
        else:
            if drop != 5:
                asc.set_flag(asc.HardEvent.MTE3_MTE2, buf_id)
            if drop != 6:
                asc.wait_flag(asc.HardEvent.MTE3_MTE2, buf_id)
    if extra_set == 1:
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)


@asc.jit
def scalar_read_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, n: asc.ConstExpr[int], synced: int):
    """out[0] = x[0] + 1, read back by the scalar unit: with synced 0, without the V->S flag."""
    x_gm = asc.GlobalTensor()
    out_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    out_gm.set_global_buffer(out, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(x_local, x_gm, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(x_local, x_local, 1.0, n)
    if synced == 1:
        asc.set_flag(asc.HardEvent.V_S, 0)
        asc.wait_flag(asc.HardEvent.V_S, 0)
    out_gm.set_value(0, x_local.get_value(0))


@asc.jit
def vadd_tile_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                     synced: int):
    """z = x + y in one tile per block; with synced 0 its two set_flag/wait_flag pairs are left out:
    the outputs stay right on the cpu target, but V reads before MTE2's copy-in is known to be done."""
    offset = asc.get_block_idx() * n
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, n)
    y_gm.set_global_buffer(y + offset, n)
    z_gm.set_global_buffer(z + offset, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    y_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, n * 4, n)
    z_local = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * 8, n)
    asc.data_copy(x_local, x_gm, n)
    asc.data_copy(y_local, y_gm, n)
    if synced == 1:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.add(z_local, x_local, y_local, n)
    if synced == 1:
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(z_gm, z_local, n)

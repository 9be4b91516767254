"""Kernels taking pyasc Struct parameters (asc.language.core.struct), for test_struct_params.py
(pyasc's own nested-Struct kernel is tests/pyasc_port/test_vadd_tiling.py).

scaled_tiles_kernel takes a struct of several field dtypes and reports the 64-bit, int8 and bool
fields it read.
"""
import asc
from asc.language.core.dtype import KnownTypes as KT
from asc.language.core.struct import Field, Struct, StructField


# --- several field dtypes: int8 between wider fields (padding), bool, int64/uint64, float32 ----

class Tiling(Struct):
    block_length = Field(dtype=KT.int32, default=0)
    tile_length = Field(dtype=KT.int32, default=0)
    tile_num = Field(dtype=KT.int32, default=0)


class Affine(Struct):
    scale = Field(dtype=KT.float32, default=1.0)
    bias = Field(dtype=KT.float32, default=0.0)


class Marks(Struct):
    shift = Field(dtype=KT.int8, default=0)
    offset = Field(dtype=KT.int64, default=0)
    enabled = Field(dtype=KT.int1, default=False)
    seed = Field(dtype=KT.uint64, default=0)


class ScaledTiles(Struct):
    tiling = StructField(Tiling)
    flag = Field(dtype=KT.int8, default=0)
    affine = StructField(Affine)
    marks = StructField(Marks)


@asc.jit
def scaled_tiles_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, words: asc.GlobalAddress,
                        seeds: asc.GlobalAddress, params: ScaledTiles):
    """z = x * scale + bias tile by tile; block 0 stores the fields it read into words and seeds:
    words = [marks.offset, marks.shift, flag, 1 if marks.enabled else 0], seeds = [marks.seed]."""
    offset = asc.get_block_idx() * params.tiling.block_length
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset)
    z_gm.set_global_buffer(z + offset)
    pipe = asc.TPipe()
    in_queue = asc.TQue(asc.TPosition.VECIN, 1)
    out_queue = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_queue, num=1, len=params.tiling.tile_length * x.dtype.sizeof())
    pipe.init_buffer(que=out_queue, num=1, len=params.tiling.tile_length * z.dtype.sizeof())
    for i in range(params.tiling.tile_num):
        x_local = in_queue.alloc_tensor(x.dtype)
        asc.data_copy(x_local, x_gm[i * params.tiling.tile_length:], count=params.tiling.tile_length)
        in_queue.enque(x_local)
        x_in = in_queue.deque(x.dtype)
        z_local = out_queue.alloc_tensor(z.dtype)
        asc.muls(z_local, x_in, params.affine.scale, params.tiling.tile_length)
        asc.adds(z_local, z_local, params.affine.bias, params.tiling.tile_length)
        out_queue.enque(z_local)
        in_queue.free_tensor(x_in)
        z_out = out_queue.deque(z.dtype)
        asc.data_copy(z_gm[i * params.tiling.tile_length:], z_out, count=params.tiling.tile_length)
        out_queue.free_tensor(z_out)
    if asc.get_block_idx() == 0:
        words_gm = asc.GlobalTensor()
        words_gm.set_global_buffer(words)
        seeds_gm = asc.GlobalTensor()
        seeds_gm.set_global_buffer(seeds)
        words_gm.set_value(0, params.marks.offset)
        words_gm.set_value(1, params.marks.shift)
        words_gm.set_value(2, params.flag)
        words_gm.set_value(3, 0)
        if params.marks.enabled:
            words_gm.set_value(3, 1)
        seeds_gm.set_value(0, params.marks.seed)


# --- Struct classes a bundle cannot ship, or whose bytes would not match the kernel's struct --

class Count(Struct):
    count = Field(dtype=KT.int32, default=0)


CountAlias = Count


@asc.jit
def count_kernel(z: asc.GlobalAddress, cfg: Count):
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    z_gm.set_value(0, cfg.count)


@asc.jit
def aliased_struct_kernel(z: asc.GlobalAddress, cfg: CountAlias):
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    z_gm.set_value(0, cfg.count)


class Packed(Struct, pack=4):  # ctypes packs `total` at byte 4, the kernel's C++ reads it at byte 8
    count = Field(dtype=KT.int32, default=0)
    total = Field(dtype=KT.int64, default=0)


@asc.jit
def packed_struct_kernel(z: asc.GlobalAddress, cfg: Packed):
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    z_gm.set_value(0, cfg.total)

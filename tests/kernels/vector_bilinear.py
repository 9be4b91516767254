"""Kernel for BilinearInterpolation (half) on LocalTensors at fixed UB offsets, one block.

x0 (src0, N0 halves), offs (src0Offset, NO uint32 byte offsets), w (src1, its tensor w_size of N1
halves) and z (dst, ND halves, read first: unselected elements keep their values); the temporary
buffer is tmp_bytes at tmp_addr. form 0: continuous mask `mask`; 1: bit mask [mask_lo, mask_hi].
counter 1: SetMaskCount before the call. Everything is a runtime value: one build.
"""
import asc

N0, NO, N1, ND = 2048, 256, 256, 2048
SRC0, OFFS, SRC1, DST = 0, 4096, 5120, 8192  # UB offsets (bytes)


@asc.jit
def bilinear_kernel(x0: asc.GlobalAddress, offs: asc.GlobalAddress, w: asc.GlobalAddress, z: asc.GlobalAddress,
                    h_repeat: int, repeat_mode: int, dst_blk_stride: int, v_r_offset: int, v_repeat: int, form: int,
                    mask: int, mask_lo: int, mask_hi: int, w_size: int, tmp_addr: int, tmp_bytes: int,
                    counter: int):
    x0_gm = asc.GlobalTensor()
    o_gm = asc.GlobalTensor()
    w_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x0_gm.set_global_buffer(x0, N0)
    o_gm.set_global_buffer(offs, NO)
    w_gm.set_global_buffer(w, N1)
    z_gm.set_global_buffer(z, ND)
    src0 = asc.LocalTensor(asc.half, asc.TPosition.VECIN, SRC0, N0)
    src0_offset = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, OFFS, NO)
    src1 = asc.LocalTensor(asc.half, asc.TPosition.VECIN, SRC1, N1)
    dst = asc.LocalTensor(asc.half, asc.TPosition.VECOUT, DST, ND)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, tmp_addr, tmp_bytes)
    asc.data_copy(src0, x0_gm, N0)
    asc.data_copy(src0_offset, o_gm, NO)
    asc.data_copy(src1, w_gm, N1)
    asc.data_copy(dst, z_gm, ND)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    src1.set_size(w_size)
    if counter == 1:
        asc.set_mask_count()
    # repeatMode is the int (0 or 1) as it is: the nightly cannot pass `repeat_mode == 1` (as in
    # vector_gather.py's gather_mask_kernel)
    if form == 1:
        asc.bilinear_interpolation(dst, src0, src0_offset, src1, [mask_lo, mask_hi], h_repeat, repeat_mode,
                                   dst_blk_stride, v_r_offset, v_repeat, tmp)
    else:
        asc.bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat, repeat_mode, dst_blk_stride,
                                   v_r_offset, v_repeat, tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, dst, ND)

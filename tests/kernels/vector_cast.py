"""Kernel for Cast in every form pyasc emits, the round mode a runtime scalar (one build per dtype pair).

x is the source, z the destination (read first: elements left out keep their values), one block.
Runtime scalars: mode (RoundMode value); form 0 count form (count = lo), 1
continuous mask lo, 2 bit mask [lo, hi], 3 placeholder mask with isSetMask = false (the register,
set by SetVectorMask on the wider dtype); counter 1: SetMaskCount first; deq 1: SetDeqScale(scale).
"""
import asc


@asc.jit
def cast_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], mode: int, form: int,
                counter: int, lo: int, hi: int, repeat: int, dbs: int, sbs: int, drs: int, srs: int,
                scale: float, deq: int):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, n * 8, n)
    asc.data_copy(a, x_gm, n)
    asc.data_copy(b, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if deq == 1:
        asc.set_deq_scale(scale)
    if counter == 1:
        asc.set_mask_count()
    if form == 3:
        if x.dtype.sizeof() >= z.dtype.sizeof():
            if counter == 1:
                asc.set_vector_mask(lo, dtype=x.dtype, mode=asc.MaskMode.COUNTER)
            else:
                asc.set_vector_mask(hi, lo, dtype=x.dtype, mode=asc.MaskMode.NORMAL)
        else:
            if counter == 1:
                asc.set_vector_mask(lo, dtype=z.dtype, mode=asc.MaskMode.COUNTER)
            else:
                asc.set_vector_mask(hi, lo, dtype=z.dtype, mode=asc.MaskMode.NORMAL)
    up = asc.UnaryRepeatParams(dbs, sbs, drs, srs)
    if mode == 0:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_NONE, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_NONE, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_NONE, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_NONE, lo, repeat, up)
    elif mode == 1:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_RINT, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_RINT, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_RINT, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_RINT, lo, repeat, up)
    elif mode == 2:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_FLOOR, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_FLOOR, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_FLOOR, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_FLOOR, lo, repeat, up)
    elif mode == 3:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_CEIL, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_CEIL, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_CEIL, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_CEIL, lo, repeat, up)
    elif mode == 4:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_ROUND, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_ROUND, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_ROUND, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_ROUND, lo, repeat, up)
    elif mode == 5:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_TRUNC, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_TRUNC, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_TRUNC, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_TRUNC, lo, repeat, up)
    elif mode == 6:
        if form == 0:
            asc.cast(b, a, asc.RoundMode.CAST_ODD, lo)
        elif form == 2:
            asc.cast(b, a, asc.RoundMode.CAST_ODD, [lo, hi], repeat, up)
        elif form == 3:
            asc.cast(b, a, asc.RoundMode.CAST_ODD, lo, repeat, up, is_set_mask=False)
        else:
            asc.cast(b, a, asc.RoundMode.CAST_ODD, lo, repeat, up)
    if counter == 1:
        asc.set_mask_norm()
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, b, n)

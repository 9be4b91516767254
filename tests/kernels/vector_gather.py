"""Kernels for Gather, Gatherb, Scatter, Brcb and GatherMask, every call form pyasc 1.1.1 emits. One
block; call forms, parameters and UB addresses are runtime values, so each dtype is one build."""
import asc

# gather_kernel ops
G_COUNT, G_MASK, G_BITS, GATHERB, BRCB, SCATTER_COUNT, SCATTER_MASK, SCATTER_BITS = range(8)


@asc.jit
def gather_kernel(x: asc.GlobalAddress, off: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                  op: int, count: int, base: int, lo: int, hi: int, repeat: int, blk: int, rep: int, counter: int,
                  xaddr: int, oaddr: int, zaddr: int):
    """x: n elements of T (uint16_t or uint32_t, the types all four instructions take); off: n uint32_t
    offsets; z: n elements, read first, the dst. Gather (count; continuous mask lo; bits [lo, hi];
    dstRepStride rep), Gatherb (GatherRepeatParams(blk, rep)), Brcb (BrcbRepeatParams(blk, rep)),
    Scatter. counter: SetMaskCount before the call (lo is then the count)."""
    x_gm = asc.GlobalTensor()
    o_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    o_gm.set_global_buffer(off, n)
    z_gm.set_global_buffer(z, n)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, xaddr, n)
    ol = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, oaddr, n)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, zaddr, n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(ol, o_gm, n)
    asc.data_copy(zl, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if counter == 1:
        asc.set_mask_count()
    if op == 0:
        asc.gather(zl, xl, ol, base, count)
    elif op == 1:
        asc.gather(zl, xl, ol, base, lo, repeat, rep)
    elif op == 2:
        asc.gather(zl, xl, ol, base, [lo, hi], repeat, rep)
    elif op == 3:
        asc.gatherb(zl, xl, ol, repeat, asc.GatherRepeatParams(blk, rep))
    elif op == 4:
        asc.brcb(zl, xl, repeat, asc.BrcbRepeatParams(blk, rep))
    elif op == 5:
        asc.scatter(zl, xl, ol, base, count)
    elif op == 6:
        asc.scatter(zl, xl, ol, base, lo, repeat, rep)
    else:
        asc.scatter(zl, xl, ol, base, [lo, hi], repeat, rep)
    if counter == 1:
        asc.set_mask_norm()
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)


@asc.jit
def gather_mask_kernel(x: asc.GlobalAddress, p: asc.GlobalAddress, z: asc.GlobalAddress, w: asc.GlobalAddress,
                       cnt: asc.GlobalAddress, n: asc.ConstExpr[int], pattern: int, reduce: int, mask: int,
                       src0_blk: int, repeat: int, src0_rep: int, src1_rep: int, counter: int, xaddr: int,
                       paddr: int, zaddr: int):
    """x: n elements of T (half or float); p: the pattern tensor (n / 2 elements of uint16_t / uint32_t);
    z: n elements, read first, the dst. pattern 0: src1Pattern = p, else the built-in pattern 1..7.
    cnt[0] = rsvdCnt, cnt[1] = GetGatherMaskRemainCount(). Then Adds(w, x, 1) with the mask register
    as GatherMask left it (w read first). counter: SetMaskCount before the call."""
    x_gm = asc.GlobalTensor()
    p_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    w_gm = asc.GlobalTensor()
    c_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    p_gm.set_global_buffer(p, n // 2)
    z_gm.set_global_buffer(z, n)
    w_gm.set_global_buffer(w, n)
    c_gm.set_global_buffer(cnt, 4)
    nb = n * x.dtype.sizeof()
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, xaddr, n)
    pl = asc.LocalTensor(p.dtype, asc.TPosition.VECIN, paddr, n // 2)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, zaddr, n)
    wl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 4 * nb, n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(pl, p_gm, n // 2)
    asc.data_copy(zl, z_gm, n)
    asc.data_copy(wl, w_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if counter == 1:
        asc.set_mask_count()
    params = asc.GatherMaskParams(src0_blk, repeat, src0_rep, src1_rep)
    # src1Pattern's built-in values must be Python ints, so each is its own call. reduceMode is the
    # int (0 or 1) as it is: the nightly cannot pass `reduce == 1` (its int1 comparison result has
    # bitwidth 8 in its dtype table, so its cast to bool_, int8, raises NotImplementedError).
    if pattern == 0:
        c_gm.set_value(0, asc.gather_mask(zl, xl, pl, reduce, mask, params))
    elif pattern == 1:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 1, reduce, mask, params))
    elif pattern == 2:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 2, reduce, mask, params))
    elif pattern == 3:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 3, reduce, mask, params))
    elif pattern == 4:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 4, reduce, mask, params))
    elif pattern == 5:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 5, reduce, mask, params))
    elif pattern == 6:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 6, reduce, mask, params))
    else:
        c_gm.set_value(0, asc.gather_mask(zl, xl, 7, reduce, mask, params))
    # pyasc 1.1.1 returns the bare IR value here; wrap it as gather_mask does its own result.
    c_gm.set_value(1, asc.language.core.ir_value.PlainValue(asc.get_gather_mask_remain_count()))
    asc.adds(wl, xl, 1.0, 0, 1, asc.UnaryRepeatParams(), is_set_mask=False)
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)
    asc.data_copy(w_gm, wl, n)

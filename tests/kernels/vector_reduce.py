"""Kernel for the reduction instructions (ReduceSum/Max/Min, WholeReduce*, BlockReduce*,
PairReduceSum, RepeatReduceSum) in every call form pyasc emits for them.

The whole Unified Buffer is one tensor, copied in from `u` and back out whole: src, dst and
sharedTmpBuffer are views at runtime element offsets into it, so overlaps, alignments and what an
instruction leaves untouched are all visible in `u`. Every parameter is a runtime scalar, so there
is one build per dtype:
  op       which instruction and form (OPS below)
  bits     1: the mask is the list [lo, hi]; 0: the integer `mask`
  counter  1: SetMaskCount first (the mask is then the element count)
  ci       1: calIndex = true (ReduceMax/ReduceMin)
  order    ReduceOrder of WholeReduceMax/Min (0..3)
  tmp_len  sharedTmpBuffer's length in bytes (SetBufferLen)
"""
import asc

UB_BYTES = 196608
OPS = ("block_sum", "block_max", "block_min", "pair_sum", "repeat_sum", "whole_sum", "whole_max", "whole_min",
       "reduce_sum", "reduce_max", "reduce_min", "reduce_sum_count", "reduce_max_count", "reduce_min_count")


@asc.jit
def reduce_kernel(u: asc.GlobalAddress, op: int, bits: int, mask: int, lo: int, hi: int, repeat: int, drs: int,
                  sbs: int, srs: int, order: int, counter: int, ci: int, count: int, src: int, dst: int, tmp: int,
                  tmp_len: int):
    n = UB_BYTES // u.dtype.sizeof()
    g = asc.GlobalTensor()
    g.set_global_buffer(u, n)
    ub = asc.LocalTensor(u.dtype, asc.TPosition.VECCALC, 0, n)
    asc.data_copy(ub, g, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    s = ub[src:]
    d = ub[dst:]
    w = ub[tmp:]
    w.set_buffer_len(tmp_len)
    if counter == 1:
        asc.set_mask_count()
    if op == 0:
        if bits == 1:
            asc.block_reduce_sum(d, s, repeat, [lo, hi], drs, sbs, srs)
        else:
            asc.block_reduce_sum(d, s, repeat, mask, drs, sbs, srs)
    elif op == 1:
        if bits == 1:
            asc.block_reduce_max(d, s, repeat, [lo, hi], drs, sbs, srs)
        else:
            asc.block_reduce_max(d, s, repeat, mask, drs, sbs, srs)
    elif op == 2:
        if bits == 1:
            asc.block_reduce_min(d, s, repeat, [lo, hi], drs, sbs, srs)
        else:
            asc.block_reduce_min(d, s, repeat, mask, drs, sbs, srs)
    elif op == 3:
        if bits == 1:
            asc.pair_reduce_sum(d, s, repeat, [lo, hi], drs, sbs, srs)
        else:
            asc.pair_reduce_sum(d, s, repeat, mask, drs, sbs, srs)
    elif op == 4:
        asc.repeat_reduce_sum(d, s, repeat, mask, 3, sbs, drs, srs)
    elif op == 5:
        if bits == 1:
            asc.whole_reduce_sum(d, s, [lo, hi], repeat, drs, sbs, srs)
        else:
            asc.whole_reduce_sum(d, s, mask, repeat, drs, sbs, srs)
    elif op == 6:
        if bits == 1:
            if order == 0:
                asc.whole_reduce_max(d, s, [lo, hi], repeat, drs, sbs, srs)
            elif order == 1:
                asc.whole_reduce_max(d, s, [lo, hi], repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_INDEX_VALUE)
            elif order == 2:
                asc.whole_reduce_max(d, s, [lo, hi], repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_VALUE)
            else:
                asc.whole_reduce_max(d, s, [lo, hi], repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_INDEX)
        else:
            if order == 0:
                asc.whole_reduce_max(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_VALUE_INDEX)
            elif order == 1:
                asc.whole_reduce_max(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_INDEX_VALUE)
            elif order == 2:
                asc.whole_reduce_max(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_VALUE)
            else:
                asc.whole_reduce_max(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_INDEX)
    elif op == 7:
        if bits == 1:
            if order == 0:
                asc.whole_reduce_min(d, s, [lo, hi], repeat, drs, sbs, srs)
            elif order == 1:
                asc.whole_reduce_min(d, s, [lo, hi], repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_INDEX_VALUE)
            elif order == 2:
                asc.whole_reduce_min(d, s, [lo, hi], repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_VALUE)
            else:
                asc.whole_reduce_min(d, s, [lo, hi], repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_INDEX)
        else:
            if order == 0:
                asc.whole_reduce_min(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_VALUE_INDEX)
            elif order == 1:
                asc.whole_reduce_min(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_INDEX_VALUE)
            elif order == 2:
                asc.whole_reduce_min(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_VALUE)
            else:
                asc.whole_reduce_min(d, s, mask, repeat, drs, sbs, srs, asc.ReduceOrder.ORDER_ONLY_INDEX)
    elif op == 8:
        if bits == 1:
            asc.reduce_sum(d, s, w, [lo, hi], repeat, srs)
        else:
            asc.reduce_sum(d, s, w, mask, repeat, srs)
    elif op == 9:
        if bits == 1:
            if ci == 1:
                asc.reduce_max(d, s, w, [lo, hi], repeat, srs, True)
            else:
                asc.reduce_max(d, s, w, [lo, hi], repeat, srs, False)
        else:
            if ci == 1:
                asc.reduce_max(d, s, w, mask, repeat, srs, True)
            else:
                asc.reduce_max(d, s, w, mask, repeat, srs)
    elif op == 10:
        if bits == 1:
            if ci == 1:
                asc.reduce_min(d, s, w, [lo, hi], repeat, srs, True)
            else:
                asc.reduce_min(d, s, w, [lo, hi], repeat, srs, False)
        else:
            if ci == 1:
                asc.reduce_min(d, s, w, mask, repeat, srs, True)
            else:
                asc.reduce_min(d, s, w, mask, repeat, srs)
    elif op == 11:
        asc.reduce_sum(d, s, w, count)
    elif op == 12:
        if ci == 1:
            asc.reduce_max(d, s, w, count, True)
        else:
            asc.reduce_max(d, s, w, count)
    elif op == 13:
        if ci == 1:
            asc.reduce_min(d, s, w, count, True)
        else:
            asc.reduce_min(d, s, w, count, False)
    if counter == 1:
        asc.set_mask_norm()
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(g, ub, n)

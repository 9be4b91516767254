"""numpy model of the mask + repeat forms, written from the Ascend C reference (SIMD计算说明/掩码,
高维切分): which element of each operand every selected element of every repeat touches."""
import numpy as np


def masked_positions(itemsize, counter, bits, lo, hi, repeat, blk, rep, itemsizes=None):
    """Per operand o, the element indices touched, in hardware order (repeat by repeat).

    blk[o]/rep[o]: the operand's block stride / repeat stride, in 32-byte blocks.
    Normal mode: the mask selects elements j of each of `repeat` repeats (continuous: j < lo;
    bits: bit j of hi:lo, only lo for 32-bit types, its low 32 bits for 64-bit ones). Counter
    mode: lo elements in all, per-repeat-sized repeats, the last one a prefix; `repeat` is ignored.
    `itemsize` is the mask's (the wider) element size; `itemsizes[o]`, when given, operand o's own:
    a narrower operand keeps the repeat's elements in fewer of its 32-byte blocks (Cast.md)."""
    per = 256 // itemsize
    rows = []
    if counter:
        total = lo
        repeats = -(-total // per)
        for r in range(repeats):
            rows += [(r, j) for j in range(min(per, total - r * per))]
    else:
        if bits:
            m = {2: lo | (hi << 64), 4: lo, 8: lo & 0xFFFF_FFFF}[itemsize]
            sel = [j for j in range(per) if (m >> j) & 1]
        else:
            sel = list(range(min(lo, per)))
        rows = [(r, j) for r in range(repeat) for j in sel]
    out = []
    for o, (b, s) in enumerate(zip(blk, rep)):
        epb = 32 // (itemsizes[o] if itemsizes else itemsize)
        out.append(np.array([r * s * epb + (j // epb) * b * epb + j % epb for r, j in rows], dtype=np.int64))
    return out

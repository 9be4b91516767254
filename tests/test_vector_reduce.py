"""Reduction instructions (BlockReduce*, PairReduceSum, RepeatReduceSum, WholeReduce*, ReduceSum/Max/Min)
through run_local, against numpy models written from the Ascend C reference (归约计算/*.md): binary
trees in lane order rounded to the dtype at every addition, first-extreme indexes, what a masked-out
block or pair leaves untouched, the sharedTmpBuffer minimum. One build per dtype (every parameter of
the kernel is a runtime scalar)."""
import numpy as np
import pytest

import ascrun
import vector_reduce as vr

pytestmark = pytest.mark.kernel

OP = {name: i for i, name in enumerate(vr.OPS)}
UINT = {2: np.uint16, 4: np.uint32}

# Default layout, in bytes of the Unified Buffer: src at 0, dst at 96 KiB, sharedTmpBuffer at 128 KiB.
DST_B, TMP_B, TMP_LEN = 96 * 1024, 128 * 1024, 32 * 1024
DST_FILL, TMP_FILL = 7, 3


def _ub(dtype, seed=0, lo=-4.0, hi=4.0, src_elems=None):
    """The UB image: random src values, dst and sharedTmpBuffer regions filled with markers."""
    n = vr.UB_BYTES // np.dtype(dtype).itemsize
    rng = np.random.default_rng(seed)
    u = rng.uniform(lo, hi, n).astype(dtype)
    isz = np.dtype(dtype).itemsize
    u[DST_B // isz:TMP_B // isz] = DST_FILL
    u[TMP_B // isz:] = TMP_FILL
    return u


def run(u, op, *, bits=0, mask=0, lo=0, hi=0, repeat=1, drs=1, sbs=1, srs=8, order=0, counter=0, ci=0, count=0,
        src=0, dst=None, tmp=None, tmp_len=TMP_LEN):
    isz = u.dtype.itemsize
    dst = DST_B // isz if dst is None else dst
    tmp = TMP_B // isz if tmp is None else tmp
    # lo/hi as uint64 (a 64-bit mask); the other scalars are int32.
    return ascrun.run_local(vr.reduce_kernel, 1, u, OP[op], bits, mask, np.uint64(lo), np.uint64(hi), repeat, drs,
                            sbs, srs, order, counter, ci, count, src, dst, tmp, tmp_len)


def fails(u, op, **kw):
    with pytest.raises(ascrun.KernelError) as e:
        run(u, op, **kw)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def same_bits(got, expected):
    np.testing.assert_array_equal(got.view(UINT[got.dtype.itemsize]), expected.view(UINT[got.dtype.itemsize]))


# ---- the model ---------------------------------------------------------------------------------

def repeat_lanes(itemsize, counter, bits, mask, lo, hi, repeat):
    """The selected lanes of each repeat (SIMD计算说明/掩码, 高维切分): normal mode, the mask's lanes
    in each of `repeat` repeats; counter mode, `mask` (mask[0] in the bit form) elements in full
    repeats, the last one a prefix."""
    per = 256 // itemsize
    if counter:
        n = lo if bits else mask
        return [list(range(min(per, n - r * per))) for r in range(-(-n // per))]
    if bits:
        m = lo | ((hi << 64) if itemsize == 2 else 0)
        sel = [j for j in range(per) if (m >> j) & 1]
    else:
        sel = list(range(mask))
    return [sel] * repeat if sel else []


def lane_pos(itemsize, src, r, j, srs, sbs=1):
    """Element index in the UB of lane j of repeat r."""
    epb = 32 // itemsize
    return src + r * srs * epb + (j // epb) * sbs * epb + j % epb


def lane_values(u, src, r, sel, srs, sbs):
    """The repeat's lane values: selected lanes from src, +0 in the others."""
    per = 256 // u.dtype.itemsize
    v = np.zeros(per, u.dtype)
    for j in sel:
        v[j] = u[lane_pos(u.dtype.itemsize, src, r, j, srs, sbs)]
    return v


def tree(v, levels):
    """`levels` levels of the binary tree: (0,1), (2,3), ... then pairwise again; numpy rounds every
    addition to the dtype (float16 stays float16)."""
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(levels):
            v = v[0::2] + v[1::2]
    return v


def first_extreme(vals, is_max):
    """Index of the first maximum (minimum) of vals; a NaN counts as the extreme (numpy's rule)."""
    return int(np.argmax(vals) if is_max else np.argmin(vals))


def model_groups(u, kind, levels, unit, lanes, src, dst, drs, sbs, srs):
    """BlockReduce*/PairReduceSum/WholeReduceSum/RepeatReduceSum: groups of 2^levels lanes per repeat;
    group g of repeat r -> dst + r * drs * unit + g; groups without a selected lane stay untouched."""
    out = u.copy()
    for r, sel in enumerate(lanes):
        v = lane_values(u, src, r, sel, srs, sbs)
        sums = tree(v, levels)
        for g in sorted({j >> levels for j in sel}):
            if kind == "sum":
                val = sums[g]
            else:
                members = [j for j in sel if j >> levels == g]
                val = v[members][first_extreme(v[members], kind == "max")]
            out[dst + r * drs * unit + g] = val
    return out


def model_whole_extreme(u, is_max, order, lanes, src, dst, drs, sbs, srs):
    out = u.copy()
    isz = u.dtype.itemsize
    ob = out.view(np.uint8)
    for r, sel in enumerate(lanes):
        vals = np.array([u[lane_pos(isz, src, r, j, srs, sbs)] for j in sel], u.dtype)
        k = first_extreme(vals, is_max)
        val, idx = vals[k], sel[k]
        idx_bits = np.array([idx], UINT[isz]).view(u.dtype)[0]
        if order == 0:
            out[dst + r * drs * 2] = val
            out[dst + r * drs * 2 + 1] = idx_bits
        elif order == 1:
            out[dst + r * drs * 2] = idx_bits
            out[dst + r * drs * 2 + 1] = val
        elif order == 2:
            out[dst + r * drs] = val
        else:
            at = dst * isz + r * drs * 4
            ob[at:at + 4] = np.frombuffer(np.uint32(idx).tobytes(), np.uint8)
    return out


def sum_tmp_min(itemsize, repeats):
    epb = 32 // itemsize
    return -(-repeats // epb) * epb


def extreme_tmp_min(itemsize, repeats, cal_index):
    """ReduceMax.md's sharedTmpBuffer minimum (elements)."""
    epb, per = 32 // itemsize, 256 // itemsize
    up = lambda a, b: -(-a // b)  # noqa: E731
    out1 = repeats * 2
    end1 = up(out1, epb) * epb
    if not cal_index:
        return end1
    out2 = up(out1, per) * 2
    end2 = up(out2, epb) * epb
    if out2 <= 2:
        return end1 + end2
    return end1 + end2 + up(up(out2, per) * 2, epb) * epb


def poison(out, tmp, elems):
    out.view(np.uint8)[tmp * out.dtype.itemsize:(tmp + elems) * out.dtype.itemsize] = 0xA5


def model_reduce_sum(u, lanes, src, srs):
    """ReduceSum, mask + repeat forms (方式一): a tree per repeat, a tree over each `per` repeat sums,
    a tree over those."""
    per = 256 // u.dtype.itemsize
    levels = per.bit_length() - 1
    sums = [tree(lane_values(u, src, r, sel, srs, 1), levels)[0] for r, sel in enumerate(lanes)]
    if len(sums) == 1:
        return sums[0]

    def padded_tree(vals):
        v = np.zeros(per, u.dtype)
        v[:len(vals)] = vals
        return tree(v, levels)[0]
    groups = [padded_tree(sums[k:k + per]) for k in range(0, len(sums), per)]
    return groups[0] if len(groups) == 1 else padded_tree(groups)


def model_reduce_sum_count(u, src, count):
    """ReduceSum count form (方式二): a tree per repeat of `per` elements, the sums added in order."""
    per = 256 // u.dtype.itemsize
    acc = None
    with np.errstate(over="ignore"):
        for i in range(0, count, per):
            v = np.zeros(per, u.dtype)
            n = min(per, count - i)
            v[:n] = u[src + i:src + i + n]
            s = tree(v, per.bit_length() - 1)[0]
            acc = s if acc is None else u.dtype.type(acc + s)
    return acc


def model_reduce_extreme(u, is_max, lanes, src, srs):
    """ReduceMax/Min: the first extreme over the selected elements, repeat by repeat, and its index
    r * srcRepStride * (lanes per block) + lane."""
    epb = 32 // u.dtype.itemsize
    pos = [(r, j) for r, sel in enumerate(lanes) for j in sel]
    vals = np.array([u[lane_pos(u.dtype.itemsize, src, r, j, srs)] for r, j in pos], u.dtype)
    k = first_extreme(vals, is_max)
    r, j = pos[k]
    return vals[k], r * srs * epb + j


def put_extreme(out, dst, val, idx, cal_index):
    out[dst] = val
    if cal_index:
        out[dst + 1] = np.array([idx], UINT[out.dtype.itemsize]).view(out.dtype)[0]


def dst_of(u):
    return DST_B // u.dtype.itemsize


def tmp_of(u):
    return TMP_B // u.dtype.itemsize


# ---- WholeReduceSum / RepeatReduceSum / BlockReduce* / PairReduceSum ---------------------------

GROUP_OPS = {  # op -> (kind, levels(itemsize), dst unit(itemsize))
    "whole_sum": ("sum", lambda s: (256 // s).bit_length() - 1, lambda s: 1),
    "repeat_sum": ("sum", lambda s: (256 // s).bit_length() - 1, lambda s: 1),
    "block_sum": ("sum", lambda s: (32 // s).bit_length() - 1, lambda s: 8),
    "block_max": ("max", lambda s: (32 // s).bit_length() - 1, lambda s: 8),
    "block_min": ("min", lambda s: (32 // s).bit_length() - 1, lambda s: 8),
    "pair_sum": ("sum", lambda s: 1, lambda s: 128 // s),
}


def check_groups(op, dtype, seed=0, u=None, src=0, dst=None, **kw):
    u = _ub(dtype, seed) if u is None else u
    isz = u.dtype.itemsize
    dst = dst_of(u) if dst is None else dst
    p = dict(bits=0, mask=0, lo=0, hi=0, repeat=1, drs=1, sbs=1, srs=8, counter=0)
    p.update(kw)
    kind, levels, unit = GROUP_OPS[op]
    lanes = repeat_lanes(isz, p["counter"], p["bits"], p["mask"], p["lo"], p["hi"], p["repeat"])
    expected = model_groups(u, kind, levels(isz), unit(isz), lanes, src, dst, p["drs"], p["sbs"], p["srs"])
    run(u, op, src=src, dst=dst, **p)
    same_bits(u, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_whole_reduce_sum_continuous_mask_is_a_tree_rounded_per_addition(dtype):
    per = 256 // np.dtype(dtype).itemsize
    check_groups("whole_sum", dtype, mask=per - 5, repeat=5, drs=1)


def test_half_tree_differs_from_the_rounded_sum():
    # [2048, 1 x 15]: the tree adds 2048 + 1 first (-> 2048 in half), then the other 1s pairwise:
    # 2062; the exact sum 2063 rounds (ties to even) to 2064.
    u = _ub(np.float16)
    u[:16] = [2048] + [1] * 15
    check_groups("whole_sum", np.float16, u=u, mask=16, repeat=1)
    assert u[dst_of(u)] == 2062 and np.float16(np.float32(2063)) == 2064


def test_half_sum_overflows_to_inf():
    u = _ub(np.float16)
    u[:4] = [60000, 60000, -30000, 100]
    check_groups("whole_sum", np.float16, u=u, mask=4, repeat=1)
    assert np.isinf(u[dst_of(u)])  # the non-saturating default; 65504 is the saturation mode


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_whole_reduce_sum_bit_mask_strides_and_overlapping_repeats(dtype):
    hi = 0x8000_0000_0000_0001 if dtype == np.float16 else 0
    # srcBlkStride 2, srcRepStride 4 (< 8: repeats overlap, reads only), dstRepStride 3.
    check_groups("whole_sum", dtype, bits=1, lo=0xF0F0_0000_FFFF_0103, hi=hi, repeat=7, drs=3, sbs=2, srs=4)


def test_whole_reduce_sum_zero_strides():
    # srcRepStride 0: every repeat reads the same data; dstRepStride 0: every repeat writes dst[0].
    check_groups("whole_sum", np.float32, mask=33, repeat=4, drs=0, srs=0)
    check_groups("whole_sum", np.float32, mask=64, repeat=3, drs=1, srs=0, sbs=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_whole_reduce_sum_counter_mode_with_a_tail_smaller_than_a_block(dtype):
    per = 256 // np.dtype(dtype).itemsize
    check_groups("whole_sum", dtype, counter=1, mask=2 * per + 13, repeat=1, drs=2)
    check_groups("whole_sum", dtype, counter=1, bits=1, lo=per + 3, repeat=9)  # bit form: mask[0] is the count


def test_repeat_reduce_sum_ignores_dst_block_stride():
    check_groups("repeat_sum", np.float32, mask=50, repeat=4, drs=2, srs=8)  # the kernel passes dstBlkStride 3
    check_groups("repeat_sum", np.float16, counter=1, mask=200, repeat=1)


@pytest.mark.parametrize("op", ["block_sum", "block_max", "block_min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_block_reduce_partial_mask_leaves_unselected_blocks_untouched(op, dtype):
    epb = 32 // np.dtype(dtype).itemsize
    # The first 3 blocks and part of the fourth: blocks 4..7 keep their dst values.
    check_groups(op, dtype, mask=3 * epb + 2, repeat=3, drs=1)


@pytest.mark.parametrize("op", ["block_sum", "block_max", "block_min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_block_reduce_bit_mask_and_strides(op, dtype):
    hi = 0x00FF_0000_0001_8000 if dtype == np.float16 else 0
    check_groups(op, dtype, bits=1, lo=0x0000_F00F_0000_0F01, hi=hi, repeat=4, drs=2, sbs=3, srs=16)


@pytest.mark.parametrize("op", ["block_sum", "block_max"])
def test_block_reduce_counter_mode(op):
    check_groups(op, np.float16, counter=1, mask=300, repeat=1)


def test_block_reduce_in_place():
    # dst == src: repeat r writes 8 results over its own first block(s); no later repeat reads them.
    u = _ub(np.float32)
    check_groups("block_sum", np.float32, u=u, src=0, dst=0, mask=64, repeat=6, drs=1)


def test_block_max_ties_and_nan():
    u = _ub(np.float32)
    u[0:8] = [1, 5, 5, 2, 5, 0, 0, 0]
    u[8:16] = [1, np.nan, 9, np.nan, 0, 0, 0, 0]
    u[16:24] = [-0.0, 0.0, -1, -1, -1, -1, -1, -1]
    check_groups("block_max", np.float32, u=u, mask=64, repeat=1)
    d = dst_of(u)
    assert u[d] == 5 and np.isnan(u[d + 1]) and np.signbit(u[d + 2])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_pair_reduce_sum_masked_pairs(dtype):
    # Pairs with both lanes off stay untouched, pairs with one lane on sum that lane (+0).
    hi = 0xFFFF_0000_3333_0001 if dtype == np.float16 else 0
    check_groups("pair_sum", dtype, bits=1, lo=0x0F0F_6666_0000_FFF1, hi=hi, repeat=3, drs=1, sbs=2, srs=16)
    check_groups("pair_sum", dtype, mask=37, repeat=2, drs=2)


def test_pair_reduce_sum_counter_mode():
    check_groups("pair_sum", np.float32, counter=1, mask=150, repeat=1, drs=1)


# ---- WholeReduceMax / WholeReduceMin -----------------------------------------------------------

def check_whole_extreme(op, dtype, order, u=None, **kw):
    u = _ub(dtype) if u is None else u
    p = dict(bits=0, mask=0, lo=0, hi=0, repeat=1, drs=1, sbs=1, srs=8, counter=0)
    p.update(kw)
    lanes = repeat_lanes(u.dtype.itemsize, p["counter"], p["bits"], p["mask"], p["lo"], p["hi"], p["repeat"])
    expected = model_whole_extreme(u, op == "whole_max", order, lanes, 0, dst_of(u), p["drs"], p["sbs"], p["srs"])
    run(u, op, order=order, **p)
    same_bits(u, expected)
    return u


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("op", ["whole_max", "whole_min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_whole_reduce_extreme_orders(op, dtype, order):
    per = 256 // np.dtype(dtype).itemsize
    check_whole_extreme(op, dtype, order, mask=per - 9, repeat=4, drs=2, srs=6)


def test_whole_reduce_max_index_is_the_lane_stored_as_bits():
    # The reference's example: 11 at lane 52 -> [11, 0x0034 as half]; ORDER_ONLY_INDEX: a uint32_t.
    u = _ub(np.float16)
    u[:256] = 1
    u[52] = 11
    u[128 + 100] = 12
    u = check_whole_extreme("whole_max", np.float16, 0, u=u, mask=128, repeat=2)
    d = dst_of(u)
    assert list(u[d:d + 4].view(np.uint16)) == [np.float16(11).view(np.uint16), 52, np.float16(12).view(np.uint16),
                                                100]
    u = check_whole_extreme("whole_max", np.float16, 3, u=u, mask=128, repeat=2)
    assert list(u[d:d + 4].view(np.uint32)) == [52, 100]


def test_whole_reduce_extreme_ties_pick_the_lowest_lane_and_nan_wins():
    u = _ub(np.float32)
    u[:64] = 3
    u[10] = u[40] = 9
    u[64:128] = 1
    u[64 + 20] = np.nan
    u[64 + 30] = np.nan
    u = check_whole_extreme("whole_max", np.float32, 0, u=u, mask=64, repeat=2)
    d = dst_of(u)
    assert u[d] == 9 and u[d + 1:d + 2].view(np.uint32)[0] == 10
    assert np.isnan(u[d + 2]) and u[d + 3:d + 4].view(np.uint32)[0] == 20
    u[:64] = 3
    u = check_whole_extreme("whole_min", np.float32, 0, u=u, mask=64, repeat=1)
    assert u[d + 1:d + 2].view(np.uint32)[0] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_whole_reduce_extreme_bit_mask_counter_mode_and_block_stride(dtype):
    hi = 0x0101_0000_0000_0001 if dtype == np.float16 else 0
    check_whole_extreme("whole_min", dtype, 1, bits=1, lo=0xF000_0000_0000_0F0F, hi=hi, repeat=3, drs=1, sbs=2, srs=16)
    per = 256 // np.dtype(dtype).itemsize
    check_whole_extreme("whole_max", dtype, 2, counter=1, mask=3 * per + 5, drs=1)


# ---- ReduceSum ---------------------------------------------------------------------------------

def check_reduce_sum(dtype, u=None, **kw):
    u = _ub(dtype) if u is None else u
    p = dict(bits=0, mask=0, lo=0, hi=0, repeat=1, srs=8)
    p.update(kw)
    lanes = repeat_lanes(u.dtype.itemsize, 0, p["bits"], p["mask"], p["lo"], p["hi"], p["repeat"])
    expected = u.copy()
    expected[dst_of(u)] = model_reduce_sum(u, lanes, 0, p["srs"])
    poison(expected, tmp_of(u), sum_tmp_min(u.dtype.itemsize, p["repeat"]))
    run(u, "reduce_sum", **p)
    same_bits(u, expected)
    return u


@pytest.mark.parametrize("repeat", [1, 7, 130, 255])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduce_sum_mask_form_trees_per_repeat_and_across_repeats(dtype, repeat):
    # 130 / 255 repeats: more than one repeat of partial sums for float (64) and half (255 > 128).
    per = 256 // np.dtype(dtype).itemsize
    check_reduce_sum(dtype, mask=per, repeat=repeat, srs=8)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduce_sum_bit_mask_and_overlapping_repeat_stride(dtype):
    hi = 0x5555_0000_FFFF_0000 if dtype == np.float16 else 0
    check_reduce_sum(dtype, bits=1, lo=0x0123_4567_89AB_CDEF, hi=hi, repeat=70, srs=3)
    check_reduce_sum(dtype, mask=17, repeat=5, srs=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduce_sum_count_form_adds_repeat_sums_in_order_and_leaves_tmp_alone(dtype):
    per = 256 // np.dtype(dtype).itemsize
    for count in (5, per, 37 * per + 11):
        u = _ub(dtype, seed=count)
        expected = u.copy()
        expected[dst_of(u)] = model_reduce_sum_count(u, 0, count)
        run(u, "reduce_sum_count", count=count, tmp_len=0)  # any sharedTmpBuffer size: it is not used
        same_bits(u, expected)


def test_reduce_sum_count_form_differs_from_the_mask_form():
    # Same 64 repeats of half: in-order accumulation (count form) vs a tree over the repeat sums.
    u = _ub(np.float16, lo=0, hi=3)
    a = model_reduce_sum_count(u, 0, 64 * 128)
    b = model_reduce_sum(u, repeat_lanes(2, 0, 0, 128, 0, 0, 64), 0, 8)
    assert a != b
    run(u, "reduce_sum_count", count=64 * 128)
    assert u[dst_of(u)] == a


def test_reduce_sum_dst_may_overlap_the_tmp_buffer():
    u = _ub(np.float32)
    lanes = repeat_lanes(4, 0, 0, 64, 0, 0, 20)
    expected = u.copy()
    t = tmp_of(u)
    poison(expected, t, sum_tmp_min(4, 20))
    expected[t + 3] = model_reduce_sum(u, lanes, 0, 8)
    run(u, "reduce_sum", mask=64, repeat=20, dst=t + 3)
    same_bits(u, expected)


# ---- ReduceMax / ReduceMin ---------------------------------------------------------------------

def check_reduce_extreme(op, dtype, ci, u=None, **kw):
    u = _ub(dtype) if u is None else u
    p = dict(bits=0, mask=0, lo=0, hi=0, repeat=1, srs=8)
    p.update(kw)
    lanes = repeat_lanes(u.dtype.itemsize, 0, p["bits"], p["mask"], p["lo"], p["hi"], p["repeat"])
    expected = u.copy()
    val, idx = model_reduce_extreme(u, op == "reduce_max", lanes, 0, p["srs"])
    poison(expected, tmp_of(u), extreme_tmp_min(u.dtype.itemsize, p["repeat"], ci))
    put_extreme(expected, dst_of(u), val, idx, ci)
    run(u, op, ci=ci, **p)
    same_bits(u, expected)
    return u


@pytest.mark.parametrize("ci", [0, 1])
@pytest.mark.parametrize("op", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduce_extreme_mask_form(op, dtype, ci):
    per = 256 // np.dtype(dtype).itemsize
    check_reduce_extreme(op, dtype, ci, mask=per - 1, repeat=65, srs=8)
    check_reduce_extreme(op, dtype, ci, bits=1, lo=0xFF00_00FF_1234_0000, hi=7 if dtype == np.float16 else 0,
                         repeat=200, srs=5)


def test_reduce_max_index_with_overlapping_repeats_and_ties():
    # srcRepStride 4 blocks: element 100 is lane 100 of repeat 0 and lane 36 of repeat 1; ties keep
    # the first repeat, then the first lane.
    u = _ub(np.float32)
    u[:1024] = 0
    u[100] = 5
    u[300] = 5
    u = check_reduce_extreme("reduce_max", np.float32, 1, u=u, mask=64, repeat=20, srs=4)
    d = dst_of(u)
    assert u[d] == 5 and u[d + 1:d + 2].view(np.uint32)[0] == 100


def test_reduce_max_without_index_leaves_dst1_and_poisons_the_tmp_minimum():
    u = check_reduce_extreme("reduce_max", np.float16, 0, mask=128, repeat=65, srs=8)
    d, t = dst_of(u), tmp_of(u)
    assert u[d + 1] == DST_FILL
    need = extreme_tmp_min(2, 65, False)  # 130 -> 144 elements
    assert need == 144 and (u[t:t + need].view(np.uint16) == 0xA5A5).all() and u[t + need] == TMP_FILL
    assert extreme_tmp_min(2, 65, True) == 176 and extreme_tmp_min(4, 130, True) == 288  # the page's examples


@pytest.mark.parametrize("ci", [0, 1])
@pytest.mark.parametrize("op", ["reduce_max_count", "reduce_min_count"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduce_extreme_count_form(op, dtype, ci):
    per = 256 // np.dtype(dtype).itemsize
    for count in (3, per, 9 * per + 7):
        u = _ub(dtype, seed=count)
        u[count] = 100 if op == "reduce_max_count" else -100  # just past the count: not read
        expected = u.copy()
        vals = u[:count]
        k = first_extreme(vals, op == "reduce_max_count")
        poison(expected, tmp_of(u), extreme_tmp_min(np.dtype(dtype).itemsize, max(1, count // per), ci))
        put_extreme(expected, dst_of(u), vals[k], k, ci)
        run(u, op, ci=ci, count=count)
        same_bits(u, expected)


def test_reduce_min_count_form_nan():
    u = _ub(np.float32)
    u[70] = np.nan
    u[90] = np.nan
    run(u, "reduce_min_count", ci=1, count=200)
    d = dst_of(u)
    assert np.isnan(u[d]) and u[d + 1:d + 2].view(np.uint32)[0] == 70


def test_reduce_max_half_index_above_65535_fails():
    # 65600 halves from 0; the maximum at 65550 cannot be stored in a half's 16 bits.
    u = np.random.default_rng(1).uniform(-1, 1, vr.UB_BYTES // 2).astype(np.float16)
    u[65550] = 4
    msg = fails(u, "reduce_max_count", ci=1, count=65600, dst=65600, tmp=65664, tmp_len=4096)
    assert "block 0: ReduceMax<half>: the index of the result is 65550; half results hold indexes up to 65535" in msg
    u[3] = 4  # the first maximum is at 3
    run(u, "reduce_max_count", ci=1, count=65600, dst=65600, tmp=65664, tmp_len=4096)
    assert u[65600] == 4 and u[65601:65602].view(np.uint16)[0] == 3


# ---- NOPs and faults ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["whole_sum", "block_max", "pair_sum", "whole_min", "reduce_sum", "reduce_max"])
def test_zero_mask_and_zero_repeat_are_nops(op):
    for mask, repeat in ((0, 3), (32, 0)):
        u = _ub(np.float32)
        before = u.copy()
        run(u, op, mask=mask, repeat=repeat, ci=1)
        same_bits(u, before)


def test_count_zero_is_a_nop():
    for op in ("reduce_sum_count", "reduce_max_count"):
        u = _ub(np.float16)
        before = u.copy()
        run(u, op, count=0, ci=1)
        same_bits(u, before)


def test_continuous_mask_larger_than_a_repeat_fails():
    msg = fails(_ub(np.float32), "whole_sum", mask=65, repeat=1)
    assert "block 0: WholeReduceSum<float>: mask 65 is outside [0, 64]" in msg
    msg = fails(_ub(np.float16), "reduce_max", mask=129, repeat=1)
    assert "ReduceMax<half>: mask 129 is outside [0, 128]" in msg


def test_negative_mask_fails():
    assert "BlockReduceSum<float>: mask -1 is negative" in fails(_ub(np.float32), "block_sum", mask=-1, repeat=1)
    assert "ReduceSum<half>: mask -3 is negative" in fails(_ub(np.float16), "reduce_sum", mask=-3, repeat=1)


def test_high_mask_word_is_ignored_for_float():
    # A float repeat holds 64 lanes: mask[1] selects none of them (Atlas A2/A3 do not check it).
    check_groups("block_min", np.float32, bits=1, lo=0x0000_F00F_0000_0F01, hi=2, repeat=2)


def test_parameter_ranges_fail():
    assert "PairReduceSum: repeatTime = 256 is outside [0, 255]" in fails(_ub(np.float32), "pair_sum", mask=8,
                                                                          repeat=256)
    assert "WholeReduceMax: dstRepStride = -1 is outside [0, 65535]" in fails(_ub(np.float32), "whole_max", mask=8,
                                                                              drs=-1)
    assert "BlockReduceSum: srcBlkStride = 70000 is outside [0, 65535]" in fails(_ub(np.float32), "block_sum",
                                                                                 mask=8, sbs=70000)


def test_counter_mode_count_above_32_bits_fails():
    msg = fails(_ub(np.float32), "whole_sum", counter=1, bits=1, lo=1 << 33)
    assert "WholeReduceSum: counter-mode element count 8589934592 is larger than ascrun supports (2^32 - 1)" in msg


def test_dst_alignment_per_instruction():
    # BlockReduce*: 8 elements (32 bytes for float); WholeReduceMax [value, index]: 8 bytes for float;
    # WholeReduceSum: one element.
    d = dst_of(_ub(np.float32))
    msg = fails(_ub(np.float32), "block_sum", mask=64, dst=d + 4)
    assert "BlockReduceSum: dst LocalTensor starts at UB offset 0x18010, which is not 32-byte aligned" in msg
    msg = fails(_ub(np.float32), "whole_max", mask=64, dst=d + 1, order=0)
    assert "WholeReduceMax: dst LocalTensor starts at UB offset 0x18004, which is not 8-byte aligned" in msg
    msg = fails(_ub(np.float16), "reduce_min", mask=64, dst=2 * d + 1, ci=1)
    assert "ReduceMin: dst LocalTensor starts at UB offset 0x18002, which is not 4-byte aligned" in msg
    check_groups("whole_sum", np.float32, dst=d + 1, mask=64, repeat=2)  # 4-byte aligned is enough
    check_whole_extreme("whole_min", np.float32, 2, mask=64, repeat=2)


def test_src_alignment():
    msg = fails(_ub(np.float32), "whole_sum", src=4, mask=64)
    assert "WholeReduceSum: src LocalTensor starts at UB offset 0x10, which is not 32-byte aligned" in msg


def test_later_repeat_source_overwritten_fails():
    # dst one repeat ahead of src: repeat 0 writes its 8 sums where repeat 1 reads.
    msg = fails(_ub(np.float32), "block_sum", src=0, dst=64, mask=64, repeat=3, drs=1, srs=8)
    assert "BlockReduceSum: repeat 0 writes dst bytes [0x100, 0x120), which repeat 1 reads later as src" in msg
    # srcRepStride 0: every repeat reads the same block that repeat 0 overwrites.
    msg = fails(_ub(np.float32), "whole_sum", src=0, dst=3, mask=8, repeat=2, srs=0)
    assert "WholeReduceSum: repeat 0 writes dst bytes [0xc, 0x10), which repeat 1 reads later as src" in msg
    # In place, each repeat overwrites its own (or an earlier repeat's) source only.
    check_groups("whole_sum", np.float32, src=0, dst=0, mask=64, repeat=4, drs=1)


def test_tmp_buffer_too_small_or_over_src_fails():
    msg = fails(_ub(np.float16), "reduce_max", mask=128, repeat=65, ci=1, tmp_len=350)
    assert "ReduceMax: sharedTmpBuffer holds 175 elements; this call needs at least 176" in msg
    msg = fails(_ub(np.float32), "reduce_sum", mask=64, repeat=20, tmp_len=64)
    assert "ReduceSum: sharedTmpBuffer holds 16 elements; this call needs at least 24" in msg
    msg = fails(_ub(np.float32), "reduce_min_count", count=1000, tmp=512)
    assert "ReduceMin: sharedTmpBuffer range [0x800, 0x880) overlaps src range [0x0, 0xfa0)" in msg


def test_composite_reductions_in_counter_mode_fail():
    msg = fails(_ub(np.float32), "reduce_sum", counter=1, mask=64, repeat=2)
    assert "ReduceSum: called in counter mode; this API sets normal-mode masks internally" in msg
    msg = fails(_ub(np.float32), "reduce_max_count", counter=1, count=64)
    assert "ReduceMax: called in counter mode" in msg
    # The count form of ReduceSum sets counter mode itself.
    u = _ub(np.float32)
    expected = u.copy()
    expected[dst_of(u)] = model_reduce_sum_count(u, 0, 100)
    run(u, "reduce_sum_count", counter=1, count=100)
    same_bits(u, expected)

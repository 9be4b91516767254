"""The Matmul tiling computation behind ascrun.host_tiling: a request (shapes, types, the caller's
fixed choices, the buffers) -> every TCubeTiling field, or None when no tiling fits the buffers.

Facts from the Ascend C reference (asc-devkit docs, "TCubeTiling结构体" and the Matmul-Tiling
pages): baseM/baseN are multiples of 16 elements and baseK of the C0 size; a base tile of A (B)
times dbL0A (dbL0B) fits L0A (L0B); baseM * baseN of the L0C type (float or int32) times dbL0C
fits L0C; baseN of bias fits the bias table; depthA1 = stepM * stepKa * db and depthB1 = stepN *
stepKb * db, and those tiles plus bias fit L1; usedCoreNum = ceil(M / singleCoreM) * ceil(N /
singleCoreN); singleCoreK = K (no multi-core K split); recommended values dbL0A = dbL0B = 2,
depth = 2 * step product, K fully in L1 first. CANN's own search (its cost model) is not
documented: the choices below are ours, simple and valid (README, "Host tiling without CANN").
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

FRACTAL = 16  # rows of a fractal: baseM and baseN are multiples of it
C0_BYTES = 32  # bytes of a fractal row: the C0 size in elements is 32 bytes' worth
L0C_BYTES_PER_ELEMENT = 4  # L0C accumulates in float (half, bfloat16, float inputs) or int32 (int8 inputs)
MAX_BASE_MN = 256  # base tiles searched up to 256 x 256 (CANN's recommendation is 128 x 256)
# A base tile costs, besides its padded multiply-adds, a load of (baseM + baseN) rows of K: this
# weight (in multiply-adds per loaded row element) keeps the search from choosing thin tiles.
LOAD_WEIGHT = 32


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


@dataclass
class Buffers:
    """Bytes the Matmul may use in each buffer (the SOC's, or set_buffer_space's)."""
    l1: int
    l0a: int
    l0b: int
    l0c: int
    ub: int
    bias_table: int


@dataclass
class Request:
    """What get_tiling computes from: sizes in elements, element sizes in bits."""
    m: int  # the computed shape (set_shape, or the original where it is -1)
    n: int
    k: int
    a_bits: int
    b_bits: int
    bias_bits: int
    c_bytes: int
    buffers: Buffers
    cores: int = 1  # cores the shape may be split over (MultiCoreMatmulTiling: min(set_dim, the SOC's))
    has_bias: bool = False
    c_in_ub: bool = False  # C is handed over in the Unified Buffer (VECIN/VECOUT/VECCALC), not GM
    fixed_base: Tuple[int, int, int] = (-1, -1, -1)  # set_fix_split
    fixed_single: Tuple[int, int, int] = (-1, -1, -1)  # set_single_shape
    align_single: Tuple[int, int, int] = (-1, -1, -1)  # set_align_split
    traverse: int = 0  # MatrixTraverse: 0 NOSET, 1 FIRSTM, 2 FIRSTN


@dataclass
class Split:
    """How the shape is shared among cores."""
    single_m: int
    single_n: int
    single_k: int
    m_dim: int
    n_dim: int


@dataclass
class Solution:
    split: Split
    fields: Dict[str, int] = field(default_factory=dict)  # TCubeTiling fields by pyasc's (snake_case) names


def c0_elements(bits: int) -> int:
    return C0_BYTES * 8 // bits


def k_alignment(request: Request) -> int:
    """baseK's multiple: 16 elements in general and C0 where that is more (int8: 32, int4: 64),
    for A and B alike, so that either's fractal layout holds whatever the transposes."""
    return max(FRACTAL, c0_elements(request.a_bits), c0_elements(request.b_bits))


def split_cores(request: Request) -> Split:
    """singleCoreM/N over at most `cores` cores: the split whose busiest core has the least padded
    output and then the least to load; singleCoreK = K. A fixed base size or set_align_split makes
    the single sizes multiples of it, so that a core's share is whole base tiles."""
    fixed_m, fixed_n, fixed_k = request.fixed_single
    unit_m = _unit(request.align_single[0], request.fixed_base[0])
    unit_n = _unit(request.align_single[1], request.fixed_base[1])
    single_k = fixed_k if fixed_k > 0 else request.k
    best: Optional[Tuple[Tuple[int, int, int], Split]] = None
    for m_dim in range(1, request.cores + 1):
        n_dim = request.cores // m_dim
        single_m = fixed_m if fixed_m > 0 else min(align_up(ceil_div(request.m, m_dim), unit_m), request.m)
        single_n = fixed_n if fixed_n > 0 else min(align_up(ceil_div(request.n, n_dim), unit_n), request.n)
        used_m, used_n = ceil_div(request.m, single_m), ceil_div(request.n, single_n)
        cost = (align_up(single_m, FRACTAL) * align_up(single_n, FRACTAL), single_m + single_n, used_m * used_n)
        if best is None or cost < best[0]:
            best = (cost, Split(single_m, single_n, single_k, used_m, used_n))
    assert best is not None
    return best[1]


def _unit(align: int, fixed_base: int) -> int:
    """What a single-core size is a multiple of: 16, set_align_split's value and the fixed base
    size (as _choose_bases aligns it)."""
    unit = FRACTAL
    if align > 0:
        unit = math.lcm(unit, align)
    if fixed_base > 0:
        unit = math.lcm(unit, align_up(fixed_base, FRACTAL))
    return unit


def solve(request: Request, split: Split) -> Optional[Solution]:
    """Every TCubeTiling field for this split, or None when no tiling fits the buffers (or a
    set_single_shape share needs more cores than there are)."""
    if split.m_dim * split.n_dim > request.cores:
        return None
    bases = _choose_bases(request, split)
    if bases is None:
        return None
    base_m, base_n, base_k, db_l0a, db_l0b = bases
    l1 = _choose_l1(request, split, base_m, base_n, base_k)
    if l1 is None:
        return None
    step_m, step_n, step_k, db_l1, l1_bytes = l1
    db_l0c = 2 if 2 * base_m * base_n * L0C_BYTES_PER_ELEMENT <= request.buffers.l0c else 1
    trans_length = base_m * base_n * request.c_bytes if request.c_in_ub else 0
    if trans_length > request.buffers.ub:
        return None
    fields = dict(
        used_core_num=split.m_dim * split.n_dim,
        single_core_m=split.single_m, single_core_n=split.single_n, single_core_k=split.single_k,
        base_m=base_m, base_n=base_n, base_k=base_k,
        depth_a1=step_m * step_k * db_l1, depth_b1=step_n * step_k * db_l1,
        step_m=step_m, step_n=step_n, step_k_a=step_k, step_k_b=step_k,
        is_bias=int(request.has_bias), trans_length=trans_length,
        # NOSET: M first, as FIRSTM (iterateOrder 0 is "M then N", 1 is "N then M")
        iterate_order=1 if request.traverse == 2 else 0,
        share_mode=0, share_l1_size=l1_bytes,
        share_l0c_size=base_m * base_n * L0C_BYTES_PER_ELEMENT * db_l0c, share_ub_size=trans_length,
        db_l0a=db_l0a, db_l0b=db_l0b, db_l0c=db_l0c,
        depth_a_l1_cache_ub=0, depth_b_l1_cache_ub=0,
    )
    return Solution(split, fields)


def _choose_bases(request: Request, split: Split) -> Optional[Tuple[int, int, int, int, int]]:
    """(baseM, baseN, baseK, dbL0A, dbL0B): fixed values where set_fix_split gave them (aligned up
    to 16, baseK to C0, as CANN aligns set_split_range's), else the tile with the least cost over the core's share;
    then the largest baseK that fits L0A and L0B double-buffered, else single-buffered. A chosen
    (not fixed) tile of a C handed over in the Unified Buffer fits there twice: kernels take base
    blocks into a double-buffered queue (pyasc's test_matmul.py: two buffers of baseM x baseN)."""
    buffers = request.buffers
    k_align = k_alignment(request)
    cap_m, cap_n = align_up(split.single_m, FRACTAL), align_up(split.single_n, FRACTAL)
    cap_k = align_up(split.single_k, k_align)
    # a fixed baseK needs only the C0 alignment (pyasc's unit tests: float's fixed baseK 8 is kept)
    c0 = max(c0_elements(request.a_bits), c0_elements(request.b_bits))
    fixed_m, fixed_n, fixed_k = (align_up(v, a) if v > 0 else -1
                                 for v, a in zip(request.fixed_base, (FRACTAL, FRACTAL, c0)))
    if fixed_m > cap_m or fixed_n > cap_n:
        return None  # SetFixSplit: baseM <= singleM and baseN <= singleN, aligned up to 16
    bias_n_limit = buffers.bias_table * 8 // request.bias_bits if request.has_bias else MAX_BASE_MN
    min_k = min(fixed_k if fixed_k > 0 else k_align, cap_k)

    def fits_l0(base_m: int, base_n: int, base_k: int, db: int) -> bool:
        return (base_m * base_k * request.a_bits * db <= buffers.l0a * 8
                and base_k * base_n * request.b_bits * db <= buffers.l0b * 8)

    def cost(base_m: int, base_n: int) -> Tuple[int, int]:
        tiles = ceil_div(split.single_m, base_m) * ceil_div(split.single_n, base_n)
        return tiles * (base_m * base_n + LOAD_WEIGHT * (base_m + base_n)), -base_m * base_n

    candidates = [(bm, bn)
                  for bm in ([fixed_m] if fixed_m > 0 else range(FRACTAL, min(cap_m, MAX_BASE_MN) + 1, FRACTAL))
                  for bn in ([fixed_n] if fixed_n > 0 else range(FRACTAL, min(cap_n, MAX_BASE_MN) + 1, FRACTAL))
                  if bm * bn * L0C_BYTES_PER_ELEMENT <= buffers.l0c
                  and (fixed_n > 0 or bn <= bias_n_limit) and fits_l0(bm, bn, min_k, 1)
                  and (fixed_m > 0 or fixed_n > 0 or not request.c_in_ub
                       or 2 * bm * bn * request.c_bytes <= buffers.ub)]
    if fixed_n > 0 and fixed_n > bias_n_limit:
        return None
    if not candidates:
        return None
    base_m, base_n = min(candidates, key=lambda c: cost(*c))
    for db in (2, 1):
        if fixed_k > 0:
            if fixed_k <= cap_k and fits_l0(base_m, base_n, fixed_k, db):
                return base_m, base_n, fixed_k, db, db
            continue
        base_k = _largest_k(cap_k, k_align, lambda k: fits_l0(base_m, base_n, k, db))
        if base_k > 0:
            return base_m, base_n, base_k, db, db
    return None


def _largest_k(whole_k: int, k_align: int, fits) -> int:
    """All of K (aligned) if it fits, else the largest k_align * 2^i that does (K splits into
    equal powers of two where it can), else 0."""
    if fits(whole_k):
        return whole_k
    base_k = k_align
    if not fits(base_k):
        return 0
    while base_k * 2 < whole_k and fits(base_k * 2):
        base_k *= 2
    return base_k


def _choose_l1(request: Request, split: Split, base_m: int, base_n: int,
               base_k: int) -> Optional[Tuple[int, int, int, int, int]]:
    """(stepM, stepN, stepK, db, bytes) for L1: first as many K steps as fit (all of K if it can,
    stepKa = stepKb so that their iteration counts divide each other), double-buffered if that
    fits; then, only with K whole in L1 (the MDL template's rule), more M and N steps while they fit."""
    k_steps = ceil_div(split.single_k, base_k)
    m_steps, n_steps = ceil_div(split.single_m, base_m), ceil_div(split.single_n, base_n)
    a_tile = base_m * base_k * request.a_bits // 8
    b_tile = base_n * base_k * request.b_bits // 8

    def l1_bytes(step_m: int, step_n: int, step_k: int, db: int) -> int:
        bias = step_n * base_n * request.bias_bits // 8 if request.has_bias else 0
        return (step_m * a_tile + step_n * b_tile) * step_k * db + bias

    for db in (2, 1):
        step_k = _step_k(k_steps, lambda steps: l1_bytes(1, 1, steps, db) <= request.buffers.l1)
        if step_k == 0:
            continue
        if db == 2 and step_k == k_steps and m_steps == n_steps == 1:
            db = 1  # the core's whole share is in L1 at once: nothing to prefetch
        step_m = step_n = 1
        grew = step_k == k_steps
        while grew:
            grew = False
            if step_m < m_steps and l1_bytes(step_m + 1, step_n, step_k, db) <= request.buffers.l1:
                step_m, grew = step_m + 1, True
            if step_n < n_steps and l1_bytes(step_m, step_n + 1, step_k, db) <= request.buffers.l1:
                step_n, grew = step_n + 1, True
        return step_m, step_n, step_k, db, l1_bytes(step_m, step_n, step_k, db)
    return None


def _step_k(k_steps: int, fits) -> int:
    """The K steps L1 holds: the most that fit, or a divisor of k_steps (no ragged last load)
    if one at least half as large fits; 0 if not even one step fits."""
    most = next((steps for steps in range(k_steps, 0, -1) if fits(steps)), 0)
    if most == 0:
        return 0
    divisor = next(steps for steps in range(most, 0, -1) if k_steps % steps == 0)
    return divisor if 2 * divisor >= most else most

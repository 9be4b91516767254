"""ascrun's host tiling (pyasc's asc.lib.host without CANN): every tiling it returns fits the SOC's
buffers and alignment rules and covers the matrix; what pyasc's tutorials rely on holds; requests
nothing can satisfy return -1; the stand-in and the installed pyasc give the same TCubeTiling.
Pure functions (and two short subprocesses): no service."""
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import asc
import pytest

import ascrun
import ascrun.compat.host_tiling as host
from ascrun.compiler import structs
from ascrun.compat.script import STANDIN

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
TCubeTiling = asc.adv.TCubeTiling  # pyasc's own
HALF, FLOAT, INT8, BF16 = host.DataType.DT_FLOAT16, host.DataType.DT_FLOAT, host.DataType.DT_INT8, \
    host.DataType.DT_BF16
BYTES = {HALF: 2, FLOAT: 4, INT8: 1, BF16: 2, host.DataType.DT_INT32: 4}
SOCS = list(host.SOC_CORES)


@dataclass
class Case:
    m: int
    n: int
    k: int
    dim: int = 1
    a: host.DataType = HALF
    b: host.DataType = HALF
    c: host.DataType = FLOAT
    bias: host.DataType = FLOAT
    has_bias: bool = False
    trans_a: bool = False
    trans_b: bool = False
    fix: tuple = (-1, -1, -1)
    traverse: host.MatrixTraverse = host.MatrixTraverse.NOSET
    c_pos: host.TPosition = host.TPosition.GM
    soc: str = "Ascend910B1"
    multi_core: bool = False  # MultiCoreMatmulTiling even for dim 1 (always for more)

    def tiler(self):
        platform = host.PlatformAscendCManager.get_instance(self.soc)
        multi_core = self.multi_core or self.dim > 1
        tiler = host.MultiCoreMatmulTiling(platform) if multi_core else host.MatmulApiTiling(platform)
        if multi_core:
            assert tiler.set_dim(self.dim) == 0
        assert tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, self.a, self.trans_a) == 0
        assert tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, self.b, self.trans_b) == 0
        assert tiler.set_c_type(self.c_pos, host.CubeFormat.ND, self.c) == 0
        assert tiler.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, self.bias) == 0
        assert tiler.set_org_shape(self.m, self.n, self.k) == 0
        assert tiler.set_shape(self.m, self.n, self.k) == 0
        assert tiler.enable_bias(self.has_bias) == 0
        assert tiler.set_traverse(self.traverse) == 0
        assert tiler.set_fix_split(*self.fix) == 0
        assert tiler.set_buffer_space(-1, -1, -1) == 0
        return tiler

    def tiling(self):
        tiling = TCubeTiling()
        assert self.tiler().get_tiling(tiling) == 0
        return tiling


def ceil_div(a, b):
    return -(-a // b)


def check_valid(case: Case, t) -> None:
    """The TCubeTiling constraints of the Ascend C reference ("TCubeTiling结构体", tables 2 and 3),
    from the SOC's buffer sizes, and that the cores' shares cover the matrix once."""
    platform = host.PlatformAscendC(case.soc)
    size = platform.get_core_mem_size
    a_bytes, b_bytes, bias_bytes = BYTES[case.a], BYTES[case.b], BYTES[case.bias]
    k_align = max(16, 32 // a_bytes, 32 // b_bytes)
    # the shape and the cores' shares
    assert (t.m, t.n, t.k_a, t.k_b) == (case.m, case.n, case.k, case.k)
    m_blocks, n_blocks = ceil_div(t.m, t.single_core_m), ceil_div(t.n, t.single_core_n)
    assert 1 <= t.used_core_num == m_blocks * n_blocks <= min(case.dim, platform.get_core_num())
    assert t.single_core_k == t.k_a
    assert (m_blocks - 1) * t.single_core_m < t.m <= m_blocks * t.single_core_m
    assert (n_blocks - 1) * t.single_core_n < t.n <= n_blocks * t.single_core_n
    # base tiles: alignment, within the core's share, and in L0A/L0B/L0C/bias table
    c0 = max(32 // a_bytes, 32 // b_bytes)
    assert t.base_m % 16 == 0 and t.base_n % 16 == 0
    assert t.base_k % k_align == 0 or (case.fix[2] > 0 and t.base_k % c0 == 0)  # a fixed baseK: C0 is enough
    assert 0 < t.base_m <= -(-t.single_core_m // 16) * 16
    assert 0 < t.base_n <= -(-t.single_core_n // 16) * 16
    assert 0 < t.base_k <= -(-t.single_core_k // k_align) * k_align
    assert t.db_l0a in (1, 2) and t.db_l0b in (1, 2) and t.db_l0c in (1, 2)
    assert t.base_m * t.base_k * a_bytes * t.db_l0a <= size(host.CoreMemType.L0_A)
    assert t.base_n * t.base_k * b_bytes * t.db_l0b <= size(host.CoreMemType.L0_B)
    assert t.base_m * t.base_n * 4 * t.db_l0c == t.share_l0c_size <= size(host.CoreMemType.L0_C)
    if case.has_bias:
        assert t.base_n * bias_bytes <= size(host.CoreMemType.BT)
    # L1: depth = step product times the L1 double buffer, the tiles (and bias) fit
    db_a1, db_b1 = t.depth_a1 // (t.step_m * t.step_k_a), t.depth_b1 // (t.step_n * t.step_k_b)
    assert db_a1 in (1, 2) and t.depth_a1 == t.step_m * t.step_k_a * db_a1
    assert db_b1 in (1, 2) and t.depth_b1 == t.step_n * t.step_k_b * db_b1
    bias_l1 = t.step_n * t.base_n * bias_bytes if case.has_bias else 0
    l1 = t.base_m * t.base_k * t.depth_a1 * a_bytes + t.base_n * t.base_k * t.depth_b1 * b_bytes + bias_l1
    assert l1 == t.share_l1_size <= size(host.CoreMemType.L1)
    # the MDL template's rules: K not whole in L1 -> one M (N) step; Ka, Kb iterations divide
    k_steps = ceil_div(t.single_core_k, t.base_k)
    assert t.step_k_a <= k_steps and t.step_k_b <= k_steps
    if t.step_k_a < k_steps:
        assert t.step_m == 1
    if t.step_k_b < k_steps:
        assert t.step_n == 1
    ka_iter, kb_iter = ceil_div(t.single_core_k, t.base_k * t.step_k_a), ceil_div(t.single_core_k,
                                                                                 t.base_k * t.step_k_b)
    assert ka_iter % kb_iter == 0 or kb_iter % ka_iter == 0
    assert t.step_m <= ceil_div(t.single_core_m, t.base_m) and t.step_n <= ceil_div(t.single_core_n, t.base_n)
    # the rest
    assert t.is_bias == int(case.has_bias)
    assert t.iterate_order == (1 if case.traverse == host.MatrixTraverse.FIRSTN else 0)
    if case.c_pos in (host.TPosition.VECIN, host.TPosition.VECOUT, host.TPosition.VECCALC):
        assert t.trans_length == t.base_m * t.base_n * BYTES[case.c] <= size(host.CoreMemType.UB)
    else:
        assert t.trans_length == 0


def covered_by_cores(t):
    """The C elements the kernels' calc_offsets give the cores (block idx < usedCoreNum), as
    (rows, cols) ranges: each row and column range partitions the matrix."""
    m_blocks = ceil_div(t.m, t.single_core_m)
    shares = []
    for block in range(t.used_core_num):
        m_index, n_index = block % m_blocks, block // m_blocks
        rows = range(m_index * t.single_core_m, min((m_index + 1) * t.single_core_m, t.m))
        cols = range(n_index * t.single_core_n, min((n_index + 1) * t.single_core_n, t.n))
        shares.append((rows, cols))
    return shares


def test_tutorial_05_matmul_leakyrelu():
    """1024x640x256, dim 2, fix split 256x128, FIRSTM, C to VECCALC: its kernel writes base tiles
    at count % (singleCoreM / baseM) * baseM rows and count // (singleCoreM / baseM) * baseN
    columns, so a core's share must be whole base tiles and M iterate first."""
    case = Case(1024, 640, 256, dim=2, has_bias=True, fix=(256, 128, -1), traverse=host.MatrixTraverse.FIRSTM,
                c_pos=host.TPosition.VECCALC)
    t = case.tiling()
    check_valid(case, t)
    assert (t.base_m, t.base_n, t.used_core_num, t.iterate_order, t.is_bias) == (256, 128, 2, 0, 1)
    assert t.single_core_m % t.base_m == 0 and t.single_core_n % t.base_n == 0
    round_m = t.single_core_m // t.base_m
    tiles = ceil_div(t.single_core_m, t.base_m) * ceil_div(t.single_core_n, t.base_n)
    written = {(count % round_m * t.base_m, count // round_m * t.base_n) for count in range(tiles)}
    assert written == {(r, c) for r in range(0, t.single_core_m, t.base_m) for c in range(0, t.single_core_n, t.base_n)}
    # the launch is used_core_num // 2 AI Cores of 2 vector cores each
    assert t.used_core_num // 2 >= 1
    assert t.base_m * t.base_n * 4 <= 192 * 1024  # its VECOUT queue of baseM * baseN floats


@pytest.mark.parametrize("case, launched", [
    (Case(512, 1024, 512, dim=48), 24),  # 03_matmul_mix: launched on 48 // 2 AI Cores, blocks < usedCoreNum work
    (Case(128, 30720, 64, dim=24), None),  # 04_matmul_cube_only: launched on usedCoreNum cores
])
def test_tutorials_03_and_04(case, launched):
    t = case.tiling()
    check_valid(case, t)
    if launched is not None:
        assert t.used_core_num <= 2 * launched
    rows = {(r.start, r.stop) for r, _ in covered_by_cores(t)}
    cols = {(c.start, c.stop) for _, c in covered_by_cores(t)}
    assert sum(b - a for a, b in rows) == t.m and sum(b - a for a, b in cols) == t.n
    assert len(covered_by_cores(t)) == len(rows) * len(cols)  # every (row, column) share once


SHAPES = [(1, 1, 1), (16, 16, 16), (17, 33, 49), (100, 200, 300), (1000, 1000, 1000), (4096, 16, 16),
          (16, 4096, 16), (16, 16, 8192), (1023, 1025, 1027), (2048, 2048, 7), (96, 4000, 4000)]


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("a, b, c, bias", [(HALF, HALF, FLOAT, FLOAT), (FLOAT, FLOAT, FLOAT, FLOAT),
                                           (INT8, INT8, host.DataType.DT_INT32, host.DataType.DT_INT32),
                                           (BF16, BF16, FLOAT, FLOAT), (HALF, HALF, HALF, HALF)])
def test_shapes_and_types(m, n, k, a, b, c, bias):
    for dim, has_bias, trans in ((1, False, (False, False)), (8, True, (True, False)), (20, True, (False, True))):
        case = Case(m, n, k, dim=dim, a=a, b=b, c=c, bias=bias, has_bias=has_bias, trans_a=trans[0],
                    trans_b=trans[1])
        check_valid(case, case.tiling())


@pytest.mark.parametrize("soc", SOCS)
def test_every_dim_on_every_soc(soc):
    for dim in range(1, 49):
        for m, n, k in ((1024, 1024, 1024), (777, 333, 129)):
            case = Case(m, n, k, dim=dim, soc=soc, has_bias=True, traverse=host.MatrixTraverse.FIRSTN,
                        multi_core=True)
            tiler = case.tiler()
            t = TCubeTiling()
            assert tiler.get_tiling(t) == 0
            check_valid(case, t)
            used, m_dim, n_dim = tiler.get_core_num()
            assert used == m_dim * n_dim == t.used_core_num  # GetCoreNum's doc: dim = mDim * nDim
            assert tiler.get_single_shape() == (t.single_core_m, t.single_core_n, t.single_core_k)
            assert (tiler.get_base_m(), tiler.get_base_n(), tiler.get_base_k()) == (t.base_m, t.base_n, t.base_k)


def test_more_cores_make_smaller_shares():
    one, many = Case(2048, 2048, 512, dim=1).tiling(), Case(2048, 2048, 512, dim=24).tiling()
    assert (one.used_core_num, one.single_core_m, one.single_core_n) == (1, 2048, 2048)
    assert many.used_core_num >= 16
    assert many.single_core_m * many.single_core_n * 16 <= 2048 * 2048


@pytest.mark.parametrize("fix", [(128, 256, -1), (64, 64, -1), (16, 16, -1), (256, 128, 64), (32, 48, 32)])
def test_a_fixed_split_is_honoured(fix):
    case = Case(1000, 1000, 1000, dim=4, fix=fix)
    t = case.tiling()
    check_valid(case, t)
    assert (t.base_m, t.base_n) == fix[:2]
    if fix[2] > 0:
        assert t.base_k == fix[2]
    assert t.single_core_m % t.base_m == 0 or t.single_core_m == t.m
    assert t.single_core_n % t.base_n == 0 or t.single_core_n == t.n


def test_set_fix_split_doc_example():
    """SetFixSplit's doc: singleM = 12 allows baseM <= 16 (12 aligned up to 16), so only 16."""
    assert Case(12, 64, 64, fix=(16, 16, -1)).tiler().get_tiling(TCubeTiling()) == 0
    assert Case(12, 64, 64, fix=(32, 16, -1)).tiler().get_tiling(TCubeTiling()) == -1


@pytest.mark.parametrize("a, base_k", [(FLOAT, 8), (HALF, 16)])
def test_pyasc_tiny_fixed_split(a, base_k):
    """pyasc's unit tests of its binding (python/test/unit/lib/host, which CANN passes): shape
    32x16x8 of float (the default types) with set_fix_split(32, 16, 8) keeps baseK 8 (float's C0),
    and get_base_m/n/k give the fixed values before get_tiling. Of half, baseK 8 is aligned up to
    its C0, 16 (ours: CANN's choice there is not documented)."""
    case = Case(32, 16, 8, a=a, b=a, fix=(32, 16, 8))
    tiler = case.tiler()
    assert (tiler.get_base_m(), tiler.get_base_n(), tiler.get_base_k()) == (32, 16, 8)
    t = TCubeTiling()
    assert tiler.get_tiling(t) == 0
    check_valid(case, t)
    assert (t.base_m, t.base_n, t.base_k, t.single_core_m, t.single_core_n, t.single_core_k) == \
        (32, 16, base_k, 32, 16, 8)
    assert tiler.get_base_k() == base_k


@pytest.mark.parametrize("case", [
    Case(1024, 1024, 1024, a=FLOAT, b=FLOAT, fix=(256, 256, -1)),  # L0C: 256 * 256 floats > 128 KiB
    Case(1024, 1024, 1024, fix=(512, 128, -1)),  # L0C
    Case(1024, 1024, 1024, fix=(128, 128, 1024)),  # L0A: 128 x 1024 halves > 64 KiB
    Case(1024, 1024, 1024, has_bias=True, fix=(64, 512, -1)),  # bias table: 512 floats > 1 KiB
    Case(64, 64, 64, fix=(128, 64, -1)),  # baseM above singleM (SetFixSplit's rule)
])
def test_impossible_requests_return_minus_one_and_leave_the_tiling(case):
    t = TCubeTiling()
    assert case.tiler().get_tiling(t) == -1
    assert structs.values_of(t) == structs.values_of(TCubeTiling())


def test_set_buffer_space_limits_the_tiling():
    tiler = Case(2048, 2048, 2048).tiler()
    tiler.set_buffer_space(64 * 1024, 32 * 1024, -1, -1)
    t = TCubeTiling()
    assert tiler.get_tiling(t) == 0
    assert t.share_l1_size <= 64 * 1024 and t.base_m * t.base_n * 4 * t.db_l0c <= 32 * 1024
    tiler.set_buffer_space(1024, -1, -1, -1)  # not even one pair of base tiles
    assert tiler.get_tiling(TCubeTiling()) == -1


def test_unset_shape_fails_and_setters_refuse_bad_values():
    tiler = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    assert tiler.get_tiling(TCubeTiling()) == -1
    assert tiler.get_core_num() is None and tiler.get_single_shape() is None and tiler.get_base_m() == -1
    assert tiler.set_dim(0) == -1 and tiler.set_shape(16, 0, 16) == -1 and tiler.set_fix_split(-5) == -1


def test_org_shape_set_shape_and_single_shape():
    """M/N/Ka/Kb are the original shape (the kernel's strides); set_shape's -1 takes it."""
    tiler = host.MultiCoreMatmulTiling(host.PlatformAscendC("Ascend910B3"))
    tiler.set_dim(4)
    tiler.set_org_shape(256, 512, 128, 160)
    tiler.set_shape(-1, -1, 100)
    tiler.set_single_shape(128, 256, -1)
    tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, HALF)
    tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, HALF)
    t = TCubeTiling()
    assert tiler.get_tiling(t) == 0
    assert (t.m, t.n, t.k_a, t.k_b) == (256, 512, 128, 160)
    assert (t.single_core_m, t.single_core_n, t.single_core_k, t.used_core_num) == (128, 256, 100, 4)


def test_a_single_shape_needing_more_cores_than_the_dim_fails():
    tiler = Case(1024, 1024, 64, dim=4).tiler()
    tiler.set_single_shape(256, 256, -1)  # 16 shares for 4 cores
    assert tiler.get_tiling(TCubeTiling()) == -1
    tiler.set_single_shape(512, 512, -1)
    assert tiler.get_tiling(TCubeTiling()) == 0 and tiler.get_core_num() == (4, 2, 2)


def test_set_align_split_doc_example():
    """SetAlignSplit's doc: (-1, 64, -1) makes singleCoreN a multiple of 64."""
    tiler = Case(1024, 1000, 1024, dim=6).tiler()
    tiler.set_align_split(-1, 64, -1)
    t = TCubeTiling()
    assert tiler.get_tiling(t) == 0
    assert t.single_core_n % 64 == 0 or t.single_core_n == t.n


def test_pyasc_tests_other_host_calls():
    """The calls pyasc's test_matmul*.py make besides the tutorials'."""
    tiler = host.MatmulApiTiling(host.get_ascendc_platform())
    tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, INT8, False)
    tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, INT8, False)
    tiler.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, HALF)
    tiler.set_shape(32, 256, 64)
    tiler.set_org_shape(32, 256, 64)
    tiler.set_dequant_type(host.DequantType.SCALAR)
    tiler.set_mad_type(host.MatrixMadType.NORMAL)
    tiler.set_double_buffer(True, True, True, True, True)
    tiler.set_sparse(True)
    tiler.set_split_range(32, 32, 32, 16, 16, 16)
    tiler.set_matmul_config_params(1, False, host.ScheduleType.OUTER_PRODUCT, host.MatrixTraverse.FIRSTM)
    tiler.set_matmul_config_params(host.MatmulConfigParams(traverse=host.MatrixTraverse.FIRSTN))
    tiler.set_a_layout(2, 32, 1, 3, 64)
    tiler.set_b_layout(2, 32, 1, 3, 64)
    tiler.set_c_layout(2, 32, 1, 3, 64)
    tiler.set_batch_num(3)
    t = TCubeTiling()
    assert tiler.get_tiling(t) == 0
    assert (t.iterate_order, t.batch_num, t.a_layout_info_g, t.c_layout_info_s2) == (1, 3, 3, 64)
    batch = host.BatchMatmulTiling(host.get_ascendc_platform())
    batch.set_a_type(host.TPosition.GM, host.CubeFormat.ND, HALF, False)
    batch.set_b_type(host.TPosition.GM, host.CubeFormat.ND, HALF, False)
    batch.set_batch_info_for_normal(3, 3, 32, 256, 64)
    assert batch.get_core_num() is None
    assert batch.get_tiling(t) == 0
    assert batch.get_core_num() == (1, 1, 1, 1, 1)
    assert (t.batch_num, t.a_layout_info_b, t.a_layout_info_s, t.b_layout_info_d, t.single_core_n) == \
        (3, 3, 32, 256, 256)


def test_platforms():
    for soc, (aic, aiv) in host.SOC_CORES.items():
        platform = host.PlatformAscendCManager.get_instance(soc)
        assert platform is host.PlatformAscendCManager.get_instance(soc)
        assert (platform.get_soc_version(), platform.get_core_num_aic(), platform.get_core_num_aiv()) == (soc, aic, aiv)
        assert platform.get_core_num() == aiv  # split cube/vector cores: GetCoreNum counts vector cores
        assert [platform.get_core_mem_size(kind) // 1024 for kind in (
            host.CoreMemType.L1, host.CoreMemType.L0_A, host.CoreMemType.L0_B, host.CoreMemType.L0_C,
            host.CoreMemType.UB)] == ([512, 64, 64, 256, 248] if soc in host.SOCS_950 else [512, 64, 64, 128, 192])
    import asc.runtime.config as config
    assert host.PlatformAscendCManager.get_instance(config.Platform.Ascend910B4_1).get_core_num_aic() == 20
    with pytest.raises(ValueError, match="unknown SOC"):
        host.PlatformAscendC("Ascend310P3")


def test_enum_values_are_cann_s():
    assert (host.TPosition.VECCALC, host.TPosition.LCM, host.TPosition.TSCM) == (11, 11, 13)
    assert (host.CubeFormat.NZ, host.CubeFormat.COLUMN_MAJOR, host.CubeFormat.ROW_MAJOR) == (1, 8, 0)
    assert (host.DataType.DT_FLOAT16, host.DataType.DT_BF16, host.DataType.DT_BFLOAT16, host.DataType.DT_INT4) == \
        (1, 27, 33, 29)
    assert (host.MatrixTraverse.FIRSTN, host.ScheduleType.OUTER_PRODUCT, host.DequantType.TENSOR) == (2, 1, 1)
    assert host.TPosition.GM.name == "GM" and host.MatrixMadType.HF32.value == 1


def test_the_default_soc_is_pyasc_s_runtime_setting(monkeypatch):
    import asc.lib.runtime as rt
    import asc.runtime.config as config
    assert host.get_ascendc_platform().get_soc_version() == "Ascend910B1"
    monkeypatch.setattr(rt.state, "soc_verison", config.Platform.Ascend910B3)
    assert host.get_ascendc_platform().get_core_num_aic() == 20


def test_installed_pyasc_resolves_to_ours_without_cann():
    """Here pyasc is installed and ASCEND_HOME_PATH is not: pyasc's asc.lib.host, and a proxy
    taken from its wrappers before, are ours."""
    assert "ASCEND_HOME_PATH" not in os.environ
    import asc.lib.host as pyasc_host
    from asc.lib.host.wrappers import MultiCoreMatmulTiling as Proxy
    assert pyasc_host.MultiCoreMatmulTiling is host.MultiCoreMatmulTiling
    assert isinstance(Proxy(pyasc_host.get_ascendc_platform()), host.MultiCoreMatmulTiling)
    assert Proxy.__name__ == "MultiCoreMatmulTiling" and pyasc_host.TPosition.GM == 0


PYASC_ORDER = "import asc.lib.host as h\nimport ascrun\n"
ASCRUN_ORDER = "import ascrun\nimport asc.lib.host as h\n"
CHECK = "print(h.MultiCoreMatmulTiling.__module__, h.loader.Loader.module is not None)\n"


def run_python(code, env_change=None, path=None):
    env = {name: value for name, value in os.environ.items() if name != "ASCEND_HOME_PATH"}
    env.update(env_change or {})
    if path is not None:
        code = f"import sys\nsys.path.insert(0, {str(path)!r})\n" + code
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.kernel
def test_a_working_cann_is_never_shadowed_and_import_order_does_not_matter():
    # ascrun imported first is this process's case (pytest loads ascrun's plugin before the tests)
    assert run_python(PYASC_ORDER + CHECK) == "ascrun.compat.host_tiling True\n"
    # (without touching the proxy, which would build pyasc's library against that CANN)
    with_cann = run_python(ASCRUN_ORDER + "print(vars(h)['MultiCoreMatmulTiling'] is h.wrappers.MultiCoreMatmulTiling, "
                           "h.loader.Loader.module)\n", env_change={"ASCEND_HOME_PATH": "/opt/ascend-toolkit"})
    assert with_cann == "True None\n"


STANDIN_TILING = """
import json
import asc
import asc.lib.host as host
from ascrun.compiler import structs
assert "standin" in asc.__file__
t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
t.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT)
t.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
t.set_dim(2)
t.set_org_shape(1024, 640, 256)
t.set_shape(1024, 640, 256)
t.enable_bias(True)
t.set_traverse(host.MatrixTraverse.FIRSTM)
t.set_fix_split(256, 128, -1)
t.set_buffer_space(-1, -1, -1)
tiling = asc.adv.TCubeTiling()
assert t.get_tiling(tiling) == 0
described = {}
for cls in (asc.adv.TCubeTiling, asc.adv.SoftmaxTiling, asc.adv.RmsNormTiling):
    structs.describe(cls, described)
print(json.dumps({"defs": {k: v.to_json() for k, v in described.items()}, "values": structs.values_of(tiling),
                  "bytes": tiling.pack().hex(), "module": type(tiling).__module__}))
"""


@pytest.mark.kernel
def test_the_standin_gives_pyasc_s_structs_and_the_same_tiling():
    """The stand-in (pyasc absent) and the installed pyasc: the same struct definitions, hence the
    same bundle (the service then types the struct as pyasc's own), the same values and bytes."""
    standin = json.loads(run_python(STANDIN_TILING, path=STANDIN))
    case = Case(1024, 640, 256, dim=2, has_bias=True, fix=(256, 128, -1), traverse=host.MatrixTraverse.FIRSTM,
                c_pos=host.TPosition.VECCALC)
    tiling = case.tiling()
    described = {}
    for cls in (asc.adv.TCubeTiling, asc.adv.SoftmaxTiling, asc.adv.RmsNormTiling):
        structs.describe(cls, described)
    assert standin["defs"] == {k: v.to_json() for k, v in described.items()}
    assert standin["values"] == structs.values_of(tiling)
    assert standin["bytes"] == tiling.pack().hex()
    assert standin["module"] == type(tiling).__module__ == structs.PYASC_TILING_MODULE
    assert ascrun.compat.host_tiling is host


PYASC_HOST_TESTS = 89  # the cases of python/test/unit/lib/host at pyasc cecba26


def test_pyasc_own_host_tiling_unit_tests():
    """pyasc's unit tests of its asc.lib.host binding (which CANN passes), unmodified, against
    ours. pyasc's files are not part of ascrun: ASCRUN_PYASC_TESTS names a checkout's python/test
    (as for test_pyasc_own_tests.py)."""
    tests_dir = os.environ.get("ASCRUN_PYASC_TESTS")
    if not tests_dir:
        pytest.skip("ASCRUN_PYASC_TESTS is not set: point it at a pyasc checkout's python/test directory "
                    "(pyasc's files are not part of ascrun)")
    host_tests = Path(tests_dir).resolve() / "unit" / "lib" / "host"
    assert host_tests.is_dir(), f"{host_tests} is missing"
    env = {name: value for name, value in os.environ.items() if name != "ASCEND_HOME_PATH"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--confcutdir",
                          str(host_tests), str(host_tests)], capture_output=True, text=True, env=env, cwd=host_tests)
    assert out.returncode == 0, out.stdout
    assert f"{PYASC_HOST_TESTS} passed" in out.stdout.splitlines()[-1]

"""pyasc's host tiling (`asc.lib.host`) without CANN: the same names, signatures and enum values
as pyasc's binding of CANN's tiling library (python/asc/lib/host), computed in Python.

`get_tiling(tiling)` fills a TCubeTiling (pyasc's asc.adv.TCubeTiling or the stand-in's) by its
field names and returns 0, or -1 when no tiling fits the SOC's buffers, as CANN's does. Where
pyasc is installed but CANN is not, `use_when_cann_is_missing()` (called on `import ascrun`)
makes pyasc's `asc.lib.host` resolve to this module; a working CANN is never shadowed.
The computation is in host_tiling_solver; README "Host tiling without CANN" says where it differs.
"""
from __future__ import annotations

import enum
import importlib.abc
import importlib.machinery
import sys
from dataclasses import dataclass, replace
from typing import Any, Dict, Optional, Tuple

from ..compiler.settings import HostSettings
from .host_tiling_solver import Buffers, Request, Solution, split_cores, solve


# Enums: names and values as CANN's include/adv_api/matmul/matmul_tiling_base.h and matmul_config.h.
class TPosition(enum.IntEnum):
    GM = 0
    A1 = 1
    A2 = 2
    B1 = 3
    B2 = 4
    C1 = 5
    C2 = 6
    CO1 = 7
    CO2 = 8
    VECIN = 9
    VECOUT = 10
    VECCALC = 11
    LCM = 11
    SPM = 12
    SHM = 12
    TSCM = 13
    MAX = 14


class CubeFormat(enum.IntEnum):
    ND = 0
    NZ = 1
    ZN = 2
    ZZ = 3
    NN = 4
    ND_ALIGN = 5
    SCALAR = 6
    VECTOR = 7
    ROW_MAJOR = 0
    COLUMN_MAJOR = 8


class DataType(enum.IntEnum):
    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_BFLOAT16 = 33
    DT_MAX = 40


class MatrixTraverse(enum.IntEnum):
    NOSET = 0
    FIRSTM = 1
    FIRSTN = 2


class MatrixMadType(enum.IntEnum):
    NORMAL = 0
    HF32 = 1
    MXMODE = 2


class DequantType(enum.IntEnum):
    SCALAR = 0
    TENSOR = 1


class ScheduleType(enum.IntEnum):
    INNER_PRODUCT = 0
    OUTER_PRODUCT = 1


class CoreMemType(enum.IntEnum):
    """PlatformAscendC::GetCoreMemSize's memory kinds (CANN's platform_ascendc::CoreMemType)."""
    L0_A = 0
    L0_B = 1
    L0_C = 2
    L1 = 3
    L2 = 4
    UB = 5
    HBM = 6
    FB = 7
    BT = 8


# Bits per element, as CANN's DTYPE_BIT_TAB (the types a Matmul takes).
DTYPE_BITS = {DataType.DT_FLOAT: 32, DataType.DT_FLOAT16: 16, DataType.DT_INT8: 8, DataType.DT_INT16: 16,
              DataType.DT_UINT16: 16, DataType.DT_UINT8: 8, DataType.DT_INT32: 32, DataType.DT_INT64: 64,
              DataType.DT_UINT32: 32, DataType.DT_UINT64: 64, DataType.DT_BF16: 16, DataType.DT_BFLOAT16: 16,
              DataType.DT_INT4: 4}

KIB = 1024
# The 910B class (Atlas A2) and 910_93 class (Atlas A3) share one AI Core: L1, L0A/B/C and UB
# sizes as the brief and asc-devkit's tiling code state them (impl/adv_api/tiling: L1 512 KiB,
# L0C 128 KiB, BT_SIZE 1024, FB_SIZE 2048); UB 192 KiB as matmul_config_utils.h says for 910B1.
AI_CORE_910B = {CoreMemType.L1: 512 * KIB, CoreMemType.L0_A: 64 * KIB, CoreMemType.L0_B: 64 * KIB,
                CoreMemType.L0_C: 128 * KIB, CoreMemType.UB: 192 * KIB, CoreMemType.BT: 1 * KIB,
                CoreMemType.FB: 2 * KIB}
# The Ascend 950PR/950DT AI Core (__NPU_ARCH__ 3510): asc-devkit include/utils/base/sys_constants.h
# (ASC_UB_SIZE 248 KiB, ASC_L1_SIZE 512 KiB, ASC_L0A/L0B_SIZE 64 KiB, ASC_L0C_SIZE 256 KiB,
# ASC_BT_SIZE 4 KiB), as pyasc's launcher PlatformInfo has them; no public figure for its Fixpipe
# Buffer: the 910B's 2 KiB, assumed (runtime/ascrun/core/soc.h says the same).
AI_CORE_950 = {**AI_CORE_910B, CoreMemType.L0_C: 256 * KIB, CoreMemType.UB: 248 * KIB, CoreMemType.BT: 4 * KIB}
# (cube cores, vector cores) per SOC: from CANN's platform_config/<soc>.ini files as we know them
# (ai_core_cnt / vector_core_cnt; not in the asc-devkit docs): the full-size dies have 24 AIC and
# 48 AIV, the cut-down ones 20 and 40. The 950 SOCs: no public count (neither asc-devkit nor pyasc
# gives one); the full-size 910B die's, assumed, in its ratio of two AIV per AIC, which the 950 has
# (docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/矩阵计算的搬出/L0C到UB数据搬运（Fixpipe）.md: one
# Cube Core and two Vector Cores per AI Core).
SOCS_950 = ("Ascend950PR_950z", "Ascend950PR_9579", "Ascend950PR_957b", "Ascend950PR_957c", "Ascend950PR_957d",
            "Ascend950PR_9589", "Ascend950PR_958b", "Ascend950PR_9599")  # pyasc's Platform names
SOC_CORES = {
    "Ascend910B1": (24, 48), "Ascend910B2": (24, 48), "Ascend910B2C": (24, 48),
    "Ascend910B3": (20, 40), "Ascend910B4": (20, 40), "Ascend910B4-1": (20, 40),
    "Ascend910_9391": (24, 48), "Ascend910_9392": (24, 48), "Ascend910_9381": (24, 48),
    "Ascend910_9382": (24, 48), "Ascend910_9372": (20, 40), "Ascend910_9362": (20, 40),
    **{soc: (24, 48) for soc in SOCS_950},
}
DEFAULT_SOC = "Ascend910B1"  # pyasc's own default (config.set_platform for the Model backend)


class PlatformAscendC:
    """One SOC's core counts and buffer sizes (CANN's platform_ascendc::PlatformAscendC)."""

    def __init__(self, soc_version: Any = DEFAULT_SOC):
        soc_version = getattr(soc_version, "value", soc_version)  # a name, or pyasc's config.Platform
        if soc_version not in SOC_CORES:
            raise ValueError(f"unknown SOC {soc_version!r}: ascrun's host tiling knows {', '.join(SOC_CORES)}")
        self.soc_version = soc_version
        self.core_num_aic, self.core_num_aiv = SOC_CORES[soc_version]
        self.mem_sizes = dict(AI_CORE_950 if soc_version in SOCS_950 else AI_CORE_910B)

    def get_soc_version(self) -> str:
        return self.soc_version

    def get_core_num(self) -> int:
        """Vector cores: the 910B's cube and vector cores are separate (GetCoreNum's doc)."""
        return self.core_num_aiv

    def get_core_num_aic(self) -> int:
        return self.core_num_aic

    def get_core_num_aiv(self) -> int:
        return self.core_num_aiv

    def get_core_mem_size(self, mem_type: CoreMemType) -> int:
        return self.mem_sizes[CoreMemType(mem_type)]

    def __repr__(self) -> str:
        return f"PlatformAscendC({self.soc_version!r})"


class PlatformAscendCManager:
    _instances: Dict[str, PlatformAscendC] = {}

    @staticmethod
    def get_instance(soc_version: Optional[str] = None) -> PlatformAscendC:
        soc = configured_soc() if soc_version is None else getattr(soc_version, "value", soc_version)
        if soc not in PlatformAscendCManager._instances:
            PlatformAscendCManager._instances[soc] = PlatformAscendC(soc)
        return PlatformAscendCManager._instances[soc]


def configured_soc() -> str:
    """The SOC of this run: an ascrun session's (--soc, else the script's config.set_platform),
    else pyasc's runtime setting where pyasc is installed, else Ascend910B1."""
    script = sys.modules.get("ascrun.compat.script")  # a session exists only where script.py was imported
    session = script.current() if script is not None else None
    if session is not None and (session.forced_soc or session.platform):
        return session.forced_soc or session.platform
    try:
        from asc.lib.runtime import get_soc_version  # pyasc's (no CANN needed); the stand-in has none
        return get_soc_version().value
    except (ImportError, AttributeError):
        return DEFAULT_SOC


def get_ascendc_platform() -> PlatformAscendC:
    return PlatformAscendCManager.get_instance(configured_soc())


@dataclass
class MatmulConfigParams:
    mm_config_type: int = 1
    enable_l1_cache_ub: bool = False
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    traverse: MatrixTraverse = MatrixTraverse.NOSET
    en_vec_nd2nz: bool = False


@dataclass(frozen=True)
class MatrixType:
    pos: TPosition = TPosition.GM
    format: CubeFormat = CubeFormat.ND
    data_type: DataType = DataType.DT_FLOAT
    is_trans: bool = False


UB_POSITIONS = (TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC)
Layout = Tuple[int, int, int, int, int]
OK, FAILED = 0, -1


class MatmulApiTilingBase:
    """The setters record the request (returning 0, or -1 for a value CANN rejects); get_tiling computes."""

    def __init__(self, platform: Optional[PlatformAscendC] = None):
        self.platform = platform if platform is not None else get_ascendc_platform()
        self.a_type = self.b_type = MatrixType()
        self.c_type = self.bias_type = MatrixType()
        self.shape = (-1, -1, -1)
        self.org_shape = (-1, -1, -1, -1)  # M, N, Ka, Kb
        self.is_bias = False
        self.fixed_base = (-1, -1, -1)
        self.split_range = (-1, -1, -1, -1, -1, -1)  # recorded: CANN's docs say its tiling ignores it too
        self.buffer_space = (-1, -1, -1, -1)  # L1, L0C, UB, bias table
        self.config = MatmulConfigParams()
        self.mad_type = MatrixMadType.NORMAL
        self.dequant_type = DequantType.SCALAR
        self.double_buffer = (True, True, True, True, True, True)  # recorded: a reserved interface in CANN
        self.is_sparse = False
        self.layouts: Dict[str, Layout] = {}
        self.batch_num = 0
        self.solution: Optional[Solution] = None

    # -- what the Matmul is
    def set_a_type(self, pos: TPosition, type: CubeFormat, data_type: DataType, is_trans: bool = False) -> int:
        return self._set_type("a_type", pos, type, data_type, is_trans)

    def set_b_type(self, pos: TPosition, type: CubeFormat, data_type: DataType, is_trans: bool = False) -> int:
        return self._set_type("b_type", pos, type, data_type, is_trans)

    def set_c_type(self, pos: TPosition, type: CubeFormat, data_type: DataType) -> int:
        return self._set_type("c_type", pos, type, data_type, False)

    def set_bias_type(self, pos: TPosition, type: CubeFormat, data_type: DataType) -> int:
        return self._set_type("bias_type", pos, type, data_type, False)

    def _set_type(self, which: str, pos: Any, format: Any, data_type: Any, is_trans: bool) -> int:
        data_type = DataType(data_type)
        if data_type not in DTYPE_BITS:
            return FAILED
        setattr(self, which, MatrixType(TPosition(pos), CubeFormat(format), data_type, bool(is_trans)))
        return OK

    def set_shape(self, m: int, n: int, k: int) -> int:
        return self._set_sizes("shape", (m, n, k))

    def set_org_shape(self, org_m_in: int, org_n_in: int, org_k_in: int, org_kb_in: Optional[int] = None) -> int:
        """set_org_shape(M, N, K) or set_org_shape(M, N, Ka, Kb)."""
        return self._set_sizes("org_shape", (org_m_in, org_n_in, org_k_in,
                                             org_k_in if org_kb_in is None else org_kb_in))

    def _set_sizes(self, which: str, sizes: Tuple[int, ...]) -> int:
        if any(s == 0 or s < -1 for s in sizes):
            return FAILED
        setattr(self, which, tuple(int(s) for s in sizes))
        return OK

    def enable_bias(self, is_bias_in: bool = False) -> int:
        self.is_bias = bool(is_bias_in)
        return OK

    def set_bias(self, is_bias_in: bool = False) -> int:  # CANN's older name, used in its docs' examples
        return self.enable_bias(is_bias_in)

    # -- how to tile it
    def set_fix_split(self, base_m_in: int = -1, base_n_in: int = -1, base_k_in: int = -1) -> int:
        return self._set_sizes("fixed_base", (base_m_in, base_n_in, base_k_in))

    def set_split_range(self, max_base_m: int = -1, max_base_n: int = -1, max_base_k: int = -1,
                        min_base_m: int = -1, min_base_n: int = -1, min_base_k: int = -1) -> int:
        self.split_range = (max_base_m, max_base_n, max_base_k, min_base_m, min_base_n, min_base_k)
        return OK

    def set_buffer_space(self, l1_size: int = -1, l0_c_size: int = -1, ub_size: int = -1, bt_size: int = -1) -> int:
        self.buffer_space = (l1_size, l0_c_size, ub_size, bt_size)
        return OK

    def set_traverse(self, traverse: MatrixTraverse) -> int:
        self.config.traverse = MatrixTraverse(traverse)
        return OK

    def set_matmul_config_params(self, mm_config_type_in: Any = 1, enable_l1_cache_ub_in: bool = False,
                                 schedule_type_in: ScheduleType = ScheduleType.INNER_PRODUCT,
                                 traverse_in: MatrixTraverse = MatrixTraverse.NOSET,
                                 en_vec_nd2nz_in: bool = False, *, config_params: Any = None) -> None:
        """set_matmul_config_params(values...) or set_matmul_config_params(MatmulConfigParams)."""
        given = config_params if config_params is not None else mm_config_type_in
        if isinstance(given, MatmulConfigParams):
            self.config = replace(given)
        else:
            self.config = MatmulConfigParams(int(given), bool(enable_l1_cache_ub_in), ScheduleType(schedule_type_in),
                                             MatrixTraverse(traverse_in), bool(en_vec_nd2nz_in))

    def set_mad_type(self, mad_type: MatrixMadType) -> int:
        self.mad_type = MatrixMadType(mad_type)
        return OK

    def set_dequant_type(self, dequant_type: DequantType) -> int:
        self.dequant_type = DequantType(dequant_type)
        return OK

    def set_double_buffer(self, a: bool, b: bool, c: bool, bias: bool, trans_nd2nz: bool = True,
                          trans_nz2nd: bool = True) -> int:
        self.double_buffer = (a, b, c, bias, trans_nd2nz, trans_nz2nd)
        return OK

    def set_sparse(self, is_sparce_in: bool = False) -> int:
        self.is_sparse = bool(is_sparce_in)
        return OK

    # -- batch layouts: copied into the tiling's layout fields
    def set_a_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        self.layouts["a"] = (b, s, n, g, d)
        return OK

    def set_b_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        self.layouts["b"] = (b, s, n, g, d)
        return OK

    def set_c_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        self.layouts["c"] = (b, s, n, g, d)
        return OK

    def set_batch_num(self, batch: int) -> int:
        self.batch_num = batch
        return OK

    def set_batch_info_for_normal(self, batch_a: int, batch_b: int, m: int, n: int, k: int) -> int:
        """The NORMAL (BMNK) layout: A is [batch_a, m, k], B [batch_b, k, n], C [max, m, n]."""
        self.batch_num = max(batch_a, batch_b)
        self.layouts = {"a": (batch_a, m, 1, 1, k), "b": (batch_b, k, 1, 1, n), "c": (self.batch_num, m, 1, 1, n)}
        return self.set_shape(m, n, k)

    # -- results
    def get_tiling(self, tiling: Any) -> int:
        """Fill `tiling` (a TCubeTiling) and return 0, or return -1 and leave it as it was."""
        request = self._request()
        if request is None:
            return FAILED
        solution = solve(request, self._split(request))
        if solution is None:
            return FAILED
        self.solution = solution
        org_m, org_n, org_ka, org_kb = self._org_shape()
        fields = dict(solution.fields, m=org_m, n=org_n, k_a=org_ka, k_b=org_kb)
        fields.update(self._batch_fields())
        known = getattr(type(tiling), "struct_fields", fields)
        for name, value in fields.items():
            if name in known:
                setattr(tiling, name, int(value))
        return OK

    # before get_tiling: set_fix_split's value, or -1 (as CANN, pyasc's unit tests show)
    def get_base_m(self) -> int:
        return self.solution.fields["base_m"] if self.solution else self.fixed_base[0]

    def get_base_n(self) -> int:
        return self.solution.fields["base_n"] if self.solution else self.fixed_base[1]

    def get_base_k(self) -> int:
        return self.solution.fields["base_k"] if self.solution else self.fixed_base[2]

    # -- the computation's inputs
    def _org_shape(self) -> Tuple[int, int, int, int]:
        """M, N, Ka, Kb: set_org_shape's, else the shape's."""
        m, n, k = self.shape
        org_m, org_n, org_ka, org_kb = self.org_shape
        return (org_m if org_m > 0 else m, org_n if org_n > 0 else n,
                org_ka if org_ka > 0 else k, org_kb if org_kb > 0 else k)

    def _request(self) -> Optional[Request]:
        org_m, org_n, org_ka, org_kb = self._org_shape()
        m, n, k = (s if s > 0 else org for s, org in zip(self.shape, (org_m, org_n, min(org_ka, org_kb))))
        if min(m, n, k, org_m, org_n, org_ka, org_kb) <= 0:
            return None  # no shape given
        platform = self.platform
        l1, l0c, ub, bt = (given if given > 0 else platform.get_core_mem_size(kind)
                           for given, kind in zip(self.buffer_space, (CoreMemType.L1, CoreMemType.L0_C,
                                                                      CoreMemType.UB, CoreMemType.BT)))
        buffers = Buffers(l1=l1, l0a=platform.get_core_mem_size(CoreMemType.L0_A),
                          l0b=platform.get_core_mem_size(CoreMemType.L0_B), l0c=l0c, ub=ub, bias_table=bt)
        return Request(m=m, n=n, k=k, a_bits=DTYPE_BITS[self.a_type.data_type],
                       b_bits=DTYPE_BITS[self.b_type.data_type], bias_bits=DTYPE_BITS[self.bias_type.data_type],
                       c_bytes=max(DTYPE_BITS[self.c_type.data_type] // 8, 1), buffers=buffers,
                       cores=self._cores(), has_bias=self.is_bias, c_in_ub=self.c_type.pos in UB_POSITIONS,
                       fixed_base=self.fixed_base, traverse=int(self.config.traverse), **self._single_core_choices())

    def _cores(self) -> int:
        return 1

    def _single_core_choices(self) -> Dict[str, Tuple[int, int, int]]:
        return {}

    def _split(self, request: Request):
        """One core: its share is the whole shape."""
        return split_cores(replace(request, cores=1, fixed_single=(request.m, request.n, request.k)))

    def _batch_fields(self) -> Dict[str, int]:
        fields = {"batch_num": self.batch_num}
        for matrix, names in (("a", ("b", "s", "n", "g", "d")), ("b", ("b", "s", "n", "g", "d")),
                              ("c", ("b", "s1", "n", "g", "s2"))):
            for name, value in zip(names, self.layouts.get(matrix, (0,) * 5)):
                fields[f"{matrix}_layout_info_{name}"] = value
        return fields


class MatmulApiTiling(MatmulApiTilingBase):
    """A single-core Matmul: the shape is the core's (usedCoreNum 1)."""


class MultiCoreMatmulTiling(MatmulApiTilingBase):
    """The shape split over up to set_dim cores (and no more than the SOC has)."""

    def __init__(self, platform: Optional[PlatformAscendC] = None):
        super().__init__(platform)
        self.dim = self.platform.get_core_num()
        self.single_shape = (-1, -1, -1)
        self.single_range = (-1, -1, -1, -1, -1, -1)  # recorded; the split does not search ranges
        self.align_split = (-1, -1, -1)
        self.split_k = False  # recorded: K is never split over cores (singleCoreK = K)

    def set_dim(self, dim: int) -> int:
        if dim <= 0:
            return FAILED
        self.dim = dim
        return OK

    def set_single_shape(self, single_m_in: int = -1, single_n_in: int = -1, single_k_in: int = -1) -> int:
        return self._set_sizes("single_shape", (single_m_in, single_n_in, single_k_in))

    def set_single_range(self, max_m: int = -1, max_n: int = -1, max_k: int = -1, min_m: int = -1, min_n: int = -1,
                         min_k: int = -1) -> int:
        self.single_range = (max_m, max_n, max_k, min_m, min_n, min_k)
        return OK

    def set_align_split(self, align_m: int, align_n: int, align_k: int) -> int:
        self.align_split = (align_m, align_n, align_k)
        return OK

    def enable_multi_core_split_k(self, flag: bool) -> None:
        self.split_k = bool(flag)

    def get_core_num(self) -> Optional[Tuple[int, int, int]]:
        """(dim, mDim, nDim) of the last tiling, None before one."""
        if self.solution is None:
            return None
        split = self.solution.split
        return split.m_dim * split.n_dim, split.m_dim, split.n_dim

    def get_single_shape(self) -> Optional[Tuple[int, int, int]]:
        if self.solution is None:
            return None
        split = self.solution.split
        return split.single_m, split.single_n, split.single_k

    def _cores(self) -> int:
        return min(self.dim, self.platform.get_core_num())

    def _single_core_choices(self) -> Dict[str, Tuple[int, int, int]]:
        return {"fixed_single": self.single_shape, "align_single": self.align_split}

    def _split(self, request: Request):
        return split_cores(request)


class BatchMatmulTiling(MatmulApiTilingBase):
    """One batch's Matmul on one core (the layouts and batch count travel in the tiling)."""

    def get_core_num(self) -> Optional[Tuple[int, int, int, int, int]]:
        """(dim, mDim, nDim, batchCoreM, batchCoreN) of the last tiling, None before one."""
        return None if self.solution is None else (1, 1, 1, 1, 1)

    def _batch_fields(self) -> Dict[str, int]:
        return dict(super()._batch_fields(), batch_m=1, batch_n=1, single_batch_m=1, single_batch_n=1)


HOST_NAMES = ("BatchMatmulTiling", "CubeFormat", "DataType", "DequantType", "MatmulApiTiling", "MatmulConfigParams",
              "MatrixMadType", "MatrixTraverse", "MultiCoreMatmulTiling", "PlatformAscendC", "PlatformAscendCManager",
              "ScheduleType", "TPosition", "get_ascendc_platform")


# ---------------------------------------------------------------------------------------------
# Standing in for pyasc's asc.lib.host where pyasc is installed and CANN is not.

def cann_is_missing() -> bool:
    """pyasc builds its host library from $ASCEND_HOME_PATH (asc/lib/host/loader.py): without it
    the library cannot load."""
    return not HostSettings.from_env().ascend_home


def stand_in_for(host_module: Any) -> None:
    """Make pyasc's `asc.lib.host` ours: its lazy proxies (wrappers.ProxyMeta -> Loader.get_attr)
    resolve names in Loader.module, which becomes this module; its module attributes become ours
    too, so that get_ascendc_platform follows an ascrun session's SOC."""
    host_module.loader.Loader.module = sys.modules[__name__]
    for name in HOST_NAMES:
        setattr(host_module, name, globals()[name])


class _HostImportWatch(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when pyasc's asc.lib.host is imported after ascrun, it stands in for
    it once the module has run (import ascrun must not import pyasc)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "asc.lib.host":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run_module(module)
            if hasattr(module, "loader"):  # pyasc's, not ascrun's stand-in package
                stand_in_for(module)

        spec.loader.exec_module = exec_module
        return spec


def use_when_cann_is_missing() -> None:
    """Without CANN, pyasc's asc.lib.host (imported already or later) resolves to this module."""
    if not cann_is_missing():
        return
    host = sys.modules.get("asc.lib.host")
    if host is not None:
        if hasattr(host, "loader"):
            stand_in_for(host)
    elif not any(isinstance(finder, _HostImportWatch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _HostImportWatch())

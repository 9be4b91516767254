"""What pyasc's Matmul test files share, written once: each core's offsets into A, B, C and the bias
(its calc_offsets), and the host tiling of its generalization tests."""
from typing import Tuple

import numpy as np
import torch

import asc
import asc.lib.host as host


@asc.jit
def calc_offsets(tiling: asc.adv.TCubeTiling) -> Tuple[int, int, int, int]:
    """(A, B, C, bias) offsets of this core's singleCoreM x singleCoreN piece, M index first."""
    block_idx = asc.get_block_idx()
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    k_blocks = tiling.k_a.ceildiv(tiling.single_core_k)
    mn_cores = tiling.used_core_num // k_blocks
    m_index = (block_idx % mn_cores) % m_blocks
    n_index = (block_idx % mn_cores) // m_blocks
    offset_a = m_index * tiling.k_a * tiling.single_core_m
    offset_b = n_index * tiling.single_core_n
    offset_c = m_index * tiling.n * tiling.single_core_m + n_index * tiling.single_core_n
    offset_bias = n_index * tiling.single_core_n
    return offset_a, offset_b, offset_c, offset_bias


def host_tiling(m: int, n: int, k: int, dtype, bias: bool = False, batch_layouts=None) -> asc.adv.TCubeTiling:
    """16 cores, A and B in GM (float or half), C float in the Unified Buffer, M first; with
    batch_layouts (batch_a, batch_b, batch), A, B and C as batches of NORMAL-layout matrices."""
    tiling_api = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    in_type = host.DataType.DT_FLOAT if dtype == torch.float32 else host.DataType.DT_FLOAT16
    tiling_api.set_a_type(host.TPosition.GM, host.CubeFormat.ND, in_type, False)
    tiling_api.set_b_type(host.TPosition.GM, host.CubeFormat.ND, in_type, False)
    tiling_api.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiling_api.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiling_api.set_dim(16)
    tiling_api.set_org_shape(m, n, k)
    tiling_api.set_shape(m, n, k)
    if bias:
        tiling_api.enable_bias(True)
    tiling_api.set_traverse(host.MatrixTraverse.FIRSTM)
    tiling_api.set_buffer_space(-1, -1, -1)
    if batch_layouts:
        batch_a, batch_b, batch = batch_layouts
        tiling_api.set_a_layout(batch_a, m, 1, 1, k)
        tiling_api.set_b_layout(batch_b, k, 1, 1, n)
        tiling_api.set_c_layout(batch, m, 1, 1, n)
        tiling_api.set_batch_num(batch)
    tiling = asc.adv.TCubeTiling()
    tiling_api.get_tiling(tiling)
    return tiling


@asc.jit
def block_to_gm(c_global: asc.GlobalTensor, block: asc.LocalTensor, count: int, tiling: asc.adv.TCubeTiling):
    """Base block `count` (M first) of this core's piece, baseM x baseN in the Unified Buffer, to its
    place in C (N columns)."""
    round_m = tiling.single_core_m // tiling.base_m
    start_offset = count % round_m * tiling.base_m * tiling.n + count // round_m * tiling.base_n
    params = asc.DataCopyParams(
        block_count=tiling.base_m,
        block_len=tiling.base_n * c_global.dtype.sizeof() // asc.property(asc.DEFAULT_C0_SIZE),
        src_stride=0,
        dst_stride=(tiling.n - tiling.base_n) * c_global.dtype.sizeof() // asc.property(asc.DEFAULT_C0_SIZE),
    )
    asc.data_copy(c_global[start_offset:], block, repeat_params=params)


def leaky_relu(x, alpha):
    return torch.where(x >= 0, x, x * alpha) if isinstance(x, torch.Tensor) else np.where(x >= 0, x, x * alpha)


def kernel_test_tiling(m: int, n: int, k: int, bias: bool) -> asc.adv.TCubeTiling:
    """pyasc's kernels/test_matmul*.py tiling, written by hand: 64 x 64 pieces and base blocks, whole K."""
    return asc.adv.TCubeTiling(used_core_num=asc.ceildiv(m, 64) * asc.ceildiv(n, 64), m=m, k_a=k, k_b=k, n=n,
                               base_m=64, base_k=64, base_n=64, single_core_m=64, single_core_k=k, single_core_n=64,
                               depth_a1=1, depth_b1=1, step_m=1, step_n=1, share_mode=0, is_bias=int(bias))

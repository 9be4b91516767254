"""A Matmul in the shape of pyasc's tutorial 04_matmul_cube_only: the host tiling splits C over the
cube cores, each AIC runs the Matmul high-level API's IterateAll on its singleCoreM x singleCoreN
piece (tails by SetTail), with a bias and A or B transposed in GM if asked. On the cpu target: no
NPU, no CANN (asc.lib.host is ascrun's host tiling where CANN's cannot load).

    python examples/matmul.py [--m 300 --n 200 --k 96] [--cores 24] [--trans-a] [--trans-b] [--bias]
"""
import argparse

import numpy as np

import asc
import asc.lib.host as host
import ascrun


@asc.jit(matmul_cube_only=True)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, bias: asc.GlobalAddress,
                  tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress, trans_a: asc.ConstExpr[bool],
                  trans_b: asc.ConstExpr[bool]):
    block = asc.get_block_idx()
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    m_index = block % m_blocks
    n_index = block // m_blocks
    offset_a = m_index * tiling.k_a * tiling.single_core_m
    if trans_a:
        offset_a = m_index * tiling.single_core_m
    offset_b = n_index * tiling.single_core_n
    if trans_b:
        offset_b = n_index * tiling.k_b * tiling.single_core_n
    tail_m = tiling.m - m_index * tiling.single_core_m
    if tail_m > tiling.single_core_m:
        tail_m = tiling.single_core_m
    tail_n = tiling.n - n_index * tiling.single_core_n
    if tail_n > tiling.single_core_n:
        tail_n = tiling.single_core_n
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    bias_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + offset_a)
    b_global.set_global_buffer(b + offset_b)
    c_global.set_global_buffer(c + m_index * tiling.n * tiling.single_core_m + n_index * tiling.single_core_n)
    bias_global.set_global_buffer(bias + n_index * tiling.single_core_n)
    pipe = asc.TPipe()
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype, trans_a),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype, trans_b),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c_global.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias_global.dtype),
    )
    asc.adv.register_matmul(pipe, workspace, matmul, tiling)
    if block < tiling.used_core_num:
        matmul.set_tensor_a(a_global, trans_a)
        matmul.set_tensor_b(b_global, trans_b)
        if tiling.is_bias:
            matmul.set_bias(bias_global)
        matmul.set_tail(tail_m, tail_n, tiling.k_a)
        matmul.iterate_all(c_global)
        matmul.end()


def host_tiling(m: int, n: int, k: int, cores: int, trans_a=False, trans_b=False, bias=False) -> asc.adv.TCubeTiling:
    """half A and B, float C and bias, all in GM."""
    tiling_api = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    tiling_api.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, trans_a)
    tiling_api.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, trans_b)
    tiling_api.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiling_api.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiling_api.set_dim(cores)
    tiling_api.set_org_shape(m, n, k)
    tiling_api.set_shape(m, n, k)
    tiling_api.enable_bias(bias)
    tiling = asc.adv.TCubeTiling()
    if tiling_api.get_tiling(tiling) != 0:
        raise ValueError(f"no tiling of {m} x {n} x {k} fits the cube's buffers")
    return tiling


def matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, cores: int, trans_a=False, trans_b=False):
    """C = A @ B (+ bias) for half A (M x K) and B (K x N); A and B are sent transposed if asked."""
    (m, k), n = a.shape, b.shape[1]
    tiling = host_tiling(m, n, k, cores, trans_a, trans_b, bias is not None)
    c = np.zeros((m, n), np.float32)
    bias = np.zeros((1, n), np.float32) if bias is None else bias
    result = ascrun.run_local(matmul_kernel, tiling.used_core_num, np.ascontiguousarray(a.T) if trans_a else a,
                              np.ascontiguousarray(b.T) if trans_b else b, c, bias, tiling, np.zeros(1024, np.uint8),
                              trans_a, trans_b)
    return c, tiling, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=300)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--k", type=int, default=96)
    parser.add_argument("--cores", type=int, default=24)
    parser.add_argument("--trans-a", action="store_true")
    parser.add_argument("--trans-b", action="store_true")
    parser.add_argument("--bias", action="store_true")
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, (opts.m, opts.k)).astype(np.float16)
    b = rng.integers(-8, 8, (opts.k, opts.n)).astype(np.float16)
    bias = rng.integers(-8, 8, (1, opts.n)).astype(np.float32) if opts.bias else None
    c, tiling, result = matmul(a, b, bias, opts.cores, opts.trans_a, opts.trans_b)
    expected = a.astype(np.float32) @ b.astype(np.float32) + (0 if bias is None else bias)
    assert np.array_equal(c, expected), "C differs from numpy"
    print(f"C = A @ B{' + bias' if opts.bias else ''} ({opts.m} x {opts.k} x {opts.n}) on {tiling.used_core_num} AICs "
          f"(pieces {tiling.single_core_m} x {tiling.single_core_n}, base {tiling.base_m} x {tiling.base_n} x "
          f"{tiling.base_k}): equal to numpy")
    print("timings (s):", {name: round(t, 4) for name, t in result.timings.items()}, "cache:", result.cache)


if __name__ == "__main__":
    main()

"""Kernels of the Matmul high-level API (lib/matmul_intf.h)."""
import asc


@asc.jit(matmul_cube_only=True)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
                  workspace: asc.GlobalAddress):
    """A Matmul object registered with its tiling (pyasc 1.1.1's register_matmul takes the workspace)."""
    if asc.ascend_is_aic():
        a_global = asc.GlobalTensor()
        b_global = asc.GlobalTensor()
        c_global = asc.GlobalTensor()
        a_global.set_global_buffer(a)
        b_global.set_global_buffer(b)
        c_global.set_global_buffer(c)
        pipe = asc.TPipe()
        matmul = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype, False),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype, False),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c_global.dtype),
        )
        asc.adv.register_matmul(pipe, workspace, matmul, tiling)
        matmul.set_tensor_a(a_global, False)
        matmul.set_tensor_b(b_global, False)
        matmul.iterate_all(c_global)
        matmul.end()


@asc.jit(matmul_cube_only=True)
def misregistered_matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                                tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress):
    """register_matmul called as newer pyasc tutorials call it (no workspace): 1.1.1's passes refuse it."""
    if asc.ascend_is_aic():
        pipe = asc.TPipe()
        matmul = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype, False),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype, False),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c.dtype),
        )
        asc.adv.register_matmul(pipe, matmul, tiling)  # REGISTER_LINE


@asc.jit(matmul_cube_only=True)
def tiled_matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, bias: asc.GlobalAddress,
                        tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress, trans_a: asc.ConstExpr[bool],
                        trans_b: asc.ConstExpr[bool]):
    """Tutorial 04's shape: each core takes its singleCoreM x singleCoreN piece (tails via SetTail),
    A and B transposed in GM as the ConstExprs say, bias when the tiling has it."""
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


@asc.jit
def blockwise_matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                            tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress):
    """Mixed (MIX_AIC_1_2): each AIV iterates base blocks, takes each into the Unified Buffer and
    copies it to its place in C itself (tutorial 05 without the activation)."""
    c_global = asc.GlobalTensor()
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + asc.get_block_idx() * tiling.k_a * tiling.single_core_m)
    b_global.set_global_buffer(b)
    c_global.set_global_buffer(c + asc.get_block_idx() * tiling.n * tiling.single_core_m)
    pipe = asc.TPipe()
    out_queue = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=out_queue, num=1, len=tiling.base_m * tiling.base_n * c.dtype.sizeof())
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, c_global.dtype),
    )
    asc.adv.register_matmul(pipe, workspace, matmul, tiling)
    matmul.set_tensor_a(a_global)
    matmul.set_tensor_b(b_global)
    with matmul.iterate() as count:
        local = out_queue.alloc_tensor(c.dtype)
        matmul.get_tensor_c(local, en_sequential_write=True)
        out_queue.enque(local)
        local = out_queue.deque(c.dtype)
        round_m = tiling.single_core_m // tiling.base_m
        start = count % round_m * tiling.base_m * tiling.n + count // round_m * tiling.base_n
        params = asc.DataCopyParams(block_count=tiling.base_m,
                                    block_len=tiling.base_n * c.dtype.sizeof() // 32, src_stride=0,
                                    dst_stride=(tiling.n - tiling.base_n) * c.dtype.sizeof() // 32)
        asc.data_copy(c_global[start:], local, repeat_params=params)
        out_queue.free_tensor(local)
    matmul.end()

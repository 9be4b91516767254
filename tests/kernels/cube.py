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

"""Cube-side kernels the cpu target cannot run yet (issue 15): what the frontend makes of them."""
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

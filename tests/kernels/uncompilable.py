"""Kernels pyasc refuses to compile: the error a user sees names the line of this file."""
import asc


@asc.jit
def exp_with_wrong_arguments_kernel(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.exp(x_local, x_local, 3.5, 7)  # no form of exp takes (float, int)

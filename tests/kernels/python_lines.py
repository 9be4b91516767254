"""Kernels whose errors must name their Python line (tests/test_python_lines.py finds each line by its text)."""
import asc


@asc.jit
def mixed_copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int]):
    # y is float16, the tensor float32: pyasc passes it on, the C++ has no such DataCopy
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(x_local, y_gm, n)


@asc.jit
def misaligned_kernel(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    # UB operands start 32-byte aligned: 16 bytes in is not
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 16, n)
    asc.data_copy(x_local, x_gm, n)


@asc.jit
def checked_kernel(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    assert n % 8 == 0, "n must be a multiple of 8"
    x_gm.set_global_buffer(x, n)

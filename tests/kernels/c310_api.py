"""asctile kernels (pyasc's nightly) that make pyasc-dev emit the Ascend C APIs of issue 26: SoftMax with a
temporary buffer, LoadData2DParamsV2 and Fixpipe (C310), Duplicate from a LocalTensor, bf16 compare and
select. Import only where asctile is installed."""
from asc.experimental import asctile


@asctile.jit
def softmax_rows(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, m: asctile.ConstExpr[int],
                 k: asctile.ConstExpr[int]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [m, k]), [0, 0], [m, k])
    asctile.copy_out(asctile.softmax(x), asctile.global_tensor(z_ptr, [m, k]), [0, 0])


@asctile.jit
def matmul(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
           m: asctile.ConstExpr[int], k: asctile.ConstExpr[int], n: asctile.ConstExpr[int]):
    a = asctile.copy_in(asctile.global_tensor(a_ptr, [m, k]), [0, 0], [m, k])
    b = asctile.copy_in(asctile.global_tensor(b_ptr, [k, n]), [0, 0], [k, n])
    asctile.copy_out(a @ b, asctile.global_tensor(c_ptr, [m, n]), [0, 0])


@asctile.jit
def broadcast_row(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],
                  rows: asctile.ConstExpr[int]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [1]), [0], [1])
    asctile.copy_out(x.broadcast_to([n]), asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def clamp_below(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int]):
    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])
    asctile.copy_out(asctile.where(x > 0.5, x * 2.0, 0.0), asctile.global_tensor(z_ptr, [n]), [0])


@asctile.jit
def matmul_chain(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
                 d_ptr: asctile.GlobalAddress, m: asctile.ConstExpr[int], k: asctile.ConstExpr[int],
                 n: asctile.ConstExpr[int]):
    """(a @ b) @ c: the first product goes from L0C back to L1 as the second's left operand."""
    a = asctile.copy_in(asctile.global_tensor(a_ptr, [m, k]), [0, 0], [m, k])
    b = asctile.copy_in(asctile.global_tensor(b_ptr, [k, n]), [0, 0], [k, n])
    c = asctile.copy_in(asctile.global_tensor(c_ptr, [n, n]), [0, 0], [n, n])
    asctile.copy_out((a @ b) @ c, asctile.global_tensor(d_ptr, [m, n]), [0, 0])


@asctile.jit
def matmul_chain_half(a_ptr: asctile.GlobalAddress, b_ptr: asctile.GlobalAddress, c_ptr: asctile.GlobalAddress,
                      d_ptr: asctile.GlobalAddress, m: asctile.ConstExpr[int], k: asctile.ConstExpr[int],
                      n: asctile.ConstExpr[int]):
    """(a @ b).to(float16) @ c, half operands: the first product goes from L0C to L1 as half (F322F16)."""
    a = asctile.copy_in(asctile.global_tensor(a_ptr, [m, k]), [0, 0], [m, k])
    b = asctile.copy_in(asctile.global_tensor(b_ptr, [k, n]), [0, 0], [k, n])
    c = asctile.copy_in(asctile.global_tensor(c_ptr, [n, n]), [0, 0], [n, n])
    asctile.copy_out((a @ b).to(asctile.float16) @ c, asctile.global_tensor(d_ptr, [m, n]), [0, 0])

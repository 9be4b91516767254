"""Kernels for the mask + repeat ("high-dimensional split") forms of the vector instructions.

One block; x, y are inputs, z is read first (so the elements the mask leaves out keep their
values) and written back whole. `mode` picks how the mask reaches the instruction:
  "norm"        normal mode, mask given to the instruction (isSetMask = true)
  "norm_reg"    normal mode, SetVectorMask before the call, placeholder mask (isSetMask = false)
  "counter"     SetMaskCount, then the mask argument is the element count (isSetMask = true)
  "counter_reg" SetMaskCount + SetVectorMask(count, COUNTER), placeholder mask (isSetMask = false)
With bits=True the mask is the list [lo, hi], else the integer lo.
"""
import asc

BINARY = ("add", "sub", "mul", "div", "max", "min", "and", "or")
SCALAR = ("adds", "muls", "maxs", "mins", "leaky_relu", "shift_left", "shift_right", "axpy")
UNARY = ("abs", "exp", "ln", "sqrt", "rsqrt", "reciprocal", "relu", "not")


@asc.jit
def masked_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                  op: asc.ConstExpr[str], counter: asc.ConstExpr[bool], set_mask: asc.ConstExpr[bool], bits: asc.ConstExpr[bool],
                  lo: asc.ConstExpr[int], hi: asc.ConstExpr[int], repeat: asc.ConstExpr[int],
                  dbs: asc.ConstExpr[int], s0bs: asc.ConstExpr[int], s1bs: asc.ConstExpr[int],
                  drs: asc.ConstExpr[int], s0rs: asc.ConstExpr[int], s1rs: asc.ConstExpr[int],
                  scalar: asc.ConstExpr):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    z_gm.set_global_buffer(z, n)
    nb = n * x.dtype.sizeof()
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    yl = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, nb, n)
    zl = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 2 * nb, n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(yl, y_gm, n)
    asc.data_copy(zl, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if counter:
        asc.set_mask_count()
        if set_mask == False:
            asc.set_vector_mask(lo, dtype=x.dtype, mode=asc.MaskMode.COUNTER)
    elif set_mask == False:
        if bits:
            asc.set_vector_mask(hi, lo, dtype=x.dtype, mode=asc.MaskMode.NORMAL)
        else:
            asc.set_vector_mask(lo, dtype=x.dtype, mode=asc.MaskMode.NORMAL)
    m = lo
    if bits:
        m = [lo, hi]
    bp = asc.BinaryRepeatParams(dbs, s0bs, s1bs, drs, s0rs, s1rs)
    up = asc.UnaryRepeatParams(dbs, s0bs, drs, s0rs)
    if op == "add":
        asc.add(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "sub":
        asc.sub(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "mul":
        asc.mul(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "div":
        asc.div(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "max":
        asc.max(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "min":
        asc.min(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "and":
        asc.bitwise_and(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "or":
        asc.bitwise_or(zl, xl, yl, m, repeat, bp, is_set_mask=set_mask)
    elif op == "adds":
        asc.adds(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "muls":
        asc.muls(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "maxs":
        asc.maxs(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "mins":
        asc.mins(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "leaky_relu":
        asc.leaky_relu(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "shift_left":
        asc.shift_left(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "shift_right":
        asc.shift_right(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "axpy":
        asc.axpy(zl, xl, scalar, m, repeat, up, is_set_mask=set_mask)
    elif op == "abs":
        asc.abs(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "exp":
        asc.exp(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "ln":
        asc.ln(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "sqrt":
        asc.sqrt(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "rsqrt":
        asc.rsqrt(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "reciprocal":
        asc.reciprocal(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "relu":
        asc.relu(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "not":
        asc.bitwise_not(zl, xl, m, repeat, up, is_set_mask=set_mask)
    elif op == "duplicate":
        asc.duplicate(zl, scalar, m, repeat, dbs, drs, is_set_mask=set_mask)
    elif op == "copy":
        asc.copy(zl, xl, m, repeat, asc.CopyRepeatParams(dbs, s0bs, drs, s0rs), is_set_mask=set_mask)
    if counter:
        asc.set_mask_norm()
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)


@asc.jit
def count_no_mask_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """Adds count form with isSetMask = false, without putting the core in counter mode first."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
    asc.data_copy(xl, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(zl, xl, 1.0, n, is_set_mask=False)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)


@asc.jit
def count_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], count: asc.ConstExpr[int],
                 op: asc.ConstExpr[str], scalar: asc.ConstExpr):
    """The count form of the vector-scalar, unary, Duplicate, Axpy and Copy instructions on the
    first `count` elements; z is read first (Axpy accumulates into it; the rest keeps its values)."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    zl = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(zl, z_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if op == "adds":
        asc.adds(zl, xl, scalar, count)
    elif op == "muls":
        asc.muls(zl, xl, scalar, count)
    elif op == "maxs":
        asc.maxs(zl, xl, scalar, count)
    elif op == "mins":
        asc.mins(zl, xl, scalar, count)
    elif op == "leaky_relu":
        asc.leaky_relu(zl, xl, scalar, count)
    elif op == "shift_left":
        asc.shift_left(zl, xl, scalar, count)
    elif op == "shift_right":
        asc.shift_right(zl, xl, scalar, count)
    elif op == "axpy":
        asc.axpy(zl, xl, scalar, count)
    elif op == "abs":
        asc.abs(zl, xl, count)
    elif op == "exp":
        asc.exp(zl, xl, count)
    elif op == "ln":
        asc.ln(zl, xl, count)
    elif op == "sqrt":
        asc.sqrt(zl, xl, count)
    elif op == "rsqrt":
        asc.rsqrt(zl, xl, count)
    elif op == "reciprocal":
        asc.reciprocal(zl, xl, count)
    elif op == "relu":
        asc.relu(zl, xl, count)
    elif op == "not":
        asc.bitwise_not(zl, xl, count)
    elif op == "duplicate":
        asc.duplicate(zl, scalar, count)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)

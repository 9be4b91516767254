"""Kernels for Compare, CompareScalar, GetCmpMask/SetCmpMask and Select, every call form pyasc 1.1.1
emits. One block. Call forms and modes are runtime selectors, so each dtype is one build:
pyasc emits every branch (CMPMODE and SELMODE must be Python constants, hence the if/elif ladders).
UB addresses are runtime too, so the fault tests can place operands where they like."""
import asc


# compare_kernel forms
COUNT, MASK, BITS, REG, REG_BITS, SCALAR_COUNT, SCALAR_MASK, SCALAR_BITS = range(8)


@asc.jit
def compare_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                   form: int, mode: int, count: int, lo: int, hi: int, repeat: int, s0b: int, s1b: int, s0r: int,
                   s1r: int, db: int, dr: int, scalar: float, preset: int, counter: int, zaddr: int, goff: int):
    """x, y: n elements of T; z: 256 bytes, read first. Compare / CompareScalar into z (forms COUNT ..
    SCALAR_BITS with dst); the register forms (REG, REG_BITS) first SetCmpMask(z) when preset, then
    GetCmpMask(z). mode: CMPMODE LT GT EQ LE GE NE = 0..5 (all six in the COUNT, MASK, REG and
    SCALAR_COUNT forms; GE in the others). dst strides db/dr (the instruction ignores them). The
    register forms read the register into z[goff:]."""
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    z_gm.set_global_buffer(z, 256)
    nb = n * x.dtype.sizeof()
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    yl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, nb, n)
    zl = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, zaddr, 256)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(yl, y_gm, n)
    asc.data_copy(zl, z_gm, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if counter == 1:
        asc.set_mask_count()
    bp = asc.BinaryRepeatParams(db, s0b, s1b, dr, s0r, s1r)
    up = asc.UnaryRepeatParams(db, s0b, dr, s0r)
    if form == 0:
        if mode == 0:
            asc.compare(zl, xl, yl, asc.CMPMODE.LT, count)
        elif mode == 1:
            asc.compare(zl, xl, yl, asc.CMPMODE.GT, count)
        elif mode == 2:
            asc.compare(zl, xl, yl, asc.CMPMODE.EQ, count)
        elif mode == 3:
            asc.compare(zl, xl, yl, asc.CMPMODE.LE, count)
        elif mode == 4:
            asc.compare(zl, xl, yl, asc.CMPMODE.GE, count)
        else:
            asc.compare(zl, xl, yl, asc.CMPMODE.NE, count)
    elif form == 1:
        if mode == 0:
            asc.compare(zl, xl, yl, asc.CMPMODE.LT, lo, repeat, bp)
        elif mode == 1:
            asc.compare(zl, xl, yl, asc.CMPMODE.GT, lo, repeat, bp)
        elif mode == 2:
            asc.compare(zl, xl, yl, asc.CMPMODE.EQ, lo, repeat, bp)
        elif mode == 3:
            asc.compare(zl, xl, yl, asc.CMPMODE.LE, lo, repeat, bp)
        elif mode == 4:
            asc.compare(zl, xl, yl, asc.CMPMODE.GE, lo, repeat, bp)
        else:
            asc.compare(zl, xl, yl, asc.CMPMODE.NE, lo, repeat, bp)
    elif form == 2:
        asc.compare(zl, xl, yl, asc.CMPMODE.GE, [lo, hi], repeat, bp)
    elif form == 3:
        if preset == 1:
            asc.set_cmp_mask(zl)
        if mode == 0:
            asc.compare(xl, yl, asc.CMPMODE.LT, lo, bp)
        elif mode == 1:
            asc.compare(xl, yl, asc.CMPMODE.GT, lo, bp)
        elif mode == 2:
            asc.compare(xl, yl, asc.CMPMODE.EQ, lo, bp)
        elif mode == 3:
            asc.compare(xl, yl, asc.CMPMODE.LE, lo, bp)
        elif mode == 4:
            asc.compare(xl, yl, asc.CMPMODE.GE, lo, bp)
        else:
            asc.compare(xl, yl, asc.CMPMODE.NE, lo, bp)
        asc.get_cmp_mask(zl[goff:])
    elif form == 4:
        if preset == 1:
            asc.set_cmp_mask(zl)
        asc.compare(xl, yl, asc.CMPMODE.GE, [lo, hi], bp)
        asc.get_cmp_mask(zl[goff:])
    elif form == 5:
        if mode == 0:
            asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.LT, count)
        elif mode == 1:
            asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.GT, count)
        elif mode == 2:
            asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.EQ, count)
        elif mode == 3:
            asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.LE, count)
        elif mode == 4:
            asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.GE, count)
        else:
            asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.NE, count)
    elif form == 6:
        asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.GE, lo, repeat, up)
    else:
        asc.compare_scalar(zl, xl, scalar, asc.CMPMODE.GE, [lo, hi], repeat, up)
    if counter == 1:
        asc.set_mask_norm()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, 256)


@asc.jit
def compare_int32_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, form: int, eq: int,
                         count: int, repeat: int):
    """int32_t: Compare count form (form 0; CMPMODE::EQ when eq, else LT, which Atlas A2/A3 do not
    support), mask + repeat form (form 1, EQ), CompareScalar count form with 1 (form 2, EQ).
    x, y: 512 elements; z: 256 bytes, read first."""
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 512)
    y_gm.set_global_buffer(y, 512)
    z_gm.set_global_buffer(z, 256)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 512)
    yl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 2048, 512)
    zl = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 4096, 256)
    asc.data_copy(xl, x_gm, 512)
    asc.data_copy(yl, y_gm, 512)
    asc.data_copy(zl, z_gm, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if form == 0:
        if eq == 1:
            asc.compare(zl, xl, yl, asc.CMPMODE.EQ, count)
        else:
            asc.compare(zl, xl, yl, asc.CMPMODE.LT, count)
    elif form == 1:
        asc.compare(zl, xl, yl, asc.CMPMODE.EQ, 64, repeat, asc.BinaryRepeatParams(1, 2, 1, 8, 16, 8))
    else:
        asc.compare_scalar(zl, xl, 1, asc.CMPMODE.EQ, count)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, 256)


# select_kernel forms
S_COUNT, S_MASK, S_BITS, S_REG = range(4)


@asc.jit
def select_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, s: asc.GlobalAddress, z: asc.GlobalAddress,
                  c: asc.GlobalAddress, n: asc.ConstExpr[int], bits_lo: asc.ConstExpr[int],
                  bits_hi: asc.ConstExpr[int], form: int, mode: int, count: int, lo: int, hi: int, repeat: int,
                  db: int, s0b: int, s1b: int, dr: int, s0r: int, s1r: int, scalar: float, counter: int,
                  wrong_src1: int, xaddr: int, saddr: int, zaddr: int):
    """x (src0), y (src1), z (dst, read first): n elements of T; s: 256 bytes of selMask. c: 128 bytes,
    GetCmpMask after the Select. mode: SELMODE 0..2; the src1 of mode 1 is `scalar` (wrong_src1 swaps
    the scalar and tensor forms). Forms: S_COUNT; S_MASK (continuous lo); S_BITS ([bits_lo ^ mode,
    bits_hi]); S_REG: mode 1 without mask (SetCmpMask(y), then the mask register = hi:lo, or the count
    lo in counter mode). counter: SetMaskCount before the call."""
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    s_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    c_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    s_gm.set_global_buffer(s, 256)
    z_gm.set_global_buffer(z, n)
    c_gm.set_global_buffer(c, 128)
    nb = n * x.dtype.sizeof()
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, xaddr, n)
    yl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 2 * nb, n)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, zaddr, n)
    sl = asc.LocalTensor(asc.uint8, asc.TPosition.VECIN, saddr, 256)
    cl = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 4 * nb + 1024, 128)
    asc.data_copy(xl, x_gm, n)
    asc.data_copy(yl, y_gm, n)
    asc.data_copy(zl, z_gm, n)
    asc.data_copy(sl, s_gm, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    bp = asc.BinaryRepeatParams(db, s0b, s1b, dr, s0r, s1r)
    if counter == 1:
        asc.set_mask_count()
    if form == 0:
        if wrong_src1 == 1:
            asc.select(zl, sl, xl, scalar, asc.SelMode.VSEL_CMPMASK_SPR, count)
        elif mode == 0:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_CMPMASK_SPR, count)
        elif mode == 1:
            asc.select(zl, sl, xl, scalar, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, count)
        else:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, count)
    elif form == 1:
        if wrong_src1 == 1:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, lo, repeat, bp)
        elif mode == 0:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_CMPMASK_SPR, lo, repeat, bp)
        elif mode == 1:
            asc.select(zl, sl, xl, scalar, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, lo, repeat, bp)
        else:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, lo, repeat, bp)
    elif form == 2:
        # pyasc 1.1.1 reuses a mask list's values across branches when they are equal (and the IR
        # then fails to verify): each mode gets its own low bits.
        if mode == 0:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_CMPMASK_SPR, [bits_lo, bits_hi], repeat, bp)
        elif mode == 1:
            asc.select(zl, sl, xl, scalar, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, [bits_lo ^ 1, bits_hi], repeat, bp)
        else:
            asc.select(zl, sl, xl, yl, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, [bits_lo ^ 2, bits_hi], repeat, bp)
    else:
        asc.set_cmp_mask(yl)
        if counter == 1:
            asc.set_vector_mask(lo, dtype=x.dtype, mode=asc.MaskMode.COUNTER)
        else:
            asc.set_vector_mask(hi, lo, dtype=x.dtype, mode=asc.MaskMode.NORMAL)
        asc.select(zl, sl, xl, repeat, bp)
    asc.get_cmp_mask(cl)
    if counter == 1:
        asc.set_mask_norm()
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, n)
    asc.data_copy(c_gm, cl, 128)


@asc.jit
def select_register_tensor_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """Select(dst, src0, src1, repeat, params, sel_mode=...): pyasc 1.1.1 emits it without the SELMODE
    template argument that Ascend C requires, so it does not build."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    z_gm.set_global_buffer(z, 64)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 256, 64)
    asc.data_copy(xl, x_gm, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.select(zl, xl, xl, repeat_times=1, repeat_params=asc.BinaryRepeatParams(),
               sel_mode=asc.SelMode.VSEL_CMPMASK_SPR)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, zl, 64)

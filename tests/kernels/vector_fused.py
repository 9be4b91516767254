"""Kernel for the compound instructions (AddRelu ... AddDeqRelu) and Axpy's (float, half) form in all
their call forms: one block of call sites per row of OPS (test_vector_fused.py models each row).

One block, one build: every dtype has its own tensor arguments (h*: half, f*: float, s*: int16_t,
i*: int32_t, bz: int8_t, uz: uint8_t; *0/*1 sources, *z destinations), all copied to the UB, and
the destinations copied back whole (FusedMulAdd, MulAddDst and Axpy read theirs). Runtime scalars:
  op       the row of OPS (instruction and dtypes)
  form     0 count form (count = lo); 1 continuous mask lo; 2 bit mask [lo, hi];
           3 placeholder mask with isSetMask = false (the register: SetVectorMask beforehand)
  counter  1: SetMaskCount first (lo is then the element count of the mask forms)
  wide     bytes of the wider dtype (2 or 4): the dtype SetVectorMask is given
  deq      1: SetDeqScale(scalar) first; scalar is also Axpy's
  alias    operands that share memory, in the mask forms: 1 AddRelu(hz, h0, hz) (dst is src1);
           2 FusedMulAdd(hz, hz, h1) (dst is src0); 3 AddReluCast(dst = f0's bytes as half, f0, f1)
"""
import asc

OPS = [
    ('add_relu', 'hz', 'h0', 'h1'),
    ('add_relu', 'fz', 'f0', 'f1'),
    ('add_relu', 'sz', 's0', 's1'),
    ('sub_relu', 'hz', 'h0', 'h1'),
    ('sub_relu', 'fz', 'f0', 'f1'),
    ('sub_relu', 'sz', 's0', 's1'),
    ('fused_mul_add', 'hz', 'h0', 'h1'),
    ('fused_mul_add', 'fz', 'f0', 'f1'),
    ('fused_mul_add_relu', 'hz', 'h0', 'h1'),
    ('fused_mul_add_relu', 'fz', 'f0', 'f1'),
    ('mul_add_dst', 'hz', 'h0', 'h1'),
    ('mul_add_dst', 'fz', 'f0', 'f1'),
    ('mul_cast', 'bz', 'h0', 'h1'),
    ('mul_cast', 'uz', 'h0', 'h1'),
    ('add_relu_cast', 'bz', 'h0', 'h1'),
    ('add_relu_cast', 'bz', 's0', 's1'),
    ('add_relu_cast', 'hz', 'f0', 'f1'),
    ('sub_relu_cast', 'bz', 'h0', 'h1'),
    ('sub_relu_cast', 'bz', 's0', 's1'),
    ('sub_relu_cast', 'hz', 'f0', 'f1'),
    ('add_deq_relu', 'hz', 'i0', 'i1'),
    ('axpy', 'fz', 'h0', None),
]


@asc.jit
def fused_kernel(h0: asc.GlobalAddress, h1: asc.GlobalAddress, hz: asc.GlobalAddress, f0: asc.GlobalAddress,
                 f1: asc.GlobalAddress, fz: asc.GlobalAddress, s0: asc.GlobalAddress, s1: asc.GlobalAddress,
                 sz: asc.GlobalAddress, i0: asc.GlobalAddress, i1: asc.GlobalAddress, bz: asc.GlobalAddress,
                 uz: asc.GlobalAddress, n: asc.ConstExpr[int], op: int, form: int, counter: int, wide: int,
                 deq: int, lo: int, hi: int, repeat: int, dbs: int, s0bs: int, s1bs: int, drs: int, s0rs: int,
                 s1rs: int, scalar: float, alias: int):
    h0_gm = asc.GlobalTensor()
    h0_gm.set_global_buffer(h0, n)
    h1_gm = asc.GlobalTensor()
    h1_gm.set_global_buffer(h1, n)
    hz_gm = asc.GlobalTensor()
    hz_gm.set_global_buffer(hz, n)
    f0_gm = asc.GlobalTensor()
    f0_gm.set_global_buffer(f0, n)
    f1_gm = asc.GlobalTensor()
    f1_gm.set_global_buffer(f1, n)
    fz_gm = asc.GlobalTensor()
    fz_gm.set_global_buffer(fz, n)
    s0_gm = asc.GlobalTensor()
    s0_gm.set_global_buffer(s0, n)
    s1_gm = asc.GlobalTensor()
    s1_gm.set_global_buffer(s1, n)
    sz_gm = asc.GlobalTensor()
    sz_gm.set_global_buffer(sz, n)
    i0_gm = asc.GlobalTensor()
    i0_gm.set_global_buffer(i0, n)
    i1_gm = asc.GlobalTensor()
    i1_gm.set_global_buffer(i1, n)
    bz_gm = asc.GlobalTensor()
    bz_gm.set_global_buffer(bz, n)
    uz_gm = asc.GlobalTensor()
    uz_gm.set_global_buffer(uz, n)
    h0_ub = asc.LocalTensor(h0.dtype, asc.TPosition.VECIN, 0 * n, n)
    h1_ub = asc.LocalTensor(h1.dtype, asc.TPosition.VECIN, 2 * n, n)
    hz_ub = asc.LocalTensor(hz.dtype, asc.TPosition.VECOUT, 4 * n, n)
    f0_ub = asc.LocalTensor(f0.dtype, asc.TPosition.VECIN, 6 * n, n)
    f1_ub = asc.LocalTensor(f1.dtype, asc.TPosition.VECIN, 10 * n, n)
    fz_ub = asc.LocalTensor(fz.dtype, asc.TPosition.VECOUT, 14 * n, n)
    s0_ub = asc.LocalTensor(s0.dtype, asc.TPosition.VECIN, 18 * n, n)
    s1_ub = asc.LocalTensor(s1.dtype, asc.TPosition.VECIN, 20 * n, n)
    sz_ub = asc.LocalTensor(sz.dtype, asc.TPosition.VECOUT, 22 * n, n)
    i0_ub = asc.LocalTensor(i0.dtype, asc.TPosition.VECIN, 24 * n, n)
    i1_ub = asc.LocalTensor(i1.dtype, asc.TPosition.VECIN, 28 * n, n)
    bz_ub = asc.LocalTensor(bz.dtype, asc.TPosition.VECOUT, 32 * n, n)
    uz_ub = asc.LocalTensor(uz.dtype, asc.TPosition.VECOUT, 33 * n, n)
    asc.data_copy(h0_ub, h0_gm, n)
    asc.data_copy(h1_ub, h1_gm, n)
    asc.data_copy(hz_ub, hz_gm, n)
    asc.data_copy(f0_ub, f0_gm, n)
    asc.data_copy(f1_ub, f1_gm, n)
    asc.data_copy(fz_ub, fz_gm, n)
    asc.data_copy(s0_ub, s0_gm, n)
    asc.data_copy(s1_ub, s1_gm, n)
    asc.data_copy(sz_ub, sz_gm, n)
    asc.data_copy(i0_ub, i0_gm, n)
    asc.data_copy(i1_ub, i1_gm, n)
    asc.data_copy(bz_ub, bz_gm, n)
    asc.data_copy(uz_ub, uz_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if deq == 1:
        asc.set_deq_scale(scalar)
    if counter == 1:
        asc.set_mask_count()
    if form == 3:
        if counter == 1:
            if wide == 2:
                asc.set_vector_mask(lo, dtype=asc.float16, mode=asc.MaskMode.COUNTER)
            else:
                asc.set_vector_mask(lo, dtype=asc.float32, mode=asc.MaskMode.COUNTER)
        else:
            if wide == 2:
                asc.set_vector_mask(hi, lo, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
            else:
                asc.set_vector_mask(hi, lo, dtype=asc.float32, mode=asc.MaskMode.NORMAL)
    bp = asc.BinaryRepeatParams(dbs, s0bs, s1bs, drs, s0rs, s1rs)
    up = asc.UnaryRepeatParams(dbs, s0bs, drs, s0rs)
    if alias == 1:
        asc.add_relu(hz_ub, h0_ub, hz_ub, lo, repeat, bp)
    elif alias == 2:
        asc.fused_mul_add(hz_ub, hz_ub, h1_ub, lo, repeat, bp)
    elif alias == 3:
        asc.add_relu_cast(f0_ub.reinterpret_cast(asc.float16), f0_ub, f1_ub, lo, repeat, bp)
    elif op == 0:
        if form == 0:
            asc.add_relu(hz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.add_relu(hz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_relu(hz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_relu(hz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 1:
        if form == 0:
            asc.add_relu(fz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.add_relu(fz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_relu(fz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_relu(fz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 2:
        if form == 0:
            asc.add_relu(sz_ub, s0_ub, s1_ub, lo)
        elif form == 2:
            asc.add_relu(sz_ub, s0_ub, s1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_relu(sz_ub, s0_ub, s1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_relu(sz_ub, s0_ub, s1_ub, lo, repeat, bp)
    elif op == 3:
        if form == 0:
            asc.sub_relu(hz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.sub_relu(hz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.sub_relu(hz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.sub_relu(hz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 4:
        if form == 0:
            asc.sub_relu(fz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.sub_relu(fz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.sub_relu(fz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.sub_relu(fz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 5:
        if form == 0:
            asc.sub_relu(sz_ub, s0_ub, s1_ub, lo)
        elif form == 2:
            asc.sub_relu(sz_ub, s0_ub, s1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.sub_relu(sz_ub, s0_ub, s1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.sub_relu(sz_ub, s0_ub, s1_ub, lo, repeat, bp)
    elif op == 6:
        if form == 0:
            asc.fused_mul_add(hz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.fused_mul_add(hz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.fused_mul_add(hz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.fused_mul_add(hz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 7:
        if form == 0:
            asc.fused_mul_add(fz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.fused_mul_add(fz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.fused_mul_add(fz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.fused_mul_add(fz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 8:
        if form == 0:
            asc.fused_mul_add_relu(hz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.fused_mul_add_relu(hz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.fused_mul_add_relu(hz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.fused_mul_add_relu(hz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 9:
        if form == 0:
            asc.fused_mul_add_relu(fz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.fused_mul_add_relu(fz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.fused_mul_add_relu(fz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.fused_mul_add_relu(fz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 10:
        if form == 0:
            asc.mul_add_dst(hz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.mul_add_dst(hz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.mul_add_dst(hz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.mul_add_dst(hz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 11:
        if form == 0:
            asc.mul_add_dst(fz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.mul_add_dst(fz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.mul_add_dst(fz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.mul_add_dst(fz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 12:
        if form == 0:
            asc.mul_cast(bz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.mul_cast(bz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        else:
            asc.mul_cast(bz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 13:
        if form == 0:
            asc.mul_cast(uz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.mul_cast(uz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        else:
            asc.mul_cast(uz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 14:
        if form == 0:
            asc.add_relu_cast(bz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.add_relu_cast(bz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_relu_cast(bz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_relu_cast(bz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 15:
        if form == 0:
            asc.add_relu_cast(bz_ub, s0_ub, s1_ub, lo)
        elif form == 2:
            asc.add_relu_cast(bz_ub, s0_ub, s1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_relu_cast(bz_ub, s0_ub, s1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_relu_cast(bz_ub, s0_ub, s1_ub, lo, repeat, bp)
    elif op == 16:
        if form == 0:
            asc.add_relu_cast(hz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.add_relu_cast(hz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_relu_cast(hz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_relu_cast(hz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 17:
        if form == 0:
            asc.sub_relu_cast(bz_ub, h0_ub, h1_ub, lo)
        elif form == 2:
            asc.sub_relu_cast(bz_ub, h0_ub, h1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.sub_relu_cast(bz_ub, h0_ub, h1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.sub_relu_cast(bz_ub, h0_ub, h1_ub, lo, repeat, bp)
    elif op == 18:
        if form == 0:
            asc.sub_relu_cast(bz_ub, s0_ub, s1_ub, lo)
        elif form == 2:
            asc.sub_relu_cast(bz_ub, s0_ub, s1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.sub_relu_cast(bz_ub, s0_ub, s1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.sub_relu_cast(bz_ub, s0_ub, s1_ub, lo, repeat, bp)
    elif op == 19:
        if form == 0:
            asc.sub_relu_cast(hz_ub, f0_ub, f1_ub, lo)
        elif form == 2:
            asc.sub_relu_cast(hz_ub, f0_ub, f1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.sub_relu_cast(hz_ub, f0_ub, f1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.sub_relu_cast(hz_ub, f0_ub, f1_ub, lo, repeat, bp)
    elif op == 20:
        if form == 0:
            asc.add_deq_relu(hz_ub, i0_ub, i1_ub, lo)
        elif form == 2:
            asc.add_deq_relu(hz_ub, i0_ub, i1_ub, [lo, hi], repeat, bp)
        elif form == 3:
            asc.add_deq_relu(hz_ub, i0_ub, i1_ub, lo, repeat, bp, is_set_mask=False)
        else:
            asc.add_deq_relu(hz_ub, i0_ub, i1_ub, lo, repeat, bp)
    elif op == 21:
        if form == 0:
            asc.axpy(fz_ub, h0_ub, scalar, lo)
        elif form == 2:
            asc.axpy(fz_ub, h0_ub, scalar, [lo, hi], repeat, up)
        elif form == 3:
            asc.axpy(fz_ub, h0_ub, scalar, lo, repeat, up, is_set_mask=False)
        else:
            asc.axpy(fz_ub, h0_ub, scalar, lo, repeat, up)
    if counter == 1:
        asc.set_mask_norm()
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(hz_gm, hz_ub, n)
    asc.data_copy(fz_gm, fz_ub, n)
    asc.data_copy(sz_gm, sz_ub, n)
    asc.data_copy(bz_gm, bz_ub, n)
    asc.data_copy(uz_gm, uz_ub, n)

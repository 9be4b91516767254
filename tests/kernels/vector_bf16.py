"""Kernel for the bfloat16_t forms of Cast, Duplicate and Copy (Atlas A2/A3 lists bfloat16_t for them).

pyasc 1.1.1 has no bfloat16 dtype, so the bfloat16_t tensors are written as half ones (`hb`, `zb`)
and test_vector_bf16.py turns `half` into `bfloat16_t` in the generated Ascend C before building it;
nothing else in this kernel is half. Their bits travel as uint16 (xb, zb's GM tensors, copied
through uint16 views of the same UB bytes). One block, one build. Runtime scalars:
  op     0 Cast float -> bf16 (xf -> zb); 1 Cast bf16 -> float (xb -> zf); 2 Cast bf16 -> int32 (xb -> zi);
         3 Duplicate(zb, scalar); 4 Copy(zb, hb) (bit mask)
  mode   RoundMode of the Casts; form 0 count (count = lo), 1 continuous mask lo, 2 bit mask [lo, hi]
"""
import asc


@asc.jit
def bf16_kernel(xf: asc.GlobalAddress, xb: asc.GlobalAddress, zf: asc.GlobalAddress, zi: asc.GlobalAddress,
                zb: asc.GlobalAddress, n: asc.ConstExpr[int], op: int, mode: int, form: int, lo: int, hi: int,
                repeat: int, dbs: int, sbs: int, drs: int, srs: int, scalar: float):
    xf_gm = asc.GlobalTensor()
    xb_gm = asc.GlobalTensor()
    zf_gm = asc.GlobalTensor()
    zi_gm = asc.GlobalTensor()
    zb_gm = asc.GlobalTensor()
    xf_gm.set_global_buffer(xf, n)
    xb_gm.set_global_buffer(xb, n)
    zf_gm.set_global_buffer(zf, n)
    zi_gm.set_global_buffer(zi, n)
    zb_gm.set_global_buffer(zb, n)
    xf_ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)
    xb_ub = asc.LocalTensor(asc.uint16, asc.TPosition.VECIN, 4 * n, n)
    hb = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 4 * n, n)
    zf_ub = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 6 * n, n)
    zi_ub = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 10 * n, n)
    zb_ub = asc.LocalTensor(asc.uint16, asc.TPosition.VECOUT, 14 * n, n)
    zh = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 14 * n, n)
    asc.data_copy(xf_ub, xf_gm, n)
    asc.data_copy(xb_ub, xb_gm, n)
    asc.data_copy(zf_ub, zf_gm, n)
    asc.data_copy(zi_ub, zi_gm, n)
    asc.data_copy(zb_ub, zb_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    up = asc.UnaryRepeatParams(dbs, sbs, drs, srs)
    if op == 0:
        if mode == 0:
            asc.cast(zh, xf_ub, asc.RoundMode.CAST_NONE, lo)
        elif mode == 1:
            if form == 0:
                asc.cast(zh, xf_ub, asc.RoundMode.CAST_RINT, lo)
            elif form == 2:
                asc.cast(zh, xf_ub, asc.RoundMode.CAST_RINT, [lo, hi], repeat, up)
            else:
                asc.cast(zh, xf_ub, asc.RoundMode.CAST_RINT, lo, repeat, up)
        elif mode == 2:
            asc.cast(zh, xf_ub, asc.RoundMode.CAST_FLOOR, lo)
        elif mode == 3:
            asc.cast(zh, xf_ub, asc.RoundMode.CAST_CEIL, lo)
        elif mode == 4:
            asc.cast(zh, xf_ub, asc.RoundMode.CAST_ROUND, lo)
        else:
            asc.cast(zh, xf_ub, asc.RoundMode.CAST_TRUNC, lo)
    elif op == 1:
        if form == 0:
            asc.cast(zf_ub, hb, asc.RoundMode.CAST_NONE, lo)
        else:
            asc.cast(zf_ub, hb, asc.RoundMode.CAST_NONE, lo, repeat, up)
    elif op == 2:
        if mode == 1:
            asc.cast(zi_ub, hb, asc.RoundMode.CAST_RINT, lo)
        elif mode == 2:
            asc.cast(zi_ub, hb, asc.RoundMode.CAST_FLOOR, lo)
        elif mode == 3:
            asc.cast(zi_ub, hb, asc.RoundMode.CAST_CEIL, lo)
        elif mode == 4:
            asc.cast(zi_ub, hb, asc.RoundMode.CAST_ROUND, lo)
        else:
            asc.cast(zi_ub, hb, asc.RoundMode.CAST_TRUNC, lo)
    elif op == 3:
        if form == 0:
            asc.duplicate(zh, scalar, lo)
        else:
            asc.duplicate(zh, scalar, lo, repeat, dbs, drs)
    else:
        asc.copy(zh, hb, [lo, hi], repeat, asc.CopyRepeatParams(dbs, sbs, drs, srs))  # pyasc: a runtime mask is a list
    asc.reset_mask()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zf_gm, zf_ub, n)
    asc.data_copy(zi_gm, zi_ub, n)
    asc.data_copy(zb_gm, zb_ub, n)

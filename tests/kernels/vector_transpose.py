"""Kernel for Transpose: the 16 x 16 form and the TransposeParamsExt form. One build per dtype.

x (copied to `a`) is the source, z (`b`) the destination, tz the sharedTmpBuffer (uint8_t, tmp_len
bytes); all three are read first and written back. Runtime scalars:
  t      TransposeType value of the TransposeParamsExt call (0 NONE, 7 ND2ND_ONLY, 10 ND2ND_B16,
         11 NCHW2NHWC, 12 NHWC2NCHW); nn, c, h, w its sizes
  alias  0: Transpose(b, a, tmp, params); 1: Transpose(a, a) (16 x 16, in place); 2: Transpose(b, a)
         (16 x 16); 3: Transpose(a, a, tmp, params); 4: Transpose(a[16:], a, tmp, params);
         5: Transpose(b, a, a's bytes, params)
The 16 x 16 form is compiled for 16-bit dtypes only.
"""
import asc


@asc.jit
def transpose_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, tz: asc.GlobalAddress, n: asc.ConstExpr[int],
                     tmp_max: asc.ConstExpr[int], t: int, nn: int, c: int, h: int, w: int, tmp_len: int, alias: int):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    t_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    t_gm.set_global_buffer(tz, tmp_max)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, n * 4, n)
    tmp_all = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, n * 8, tmp_max)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, n * 8, tmp_len)
    asc.data_copy(a, x_gm, n)
    asc.data_copy(b, z_gm, n)
    asc.data_copy(tmp_all, t_gm, tmp_max)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if alias == 1:
        if x.dtype.sizeof() == 2:
            asc.transpose(a, a)
    elif alias == 2:
        if x.dtype.sizeof() == 2:
            asc.transpose(b, a)
    elif alias == 3:
        asc.transpose(a, a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_ND2ND_B16))
    elif alias == 4:
        asc.transpose(a[16:], a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_NCHW2NHWC))
    elif alias == 5:
        asc.transpose(b, a, a.reinterpret_cast(asc.uint8),
                      asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_NHWC2NCHW))
    elif t == 0:
        asc.transpose(b, a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_TYPE_NONE))
    elif t == 7:
        asc.transpose(b, a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_ND2ND_ONLY))
    elif t == 10:
        asc.transpose(b, a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_ND2ND_B16))
    elif t == 11:
        asc.transpose(b, a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_NCHW2NHWC))
    else:
        asc.transpose(b, a, tmp, asc.TransposeParamsExt(nn, c, h, w, asc.TransposeType.TRANSPOSE_NHWC2NCHW))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(x_gm, a, n)
    asc.data_copy(z_gm, b, n)
    asc.data_copy(t_gm, tmp_all, tmp_max)

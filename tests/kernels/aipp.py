"""SetAippFunctions as pyasc 1.1.1 emits it: default AippParams<int8_t or half> (pyasc drops the settings)."""
import asc


@asc.jit
def aipp_xrgb_kernel(x: asc.GlobalAddress, offset: int):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    asc.set_aipp_functions(x_gm[offset:], asc.AippInputFormat.XRGB8888_U8, asc.AippParams(dtype=asc.int8))


@asc.jit
def aipp_yuv420sp_one_plane_kernel(x: asc.GlobalAddress):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    asc.set_aipp_functions(x_gm, asc.AippInputFormat.YUV420SP_U8, asc.AippParams(dtype=asc.int8))

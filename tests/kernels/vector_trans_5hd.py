"""Kernels for TransDataTo5HD on a 32 KiB data region at UB offset 0 (x in, z out: the whole region).

trans_5hd_addr_kernel: the address-tensor form; `offsets` holds the 16 dst then the 16 src element
offsets into the region, whose GetPhyAddr values fill two LocalTensor<uint64_t> after the region
(pyasc takes the operands' dtype from them); uint_list 1: the same addresses as two lists of 16
uint64_t values instead (the uint64_t array form). trans_5hd_list_kernel: the LocalTensor-list form
(half), dst tensors t[d + k * dstep] and src tensors t[s + k * sstep] of t, the region's first `size`
elements.
The params are runtime values: one build per dtype.
"""
import asc

REGION = 32768  # bytes


@asc.jit
def trans_5hd_addr_kernel(x: asc.GlobalAddress, offsets: asc.GlobalAddress, z: asc.GlobalAddress,
                          n: asc.ConstExpr[int], dst_high: int, src_high: int, repeat: int, dst_stride: int,
                          src_stride: int, uint_list: int):
    x_gm = asc.GlobalTensor()
    o_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    o_gm.set_global_buffer(offsets, 32)
    z_gm.set_global_buffer(z, n)
    data = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    dst_addrs = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, REGION, 16)
    src_addrs = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, REGION + 128, 16)
    asc.data_copy(data, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(16):
        dst_addrs.set_value(i, data.get_phy_addr(o_gm.get_value(i)))
        src_addrs.set_value(i, data.get_phy_addr(o_gm.get_value(16 + i)))
    params = asc.TransDataTo5HDParams(dst_high == 1, src_high == 1, repeat, dst_stride, src_stride)
    if uint_list == 1:
        dst_list = [
            data.get_phy_addr(o_gm.get_value(0)), data.get_phy_addr(o_gm.get_value(1)),
            data.get_phy_addr(o_gm.get_value(2)), data.get_phy_addr(o_gm.get_value(3)),
            data.get_phy_addr(o_gm.get_value(4)), data.get_phy_addr(o_gm.get_value(5)),
            data.get_phy_addr(o_gm.get_value(6)), data.get_phy_addr(o_gm.get_value(7)),
            data.get_phy_addr(o_gm.get_value(8)), data.get_phy_addr(o_gm.get_value(9)),
            data.get_phy_addr(o_gm.get_value(10)), data.get_phy_addr(o_gm.get_value(11)),
            data.get_phy_addr(o_gm.get_value(12)), data.get_phy_addr(o_gm.get_value(13)),
            data.get_phy_addr(o_gm.get_value(14)), data.get_phy_addr(o_gm.get_value(15)),
        ]
        src_list = [
            data.get_phy_addr(o_gm.get_value(16)), data.get_phy_addr(o_gm.get_value(17)),
            data.get_phy_addr(o_gm.get_value(18)), data.get_phy_addr(o_gm.get_value(19)),
            data.get_phy_addr(o_gm.get_value(20)), data.get_phy_addr(o_gm.get_value(21)),
            data.get_phy_addr(o_gm.get_value(22)), data.get_phy_addr(o_gm.get_value(23)),
            data.get_phy_addr(o_gm.get_value(24)), data.get_phy_addr(o_gm.get_value(25)),
            data.get_phy_addr(o_gm.get_value(26)), data.get_phy_addr(o_gm.get_value(27)),
            data.get_phy_addr(o_gm.get_value(28)), data.get_phy_addr(o_gm.get_value(29)),
            data.get_phy_addr(o_gm.get_value(30)), data.get_phy_addr(o_gm.get_value(31)),
        ]
        asc.trans_data_to_5hd(dst_list, src_list, params)
    else:
        asc.trans_data_to_5hd(dst_addrs, src_addrs, params)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, data, n)


@asc.jit
def trans_5hd_list_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int], d: int, dstep: int,
                          s: int, sstep: int, size: int, repeat: int, dst_stride: int, src_stride: int):
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    data = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    asc.data_copy(data, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    t = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, size)
    dst_list = [
        t[d + dstep * 0], t[d + dstep * 1], t[d + dstep * 2], t[d + dstep * 3],
        t[d + dstep * 4], t[d + dstep * 5], t[d + dstep * 6], t[d + dstep * 7],
        t[d + dstep * 8], t[d + dstep * 9], t[d + dstep * 10], t[d + dstep * 11],
        t[d + dstep * 12], t[d + dstep * 13], t[d + dstep * 14], t[d + dstep * 15],
    ]
    src_list = [
        t[s + sstep * 0], t[s + sstep * 1], t[s + sstep * 2], t[s + sstep * 3],
        t[s + sstep * 4], t[s + sstep * 5], t[s + sstep * 6], t[s + sstep * 7],
        t[s + sstep * 8], t[s + sstep * 9], t[s + sstep * 10], t[s + sstep * 11],
        t[s + sstep * 12], t[s + sstep * 13], t[s + sstep * 14], t[s + sstep * 15],
    ]
    params = asc.TransDataTo5HDParams(False, False, repeat, dst_stride, src_stride)
    asc.trans_data_to_5hd(dst_list, src_list, params)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, data, n)

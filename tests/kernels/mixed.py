"""Mixed launches (an AIC and one or two AIVs per block) and their cross-core flags."""
import asc
import asc.runtime.config as config


@asc.jit
def _record_core(z: asc.GlobalTensor, blocks: int):
    """Each core writes GetBlockIdx, GetSubBlockIdx, GetSubBlockNum and GetTaskRatio at 4 * its
    slot: AIVs at slots [0, 2 * blocks) by GetBlockIdx, AICs at 2 * blocks + GetBlockIdx."""
    slot = asc.get_block_idx()
    if asc.ascend_is_aic():
        slot = 2 * blocks + asc.get_block_idx()
    z.set_value(4 * slot, asc.get_block_idx())
    z.set_value(4 * slot + 1, asc.get_sub_block_idx())
    z.set_value(4 * slot + 2, asc.get_sub_block_num())
    z.set_value(4 * slot + 3, asc.get_task_ratio())


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def indices_1_2_kernel(z: asc.GlobalAddress, blocks: int):
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    _record_core(z_gm, blocks)


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_1)
def indices_1_1_kernel(z: asc.GlobalAddress, blocks: int):
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    _record_core(z_gm, blocks)


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def handshake_kernel(z: asc.GlobalAddress, rounds: int):
    """Mode 2 both ways, `rounds` times: the AIC publishes a value, each AIV adds its own after the
    AIC's flag, and the AIC sums them after both AIVs' flag. Without the flags it reads stale values."""
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    block = asc.get_block_idx() // asc.get_task_ratio()
    base = block * 4
    for r in range(rounds):
        if asc.ascend_is_aic():
            z_gm.set_value(base, r * 10)
            asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE3)
            asc.cross_core_wait_flag(2, 2, asc.PipeID.PIPE_MTE3)
            z_gm.set_value(base + 3, z_gm.get_value(base + 3) + z_gm.get_value(base + 1) + z_gm.get_value(base + 2))
        if asc.ascend_is_aiv():
            asc.cross_core_wait_flag(1, 2, asc.PipeID.PIPE_MTE3)
            sub = asc.get_sub_block_idx()
            z_gm.set_value(base + 1 + sub, z_gm.get_value(base) + sub + 1)
            asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_MTE3)


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def aiv_pair_kernel(z: asc.GlobalAddress):
    """Mode 1: AIV 1 reads what AIV 0 wrote once both have set the flag."""
    z_gm = asc.GlobalTensor()
    z_gm.set_global_buffer(z)
    if asc.ascend_is_aiv():
        if asc.get_sub_block_idx() == 0:
            z_gm.set_value(0, 42)
        asc.cross_core_set_flag(5, 1, asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(5, 1, asc.PipeID.PIPE_MTE3)
        if asc.get_sub_block_idx() == 1:
            z_gm.set_value(1, z_gm.get_value(0) + 1)


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def never_set_kernel(z: asc.GlobalAddress):
    """The AIVs wait for a flag their AIC never sets: the device hangs."""
    if asc.ascend_is_aiv():
        asc.cross_core_wait_flag(4, 2, asc.PipeID.PIPE_MTE3)


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def mode2_alone_kernel(z: asc.GlobalAddress):
    asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE3)


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def vector_on_aic_kernel(x: asc.GlobalAddress):
    """A DataCopy into the Unified Buffer on every core, the AIC included."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    local = buf.get(x.dtype)
    asc.data_copy(local, x_gm, count=64)


@asc.jit
def cube_on_aiv_kernel(x: asc.GlobalAddress):
    """A kernel without a Matmul object is AIV_ONLY for pyasc: its L1 DataCopy runs on a vector core."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    pipe = asc.TPipe()
    que = asc.TQue(asc.TPosition.A1, 1)
    pipe.init_buffer(que=que, num=1, len=512)
    local = que.alloc_tensor(x.dtype)
    asc.data_copy(local, x_gm, count=256)

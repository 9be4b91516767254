"""The launch model of each kernel type (GetBlockIdx.md, GetTaskRatio.md): a mixed block runs an AIC
and one or two AIVs at once, each with its own indices, synchronised by cross-core flags
(CrossCoreSetFlag(ISASI).md); a wait nothing can satisfy is a fault, not a hang."""
import re

import numpy as np
import pytest

import ascrun
from conftest import unsited
import mixed
from ascrun.args import launch_args
from ascrun.compiler import frontend

pytestmark = pytest.mark.kernel


def indices(kernel, blocks):
    z = np.full(4 * 3 * blocks, -1, np.int32)
    ascrun.run_local(kernel, blocks, z, blocks)
    return z.reshape(-1, 4).tolist()


def test_kernel_type_is_pyascs_choice():
    kernel_bundle, host = launch_args(mixed.indices_1_1_kernel, (np.zeros(4, np.int32), 1))
    assert frontend.run(kernel_bundle, host.specs).kernel_type == "MIX_AIC_1_1"


def test_mix_1_2_indices():
    # AIVs: GetBlockIdx 2b + sub, GetSubBlockIdx sub, GetSubBlockNum 2, GetTaskRatio 2; AICs: b, 0, 1, 1
    aivs = [[2 * b + s, s, 2, 2] for b in range(3) for s in range(2)]
    assert indices(mixed.indices_1_2_kernel, 3) == aivs + [[b, 0, 1, 1] for b in range(3)]


def test_mix_1_1_indices():
    blocks = 2
    got = indices(mixed.indices_1_1_kernel, blocks)
    assert got[:blocks] == [[b, 0, 1, 1] for b in range(blocks)]
    assert got[blocks:2 * blocks] == [[-1] * 4] * blocks  # one AIV per block: no second half
    assert got[2 * blocks:] == [[b, 0, 1, 1] for b in range(blocks)]


def test_mode_2_orders_the_aic_and_its_aivs_both_ways():
    z = np.zeros(8, np.int32)
    ascrun.run_local(mixed.handshake_kernel, 2, z, 3)
    # round r: the AIC publishes 10r, AIV s writes 10r + s + 1, the AIC adds both: sum over r of 20r + 3
    assert z.tolist() == [20, 21, 22, 69] * 2


def test_mode_1_orders_the_two_aivs():
    z = np.zeros(4, np.int32)
    ascrun.run_local(mixed.aiv_pair_kernel, 1, z)
    assert z.tolist() == [42, 43, 0, 0]


def test_a_wait_never_set_is_a_deadlock_fault():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(mixed.never_set_kernel, 1, np.zeros(4, np.int32))
    waiter, other = re.fullmatch(
        r"AIV ([01]): CrossCoreWaitFlag: flag 4 is never set: AIC 0 has ended, AIV ([01]) waits for flag 4 "
        r"\(a deadlock: the device would hang here until the launch times out\)", unsited(str(e.value))).groups()
    assert {waiter, other} == {"0", "1"}


def test_mode_2_needs_both_core_types():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(mixed.mode2_alone_kernel, 1, np.zeros(4, np.int32))
    message = unsited(str(e.value))
    assert message == ("block 0: CrossCoreSetFlag: mode 2 syncs a block's AIC with its AIVs, but this kernel's "
                       "blocks run only AIV cores (compile it as MIX_AIC_1_1 or MIX_AIC_1_2)")


def test_the_cube_core_has_no_unified_buffer():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(mixed.vector_on_aic_kernel, 1, np.zeros(64, np.float32))
    message = unsited(str(e.value))
    assert message == ("AIC 0: DataCopy(GM->UB): a Unified Buffer operand on the cube core (AIC), which has no "
                       "Unified Buffer: run vector code on the AIVs (`if asc.ascend_is_aiv():`)")


def test_the_vector_core_has_no_cube_memories():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(mixed.cube_on_aiv_kernel, 1, np.zeros(256, np.float16))
    assert unsited(str(e.value)) == (
        "block 0: DataCopy(GM->L1): an L1/L0 operand on a vector core (AIV), which has no cube memories: cube "
        "instructions run on the AIC of an AIC_ONLY or mixed kernel (pyasc makes a kernel without a Matmul object "
        "AIV_ONLY: give it @asc.jit(kernel_type=config.KernelType.AIC_ONLY))")

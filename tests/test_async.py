"""Many launches in flight at once: AsyncClient (asyncio) and Client.submit handles (fan-out, no threads)."""
import asyncio

import numpy as np
import pytest

import ascrun
import ops
from ascrun_cli import PYASC_STYLE
from conftest import PAST_THE_END, load_module, unsited

pytestmark = pytest.mark.service

vadd = load_module(PYASC_STYLE / "test_vadd.py", "pyasc_style_vadd").vadd_kernel
TILING = (512, 1, 64, 8)  # BLOCK_LENGTH, BUFFER_NUM, TILE_LENGTH, TILE_NUM for 8192 elements on 16 cores


def _batches(count: int):
    rng = np.random.default_rng(count)
    return [(rng.random(8192, dtype=np.float32), rng.random(8192, dtype=np.float32), np.zeros(8192, np.float32))
            for _ in range(count)]


def test_async_client_runs_many_launches_at_once(service):
    batches = _batches(8)

    async def main():
        async with ascrun.AsyncClient(service.url) as client:
            launches = [client.launch(vadd, 16, x, y, z, *TILING) for x, y, z in batches]
            return await asyncio.gather(*launches)

    results = asyncio.run(main())
    for (x, y, z), result in zip(batches, results):
        np.testing.assert_array_equal(z, x + y)
        np.testing.assert_array_equal(result.outputs["z"], x + y)
    assert len({r.job_id for r in results}) == 8
    assert "__global__ __aicore__ void vadd_kernel(" in results[0].source


def test_async_failure_raises_the_remote_error(service):
    x = np.ones(1000, np.float32)

    async def main():
        async with ascrun.AsyncClient(service.url) as client:
            handle = await client.submit(vadd, 16, x, x, np.zeros_like(x), 63, 1, 8, 8)
            assert len(handle.id) == 32
            await handle.result(timeout=120)

    with pytest.raises(ascrun.KernelError) as failure:
        asyncio.run(main())
    assert failure.value.kind == "runtime_error"
    message = unsited(str(failure.value))
    assert message == ("block 15: DataCopy(GM->UB): elements [993, 1001) of tensor argument 'x' are "
              "outside its 1000 elements" + PAST_THE_END)


def test_submit_fans_out_and_result_gathers(client):
    batches = _batches(6)
    handles = [client.submit(vadd, 16, x, y, z, *TILING) for x, y, z in batches]
    assert all(not z.any() for _, _, z in batches)  # submit does not wait for the runs
    results = [handle.result(timeout=120) for handle in handles]
    for (x, y, z), handle, result in zip(batches, handles, results):
        np.testing.assert_array_equal(z, x + y)
        assert handle.status == "finished" and result.job_id == handle.id
        assert handle.result() is result  # gathered once


def test_result_timeout_leaves_the_job_running_until_its_own_timeout(client):
    x = np.ones(64, np.float32)
    handle = client.submit(ops.spin_kernel, 1, x, np.zeros_like(x), 2**31 - 1, timeout=2)
    with pytest.raises(ascrun.KernelError) as waited:
        handle.result(timeout=0.5)
    assert waited.value.kind == "timeout"
    assert str(waited.value) == f"job {handle.id} did not end within 0.5 s (status {handle.status})"
    with pytest.raises(ascrun.KernelError) as stopped:
        handle.result()
    assert stopped.value.kind == "timeout"
    assert str(stopped.value) == "the job ran longer than its 2 s timeout and was stopped"

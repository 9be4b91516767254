"""The job's SOC reaches pyasc's Compiler and the frontend cache's key: a job for another SOC is
compiled for it (not served the Ascend C another SOC's job left in the cache), and a SOC the
installed pyasc does not know is a bad request, not c220 code built for it."""
import sys

import numpy as np
import pytest

import ascrun
import ops
from conftest import Service, start_redis

pytestmark = pytest.mark.service

OTHER_SOC = "Ascend910_9391"  # a SOC pyasc 1.1.1 and its nightly both compile for, not frontend.DEFAULT_SOC
UNKNOWN_SOC = "Ascend999Z"


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Its own Redis and one worker serving both SOCs (a cpu worker serves whatever SOC it is told)."""
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    svc = Service(url)
    svc.stack.start([sys.executable, "-m", "ascrun.cli", "worker", "--soc", OTHER_SOC, "--soc", UNKNOWN_SOC], svc.env)
    try:
        svc.wait_for_workers(1)
        yield svc
    finally:
        svc.stop()
        proc.terminate()
        proc.wait(10)


def _launch(client, soc):
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    result = client.launch(ops.spin_kernel, 1, x, z, 1, soc=soc)
    np.testing.assert_array_equal(z, x + 1)
    return result.cache["frontend"]


def test_a_job_for_another_soc_is_compiled_for_it(pool):
    with ascrun.Client(pool.url, retries=0) as client:
        assert _launch(client, None) == "miss"
        assert _launch(client, None) == "hit"
        assert _launch(client, OTHER_SOC) == "miss"  # the default SOC's Ascend C is not this SOC's
        assert _launch(client, OTHER_SOC) == "hit"


def test_a_soc_pyasc_does_not_know_is_a_bad_request(pool):
    with ascrun.Client(pool.url, retries=0) as client, pytest.raises(ascrun.KernelError) as e:
        _launch(client, UNKNOWN_SOC)
    assert e.value.kind == "bad_request"
    assert f"unknown SOC '{UNKNOWN_SOC}'" in str(e.value) and OTHER_SOC in str(e.value)

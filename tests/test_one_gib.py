"""A job's tensors at the largest size the defaults allow, on a stack of its own (a file of its own,
so that the suite's processes run it beside the rest of the API's limits)."""
import os

import numpy as np
import pytest

import ascrun
import ops
from conftest import own_service

pytestmark = pytest.mark.service

GIB = 1 << 30


@pytest.mark.slow
@pytest.mark.skipif(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") < 16 * GIB,
                    reason="a 1 GiB round trip needs about 10 GiB of memory (client, Redis and worker copies)")
def test_one_gib_tensor_round_trip(tmp_path):
    """A job's tensors as large as max_job_tensor_bytes allows by default (1 GiB): z uploaded and
    back as a 1 GiB output, but for x's 256 bytes. On a stack of its own with the default job
    heartbeat TTL (5 s) and a Redis that keeps nothing on disk: with the tests' 1 s TTL, a Redis
    writing 2 GiB to its append-only file stalled a heartbeat past it now and then."""
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(GIB // 4 - 64, np.float32)
    z[-1] = 5  # not all zeros: uploaded
    with own_service(tmp_path, {"ASCRUN_JOB_HEARTBEAT": "1", "ASCRUN_JOB_HEARTBEAT_TTL": "5"}, workers=1,
                     persist=False) as svc, ascrun.Client(svc.url) as client:
        client.launch(ops.spin_kernel, 1, x, z, 1)
    np.testing.assert_array_equal(z[:64], np.arange(64) + 1)
    assert not z[64:-1].any() and z[-1] == 5

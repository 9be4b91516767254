"""Issue 26: the Ascend C APIs pyasc's nightly (asc.experimental.asctile) emits that the cpu runtime
lacked: SoftMax with a sharedTmpBuffer and no sum/max (Atlas A2/A3 and Ascend 950), and for Ascend 950
(__NPU_ARCH__ 3510) Duplicate from a LocalTensor, bfloat16 CompareScalar / Muls / Select,
LoadData2DParamsV2 and Fixpipe L0C->L1 with FixpipeParamsC310. Each kernel is one asctile writes
(tests/kernels/c310_api.py); outputs against numpy, refusals against their messages. On pyasc 1.1.1,
which has no asctile, these skip."""
import re

import numpy as np
import pytest

import ascrun
from ascrun.args import launch_args
from ascrun.compiler import frontend, pipeline
from conftest import unsited
from test_asctile import needs_asctile

pytestmark = [pytest.mark.kernel, needs_asctile]


@pytest.fixture(scope="module")
def kernels():
    import c310_api
    return c310_api


def softmax_ref(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


# ---- SoftMax(dst, src, sharedTmpBuffer, tiling, shapeInfo): Atlas A2/A3 ----------------------------

@pytest.mark.parametrize("m, k", [(8, 64), (3, 200)])
def test_softmax_with_a_shared_tmp_buffer_runs_on_910B(kernels, m, k):
    x = ((np.random.default_rng(1).random((m, k)) - 0.5) * 20).astype(np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(kernels.softmax_rows, 1, x, z, m, k)
    assert re.search(r"AscendC::SoftMax<float, 0, 0>\(\w+, \w+, \w+, \w+, \w+\)", result.source)
    np.testing.assert_allclose(z, softmax_ref(x), rtol=2e-6, atol=1e-7)

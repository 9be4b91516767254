"""The pyasc port (tests/pyasc_port) through the pool: cases of every ported file launched as jobs
on the service (the `service` fixture: real Redis, API server and RQ workers), with pyasc's launch
syntax redirected as the pytest plugin does, and the cases' own asserts on the outputs written back.
The whole port through the pool: `python tests/pyasc_port/through_the_pool.py`."""
import importlib

import pytest

import ascrun
from ascrun.compat.script import RemoteLaunches, install

pytestmark = pytest.mark.service


def port_case(module_name: str, index: int = 0):
    """Case `index` of a ported module's CASES, or its one test without parameters."""
    module = importlib.import_module(f"pyasc_port.{module_name}")
    [test] = [getattr(module, name) for name in dir(module) if name.startswith("test_")]
    cases = getattr(module, "CASES", None)
    if cases is None:
        return pytest.param(test, (), id=module_name)
    return pytest.param(test, cases[index].values, id=f"{module_name}[{index}]")


# One case per kind of kernel (the whole port through the pool: tests/pyasc_port/through_the_pool.py).
CASES = [
    port_case("test_vadd", 0),            # 16 blocks of 512-element tiles over 1000 floats: past the end (warn)
    port_case("test_vadd_bits", 0),       # float32 with mask [2^64-1, 2^64-1]: mask[1] ignored
    port_case("test_vadd_bits", 3),       # float16: the 128-lane mask reads past y into z (warn)
    port_case("test_vadd_l0", 5),
    port_case("test_vadd_sw", 0),         # LocalTensor user tags
    port_case("test_vadd_tiling", 0),
    port_case("test_vadds", 3),
    port_case("test_vsqrt", 0),
    port_case("test_duplicate", 3),
    port_case("test_axpy", 3),
    port_case("test_copy", 1),            # one float: Copy's repeats run past both 32-byte buffers (warn)
    port_case("test_transpose", 0),
    port_case("test_transpose_ext", 1),
    port_case("test_kernels_vadd"),
    port_case("test_insert_sync_vadd"),
    port_case("test_insert_sync_vadd_scalar"),
    port_case("test_kernels_matmul"),     # mixed: 16 blocks of an AIC and two AIVs, Matmul into the UB
    port_case("test_trans_5hd_addr_tensor", 1),  # int16
    port_case("test_insert_sync_softmax"),        # named launch arguments (tile_num=8, block_num=16)
]


@pytest.fixture(scope="module")
def pool_launches(service):
    with ascrun.Client(service.url) as client:
        launches = RemoteLaunches(client, target="cpu", bounds="warn", hazards="fault")
        uninstall = install(launches)
        yield launches
        uninstall()


@pytest.mark.parametrize("test, args", CASES)
def test_port_case_through_the_pool(pool_launches, test, args):
    first = len(pool_launches.launches)
    test(*args)
    launched = pool_launches.launches[first:]
    assert launched and all(launch.job_id and launch.target == "cpu" and launch.status == "finished"
                            for launch in launched)

"""A few of the ports through the pool (Client.launch on a worker serving the SOC), on each SOC:
the port's own test function with its launches sent to the service, its KNOWN entries applied."""
import inspect

import pytest

pytestmark = pytest.mark.service
pytest.importorskip("asc.experimental.asctile", reason="asctile comes with pyasc's nightly (pyasc-dev)")

from . import test_matmul_mnblock, test_vadd, test_vmuladd  # noqa: E402
from .conftest import runner  # noqa: E402

CASES = [
    (test_vadd.test_vadd, {}),
    (test_vmuladd.test_vmuladd, {}),  # fused on the Ascend950
    (test_matmul_mnblock.test_matmul_mnblock, dict(m=32, k=16, n=32, core_num=2, m_tile=16, n_tile=16,
                                                   n_tiles_per_block=1)),
]


@pytest.mark.parametrize("port, params", CASES, ids=[port.__name__ for port, _ in CASES])
def test_ports_through_the_pool(client, soc, port, params):
    module = inspect.getmodule(port).__name__.rsplit(".", 1)[-1]
    case = f"{module}.py::{port.__name__}" + (f"[{'-'.join(map(str, params.values()))}]" if params else "")
    run = runner(case, soc, lambda kernel, core_num, *args: client.launch(kernel, core_num, *args, soc=soc))
    port(run=run, **({"soc": soc} if "soc" in inspect.signature(port).parameters else {}), **params)

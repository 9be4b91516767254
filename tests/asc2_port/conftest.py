"""Ports of compiler-team-ru/pyasc's asc2 tests (python/test/asc2) to asctile (pyasc's nightly:
asc.experimental.asctile), our own code: one test file per upstream file (kernels/test_X.py ->
test_X.py, operations/test_X.py -> test_ops_X.py). pyasc's files are not copied (their licence);
test_coverage.py checks a checkout's list against these ports.

The mapping: asc2.load(t, shape, offsets=o, location=L) -> asctile.copy_in(t, o, shape, L);
asc2.store -> asctile.copy_out; asc2.copy(src, shape, offsets=o, location=L) -> asctile.copy(src, o,
shape, L); asc2.TileLocation -> asctile.TensorLocation; asc2.tensor -> asctile.global_tensor;
asc2.matmul_acc(a, b, acc) -> asctile.matmul_acc(acc, a, b); range(..., parallel=True) has no
asctile form (asctile.range keeps unroll_factor).

Each case runs in process (ascrun.run_local) on each SOC of SOCS and is checked against numpy, or
torch where the original uses it. A case the cpu target's runtime cannot build yet for lack of an
Ascend C API is listed in GAPS with the first line of its build error: it runs, and is skipped
naming the API only when it fails with exactly that line; a gap that closes fails, so that the
entry goes."""
import inspect

import pytest

import ascrun

SOCS = ("Ascend910B1", "Ascend950PR_9599")
DEFAULT_SOC = "Ascend910B1"
RUN_LOCAL_TAKES_SOC = "soc" in inspect.signature(ascrun.run_local).parameters

# (test name as pytest ids it, without the soc part; soc) -> (missing API, the build error's first line)
GAPS: dict = {}


@pytest.fixture(params=SOCS)
def soc(request):
    if request.param != DEFAULT_SOC and not RUN_LOCAL_TAKES_SOC:
        pytest.skip(f"ascrun.run_local has no soc= here: {request.param} on the cpu target is not merged yet")
    return request.param


def _case(request) -> str:
    """The test's name and parameters without the soc part, e.g. test_gelu[True]."""
    name = request.node.originalname
    ids = request.node.callspec.id.split("-") if hasattr(request.node, "callspec") else []
    ids = [i for i in ids if i not in SOCS]
    return f"{name}[{'-'.join(ids)}]" if ids else name


@pytest.fixture
def run(request, soc):
    """run(kernel, core_num, *args): ascrun.run_local on this case's SOC (faults on any access past a
    tensor, warns on races between pipes), the case's GAPS entry applied."""
    gap = GAPS.get((_case(request), soc))

    def run_kernel(kernel, core_num, *args):
        options = {"soc": soc} if RUN_LOCAL_TAKES_SOC else {}
        try:
            result = ascrun.run_local(kernel, core_num, *args, **options)
        except ascrun.KernelError as e:
            first_line = str(e).splitlines()[0] if str(e) else ""
            if gap and gap[1] in first_line:
                pytest.skip(f"the cpu target's runtime lacks {gap[0]} on {soc}: {first_line}")
            raise
        if gap:
            pytest.fail(f"GAPS lists {_case(request)} on {soc} as lacking {gap[0]}, but it built: remove the entry")
        return result

    return run_kernel

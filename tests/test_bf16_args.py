"""bfloat16 tensors (torch.bfloat16, ml_dtypes.bfloat16) as launch arguments and outputs, end to end:
the client holds them as their bits (uint16) under the name bfloat16, the API and the worker carry
that name, the cpu runner hands the bits to the kernel's bfloat16_t parameters, and the outputs come
back into the caller's own tensor. The kernel (kernels/bf16_add.py) needs pyasc's nightly, which has
a bfloat16 dtype (`make test-nightly` runs these); on pyasc 1.1.1 a bfloat16 tensor is refused
saying so, in process and through the service."""
import ml_dtypes
import numpy as np
import pytest

import ascrun
from ascrun.args import prepare
from ascrun.compiler import frontend
from ascrun.compiler.frontend import ArgSpec
from ascrun.server.models import TensorArg

pytestmark = pytest.mark.kernel

N = 2048
HAS_BF16 = frontend._has_bfloat16()
needs_bf16 = pytest.mark.skipif(not HAS_BF16, reason=(
    f"pyasc {frontend.pyasc_version()} has no bfloat16 dtype (pyasc's nightly has): make test-nightly runs these"))
needs_no_bf16 = pytest.mark.skipif(HAS_BF16, reason="the installed pyasc has a bfloat16 dtype")
REFUSED = (f"tensor 'x' is bfloat16, which the installed pyasc {frontend.pyasc_version()} has no dtype for: "
           "bfloat16 tensors need pyasc's nightly (pyasc-dev)")


@pytest.fixture(scope="module")
def kernel():
    from bf16_add import bf16_add_kernel
    return bf16_add_kernel


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x, y = (rng.uniform(-100, 100, N).astype(np.float32).astype(ml_dtypes.bfloat16) for _ in range(2))
    x[:3], y[:3] = [1, 1, 1], [2 ** -8, 3 * 2 ** -8, 2 ** -9]  # ties to even (down, up) and below half an ulp
    return x, y


def _reference(x, y):
    """float32 sums (exact for these bfloat16 inputs) rounded to bfloat16, nearest even."""
    return (x.astype(np.float32) + y.astype(np.float32)).astype(ml_dtypes.bfloat16)


def _bits(array):
    return np.asarray(array).view(np.uint16)


# ---- the client's arguments ------------------------------------------------------------------

@pytest.mark.unit
def test_ml_dtypes_bfloat16_is_sent_as_its_bits():
    x, _ = _inputs()
    host = prepare(["x"], [x])
    assert host.specs == [ArgSpec("tensor", "bfloat16")]
    assert host.values["x"].dtype == np.uint16 and np.shares_memory(host.values["x"], x)
    np.testing.assert_array_equal(host.values["x"], _bits(x))
    host.write_back("x", np.full(N, 0x3F80, np.uint16))  # the bits of 1.0
    assert x.dtype == ml_dtypes.bfloat16 and (x == 1).all()


@pytest.mark.unit
def test_torch_bfloat16_is_sent_as_its_bits_and_written_back():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3).to(torch.bfloat16) / 3
    host = prepare(["t"], [t])
    assert host.specs == [ArgSpec("tensor", "bfloat16")]
    np.testing.assert_array_equal(host.values["t"], t.view(torch.int16).numpy().view(np.uint16))
    fresh = torch.zeros(2, 3, dtype=torch.bfloat16)
    host = prepare(["t"], [fresh])
    host.write_back("t", t.view(torch.int16).numpy().view(np.uint16).copy())
    assert fresh.dtype == torch.bfloat16 and torch.equal(fresh, t)


@pytest.mark.unit
def test_dtypes_still_unsupported_are_refused_by_name():
    with pytest.raises(ascrun.KernelError) as e:
        prepare(["q"], [np.zeros(4, ml_dtypes.float8_e4m3fn)])
    assert str(e.value) == ("tensor 'q' has dtype float8_e4m3fn: only bool, int, uint, float and bfloat16 tensors "
                            "can be kernel arguments")
    torch = pytest.importorskip("torch")
    with pytest.raises(ascrun.KernelError) as e:
        prepare(["q"], [torch.zeros(4, dtype=torch.float8_e4m3fn)])
    assert str(e.value).startswith("tensor 'q' has dtype torch.float8_e4m3fn, which cannot be sent yet")


@pytest.mark.unit
def test_the_api_takes_bfloat16_tensors_two_bytes_an_element():
    arg = TensorArg(kind="tensor", dtype="bfloat16", shape=[3, 4], zeros=True)
    assert arg.nbytes == 24


# ---- run_local ---------------------------------------------------------------------------------

@needs_bf16
def test_ml_dtypes_bfloat16_add_runs_in_process(kernel):
    x, y = _inputs()
    z = np.zeros(N, ml_dtypes.bfloat16)
    result = ascrun.run_local(kernel, 1, x, y, z, N)
    np.testing.assert_array_equal(_bits(z), _bits(_reference(x, y)))
    assert list(_bits(z)[:3]) == [0x3F80, 0x3F82, 0x3F80]  # 1 + 2^-8 ties down, 1 + 3*2^-8 up
    assert result.outputs["z"].dtype == ml_dtypes.bfloat16
    assert "bfloat16_t" in result.source


@needs_bf16
def test_torch_bfloat16_add_runs_in_process(kernel):
    torch = pytest.importorskip("torch")
    x, y = _inputs(1)
    tx, ty = (torch.from_numpy(_bits(a).view(np.int16).copy()).view(torch.bfloat16) for a in (x, y))
    tz = torch.zeros(N, dtype=torch.bfloat16)
    ascrun.run_local(kernel, 1, tx, ty, tz, N)
    np.testing.assert_array_equal(tz.view(torch.int16).numpy().view(np.uint16), _bits(_reference(x, y)))


@needs_no_bf16
def test_bfloat16_on_a_pyasc_without_it_is_refused(kernel):
    x, y = _inputs()
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, x, y, np.zeros(N, ml_dtypes.bfloat16), N)
    assert (e.value.kind, str(e.value)) == ("bad_request", REFUSED)


# ---- through the service ---------------------------------------------------------------------

@pytest.mark.service
def test_bfloat16_through_the_service(client, kernel):
    x, y = _inputs(2)
    z = np.zeros(N, ml_dtypes.bfloat16)
    if not HAS_BF16:
        with pytest.raises(ascrun.KernelError) as e:
            client.launch(kernel, 1, x, y, z, N)
        assert (e.value.kind, str(e.value)) == ("bad_request", REFUSED)
        return
    result = client.launch(kernel, 1, x, y, z, N)
    np.testing.assert_array_equal(_bits(z), _bits(_reference(x, y)))
    assert result.outputs["z"].dtype == ml_dtypes.bfloat16
    torch = pytest.importorskip("torch")
    tz = torch.zeros(N, dtype=torch.bfloat16)
    client.launch(kernel, 1, x, y, tz, N)
    np.testing.assert_array_equal(tz.view(torch.int16).numpy().view(np.uint16), _bits(_reference(x, y)))

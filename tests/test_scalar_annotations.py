"""An argument that does not fit its parameter's annotation (a float for `n: int`, a bool, a string
for a ConstExpr[int], a scalar for a GlobalAddress) is a bad_request naming the parameter: from
run_local and the client before anything is compiled or sent, and from the API, in the same words,
when the client is bypassed."""
import httpx
import numpy as np
import pytest

import ascrun
import ops
from ascrun.compiler.bundle import collect
from ascrun.compiler.cache import DiskCache
from ascrun.args import prepare
from ascrun.service.submission import job_arguments
from kernels.hazards import scalar_read_kernel

pytestmark = pytest.mark.kernel

X = np.ones(64, np.float32)
SPIN = "argument 'rounds' of kernel 'spin_kernel' is annotated int: got "
# (kernel, its arguments, the message)
MISFITS = [
    (ops.spin_kernel, (X, X, 2.5), SPIN + "2.5 (a float)"),
    (ops.spin_kernel, (X, X, True), SPIN + "True (a bool)"),
    (ops.spin_kernel, (X, X, np.float32(3)), SPIN + "3.0 (a float32)"),
    (ops.spin_kernel, (X, X, np.ones(2, np.int32)), SPIN + "an int32 tensor"),
    (ops.spin_kernel, (3, X, 1), "argument 'x' of kernel 'spin_kernel' is annotated asc.GlobalAddress: got 3 (an int)"),
    (scalar_read_kernel, (X, X, "64", 1),
     "argument 'n' of kernel 'scalar_read_kernel' is annotated asc.ConstExpr[int]: got '64' (a str)"),
    (scalar_read_kernel, (X, X, 64.0, 1),
     "argument 'n' of kernel 'scalar_read_kernel' is annotated asc.ConstExpr[int]: got 64.0 (a float)"),
]
IDS = ["float-for-int", "bool-for-int", "numpy-float-for-int", "tensor-for-int", "scalar-for-tensor",
       "str-for-constexpr-int", "float-for-constexpr-int"]


@pytest.mark.parametrize("kernel, args, message", MISFITS, ids=IDS)
def test_run_local_refuses_before_compiling(tmp_path, kernel, args, message):
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, *args, cache=DiskCache(tmp_path / "cache"))
    assert (e.value.kind, str(e.value)) == ("bad_request", message)
    assert not (tmp_path / "cache").exists()  # nothing was compiled


@pytest.mark.unit
@pytest.mark.parametrize("kernel, args, message", MISFITS, ids=IDS)
def test_the_client_refuses_before_sending(kernel, args, message):
    with ascrun.Client("http://127.0.0.1:9", retries=0) as client:  # nothing listens there: nothing is sent
        with pytest.raises(ascrun.KernelError) as e:
            client.launch(kernel, 1, *args)
    assert (e.value.kind, str(e.value)) == ("bad_request", message)


@pytest.mark.unit
def test_what_fits_is_taken():
    names = ["x", "z", "rounds"]
    for rounds in (3, np.int64(3), np.uint64(3)):
        assert prepare(names, (X, X, rounds)).specs[2].value == 3
    with ascrun.Client("http://127.0.0.1:9", retries=0) as client:
        with pytest.raises(ascrun.KernelError) as e:  # it fits: the client goes on and finds no service
            client.launch(ops.scalar_kernel, 1, X, X, 64, 1, -3.0)  # an int for `add: float` fits, as in Python
    assert e.value.kind == "unavailable"


@pytest.mark.service
@pytest.mark.parametrize("kernel, args, message", MISFITS, ids=IDS)
def test_the_api_refuses_in_the_same_words(service, kernel, args, message):
    """The client bypassed: the arguments sent as it would send them had it not checked."""
    arguments, blobs = job_arguments(prepare([f"a{i}" for i in range(len(args))], args))
    assert not blobs  # small tensors travel inline
    body = {"bundle": collect(kernel).to_json(), "core_num": 1, "target": "cpu", "args": arguments}
    answer = httpx.post(f"{service.url}/v1/jobs", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json() == {"error": {"kind": "bad_request", "message": message}}

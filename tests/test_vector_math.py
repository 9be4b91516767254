"""Erf and Tanh (高阶API/数学计算/Erf.md, Tanh.md) through run_local, in each form pyasc emits (calCount or
the whole srcTensor, with sharedTmpBuffer or the framework's space), against numpy in double; and the
faults: overlapping operands, a count past the tensors. pyasc 1.1.1's asc.adv.erf/tanh (asctile's
erf/tanh emit the calCount form: tests/test_asctile.py)."""
import math

import numpy as np
import pytest

import ascrun
from conftest import unsited
import vector_math as vm

pytestmark = pytest.mark.kernel

N = 1024  # elements of src and dst
SRC, DST, TMP, TMP_BYTES = 0, 8192, 16384, 1024  # UB offsets, the temporary buffer's size
FUNCTIONS = {"erf": np.vectorize(math.erf), "tanh": np.tanh}
TOLERANCE = {np.float32: 1e-6, np.float16: 1e-3}  # float: std::erf/tanh in float; half: one rounding


def run(op, form, dtype=np.float32, count=1000, src=SRC, dst=DST, tmp=TMP):
    x = np.linspace(-3, 3, N).astype(dtype)
    z = np.full(N, 7, dtype)
    ascrun.run_local(vm.math_kernel, 1, x, z, N, count, src, dst, tmp, TMP_BYTES, op, form)
    return x, z


# one build each: every form once, each op and dtype at least twice
@pytest.mark.parametrize("op, form, dtype", [
    ("erf", "count", np.float32), ("erf", "all", np.float32), ("erf", "tmp_count", np.float16),
    ("erf", "tmp_all", np.float32), ("tanh", "count", np.float16), ("tanh", "tmp_count", np.float32),
], ids=lambda v: getattr(v, "__name__", v))
def test_math_matches_numpy(op, form, dtype):
    x, z = run(op, form, dtype)
    done = N if form.endswith("all") else 1000
    expected = FUNCTIONS[op](x[:done].astype(np.float64))
    np.testing.assert_allclose(z[:done].astype(np.float64), expected, rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype])
    assert (z[done:] == 7).all()  # past calCount: untouched


@pytest.mark.parametrize("op, form, count, placement, message", [
    ("erf", "count", 1000, dict(dst=32),
     "Erf: dstTensor range [0x20, 0xfc0) overlaps srcTensor range [0x0, 0xfa0) (the source and destination may "
     "not overlap)"),
    ("erf", "count", 1000, dict(dst=SRC),
     "Erf: dstTensor range [0x0, 0xfa0) overlaps srcTensor range [0x0, 0xfa0) (the source and destination may "
     "not overlap)"),
    ("tanh", "tmp_count", 1000, dict(tmp=DST + 64),
     "Tanh: sharedTmpBuffer range [0x2040, 0x2440) overlaps dstTensor range [0x2000, 0x2fa0) (the temporary "
     "space is the API's own)"),
    ("erf", "count", N + 1, {}, "Erf: dstTensor: 1025 elements from UB offset 0x2000 exceed the LocalTensor's 1024 "
                                "elements"),
], ids=["dst-overlaps-src", "dst-is-src", "tmp-overlaps-dst", "count-past-tensors"])
def test_math_faults(op, form, count, placement, message):
    with pytest.raises(ascrun.KernelError) as e:
        run(op, form, count=count, **placement)
    assert e.value.kind == "runtime_error"
    assert unsited(str(e.value)).startswith(f"block 0: {message}")

"""`ascrun worker --self-test`: the packaged kernels built and run on each target, checked, one row each."""
import inspect
import io
import re

import numpy as np
import pytest

from ascrun.compiler import pipeline
from ascrun.compiler.errors import KernelError
from ascrun.server.workers import self_test, self_test_kernels
from ascrun_cli import ascrun

pytestmark = pytest.mark.kernel

ROW = r"{:14} {:6} +\d+\.\d\d  ok \(model: \d+ cycles = \d+\.\d\d us\)"


def test_self_test_on_cpu_passes_every_kernel():
    out = ascrun("worker", "--self-test", "--target", "cpu")
    assert (out.returncode, out.stderr) == (0, "")
    lines = out.stdout.splitlines()
    assert lines[0] == "KERNEL         TARGET  SECONDS  RESULT"
    assert [re.fullmatch(ROW.format(case, "cpu"), line) is not None for case, line in
            zip(["add", "reduce_sum", "cast_f32_f16", "masked_add"], lines[1:5])] == [True] * 4
    assert lines[5:] == ["all passed"]


def test_a_target_this_host_cannot_serve_fails_in_one_row():
    with pytest.raises(KernelError) as unavailable:
        pipeline.get_target("sim")
    out = ascrun("worker", "--self-test", "--target", "sim")
    assert out.returncode == 1
    assert out.stdout.splitlines()[1:] == [f"(all)          sim           -  FAIL unavailable: {unavailable.value}",
                                           "4 of 4 failed"]


def test_a_wrong_result_fails_naming_the_element(monkeypatch):
    add = self_test_kernels.CASES["masked_add"]

    def off_by_one():
        kernel, core_num, args, expected = add()
        expected["z"][70] += 1  # a lane of the second repeat, inside the mask
        return kernel, core_num, args, expected

    monkeypatch.setattr(self_test_kernels, "CASES", {"masked_add": off_by_one})
    monkeypatch.setattr(self_test, "CASES", self_test_kernels.CASES)
    out = io.StringIO()
    assert not self_test.self_test(["cpu"], out)
    x, y = off_by_one()[2][:2]
    got = x[70] + y[70]
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"masked_add     cpu +\d+\.\d\d  FAIL wrong_result: cpu vs numpy: MISMATCH: "
                        r"1 element\(s\) of z differ", lines[1])
    assert lines[2:] == [f"  z[70]: {float(got)!r} vs {float(got + np.float32(1))!r}", "1 of 1 failed"]


def test_the_add_is_the_tutorials(add_example):
    assert inspect.getsource(self_test_kernels.vadd_kernel.fn) == inspect.getsource(add_example.vadd_kernel.fn)
    assert (self_test_kernels.TILE_NUM, self_test_kernels.BUFFER_NUM) == (add_example.TILE_NUM, add_example.BUFFER_NUM)

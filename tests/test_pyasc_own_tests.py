"""pyasc's own kernel tests (all 30 files of python/test/kernels and python/test/generalization), unmodified, through the pytest plugin against the pool, with JUnit XML.

pyasc's files are not part of ascrun (their licence limits them to Huawei's processors): point
ASCRUN_PYASC_TESTS at a pyasc checkout's python/test directory, e.g.

    git -C PYASC archive HEAD python/test python/tutorials | tar -x -C /tmp/pyasc && ASCRUN_PYASC_TESTS=/tmp/pyasc/python/test

The generalization tests run on backend NPU and make their tensors with device="npu": host tensors
under ascrun. Their kernels' tail blocks read and write whole tiles past the ends of their tensors
(block_length rounds up to a tile), which the device performs silently: the run uses
--ascrun-bounds warn, so those accesses are warnings in the report and the asserts judge the
elements the tensors have. Every case must pass.
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.service

FILES = ["kernels/test_vadd.py", "kernels/insert_sync/test_vadd.py", "kernels/insert_sync/test_vadd_scalar.py",
         "kernels/test_matmul.py", "kernels/test_matmul_torch.py", "kernels/test_bilinear_interpolation.py",
         *(f"kernels/insert_sync/test_{name}.py" for name in ("matmul", "quant", "quant_dynamic", "softmax")),
         *(f"generalization/adv/test_{name}.py" for name in (
             "matmul", "matmul_iterate_all", "matmul_iterate_batch", "matmul_quant", "quant")),
         *(f"generalization/basic/test_{name}.py" for name in (
             "vadd", "vadd_bits", "vadd_l0", "vadd_sw", "vadd_tiling", "vadds", "vsqrt", "duplicate", "axpy", "copy",
             "transpose", "transpose_ext", "aipp", "trans_5hd_addr_tensor", "trans_5hd_tensor_list"))]
TESTS = 94  # the cases of FILES at pyasc cecba26ace65 (2026-06-30)
SKIPPED = 3  # pyasc skips test_matmul_quant's three cases itself ("Tensor self not implemented for DT_INT32")
# generalization test_vadd's size-1000 case: blocks 8-15 (of 16, 63 elements each) copy out whole 512-element tiles
TAIL_WARNING = ("warning: block 8: DataCopy(UB->GM): elements [504, 1016) of tensor argument 'z' are outside its 1000 "
                "elements (bounds=warn: the part past its end went to a guard zone, dropped after the launch) "
                "(8 times in 8 blocks; the first shown)")


def test_pyasc_own_kernel_tests_through_the_pool(service, tmp_path, capsys):
    tests_dir = os.environ.get("ASCRUN_PYASC_TESTS")
    if not tests_dir:
        pytest.skip("ASCRUN_PYASC_TESTS is not set: point it at a pyasc checkout's python/test directory "
                    "(pyasc's files are not part of ascrun)")
    tests_dir = Path(tests_dir).resolve()
    missing = [name for name in FILES if not (tests_dir / name).is_file()]
    assert not missing, f"ASCRUN_PYASC_TESTS={tests_dir} lacks {missing}"
    junit = tmp_path / "junit.xml"
    # importlib: kernels/ and generalization/basic/ both have a test_vadd.py, and neither is a package
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--import-mode=importlib",
                          "--rootdir", str(tests_dir), "--confcutdir", str(tests_dir), "-rP",
                          "--ascrun-url", service.url, "--ascrun-bounds", "warn", f"--junitxml={junit}", *FILES],
                         capture_output=True, text=True, cwd=tests_dir, timeout=1200)
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = list(suite.iter("testcase"))
    passed = [case for case in cases if all(case.find(end) is None for end in ("failure", "error", "skipped"))]
    with capsys.disabled():
        print(f"\npyasc's own kernel tests through the pool: {len(passed)} of {len(cases) - SKIPPED} runnable cases "
              f"pass ({SKIPPED} skipped by pyasc)")

    failed = {f"{case.get('classname')}::{case.get('name')}": case.find("failure").get("message")
              for case in cases if case.find("failure") is not None}
    assert failed == {}, out.stdout[-3000:]
    assert (suite.get("tests"), suite.get("errors"), suite.get("skipped")) == (str(TESTS), "0", str(SKIPPED)), \
        out.stdout[-3000:]
    assert out.returncode == 0, out.stdout[-3000:]
    assert TAIL_WARNING in out.stdout.splitlines()

"""pyasc's Matmul tutorials (python/tutorials/03_matmul_mix, 04_matmul_cube_only, 05_matmul_leakyrelu),
unmodified, through `ascrun exec ... -- -r Model` against the service: with pyasc installed (its
asc.lib.host without CANN is ascrun's) and in a venv without pyasc (the stand-in asc), both with
torch. Each script's own assert checks the result.

pyasc's files are not part of ascrun: point ASCRUN_PYASC_TESTS at a pyasc checkout's python/test
directory (its python/tutorials is next to it), as for test_pyasc_own_tests.py.
"""
import os
import sys
from pathlib import Path

import pytest

from ascrun_cli import NO_SIM_NOTICE, ascrun
from conftest import bare_venv

pytestmark = pytest.mark.service

TUTORIALS = {"03_matmul_mix/matmul_mix.py": "matmul_mix", "04_matmul_cube_only/matmul_cube_only.py":
             "matmul_cube_only", "05_matmul_leakyrelu/matmul_leakyrelu.py": "matmul_leakyrelu"}
# torch and what it imports, for the venv without pyasc
TORCH = ("torch", "torchgen", "numpy", "sympy", "mpmath", "networkx", "jinja2", "markupsafe", "filelock", "fsspec",
         "typing_extensions")


@pytest.fixture(scope="module")
def tutorials():
    tests_dir = os.environ.get("ASCRUN_PYASC_TESTS")
    if not tests_dir:
        pytest.skip("ASCRUN_PYASC_TESTS is not set: point it at a pyasc checkout's python/test directory "
                    "(pyasc's files are not part of ascrun)")
    folder = Path(tests_dir).resolve().parent / "tutorials"
    missing = [name for name in TUTORIALS if not (folder / name).is_file()]
    assert not missing, f"{folder} lacks {missing}"
    return folder


@pytest.fixture(scope="module")
def python_without_pyasc(tutorials, tmp_path_factory, ascrun_wheel):
    return bare_venv(tmp_path_factory, shared=TORCH, wheel=ascrun_wheel)


@pytest.mark.parametrize("with_pyasc", [True, False], ids=["pyasc", "no-pyasc"])
@pytest.mark.parametrize("script", TUTORIALS)
def test_tutorial_runs_unmodified(request, tutorials, service, tmp_path, script, with_pyasc):
    python = sys.executable if with_pyasc else request.getfixturevalue("python_without_pyasc")
    out = ascrun("exec", "--url", service.url, tutorials / script, "--", "-r", "Model", python=python,
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    sample = TUTORIALS[script]
    assert f"INFO:root:[INFO] Sample {sample} run success." in out.stderr.splitlines(), out.stderr[-3000:]
    assert NO_SIM_NOTICE in out.stderr.splitlines()

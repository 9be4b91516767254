"""`ascrun exec`: unmodified pyasc scripts, their launches on the service, their own asserts on
the results; with real pyasc, and in a venv that has only the ascrun wheel (the stand-in asc)."""
import json
import re
import subprocess
import sys

import pytest

from ascrun_cli import NO_NPU_NOTICE, NO_SIM_NOTICE, PYASC_STYLE, ascrun, launch_line
from conftest import PAST_THE_END, ROOT, kernel_line

pytestmark = pytest.mark.service

OVERRUN = (f"{kernel_line(PYASC_STYLE / 'test_vadd.py', 'asc.data_copy(x_local')}: "
           "block 15: DataCopy(GM->UB): elements [993, 1001) of tensor argument 'x' are outside its 1000 "
           "elements" + PAST_THE_END)


def test_tutorial_script_with_torch_runs_on_the_pool(service):
    out = ascrun("exec", "--json", "--url", service.url, PYASC_STYLE / "add.py", "--", "-r", "Model",
                 "-v", "Ascend910B1")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["exit_code"], report["backend"], report["platform"], report["error"]) == (
        0, "Model", "Ascend910B1", None)
    [launch] = report["launches"]
    assert {k: launch[k] for k in ("kernel", "core_num", "target", "status")} == {
        "kernel": "vadd_kernel", "core_num": 8, "target": "cpu", "status": "finished"}
    assert re.fullmatch(r"[0-9a-f]{32}", launch["job_id"])
    assert NO_SIM_NOTICE in out.stderr.splitlines()
    assert "INFO:root:[INFO] Sample add run success." in out.stderr  # the script ran to its end
    assert "httpx" not in out.stderr  # ascrun's requests stay out of the script's INFO log


def test_npu_backend_script_makes_its_tensors_on_npu_which_is_the_host(service):
    """add.py -r NPU makes x and y with device="npu", as pyasc's tutorial does: host tensors under ascrun."""
    out = ascrun("exec", "--json", "--url", service.url, PYASC_STYLE / "add.py", "--", "-r", "NPU")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["exit_code"], report["backend"], report["error"]) == (0, "NPU", None)
    assert [(launch["target"], launch["status"]) for launch in report["launches"]] == [("cpu", "finished")]
    assert NO_NPU_NOTICE in out.stderr.splitlines()
    assert "INFO:root:[INFO] Sample add run success." in out.stderr  # past the script's asserts on z


def test_no_npu_host_leaves_device_npu_to_torch(service):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as no_npu:
        torch.device("npu")  # what torch says of "npu" without torch_npu
    out = ascrun("exec", "--json", "--no-npu-host", "--url", service.url, PYASC_STYLE / "add.py", "--", "-r", "NPU")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert (report["error"], report["launches"]) == ({"kind": "RuntimeError", "message": str(no_npu.value)}, [])
    assert out.stderr.splitlines()[-1] == f"RuntimeError: {no_npu.value}"


def test_target_flag_overrides_the_backend(service):
    cpu = ascrun("exec", "--target", "cpu", "--url", service.url, PYASC_STYLE / "test_vadd.py")
    assert (cpu.returncode, cpu.stdout, cpu.stderr) == (0, "vadd: z == x + y for 8192 float32\n", "")
    sim = ascrun("exec", "--target", "sim", "--retries", "0", "--url", service.url, PYASC_STYLE / "test_vadd.py")
    where = f"{PYASC_STYLE / 'test_vadd.py'}:{launch_line(PYASC_STYLE / 'test_vadd.py', 'vadd_kernel[')}"
    assert sim.returncode == 3
    assert sim.stderr == f"ascrun: launch at {where} failed: unavailable: no worker serves target 'sim' right now\n"


def test_failed_assert_in_the_script_exits_1_with_its_traceback(service):
    out = ascrun("exec", "--url", service.url, PYASC_STYLE / "wrong_expectation.py")
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    line = launch_line(PYASC_STYLE / "wrong_expectation.py", "assert np.array_equal")
    assert lines[1:3] == ["Traceback (most recent call last):",
                          f'  File "{PYASC_STYLE / "wrong_expectation.py"}", line {line}, in <module>']
    assert lines[-1] == "AssertionError: z[:4] = [4. 4. 4. 4.], expected x - y = [2. 2. 2. 2.]"


def test_remote_runtime_error_exits_1_with_the_remote_message(service):
    out = ascrun("exec", "--json", "--url", service.url, PYASC_STYLE / "overrun.py")
    assert out.returncode == 1
    where = f"{PYASC_STYLE / 'test_vadd.py'}:{launch_line(PYASC_STYLE / 'test_vadd.py', 'vadd_kernel[')}"
    assert out.stderr.splitlines()[-1] == f"ascrun: launch at {where} failed: runtime_error: {OVERRUN}"
    report = json.loads(out.stdout)
    assert report["error"] == {"kind": "runtime_error", "message": OVERRUN}
    assert report["launches"][0]["status"] == "failed" and report["launches"][0]["job_id"]


@pytest.mark.kernel
def test_unreachable_service_exits_3():
    out = ascrun("exec", "--retries", "0", "--url", "http://127.0.0.1:9", PYASC_STYLE / "test_vadd.py")
    assert out.returncode == 3
    assert "failed: unavailable: cannot reach the ascrun service at http://127.0.0.1:9: ConnectError" in out.stderr


# --- where pyasc is not installed: a venv with only the ascrun wheel (and pytest) -----------------

# (bare_python: the session's venv, tests/conftest.py)

def test_without_pyasc_the_standin_runs_scripts_and_tests(bare_python, service, tmp_path):
    probe = subprocess.run([str(bare_python), "-c", "import asc"], capture_output=True, text=True, cwd=tmp_path)
    assert probe.stderr.splitlines()[-1] == "ModuleNotFoundError: No module named 'asc'"  # nothing shadows pyasc
    out = ascrun("exec", "--url", service.url, PYASC_STYLE / "test_vadd.py", python=bare_python, cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (0, "vadd: z == x + y for 8192 float32\n", NO_SIM_NOTICE + "\n")
    tests = subprocess.run([str(bare_python), "-m", "pytest", "-p", "no:cacheprovider", "--confcutdir", str(PYASC_STYLE),
                            "--ascrun-url", service.url, "--ascrun-target", "cpu", "-rs", str(PYASC_STYLE)],
                           capture_output=True, text=True, cwd=ROOT)
    assert tests.returncode == 0, tests.stdout
    skip = launch_line(PYASC_STYLE / "test_vector_generalization.py", "pytest.skip(")
    assert f"SKIPPED [1] tests/pyasc_style/test_vector_generalization.py:{skip}: torch is not installed" in tests.stdout
    assert re.fullmatch(r"=+ 1 passed, 1 skipped in [0-9.]+s =+", tests.stdout.splitlines()[-1])


@pytest.mark.parametrize("source, message", [
    ("import asc\nfrom asc.language.basic import vec_binary\n",
     "asc.language.basic is not part of ascrun's stand-in for pyasc (pyasc is not installed here): install pyasc to "
     "use it"),
    ("from asc.lib.runtime import CoreType\n",
     "cannot import name 'CoreType' from 'asc.lib.runtime': it is not part of ascrun's stand-in for pyasc (pyasc is "
     "not installed here): install pyasc to use it"),
    ("import asc\n\n@asc.jit\ndef k(t: asc.adv.MatmulApiStaticTiling):\n    pass\n",
     "asc.adv.MatmulApiStaticTiling is not part of ascrun's stand-in for pyasc (pyasc is not installed here): install "
     "pyasc to use it"),
])
def test_without_pyasc_what_the_standin_lacks_is_named(bare_python, service, tmp_path, source, message):
    script = tmp_path / "uses_more_of_pyasc.py"
    script.write_text(source)
    out = ascrun("exec", "--url", service.url, script, python=bare_python, cwd=tmp_path)
    assert (out.returncode, out.stderr) == (2, f"ascrun: {message}\n")


HOST_TILING_SCRIPT = '''\
from typing import Tuple

import asc
import asc.lib.host as host
import asc.runtime.config as config


@asc.jit
def calc_offsets(tiling: asc.adv.TCubeTiling) -> Tuple[int, int]:
    return tiling.single_core_m, tiling.single_core_n


config.set_platform(config.Backend.Model, config.Platform.Ascend910B3)
platform = host.get_ascendc_platform()
matmul_tiling = host.MultiCoreMatmulTiling(platform)
matmul_tiling.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
matmul_tiling.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
matmul_tiling.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT)
matmul_tiling.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
matmul_tiling.set_dim(2)
matmul_tiling.set_org_shape(1024, 640, 256)
matmul_tiling.set_shape(1024, 640, 256)
matmul_tiling.enable_bias(True)
matmul_tiling.set_traverse(host.MatrixTraverse.FIRSTM)
matmul_tiling.set_fix_split(256, 128, -1)
matmul_tiling.set_buffer_space(-1, -1, -1)
tiling = asc.adv.TCubeTiling()
print(platform.get_soc_version(), matmul_tiling.get_tiling(tiling), tiling.used_core_num, tiling.single_core_m,
      tiling.single_core_n, tiling.base_m, tiling.base_n, type(tiling).__module__)
'''


@pytest.mark.parametrize("with_pyasc", [True, False])
def test_host_tiling_without_cann_with_and_without_pyasc(request, service, tmp_path, with_pyasc):
    """Tutorial 05's host tiling under `ascrun exec`: pyasc's asc.lib.host without CANN, or the
    stand-in's, is ascrun's, on the SOC the script's set_platform names."""
    script = tmp_path / "host_tiling.py"
    script.write_text(HOST_TILING_SCRIPT)
    python = sys.executable if with_pyasc else request.getfixturevalue("bare_python")
    out = ascrun("exec", "--url", service.url, script, python=python, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "Ascend910B3 0 2 512 640 256 128 asc.language.adv.tiling\n"), out.stderr

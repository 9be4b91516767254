"""`model=False`: a launch without the modeled timeline (no `model`, no trace), for those who want a
faster run; the hazard check does not depend on it. Here, through run_local, the service (Client,
remote, `ascrun launch --no-model`, the trace endpoint) and the pytest plugin (--ascrun-no-model).

pyasc's 01_add with its synchronization varied by runtime arguments (tests/kernels/hazards.py)."""
import json
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

import ascrun
from ascrun.service.submission import submission
from ascrun_cli import ascrun as ascrun_cli
from conftest import kernel_line
from kernels import hazards
from kernels.hazards import vadd_sync_kernel

BLOCK = 2048  # floats per block
RACE_X = (f"{kernel_line(hazards, 'asc.add(z_local')}: block 0: V Add reads UB [0x0, 0x200) written by MTE2 "
          f"DataCopy(GM->UB) at {kernel_line(hazards, 'asc.data_copy(x_local[')} with no MTE2->V flag between them")
KERNEL_FILE = f"{vadd_sync_kernel.fn.__code__.co_filename}::vadd_sync_kernel"


def arguments(drop=0):
    rng = np.random.default_rng(11)
    x = rng.random(BLOCK, dtype=np.float32)
    y = rng.random(BLOCK, dtype=np.float32)
    return x, y, np.zeros_like(x), BLOCK, 2, drop, 0, 0, 0


@pytest.mark.kernel
def test_run_local_without_the_model_has_the_outputs_and_no_timeline():
    args = arguments()
    result = ascrun.run_local(vadd_sync_kernel, 1, *args, model=False)
    np.testing.assert_array_equal(args[2], args[0] + args[1])
    assert (result.model, result.trace, result.warnings) == (None, None, [])
    default = ascrun.run_local(vadd_sync_kernel, 1, *arguments())
    assert default.model["cycles"] > 0 and json.loads(default.trace)["traceEvents"]


@pytest.mark.kernel
def test_the_hazard_check_does_not_need_the_model():
    with pytest.raises(ascrun.KernelError) as info:
        ascrun.run_local(vadd_sync_kernel, 1, *arguments(drop=2), model=False, hazards="fault")
    assert str(info.value) == RACE_X + ' (hazards="fault")'


@pytest.mark.unit
def test_the_default_is_left_out_of_the_body():  # older services know no "model"
    assert "model" not in submission(vadd_sync_kernel, 1, arguments()).body
    assert submission(vadd_sync_kernel, 1, arguments(), model=False).body["model"] is False


@pytest.mark.service
def test_a_remote_launch_without_the_model_has_the_outputs_and_no_trace(client, service):
    args = arguments()
    result = client.launch(vadd_sync_kernel, 1, *args, model=False)
    np.testing.assert_array_equal(args[2], args[0] + args[1])
    assert (result.model, result.trace, result.warnings) == (None, None, [])
    assert client.job(result.job_id)["model"] is None
    answer = httpx.get(f"{service.url}/v1/jobs/{result.job_id}/trace")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == (f"job {result.job_id} has no trace: it was launched with "
                                                 "model=false (no modeled timeline)")

    through_remote = arguments()
    remote = ascrun.remote(vadd_sync_kernel, client, model=False)[1](*through_remote)
    np.testing.assert_array_equal(through_remote[2], through_remote[0] + through_remote[1])
    assert remote.model is None

    default = client.launch(vadd_sync_kernel, 1, *arguments())
    assert default.model["cycles"] > 0
    assert json.loads(client.trace(default.job_id))["traceEvents"]


@pytest.mark.service
def test_the_command_line_no_model(service, tmp_path):
    x, y, z, *scalars = arguments()
    for name, array in (("x", x), ("y", y), ("z", z)):
        np.save(tmp_path / f"{name}.npy", array)
    launch = ["launch", "--url", service.url, KERNEL_FILE, "--cores", 1, "--json", "--out", f"z={tmp_path / 'out.npy'}",
              *[a for name in "xyz" for a in ("--arg", f"{name}=@{tmp_path / name}.npy")],
              *[a for name, value in zip(("block_length", "buffer_num", "drop", "wrong_id", "extra_set", "pipelined"),
                                         scalars) for a in ("--arg", f"{name}={value}")]]
    bare = ascrun_cli(*launch, "--no-model")
    assert bare.returncode == 0, bare.stderr
    assert json.loads(bare.stdout).get("model") is None
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), x + y)
    modeled = ascrun_cli(*launch)
    assert modeled.returncode == 0, modeled.stderr
    assert json.loads(modeled.stdout)["model"]["cycles"] > 0


PLUGIN_TESTS = f'''
import sys
import numpy as np
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_launch_no_model import arguments
from kernels.hazards import vadd_sync_kernel


def test_add():
    x, y, z, *rest = arguments()
    vadd_sync_kernel[1](x, y, z, *rest)
    np.testing.assert_array_equal(z, x + y)
'''


@pytest.mark.service
def test_the_pytest_plugin_no_model(service, tmp_path):
    (tmp_path / "test_add.py").write_text(PLUGIN_TESTS)

    def cycles(*options):
        """The ascrun_cycles properties of the run's JUnit XML."""
        xml = tmp_path / "junit.xml"
        ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--confcutdir", str(tmp_path),
                              "--ascrun-url", service.url, "--junitxml", str(xml), *options, "test_add.py"],
                             capture_output=True, text=True, cwd=tmp_path)
        assert ran.returncode == 0, ran.stdout
        return [line for line in xml.read_text().split("<property ") if line.startswith('name="ascrun_cycles"')]

    assert cycles("--ascrun-no-model") == []
    assert len(cycles()) == 1

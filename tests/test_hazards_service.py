"""The pipe model through the service: the `hazards` launch option, the job's `model`, its trace at
GET /v1/jobs/{id}/trace, and the same from the command line (`--hazards`, `show`, `trace`).

pyasc's 01_add with its synchronization varied by runtime arguments (tests/kernels/hazards.py): one
artifact for every variant, so only the first launch compiles. One block per launch, so that the
messages and counts do not depend on which block faults first."""
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

pytestmark = pytest.mark.service

BLOCK = 2048  # floats per block: x's first tile is UB [0x0, 0x200)
RACE_X = (f"{kernel_line(hazards, 'asc.add(z_local')}: block 0: V Add reads UB [0x0, 0x200) written by MTE2 "
          f"DataCopy(GM->UB) at {kernel_line(hazards, 'asc.data_copy(x_local[')} with no MTE2->V flag between them")
NEVER_WAITED = (f"{kernel_line(hazards, 'asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)')}: block 0: "
                "SetFlag<HardEvent::MTE3_MTE2>(0) is never waited for: no WaitFlag<HardEvent::MTE3_MTE2>(0) follows it "
                "before the kernel ends")
KERNEL_FILE = f"{vadd_sync_kernel.fn.__code__.co_filename}::vadd_sync_kernel"


def arguments(drop=0, extra_set=0, pipelined=0):
    rng = np.random.default_rng(7)
    x = rng.random(BLOCK, dtype=np.float32)
    y = rng.random(BLOCK, dtype=np.float32)
    return x, y, np.zeros_like(x), BLOCK, 2, drop, 0, extra_set, pipelined


def failure(client, hazards="warn", **variant) -> ascrun.KernelError:
    with pytest.raises(ascrun.KernelError) as info:
        client.launch(vadd_sync_kernel, 1, *arguments(**variant), hazards=hazards)
    assert info.value.kind == "runtime_error"
    return info.value


def test_a_clean_kernel_has_no_warnings_its_model_and_a_trace(client):
    args = arguments()
    result = client.launch(vadd_sync_kernel, 1, *args)
    np.testing.assert_array_equal(args[2], args[0] + args[1])
    assert result.warnings == []
    local = ascrun.run_local(vadd_sync_kernel, 1, *arguments())
    assert result.model["cycles"] == local.model["cycles"] > 0  # the model is deterministic
    assert result.model == local.model
    assert client.job(result.job_id)["model"] == result.model
    assert all(job.get("model") is None for job in client.jobs(limit=5))  # lists stay small

    trace = json.loads(client.trace(result.job_id))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    copies = [e for e in events if e.get("ph") == "X" and e.get("name") == "DataCopy(GM->UB)"]
    assert copies and all(threads[e["pid"], e["tid"]] == "MTE2" for e in copies)
    assert json.loads(result.trace) == trace  # fetched on first use

    pipelined = client.launch(vadd_sync_kernel, 1, *arguments(pipelined=1))
    assert pipelined.warnings == [] and pipelined.model["cycles"] < result.model["cycles"]


def test_a_race_is_a_warning_of_the_failed_launch(client):
    e = failure(client, drop=2)
    assert f"{RACE_X} (2 times; the first shown)" in e.warnings


def test_hazards_fault_makes_the_race_the_error(client):
    assert str(failure(client, hazards="fault", drop=2)) == RACE_X + ' (hazards="fault")'


def test_hazards_off_checks_nothing(client):
    assert failure(client, hazards="off", drop=2).warnings == []


def test_a_flag_never_waited_for_is_a_warning(client):
    result = client.launch(vadd_sync_kernel, 1, *arguments(extra_set=1))
    assert result.warnings == [NEVER_WAITED]
    assert client.job(result.job_id)["hazards"] == "warn"


@pytest.mark.unit
def test_the_default_policy_is_left_out_of_the_body():  # older services know no "hazards"
    assert "hazards" not in submission(vadd_sync_kernel, 1, arguments()).body
    assert submission(vadd_sync_kernel, 1, arguments(), hazards="off").body["hazards"] == "off"


def test_an_unknown_hazards_policy_is_refused(client, service):
    with pytest.raises(ascrun.KernelError) as info:  # the client checks first
        client.launch(vadd_sync_kernel, 1, *arguments(), hazards="bogus")
    assert info.value.kind == "bad_request"
    job = submission(vadd_sync_kernel, 1, arguments())
    answer = httpx.post(f"{service.url}/v1/jobs", json=dict(job.body, hazards="bogus"))
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["kind"] == "bad_request" and "hazards" in error["message"]


def test_a_job_without_a_trace_is_404_saying_why(client, service):
    handle = client.submit(vadd_sync_kernel, 1, *arguments(drop=2), hazards="fault")
    with pytest.raises(ascrun.KernelError):
        handle.result()
    job_id = handle.id
    answer = httpx.get(f"{service.url}/v1/jobs/{job_id}/trace")
    assert answer.status_code == 404
    assert answer.json() == {"error": {"kind": "not_found", "message": f"job {job_id} has no trace: it did not "
                                       "finish (failed: runtime_error); only a finished run has one"}}
    with pytest.raises(ascrun.KernelError) as info:
        client.trace(job_id)
    assert info.value.kind == "not_found"
    assert httpx.get(f"{service.url}/v1/jobs/{'0' * 32}/trace").json()["error"]["kind"] == "not_found"
    schema = httpx.get(f"{service.url}/openapi.json").json()
    assert "/v1/jobs/{job_id}/trace" in schema["paths"]
    assert schema["components"]["schemas"]["JobRequest"]["properties"]["hazards"]["default"] == "warn"


def test_the_command_line(service, tmp_path):
    x, y, z, *scalars = arguments(drop=2)
    for name, array in (("x", x), ("y", y), ("z", z)):
        np.save(tmp_path / f"{name}.npy", array)
    launch = ["launch", "--url", service.url, KERNEL_FILE, "--cores", 1,
              *[a for name in "xyz" for a in ("--arg", f"{name}=@{tmp_path / name}.npy")],
              *[a for name, value in zip(("block_length", "buffer_num", "drop", "wrong_id", "extra_set", "pipelined"),
                                         scalars) for a in ("--arg", f"{name}={value}")]]
    faulted = ascrun_cli(*launch, "--hazards", "fault")
    assert faulted.returncode == 1
    assert f'runtime_error: {RACE_X} (hazards="fault")' in faulted.stderr

    clean = ascrun_cli(*[a if a != "drop=2" else "drop=0" for a in launch], "--json")
    assert clean.returncode == 0, clean.stderr
    report = json.loads(clean.stdout)
    job, model = report["job_id"], report["model"]
    assert model == ascrun.Client(service.url).job(job)["model"]
    shown = ascrun_cli("show", job, "--url", service.url).stdout.splitlines()
    at = shown.index(f"model     {model['cycles']} cycles (slowest core) at {model['clock_ghz']:g} GHz = "
                     f"{model['cycles'] / model['clock_ghz'] / 1000:.2f} us; `ascrun trace` for the timeline")
    [core] = model["cores"]
    assert shown[at + 1] == (f"  block 0: {core['cycles']} cycles, {core['instructions']} instructions; busy "
                             + " ".join(f"{pipe} {n}" for pipe, n in core["busy"].items()) + "; critical path "
                             + " ".join(f"{pipe} {n}" for pipe, n in core["critical_path"].items()))

    out = tmp_path / "trace.json"
    written = ascrun_cli("trace", job, "--url", service.url, "-o", out)
    assert (written.returncode, written.stdout) == (0, "")
    printed = ascrun_cli("trace", job, "--url", service.url)
    assert json.loads(out.read_text()) == json.loads(printed.stdout)
    missing = ascrun_cli("trace", "0" * 32, "--url", service.url)
    assert missing.returncode == 2 and "not_found" in missing.stderr


PLUGIN_TESTS = f'''
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_hazards_service import arguments
from kernels.hazards import vadd_sync_kernel


def test_a_flag_never_waited_for():
    vadd_sync_kernel[1](*arguments(extra_set=1))


def test_a_race():
    vadd_sync_kernel[1](*arguments(drop=2))
'''


def test_the_pytest_plugin_passes_hazards_and_reports_warnings(service, tmp_path):
    (tmp_path / "test_sync.py").write_text(PLUGIN_TESTS)

    def pytest_run(*options):
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--confcutdir",
                               str(tmp_path), "--ascrun-url", service.url, *options], capture_output=True, text=True,
                              cwd=tmp_path)

    warned = pytest_run("test_sync.py")  # --ascrun-hazards warn, the default
    assert warned.returncode == 1, warned.stdout
    lines = warned.stdout.splitlines()
    assert "PASSED test_sync.py::test_a_flag_never_waited_for" in lines
    assert f"warning: {NEVER_WAITED}" in lines  # its "ascrun (call)" section
    assert f"warning: {RACE_X} (2 times; the first shown)" in lines  # the failed test's section

    faulted = pytest_run("--ascrun-hazards", "fault", "test_sync.py::test_a_race")
    assert faulted.returncode == 1, faulted.stdout
    assert f'KernelRuntimeError: {RACE_X} (hazards="fault")' in faulted.stdout

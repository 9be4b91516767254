"""The pytest plugin: pyasc-style tests (tests/pyasc_style) run unmodified against the pool, with
their asserts on the returned outputs, remote errors in the report and jobs in the JUnit XML; their
device="npu" tensors are host tensors."""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ascrun_cli import NO_NPU_NOTICE, NO_SIM_NOTICE, PYASC_STYLE
from conftest import PAST_THE_END, ROOT, _free_port, kernel_line

pytestmark = pytest.mark.service

OVERRUN = (f"{kernel_line(PYASC_STYLE / 'test_vadd.py', 'asc.data_copy(x_local')}: "
           "block 15: DataCopy(GM->UB): elements [993, 1001) of tensor argument 'x' are outside its 1000 "
           "elements" + PAST_THE_END)


def test_pyasc_style_tests_run_on_the_pool_with_junit_xml(service, client, tmp_path):
    junit = tmp_path / "junit.xml"
    # the service named by $ASCRUN_URL, as a CI job's environment would
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--confcutdir", str(PYASC_STYLE),
                          f"--junitxml={junit}",
                          *(str(PYASC_STYLE / name) for name in ("test_vadd.py", "test_vector_generalization.py",
                                                                 "overrun.py"))],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "ASCRUN_URL": service.url})
    assert out.returncode == 1, out.stdout  # the one failure is overrun.py's, on purpose
    lines = out.stdout.splitlines()
    assert f"ascrun: kernel launches go to {service.url}" in lines
    assert re.fullmatch(r"=+ 1 failed, 5 passed in [0-9.]+s( \(.*\))? =+", lines[-1]), lines[-1]
    # the remote error is the test's failure, and its job is named in the report's ascrun section
    assert any(re.fullmatch(rf"E +ascrun\.compiler\.errors\.KernelRuntimeError: {re.escape(OVERRUN)}", line) for line in lines)
    failed_job = next(re.fullmatch(r"vadd_kernel x16 on cpu: job ([0-9a-f]{32}) failed: runtime_error: (.*)", line)
                      for line in lines if " failed: runtime_error: " in line)
    assert failed_job.group(2) == OVERRUN
    assert NO_SIM_NOTICE in lines  # test_vadd.py's backend (Model)
    assert NO_NPU_NOTICE in lines  # test_vector_generalization.py's (NPU, its tensors made with device="npu")

    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("6", "1", "0")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert sorted(cases) == ["test_vadd", "test_vadd[Backend.NPU-dtype0-size0]", "test_vadd[Backend.NPU-dtype1-size1]",
                             "test_vadd[Backend.NPU-dtype2-size2]", "test_vadd_1000_elements",
                             "test_vadds[Backend.NPU-dtype0-size0]"]
    failure = cases["test_vadd_1000_elements"].find("failure")
    assert failure.get("message") == f"ascrun.compiler.errors.KernelRuntimeError: {OVERRUN}"
    for name, case in cases.items():
        properties = [(p.get("name"), p.get("value")) for p in case.iter("property")]
        [job] = [value for key, value in properties if key == "ascrun_job"]
        record = client.job(job)  # the job the test ran, on the service
        assert record["status"] == ("failed" if name == "test_vadd_1000_elements" else "finished"), name
        if record["status"] == "failed":
            assert ("ascrun_error_kind", "runtime_error") in properties
            assert not [key for key, _ in properties if key == "ascrun_cycles"]
        else:  # the cpu target's modeled cycles, as the job's record has them
            assert ("ascrun_cycles", str(record["model"]["cycles"])) in properties, name
            assert not [key for key, _ in properties if key == "ascrun_error_kind"]
    assert failed_job.group(1) == next(p.get("value") for p in cases["test_vadd_1000_elements"].iter("property"))


def test_without_the_npu_host_mapping_device_npu_is_torchs_error(service, tmp_path):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as no_npu:
        torch.device("npu")  # what torch says of "npu" without torch_npu, here where no mapping is active
    junit = tmp_path / "junit.xml"
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--confcutdir", str(PYASC_STYLE),
                          "--ascrun-url", service.url, "--ascrun-no-npu-host", f"--junitxml={junit}",
                          str(PYASC_STYLE / "test_vector_generalization.py")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1, out.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "4", "0")
    for case in suite.iter("testcase"):
        assert case.find("failure").get("message") == f"RuntimeError: {no_npu.value}", case.get("name")
        assert not [p for p in case.iter("property") if p.get("name") == "ascrun_job"]  # nothing was launched


def test_a_dead_pool_ends_the_session_at_its_start_with_one_message(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--confcutdir", str(PYASC_STYLE),
                          "--ascrun-url", url, str(PYASC_STYLE / "test_vadd.py")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 4, out.stdout + out.stderr
    said = out.stdout + out.stderr
    assert f"ascrun: the service at {url} cannot take launches: " in said
    assert "passed" not in said and "failed" not in said  # no test ran

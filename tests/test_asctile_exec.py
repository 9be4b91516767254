"""asctile code as its users write it (tests/asctile_style), unmodified, against a pool: a script
through `ascrun exec` and a test file through the pytest plugin, each checking the results with
its own asserts. pyasc's nightly only (`make test-nightly`): pyasc 1.1.1 has no asctile."""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ascrun_cli import NO_SIM_NOTICE, ascrun
from conftest import ROOT
from test_asctile import needs_asctile

pytestmark = [pytest.mark.service, needs_asctile]

ASCTILE_STYLE = Path(__file__).parent / "asctile_style"
PRINTED = "asctile vadd: z == x + y for 8192 float32"


def test_an_asctile_script_runs_unmodified_through_exec(service):
    out = ascrun("exec", "--url", service.url, ASCTILE_STYLE / "vadd.py")
    assert (out.returncode, out.stdout, out.stderr) == (0, PRINTED + "\n", NO_SIM_NOTICE + "\n")
    out = ascrun("exec", "--json", "--url", service.url, ASCTILE_STYLE / "vadd.py")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    # asctile.set_platform (pyasc's, wrapped by asctile) reached the session as config.set_platform does
    assert (report["exit_code"], report["backend"], report["platform"], report["error"]) == (
        0, "Model", "Ascend910B1", None)
    [launch] = report["launches"]
    assert {k: launch[k] for k in ("kernel", "core_num", "target", "status")} == {
        "kernel": "vadd", "core_num": 8, "target": "cpu", "status": "finished"}
    assert PRINTED in out.stderr.splitlines()  # the script ran past its assert


@pytest.mark.parametrize("soc", [None, "Ascend950PR_9599"])
def test_an_asctile_test_file_runs_through_the_pytest_plugin(service, client, tmp_path, soc):
    """As written (its platform, Ascend910B1), and with --ascrun-soc on the Ascend 950 (arch C310)."""
    junit = tmp_path / "junit.xml"
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--confcutdir", str(ASCTILE_STYLE),
                          "--ascrun-url", service.url, f"--junitxml={junit}", *(["--ascrun-soc", soc] if soc else []),
                          str(ASCTILE_STYLE)],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "ASCRUN_URL": ""})
    assert out.returncode == 0, out.stdout
    assert re.fullmatch(r"=+ 3 passed in [0-9.]+s( \(.*\))? =+", out.stdout.splitlines()[-1]), out.stdout
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert sorted(cases) == ["test_relu", "test_vadd[2048-1-256]", "test_vadd[8192-8-128]"]
    for name, case in cases.items():
        [job] = [p.get("value") for p in case.iter("property") if p.get("name") == "ascrun_job"]
        record = client.job(job)
        assert (record["status"], record["kernel"]) == ("finished", "relu" if name == "test_relu" else "vadd"), name
        assert record["soc"] == (soc or "Ascend910B1"), name

"""`ascrun launch | jobs | show | targets`: real launches from the command line, the documented
exit codes, progress on a terminal and nothing but the result without one."""
import json
import os
import pty
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from ascrun_cli import PYASC_STYLE, ascrun
from conftest import PAST_THE_END, kernel_line

pytestmark = pytest.mark.unit

VADD = f"{PYASC_STYLE / 'test_vadd.py'}::vadd_kernel"
TILING = ["--arg", "BLOCK_LENGTH=512", "--arg", "BUFFER_NUM=1", "--arg", "TILE_LENGTH=64", "--arg", "TILE_NUM=8"]


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(7)
    x, y = rng.random((2, 8192), dtype=np.float32)
    for name, array in (("x", x), ("y", y), ("z", np.zeros_like(x))):
        np.save(tmp_path / f"{name}.npy", array)
    return tmp_path, x, y


def _launch(url, folder, *extra):
    return ascrun("launch", "--url", url, VADD, "--cores", 16, "--arg", f"x=@{folder / 'x.npy'}",
                  "--arg", f"y=@{folder / 'y.npy'}", "--arg", f"z=@{folder / 'z.npy'}", *TILING, *extra)


@pytest.mark.kernel
def test_help_documents_the_exit_codes():
    out = ascrun("--help")
    assert out.returncode == 0
    assert ("exit codes:\n  0  success\n  1  kernel failure: an assert (or other error) in the script, or a kernel that "
            "did not bundle,\n") in out.stdout
    assert "  3  service unavailable, or timeout\n" in out.stdout


@pytest.mark.kernel
def test_every_subcommand_has_help_and_its_exit_codes():
    from ascrun.cli.main import build_parser
    subcommands = next(a for a in build_parser()._actions if a.dest == "command").choices
    for name, parser in subcommands.items():
        text = parser.format_help()
        assert parser.description and "\nexit codes:\n  0  " in text, name
        undocumented = [a.dest for a in parser._actions if a.help is None and a.option_strings]
        assert not undocumented, (name, undocumented)


@pytest.mark.kernel
def test_version_names_ascrun_and_pyasc():
    from importlib import metadata
    out = ascrun("--version")
    assert out.returncode == 0
    [pyasc] = metadata.packages_distributions()["asc"]  # pyasc, or the nightly's distribution pyasc-dev
    assert out.stdout == f"ascrun {metadata.version('ascrun')} (pyasc {metadata.version(pyasc)})\n"


@pytest.mark.service
def test_launch_then_jobs_and_show_report_the_job(service, inputs):
    folder, x, y = inputs
    out = _launch(service.url, folder, "--out", f"z={folder / 'out.npy'}", "--json")
    assert (out.returncode, out.stderr) == (0, "")  # no terminal: no progress
    report = json.loads(out.stdout)
    np.testing.assert_array_equal(np.load(folder / "out.npy"), x + y)
    assert report["status"] == "finished" and report["target"] == "cpu"
    assert report["outputs"] == {"z": {"dtype": "float32", "shape": [8192], "file": str(folder / "out.npy")}}
    job = report["job_id"]

    listed = json.loads(ascrun("jobs", "--json", "--limit", 5, "--url", service.url).stdout)["jobs"]
    assert listed[0]["id"] == job  # newest first
    table = ascrun("jobs", "--limit", 1, "--url", service.url).stdout.splitlines()
    assert table[0].split() == ["JOB", "KERNEL", "TARGET", "CORES", "STATUS", "CREATED", "SECONDS", "ERROR"]
    assert table[1].split()[:5] == [job, "vadd_kernel", "cpu", "16", "finished"]

    shown = ascrun("show", job, "--url", service.url)
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert lines[:2] == [f"job       {job}", "kernel    vadd_kernel x16 on cpu"]
    assert re.fullmatch(r"status    finished \(worker ascrun-\S+-[0-9]+\)", lines[2])
    assert re.fullmatch(r"timings   queue [0-9.]+ s, frontend [0-9.]+ s, build [0-9.]+ s, run [0-9.]+ s, total [0-9.]+ s",
                        lines[4])
    assert re.fullmatch(r"cache     frontend (hit|miss), build (hit|miss)", lines[5])
    assert lines[-1] == "output    z: float32[8192]"
    source = ascrun("show", job, "--source", "--url", service.url).stdout
    assert "__global__ __aicore__ void vadd_kernel(" in source


@pytest.mark.service
def test_targets(service):
    deadline = time.monotonic() + 120  # the session's service: what earlier tests queued drains first
    while json.loads(ascrun("targets", "--json", "--url", service.url).stdout)["targets"][0]["queued"]:
        assert time.monotonic() < deadline, "the service's queue did not drain"
        time.sleep(0.2)
    table = ascrun("targets", "--url", service.url).stdout.splitlines()
    assert [line.split()[:3] for line in table if not line.startswith(" ")] == [
        ["target", "workers", "queued"], ["cpu", "2", "0"], ["sim", "0", "0"], ["npu", "0", "0"]]
    assert sum(line.startswith("  ascrun-") for line in table) == 2  # a line per live cpu worker
    targets = json.loads(ascrun("targets", "--json", "--url", service.url).stdout)["targets"]
    assert {t["name"]: t["workers"] for t in targets} == {"cpu": 2, "sim": 0, "npu": 0}


@pytest.mark.service
def test_kernel_failure_exits_1(service, inputs):
    folder, _, _ = inputs
    np.save(folder / "x.npy", np.ones(1000, dtype=np.float32))  # the tiling below overruns it
    out = ascrun("launch", "--url", service.url, VADD, "--cores", 16, *[f"--arg={a}=@{folder / 'x.npy'}" for a in "xyz"],
                 "--arg", "BLOCK_LENGTH=63", "--arg", "BUFFER_NUM=1", "--arg", "TILE_LENGTH=8", "--arg", "TILE_NUM=8")
    assert out.returncode == 1
    site = kernel_line(PYASC_STYLE / "test_vadd.py", "asc.data_copy(x_local")
    assert re.fullmatch(r"ascrun: vadd_kernel x16 on cpu: job [0-9a-f]{32} failed: runtime_error: " + re.escape(site) +
                        r": block 15: "
                        r"DataCopy\(GM->UB\): elements \[993, 1001\) of tensor argument 'x' are outside its 1000 "
                        r"elements" + re.escape(PAST_THE_END) + r"\n", out.stderr)


@pytest.mark.service
@pytest.mark.parametrize("args, message", [
    (["launch", VADD, "--cores", "16", "--arg", "x=1"],
     "ascrun: usage: kernel vadd_kernel(x, y, z, BLOCK_LENGTH, BUFFER_NUM, TILE_LENGTH, TILE_NUM): missing --arg y, z, "
     "BLOCK_LENGTH, BUFFER_NUM, TILE_LENGTH, TILE_NUM"),
    (["launch", VADD, "--cores", "16", "--arg", "n"], "ascrun: usage: --arg takes NAME=VALUE, not 'n'"),
    (["launch", "kernels.py", "--cores", "16"], "ascrun: usage: KERNEL must be FILE.py::NAME, not 'kernels.py'"),
    (["show", "0123"], "ascrun: not_found: no job 0123 (unknown, or its result expired)"),
    (["launch", VADD], "ascrun launch: error: the following arguments are required: --cores"),
])
def test_usage_errors_exit_2(service, args, message):
    out = ascrun(*args, "--url", service.url)
    assert out.returncode == 2
    assert out.stderr.splitlines()[-1] == message


@pytest.mark.kernel
def test_unavailable_service_exits_3():
    out = ascrun("targets", "--retries", "0", "--json", "--url", "http://127.0.0.1:9")
    assert out.returncode == 3
    assert json.loads(out.stdout)["error"]["kind"] == "unavailable"


@pytest.mark.service
def test_progress_shows_on_a_terminal(service, tmp_path):
    x = np.random.default_rng(8).random(4 << 20, dtype=np.float32)  # 16 MiB: the kernel reads its start
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "z.npy", np.zeros_like(x))
    terminal, stderr = pty.openpty()
    launch = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "launch", "--url", service.url, VADD, "--cores", "16",
                               "--arg", f"x=@{tmp_path / 'x.npy'}", "--arg", f"y=@{tmp_path / 'x.npy'}",
                               "--arg", f"z=@{tmp_path / 'z.npy'}", *TILING], stdout=subprocess.PIPE,
                              stderr=stderr, text=True)
    os.close(stderr)
    shown = b""
    while chunk := _read(terminal):
        shown += chunk
    assert launch.wait(60) == 0
    screens = {re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", s).strip() for s in shown.decode().split("\r")}
    # x once (y is the same blob); z is all zeros: sent as such, not uploaded
    assert any(re.search(r"vadd_kernel x16 on cpu: uploading .* 16\.8 MB / 16\.8 MB", s) for s in screens), screens
    assert re.fullmatch(r"vadd_kernel x16 on cpu: job [0-9a-f]{32} finished in .*\n", launch.stdout.read())


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # the other end closed
        return b""


@pytest.mark.parametrize("position, shown", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                             (13, "13th"), (21, "21st"), (22, "22nd"), (111, "111th")])
def test_the_progress_line_says_a_queued_jobs_place(position, shown):
    from ascrun.cli.progress import state_of
    assert state_of({"status": "queued", "queue_position": position, "queue_depth": 120}) == f"queued: {shown} of 120"
    assert state_of({"status": "queued"}) == "queued"  # taken by a worker just now: no place

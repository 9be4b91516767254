"""Benchmark mode: the statistics, the stopping rule and the gates (pure), then for real on the
service (one job, repeats with restored inputs, outputs re-checked), `ascrun bench` with its cycle
gates, `ascrun show`, and the pytest marker failing a test on the slower (serial) form of a kernel."""
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

import ascrun
from ascrun.bench import (Baseline, Gates, GateFailed, MarkedBenchmark, baseline_problem, max_cycles_problem,
                          parse_tolerance)
from ascrun.compiler.benchmark import BenchmarkBug, Policy, RunResult, job_policy, measure, stop_rule, summarize
from ascrun.service.submission import submission
from ascrun_cli import ascrun as ascrun_cli
from conftest import ROOT, kernel_line
from hazards import vadd_sync_kernel

pytestmark = pytest.mark.unit

KERNELS = ROOT / "tests" / "kernels"
HAZARDS = f"{KERNELS / 'hazards.py'}::vadd_sync_kernel"
TILE = f"{KERNELS / 'hazards.py'}::vadd_tile_kernel"
CORES, BLOCK = 4, 2048
STAT_KEYS = {"n", "mean", "std", "stderr", "rel_error", "median", "min", "max"}


# -- pure: statistics, stopping rule, measure's loop, policy, gates ---------------------------------

def test_statistics():
    s = summarize([3.0, 1.0, 2.0, 6.0])
    assert (s.n, s.mean, s.median, s.min, s.max) == (4, 3.0, 2.5, 1.0, 6.0)
    assert math.isclose(s.std, math.sqrt(((0 + 4 + 1 + 9) / 3)))  # sample deviation, n-1
    assert math.isclose(s.stderr, s.std / 2) and math.isclose(s.rel_error, s.stderr / 3.0)
    one = summarize([5.0])
    assert (one.mean, one.median, one.std, one.stderr, one.rel_error) == (5.0, 5.0, None, None, None)


def test_stopping_rule():
    policy = Policy(warmup=0, min_repeats=3, max_repeats=5, target_rel_error=0.01, budget_seconds=10)
    assert stop_rule([1.0, 1.0], policy, 0.0) is None  # identical, but fewer than min_repeats
    assert stop_rule([1.0, 1.0, 1.0], policy, 0.0) == "target_rel_error"
    assert stop_rule([1.0, 2.0, 3.0], policy, 0.0) is None
    assert stop_rule([1.0, 2.0, 3.0, 1.0, 2.0], policy, 0.0) == "max_repeats"
    assert stop_rule([1.0, 2.0, 3.0], policy, 10.0) == "budget"
    assert stop_rule([], policy, 99.0) is None  # at least one repeat


def _fake_launch(tensors, clock, cycles=lambda run: 100, kernel_time=None):
    """z += x (so a run that did not start from the inputs shows), 1 s per run on the fake clock."""
    runs = []

    def launch():
        runs.append(len(runs))
        tensors["z"] += tensors["x"]
        clock[0] += 1.0
        timings = {} if kernel_time is None else {"h2d": 0.5, "kernel": kernel_time + 0.001 * len(runs), "d2h": 0.5}
        return RunResult(written=["z"], seconds=0.25 + 0.01 * len(runs), timings=timings,
                         model={"cycles": cycles(len(runs)), "clock_ghz": 1.0})
    return launch, runs


@pytest.mark.kernel
def test_measure_restores_inputs_and_stops_at_max_repeats():
    tensors = {"x": np.arange(4, dtype=np.float32), "z": np.ones(4, np.float32)}
    clock = [0.0]
    launch, runs = _fake_launch(tensors, clock)
    m = measure(launch, tensors, Policy(warmup=2, min_repeats=3, max_repeats=5, target_rel_error=1e-6,
                                        budget_seconds=100), clock=lambda: clock[0])
    assert (m.stopped_by, len(m.samples), m.warmup, len(runs), m.cycles, m.measure) == ("max_repeats", 5, 2, 7, 100,
                                                                                       "wall")
    np.testing.assert_array_equal(tensors["z"], 1 + np.arange(4))  # one run's effect, not seven
    assert m.samples == pytest.approx([0.25 + 0.01 * n for n in range(3, 8)])
    data = m.to_json()
    assert set(data["statistics"]) == STAT_KEYS and data["repeats"] == 5 and data["stopped_by"] == "max_repeats"


def test_measure_budget_and_device_time():
    tensors = {"x": np.ones(2, np.float32), "z": np.zeros(2, np.float32)}
    clock = [0.0]
    launch, runs = _fake_launch(tensors, clock, kernel_time=0.125)
    m = measure(launch, tensors, Policy(warmup=1, max_repeats=100, target_rel_error=1e-9, budget_seconds=3.5),
                clock=lambda: clock[0])
    assert (m.stopped_by, m.warmup, len(m.samples), m.measure) == ("budget", 1, 3, "kernel")
    assert m.samples == pytest.approx([0.127, 0.128, 0.129])  # sim/npu: the device's kernel time, not the wall time
    # a budget capped by the job's time left; spent in the warm-up: one timed repeat still runs
    m = measure(launch, tensors, Policy(warmup=3, budget_seconds=100), clock=lambda: clock[0], budget_cap=0.5)
    assert (m.stopped_by, m.warmup, len(m.samples), m.policy.budget_seconds) == ("budget", 0, 1, 0.5)


def test_measure_fails_loudly_on_changing_cycles_and_nondeterministic_outputs():
    tensors = {"x": np.ones(2, np.float32), "z": np.zeros(2, np.float32)}
    clock = [0.0]
    launch, _ = _fake_launch(tensors, clock, cycles=lambda run: 100 + (run == 3))
    with pytest.raises(BenchmarkBug, match="modeled 101 cycles on run 3 and 100 on the first"):
        measure(launch, tensors, Policy(warmup=0, max_repeats=5), clock=lambda: clock[0])

    calls = []

    def racy():
        calls.append(1)
        tensors["z"][:] = [1.0, float(len(calls) >= 3)]
        return RunResult(written=["z"], seconds=0.1)
    with pytest.raises(ascrun.KernelError) as e:
        measure(racy, tensors, Policy(warmup=0, max_repeats=3))
    assert e.value.kind == "runtime_error"
    assert str(e.value) == ("benchmark: output 'z' of the last repeat (#3) differs from the first run's in 1 of 2 "
                            "elements (first at flat index 1): the kernel is nondeterministic or races")


def test_policy_checks_and_budget_tied_to_the_timeout():
    assert Policy.from_json({}) == Policy()
    for bad, said in [({"warmup": -1}, "warmup must be an integer from 0 to 100"),
                      ({"max_repeats": 0}, "max_repeats must be an integer from 1"),
                      ({"min_repeats": 5, "max_repeats": 4}, "min_repeats (5) exceeds max_repeats (4)"),
                      ({"target_rel_error": 0}, "target_rel_error must be a number from"),
                      ({"budget_seconds": float("inf")}, "budget_seconds must be a number over 0"),
                      ({"repeats": 3}, "unknown setting(s) repeats")]:
        with pytest.raises(ascrun.KernelError, match=re.escape(said)):
            Policy.from_json(bad)
    assert job_policy({}, timeout_s=8)["budget_seconds"] == 4.0  # default: at most half the timeout
    assert job_policy({}, timeout_s=600)["budget_seconds"] == Policy.budget_seconds
    with pytest.raises(ascrun.KernelError, match="budget_seconds 30 must be under the job's timeout of 20 s"):
        job_policy({"budget_seconds": 30}, timeout_s=20)


def _bench(cycles, hazards=0, kernel="k"):
    return ascrun.Benchmark(kernel=kernel, target="cpu", core_num=4, mean=1.0, std=0.0, stderr=0.0, rel_error=0.0,
                            median=1.0, min=1.0, max=1.0, repeats=3, warmup=0, stopped_by="max_repeats",
                            measure="wall", cycles=cycles, clock_ghz=1.0, samples=[1.0] * 3, seconds=3.0,
                            policy={}, result=None, hazards=hazards)


def test_gate_comparisons_and_baseline_file(tmp_path):
    assert max_cycles_problem("k", 100, 100) is None
    assert max_cycles_problem("k", 125, 100) == "k: 125 modeled cycles exceed the limit of 100 (max cycles) by 25 (25%)"
    assert baseline_problem("k", 102, 100, 0.02, "b.json") is None  # at the tolerance: passes
    assert baseline_problem("k", 150, 100, 0.02, "b.json") == (
        "k: 150 modeled cycles regress from the baseline 100 in b.json by 50 (50%; tolerance 2%)")
    assert baseline_problem("k", 50, 100, 0.0, "b.json") is None  # faster never fails
    assert (parse_tolerance("2%"), parse_tolerance("0.02"), parse_tolerance(0)) == (0.02, 0.02, 0.0)
    with pytest.raises(ValueError):
        parse_tolerance("-1%")

    bench = _bench
    path = tmp_path / "base.json"
    with pytest.raises(GateFailed, match=r"k: no baseline in .*base.json: record one with --update-baseline"):
        Gates(baseline=path).enforce(bench(100))
    assert Gates(baseline=path, update=True).enforce(bench(100)) == [f"k: baseline 100 modeled cycles recorded in {path}"]
    assert json.loads(path.read_text()) == {"ascrun_baseline": 1, "kernels": {"k": {"cycles": 100, "target": "cpu",
                                                                                  "core_num": 4}}}
    assert Baseline(path).cycles("k") == 100
    Gates(baseline=path, tolerance=0.1).enforce(bench(110))
    with pytest.raises(GateFailed) as failed:
        Gates(max_cycles=105, baseline=path, tolerance=0.05).enforce(bench(120))
    assert str(failed.value).splitlines() == [
        "k: 120 modeled cycles exceed the limit of 105 (max cycles) by 15 (14.29%)",
        f"k: 120 modeled cycles regress from the baseline 100 in {path} by 20 (20%; tolerance 5%)"]
    no_cycles = bench(None)
    no_cycles.target = "sim"
    with pytest.raises(ascrun.KernelError, match="only the cpu target gives"):
        Gates(max_cycles=1).enforce(no_cycles)

    marked = MarkedBenchmark({"baseline": "base.json", "max_repeats": 3}, "t.py::test_a", tmp_path)
    assert marked.policy == {"max_repeats": 3} and marked.gates.baseline == path
    assert [marked.launch_key("vadd") for _ in range(3)] == ["t.py::test_a::vadd", "t.py::test_a::vadd#2",
                                                             "t.py::test_a::vadd#3"]
    with pytest.raises(TypeError, match="unknown argument.s. repeats"):
        MarkedBenchmark({"repeats": 3}, "t.py::test_a", tmp_path)


def test_no_gate_passes_and_no_baseline_is_recorded_from_a_run_with_hazards(tmp_path):
    path = tmp_path / "base.json"
    racing = ("k: the run has 12 hazard findings (races between pipes that no flag orders, or a SetFlag never "
              "waited for: see its warnings), so its 477 modeled cycles are not the kernel's: ")
    with pytest.raises(GateFailed) as failed:
        Gates(max_cycles=1000, baseline=path, update=True).enforce(_bench(477, hazards=12))
    assert str(failed.value) == racing + "no gate compares them and no baseline is recorded"
    assert not path.exists()
    Gates(baseline=path, update=True).enforce(_bench(751))
    with pytest.raises(GateFailed) as failed:
        Gates(baseline=path, tolerance=0.5).enforce(_bench(477, hazards=12))
    assert str(failed.value) == racing + "no gate compares them"
    with pytest.raises(GateFailed) as failed:  # hazards="off": nothing says the run had none
        Gates(baseline=path, update=True).enforce(_bench(477, hazards=None))
    assert str(failed.value) == ("k: no baseline is recorded from a run whose hazards were not checked (hazards "
                                 "\"off\"): record it with hazards \"warn\" or \"fault\"")
    assert json.loads(path.read_text())["kernels"]["k"]["cycles"] == 751


# -- for real --------------------------------------------------------------------------------------

def _inputs():
    rng = np.random.default_rng(3)
    x, y = rng.random((2, CORES * BLOCK), dtype=np.float32)
    return x, y, np.zeros_like(x)


def _args(x, y, z, pipelined):
    return (x, y, z, BLOCK, 2, 0, 0, 0, pipelined)


@pytest.fixture(scope="module")
def cycles():
    """The modeled cycles of the pipelined and the serial form, in this process."""
    found = {}
    for pipelined in (1, 0):
        x, y, z = _inputs()
        bench = ascrun.benchmark_local(vadd_sync_kernel, CORES, *_args(x, y, z, pipelined), warmup=0, max_repeats=2)
        np.testing.assert_array_equal(z, x + y)
        assert bench.repeats == 2 and bench.stopped_by in ("max_repeats", "target_rel_error")
        found[pipelined] = bench.cycles
    assert found[1] < found[0]  # double buffering overlaps copy-in with compute and copy-out
    return found


def _shape_of(bench):
    stats = bench.to_json()["statistics"]
    assert set(stats) == STAT_KEYS and stats["n"] == bench.repeats == len(bench.samples)
    assert bench.min <= bench.median <= bench.max and bench.min <= bench.mean <= bench.max
    if bench.repeats > 1:
        assert math.isclose(bench.stderr, bench.std / math.sqrt(bench.repeats), rel_tol=1e-9)
        assert math.isclose(bench.rel_error, bench.stderr / bench.mean, rel_tol=1e-9)


@pytest.mark.service
def test_service_benchmark_max_repeats(client, cycles):
    x, y, z = _inputs()
    bench = client.benchmark(vadd_sync_kernel, CORES, *_args(x, y, z, 1), warmup=1, max_repeats=5,
                             target_rel_error=1e-6)
    assert (bench.stopped_by, bench.repeats, bench.warmup, bench.measure) == ("max_repeats", 5, 1, "wall")
    _shape_of(bench)
    assert bench.cycles == cycles[1]  # the same model in the worker's jail as here
    np.testing.assert_array_equal(z, x + y)  # the last repeat's outputs, re-checked against the first's
    np.testing.assert_array_equal(bench.result.outputs["z"], x + y)
    record = client.job(bench.job_id)
    assert record["benchmark"]["repeats"] == 5 and record["benchmark"]["policy"]["max_repeats"] == 5


@pytest.mark.service
def test_service_benchmark_budget_and_loose_target(client):
    x, y, z = _inputs()
    tiny = client.benchmark(vadd_sync_kernel, CORES, *_args(x, y, z, 0), budget_seconds=1e-4)
    assert (tiny.stopped_by, tiny.repeats, tiny.warmup) == ("budget", 1, 0)  # the first run spent it
    _shape_of(tiny)
    np.testing.assert_array_equal(z, x + y)
    loose = client.benchmark(vadd_sync_kernel, CORES, *_args(x, y, np.zeros_like(x), 1), warmup=0, min_repeats=2,
                             target_rel_error=1.0)  # |a-b|/(a+b) < 1 for any two positive times
    assert (loose.stopped_by, loose.repeats) == ("target_rel_error", 2)
    _shape_of(loose)


@pytest.mark.service
def test_async_client_benchmark(service):
    import asyncio

    async def go():
        async with ascrun.AsyncClient(service.url) as client:
            x, y, z = _inputs()
            bench = await client.benchmark(vadd_sync_kernel, CORES, *_args(x, y, z, 1), warmup=0, max_repeats=2)
            np.testing.assert_array_equal(z, x + y)
            return bench
    bench = asyncio.run(go())
    assert bench.repeats == 2 and bench.cycles is not None


@pytest.mark.service
@pytest.mark.parametrize("policy, said", [
    ({"warmup": -1}, "benchmark.warmup"), ({"max_repeats": 0}, "benchmark.max_repeats"),
    ({"max_repeats": 10**6}, "benchmark.max_repeats"), ({"min_repeats": 9, "max_repeats": 4}, "min_repeats (9) exceeds"),
    ({"target_rel_error": -0.1}, "benchmark.target_rel_error"), ({"budget_seconds": 0}, "benchmark.budget_seconds"),
    ({"repeats": 5}, "benchmark.repeats"), ({"budget_seconds": 30}, "budget_seconds 30 must be under the job's timeout of 20 s"),
])
def test_bad_policies_are_422(service, policy, said):
    import httpx
    x, y, z = _inputs()
    body = dict(submission(vadd_sync_kernel, CORES, _args(x[:64], y[:64], z[:64], 1)).body, timeout=20,
                benchmark=policy)
    response = httpx.post(f"{service.url}/v1/jobs", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["kind"] == "bad_request" and said in error["message"], error["message"]


def _bench_cli(service, folder, pipelined, *extra):
    x, y, z = _inputs()
    for name, array in (("x", x), ("y", y), ("z", z)):
        np.save(folder / f"{name}.npy", array)
    return ascrun_cli("bench", "--url", service.url, HAZARDS, "--cores", CORES, "--arg", f"x=@{folder / 'x.npy'}",
                      "--arg", f"y=@{folder / 'y.npy'}", "--arg", f"z=@{folder / 'z.npy'}", "--arg",
                      f"block_length={BLOCK}", "--arg", "buffer_num=2", "--arg", "drop=0", "--arg", "wrong_id=0",
                      "--arg", "extra_set=0", "--arg", f"pipelined={pipelined}", "--warmup", 1, "--max-repeats", 3,
                      *extra), x + y


@pytest.mark.service
def test_cli_gates(service, tmp_path, cycles):
    baseline = tmp_path / "bench.json"
    limit = (cycles[0] + cycles[1]) // 2
    out, _ = _bench_cli(service, tmp_path, 1, "--baseline", baseline, "--update-baseline", "--max-cycles", limit)
    assert out.returncode == 0, out.stderr
    assert json.loads(baseline.read_text())["kernels"] == {
        "vadd_sync_kernel": {"cycles": cycles[1], "target": "cpu", "core_num": CORES}}
    assert f"gate: vadd_sync_kernel: {cycles[1]} modeled cycles, within the limit of {limit}" in out.stdout

    out, _ = _bench_cli(service, tmp_path, 0, "--baseline", baseline, "--tolerance", "2%", "--max-cycles", limit)
    assert out.returncode == 1, out.stdout + out.stderr
    slower = cycles[0] - cycles[1]
    assert out.stderr.splitlines() == [
        f"ascrun: gate failed: vadd_sync_kernel: {cycles[0]} modeled cycles exceed the limit of {limit} (max cycles) "
        f"by {cycles[0] - limit} ({(cycles[0] - limit) / limit * 100:.4g}%)",
        f"ascrun: gate failed: vadd_sync_kernel: {cycles[0]} modeled cycles regress from the baseline {cycles[1]} in "
        f"{baseline} by {slower} ({slower / cycles[1] * 100:.4g}%; tolerance 2%)"]

    out, expected = _bench_cli(service, tmp_path, 1, "--baseline", baseline, "--json", "--out",
                               f"z={tmp_path / 'out.npy'}")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["cycles"] == cycles[1] and report["repeats"] == 3 and report["gates"]["failed"] == []
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)

    shown = ascrun_cli("show", report["job_id"], "--url", service.url).stdout.splitlines()
    [line] = [line for line in shown if line.startswith("benchmark ")]
    assert re.fullmatch(rf"benchmark wall time median [0-9.]+ us, mean [0-9.]+ us ± [0-9.]+ \(std [0-9.]+, rel\. "
                        rf"error [0-9.]+%\), min [0-9.]+, max [0-9.]+; 3 repeats after 1 warm-up, stopped by "
                        rf"(max_repeats|target_rel_error); {cycles[1]} modeled cycles", line), line


MARKED_TESTS = '''
import sys
import numpy as np
import pytest
sys.path.insert(0, {kernels!r})
from hazards import vadd_sync_kernel


def run(pipelined):
    x, y = np.random.default_rng(5).random((2, {cores} * {block}), dtype=np.float32)
    z = np.zeros_like(x)
    vadd_sync_kernel[{cores}](x, y, z, {block}, 2, 0, 0, 0, pipelined)
    np.testing.assert_array_equal(z, x + y)


@pytest.mark.ascrun_benchmark(baseline="bench.json", key="vadd", warmup=1, max_repeats=2)
@pytest.mark.parametrize("pipelined", [1, 0])
def test_baseline(pipelined):
    run(pipelined)


@pytest.mark.ascrun_benchmark(max_cycles={limit}, warmup=0, max_repeats=2)
@pytest.mark.parametrize("pipelined", [1, 0])
def test_limit(pipelined):
    run(pipelined)
'''


@pytest.mark.service
def test_pytest_marker_fails_the_serial_kernel(service, tmp_path, cycles):
    limit = (cycles[0] + cycles[1]) // 2
    (tmp_path / "test_marked.py").write_text(MARKED_TESTS.format(kernels=str(KERNELS), cores=CORES, block=BLOCK,
                                                                 limit=limit))

    def pytest_run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                               "--ascrun-url", service.url, *args], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300)
    recorded = pytest_run("--ascrun-update-baseline", "test_marked.py::test_baseline[1]")
    assert recorded.returncode == 0, recorded.stdout
    assert json.loads((tmp_path / "bench.json").read_text())["kernels"]["vadd"]["cycles"] == cycles[1]

    out = pytest_run("-rA", "test_marked.py")
    assert out.returncode == 1, out.stdout
    lines = out.stdout.splitlines()
    assert re.fullmatch(r"=+ 2 failed, 2 passed in [0-9.]+s( \(.*\))? =+", lines[-1]), lines[-1]
    failures = [re.sub(r"^E +", "", line) for line in lines if line.startswith("E ")]
    assert failures == [
        f"ascrun.bench.GateFailed: vadd: {cycles[0]} modeled cycles regress from the baseline {cycles[1]} in "
        f"{tmp_path / 'bench.json'} by {cycles[0] - cycles[1]} ({(cycles[0] - cycles[1]) / cycles[1] * 100:.4g}%; "
        "tolerance 0%)",
        f"ascrun.bench.GateFailed: test_marked.py::test_limit[0]::vadd_sync_kernel: {cycles[0]} modeled cycles exceed "
        f"the limit of {limit} (max cycles) by {cycles[0] - limit} ({(cycles[0] - limit) / limit * 100:.4g}%)"]
    # the traceback ends at the launch, not inside ascrun
    assert lines.count("test_marked.py:12: GateFailed") == 2 and not [line for line in lines if "bench.py:" in line]
    assert "PASSED test_marked.py::test_baseline[1]" in lines and "PASSED test_marked.py::test_limit[1]" in lines
    # each launch's statistics are in the test's ascrun report section
    assert sum(line.startswith("benchmark: vadd_sync_kernel x4 on cpu: wall time median ") for line in lines) >= 2


def _tile_cli(service, folder, command, synced, *extra):
    """`ascrun bench` or `launch` of vadd_tile_kernel, with its flags (synced 1) or without (0), on one
    block (so that which block faults first, and the warnings' counts, are always the same)."""
    x, y = np.random.default_rng(9).random((2, 1024), dtype=np.float32)
    for name, array in (("x", x), ("y", y), ("z", np.zeros_like(x))):
        np.save(folder / f"{name}.npy", array)
    return ascrun_cli(command, "--url", service.url, TILE, "--cores", 1,
                      *[f"--arg={n}=@{folder / n}.npy" for n in "xyz"], "--arg=n=1024", f"--arg=synced={synced}",
                      *(("--warmup", 0, "--max-repeats", 2) if command == "bench" else ()), *extra)


def _without_job_ids(text):
    return re.sub(r"job [0-9a-f]{12,32}", "job ID", text)


@pytest.mark.service
def test_cli_bench_applies_the_hazards_policy_as_launch_does(service, tmp_path):
    baseline = tmp_path / "bench.json"
    # --hazards fault: the same failure, exit code and message as `ascrun launch`
    launched = _tile_cli(service, tmp_path, "launch", 0, "--hazards", "fault")
    benched = _tile_cli(service, tmp_path, "bench", 0, "--hazards", "fault", "--baseline", baseline,
                        "--update-baseline")
    assert (benched.returncode, launched.returncode) == (1, 1)
    add, copy_x = (kernel_line(ROOT / "tests/kernels/hazards.py", text, after="def vadd_tile_kernel")
                   for text in ("asc.add(", "asc.data_copy(x_local"))
    race = (f"{add}: block 0: V Add reads UB [0x0, 0x1000) written by MTE2 DataCopy(GM->UB) at {copy_x} with no "
            "MTE2->V flag between them (hazards=\"fault\")")
    assert _without_job_ids(benched.stderr).splitlines() == [
        f"ascrun: vadd_tile_kernel x1 on cpu: job ID failed: runtime_error: {race}"]
    assert _without_job_ids(benched.stderr) == _without_job_ids(launched.stderr)
    assert not baseline.exists()

    # warn (the default): the warnings as launch prints them; no gate passes, no baseline is recorded
    launched = _tile_cli(service, tmp_path, "launch", 0)
    benched = _tile_cli(service, tmp_path, "bench", 0, "--baseline", baseline, "--update-baseline", "--max-cycles",
                        10**6, "--json")
    assert (launched.returncode, benched.returncode) == (0, 1), benched.stderr
    warnings = [line for line in launched.stderr.splitlines() if line.startswith("ascrun: warning: ")]
    assert warnings and warnings[0].startswith(f"ascrun: warning: {add}: block 0: V Add reads UB [0x0, 0x1000) "
                                               f"written by MTE2 DataCopy(GM->UB) at {copy_x} with no MTE2->V flag "
                                               "between them")
    report = json.loads(benched.stdout)  # --json: the warnings are in the report, as launch's
    assert report["hazards"] == 3 and report["gates"]["passed"] == []
    assert report["warnings"] == [line.removeprefix("ascrun: warning: ") for line in warnings]
    assert benched.stderr.splitlines() == [
        f"ascrun: gate failed: vadd_tile_kernel: the run has 3 hazard findings (races between pipes that no flag "
        f"orders, or a SetFlag never waited for: see its warnings), so its {report['cycles']} modeled cycles are not "
        "the kernel's: no gate compares them and no baseline is recorded"]
    assert not baseline.exists()

    # --hazards off: nothing says the run had none
    benched = _tile_cli(service, tmp_path, "bench", 0, "--hazards", "off", "--baseline", baseline, "--update-baseline")
    assert benched.returncode == 1 and benched.stderr.splitlines() == [
        "ascrun: gate failed: vadd_tile_kernel: no baseline is recorded from a run whose hazards were not checked "
        "(hazards \"off\"): record it with hazards \"warn\" or \"fault\""]
    assert not baseline.exists()

    # the kernel with its flags: recorded, and slower than the racing form's modeled cycles
    benched = _tile_cli(service, tmp_path, "bench", 1, "--hazards", "fault", "--baseline", baseline,
                        "--update-baseline", "--json")
    assert benched.returncode == 0, benched.stderr
    synced = json.loads(benched.stdout)
    assert synced["hazards"] == 0 and synced["cycles"] > report["cycles"]
    assert json.loads(baseline.read_text())["kernels"]["vadd_tile_kernel"]["cycles"] == synced["cycles"]

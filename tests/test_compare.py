"""compare=: compare_outputs on crafted outputs of two runs (exact reports), then launches compared
through the real service (Client, AsyncClient, `ascrun exec --compare`)."""
import asyncio
import json

import numpy as np
import pytest

import ascrun
import ops
from ascrun_cli import PYASC_STYLE, ascrun as run_ascrun
from ascrun.compare import CHUNK, SHOWN, compare_outputs

pytestmark = pytest.mark.unit


def test_equal_outputs_match():
    z = np.arange(12, dtype=np.int32).reshape(3, 4)
    comparison = compare_outputs({"z": z, "m": z > 5}, {"z": z.copy(), "m": z > 5}, "sim", "cpu")
    assert comparison.matches
    assert comparison.differing == {"z": 0, "m": 0}
    assert comparison.summary() == "sim vs cpu: match (2 output(s) within tolerance)"


def test_integers_must_be_equal():
    a = np.zeros((2, 3), dtype=np.int32)
    b = a.copy()
    b[1, 2] = 1
    comparison = compare_outputs({"z": a}, {"z": b}, "sim", "cpu")
    assert not comparison.matches
    assert comparison.differing == {"z": 1}
    assert comparison.summary() == "sim vs cpu: MISMATCH: 1 element(s) of z differ\n  z[1, 2]: 0 vs 1"


def test_float_tolerance_per_dtype():
    # float32: rtol 1.3e-6, atol 1e-5. 1000 vs 1000.001 is 1e-6 relative: within; 1000.01 is not.
    a = np.array([1000.0, 1000.0, 0.0, np.nan, np.inf], dtype=np.float32)
    b = np.array([1000.001, 1000.01, 5e-6, np.nan, np.inf], dtype=np.float32)
    comparison = compare_outputs({"z": a}, {"z": b}, "npu", "cpu")
    assert comparison.differing == {"z": 1}
    assert [str(d) for d in comparison.first] == [f"z[1]: 1000.0 vs {float(np.float32(1000.01))!r}"]
    # one float16 ulp at 1.0 (2**-10) is within float16's rtol 1e-3, not within float32's
    one, next_up = np.array([1.0]), np.array([1.0 + 2 ** -10])
    assert compare_outputs({"z": one.astype(np.float16)}, {"z": next_up.astype(np.float16)}, "npu", "cpu").matches
    assert not compare_outputs({"z": one.astype(np.float32)}, {"z": next_up.astype(np.float32)}, "npu", "cpu").matches


def test_nan_against_a_number_and_infinities_against_anything_else_differ():
    a = np.array([np.nan, np.inf, 1.0, np.inf], dtype=np.float32)
    b = np.array([1.0, -np.inf, 1.0, 3e38], dtype=np.float32)
    comparison = compare_outputs({"z": a}, {"z": b}, "sim", "cpu")
    assert comparison.differing == {"z": 3}
    assert [d.index for d in comparison.first] == [(0,), (1,), (3,)]
    assert (comparison.first[1].value, comparison.first[1].other) == (float("inf"), float("-inf"))


def test_first_differences_are_capped_across_outputs_in_order():
    a = np.zeros(100, dtype=np.int16)
    b = np.ones(100, dtype=np.int16)
    y = np.zeros(4, dtype=np.uint8)
    comparison = compare_outputs({"y": y, "z": a}, {"y": y + 1, "z": b}, "sim", "cpu")
    assert comparison.differing == {"y": 4, "z": 100}
    assert len(comparison.first) == SHOWN
    assert [(d.output, d.index) for d in comparison.first] == [("y", (i,)) for i in range(4)] + \
        [("z", (i,)) for i in range(SHOWN - 4)]
    assert comparison.to_json()["first"][0] == {"output": "y", "index": [0], "value": 0, "other": 1}


def test_outputs_that_cannot_be_compared_are_problems():
    z = np.zeros(4, dtype=np.float32)
    comparison = compare_outputs({"z": z, "w": z}, {"z": z.astype(np.float16), "v": z}, "sim", "cpu")
    assert not comparison.matches
    assert comparison.problems == ["v written on cpu only", "w written on sim only", "z is float32[4] vs float16[4]"]


def test_indices_are_exact_across_chunks():
    a = np.zeros((3, CHUNK // 2 + 1), dtype=np.int8)
    b = a.copy()
    b[0, -1], b[2, 5] = 7, -3
    comparison = compare_outputs({"z": a}, {"z": b}, "sim", "cpu")
    assert comparison.differing == {"z": 2}
    assert [(d.index, d.value, d.other) for d in comparison.first] == [((0, CHUNK // 2), 0, 7), ((2, 5), 0, -3)]


# -- through the service: the same launch on a second target (cpu, the only one this host serves) --

def _xy(size):
    rng = np.random.default_rng(13)
    return rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)


@pytest.mark.service
def test_launch_compared_with_cpu_matches_and_runs_two_jobs(client):
    x, y = _xy(4 * 8192)  # 128 KiB a tensor: uploaded as blobs, once for both jobs
    z = np.zeros_like(x)
    result = client.launch(ops.binary_kernel, 4, x, y, z, 8192, "add", compare="cpu")
    np.testing.assert_array_equal(z, x + y)
    comparison = result.comparison
    assert (comparison.target, comparison.other, comparison.matches) == ("cpu", "cpu", True)
    assert (comparison.differing, comparison.first, comparison.problems) == ({"z": 0}, [], [])
    jobs = client.jobs(limit=2)
    assert [(j["kernel"], j["target"], j["status"]) for j in jobs] == [("binary_kernel", "cpu", "finished")] * 2
    assert result.job_id in {j["id"] for j in jobs} and jobs[0]["id"] != jobs[1]["id"]


@pytest.mark.service
def test_async_launch_compared_with_cpu_matches(service):
    x, y = _xy(1024)
    z = np.zeros(1024, np.int32)

    async def main():
        async with ascrun.AsyncClient(service.url) as client:
            return await client.launch(ops.binary_kernel, 2, x.astype(np.int32), y.astype(np.int32) + 5, z, 512,
                                       "max", compare="cpu")

    result = asyncio.run(main())
    np.testing.assert_array_equal(z, np.full(1024, 5, np.int32))
    assert result.comparison.matches and result.comparison.differing == {"z": 0}


@pytest.mark.service
def test_exec_compare_reports_each_launch(service):
    out = run_ascrun("exec", "--json", "--compare", "cpu", "--url", service.url, PYASC_STYLE / "test_vadd.py")
    assert out.returncode == 0, out.stderr
    [launch] = json.loads(out.stdout)["launches"]
    assert launch["comparison"] == {"target": "cpu", "other": "cpu", "matches": True, "differing": {"z": 0},
                                    "first": [], "problems": []}
    assert "ascrun: compare vadd_kernel: cpu vs cpu: match (1 output(s) within tolerance)" in out.stderr.splitlines()


@pytest.mark.service
def test_compare_with_a_target_no_worker_serves_names_the_comparison_run(service):
    x = np.ones(1024, np.float32)
    with ascrun.Client(service.url, retries=0) as client, pytest.raises(ascrun.KernelError) as error:
        client.launch(ops.binary_kernel, 1, x, x, np.zeros_like(x), 1024, "add", compare="sim")
    assert (error.value.kind, str(error.value)) == (
        "unavailable", "the comparison run on 'sim' failed: no worker serves target 'sim' right now")


@pytest.mark.service
def test_launch_command_compare_reports_in_its_json(service, tmp_path):
    x, y = _xy(1024)
    for name, array in (("x", x), ("y", y), ("z", np.zeros_like(x))):
        np.save(tmp_path / f"{name}.npy", array)
    out = run_ascrun("launch", "--json", "--compare", "cpu", "--url", service.url,
                     f"{ops.__file__}::binary_kernel", "--cores", 1, *[f"--arg={n}=@{tmp_path / n}.npy" for n in "xyz"],
                     "--arg", "n=1024", "--arg", "op=mul", "--out", f"z={tmp_path / 'out.npy'}")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["comparison"]["matches"] is True
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), x * y)

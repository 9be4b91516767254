"""Every malformed or hostile request gets a 4xx that says what is wrong; kernels that try to
reach the host at compile time are refused; hogs end their own job only."""
import hashlib

import httpx
import numpy as np
import pytest

import ascrun
import ops
from conftest import load_module

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def api(service):
    with httpx.Client(base_url=service.url, timeout=60) as http:
        yield http


@pytest.fixture(scope="module")
def job(api):
    """A valid submission of ops.spin_kernel (x, z, rounds), its blobs uploaded."""
    x = np.ones(64, np.float32)
    digest = hashlib.sha256(x.tobytes()).hexdigest()
    assert api.put(f"/v1/blobs/{digest}", content=x.tobytes()).status_code == 201
    tensor = {"kind": "tensor", "blob": digest, "dtype": "float32", "shape": [64]}
    return {"bundle": ascrun.compiler.bundle.collect(ops.spin_kernel).to_json(), "core_num": 1,
            "args": [tensor, tensor, {"kind": "scalar", "dtype": "int", "value": 1}]}


def _error(response, status):
    assert response.status_code == status, response.text
    return response.json()["error"]


def test_valid_submission_runs(api, job):
    record = api.post("/v1/jobs", json=job, params={"wait": 30}).json()
    assert record["status"] == "finished"


def test_malformed_json_and_wrong_types(api, job):
    error = _error(api.post("/v1/jobs", content=b"{not json", headers={"Content-Type": "application/json"}), 422)
    assert error["kind"] == "bad_request" and "JSON" in error["message"]
    error = _error(api.post("/v1/jobs", json={**job, "core_num": "eight"}), 422)
    assert "core_num" in error["message"] and "integer" in error["message"]
    error = _error(api.post("/v1/jobs", json={**job, "target": "gpu"}), 422)
    assert "target" in error["message"] and "'cpu'" in error["message"]


@pytest.mark.parametrize("core_num", [0, -3, 10**9])
def test_negative_or_huge_core_num(api, job, core_num):
    error = _error(api.post("/v1/jobs", json={**job, "core_num": core_num}), 422)
    assert "core_num" in error["message"]


def test_dtype_or_shape_disagreeing_with_the_blob(api, job):
    wrong = dict(job["args"][0], shape=[32])
    error = _error(api.post("/v1/jobs", json={**job, "args": [wrong] + job["args"][1:]}), 400)
    assert error["message"] == "tensor 'x': float32[32] needs 128 bytes but its blob has 256"
    wrong = dict(job["args"][0], dtype="float64")
    error = _error(api.post("/v1/jobs", json={**job, "args": [wrong] + job["args"][1:]}), 400)
    assert error["message"] == "tensor 'x': float64[64] needs 512 bytes but its blob has 256"


def test_missing_and_corrupted_blobs(api, job):
    absent = dict(job["args"][0], blob="f" * 64)
    error = _error(api.post("/v1/jobs", json={**job, "args": [absent] + job["args"][1:]}), 409)
    assert error["kind"] == "missing_blobs" and error["missing"] == ["f" * 64]
    error = _error(api.put(f"/v1/blobs/{'0' * 64}", content=b"not what the digest says"), 400)
    assert "corrupted upload" in error["message"]
    assert _error(api.put("/v1/blobs/not-a-digest", content=b"x"), 422)["kind"] == "bad_request"


def test_argument_list_not_matching_the_signature(api, job):
    error = _error(api.post("/v1/jobs", json={**job, "args": job["args"][:2]}), 400)
    assert error["message"] == "kernel 'spin_kernel' takes 3 arguments (x, z, rounds), got 2"


def _with_body(job, old, new):
    bundle = job["bundle"]
    functions = [dict(f, source=f["source"].replace(old, new, 1)) for f in bundle["functions"]]
    return {**job, "bundle": {**bundle, "functions": functions}}


@pytest.mark.parametrize("statement,why", [
    ("import os", "imports are not allowed in kernels"),
    ("exec('import os')", "reads 'exec', which the bundle does not define"),
    ("__import__('os').system('true')", "dunder name '__import__' is not allowed"),
    ("x.__class__.__mro__", "dunder attribute '__mro__' is not allowed"),
    ("len(UNDEFINED_NAME)", "reads 'UNDEFINED_NAME', which the bundle does not define"),
    ("spin_kernel(x, z, rounds)", "kernel 'spin_kernel' calls itself (spin_kernel -> spin_kernel)"),
])
def test_hostile_or_broken_bundles_are_rejected_before_running(api, job, statement, why):
    hostile = _with_body(job, "    x_gm = asc.GlobalTensor()", f"    {statement}\n    x_gm = asc.GlobalTensor()")
    error = _error(api.post("/v1/jobs", json=hostile), 422)
    assert error["kind"] == "bundle_rejected" and why in error["message"]


def test_options_are_a_closed_set_of_typed_values(api, job):
    """Issue 25, 3: `options` was any dict, kept whole in the job's spec for a day (20 jobs of 12 MiB
    of junk options added 277 MiB); it is pyasc's options a job may set, each of its type."""
    error = _error(api.post("/v1/jobs", json={**job, "options": {"junk": "x" * 4096}}), 422)
    assert error["kind"] == "bad_request"
    assert error["message"].startswith("invalid request: body.options.junk: Extra inputs are not permitted")
    error = _error(api.post("/v1/jobs", json={**job, "options": {"opt_level": 7}}), 422)
    assert error["message"].startswith("invalid request: body.options.opt_level: Input should be less than or equal "
                                       "to 3")
    error = _error(api.post("/v1/jobs", json={**job, "options": {"bisheng_options": ["-fplugin=x.so"]}}), 422)
    assert "body.options.bisheng_options: Extra inputs are not permitted" in error["message"]
    record = api.post("/v1/jobs", json={**job, "options": {"opt_level": 3, "debug": False}}, params={"wait": 30})
    assert record.json()["status"] == "finished", record.text


def test_every_string_and_collection_of_a_submission_is_bounded(api, job):
    """Each name, literal and list of a bundle has a size, checked before anything is kept."""
    bundle = job["bundle"]
    many = {**bundle, "modules": {f"m{i}": "numpy" for i in range(1025)}}
    error = _error(api.post("/v1/jobs", json={**job, "bundle": many}), 422)
    assert "body.bundle.modules: Dictionary should have at most 1024 items" in error["message"]
    long_name = {**bundle, "constants": {"N" * 257: "1"}}
    error = _error(api.post("/v1/jobs", json={**job, "bundle": long_name}), 422)
    assert "String should have at most 256 characters" in error["message"]
    literal = {**bundle, "constants": {"N": "1" * (64 << 10 | 1)}}
    error = _error(api.post("/v1/jobs", json={**job, "bundle": literal}), 422)
    assert "String should have at most 65536 characters" in error["message"]
    text = {"kind": "scalar", "dtype": "str", "value": "x" * (64 << 10 | 1)}
    error = _error(api.post("/v1/jobs", json={**job, "args": job["args"][:2] + [text]}), 422)
    assert "String should have at most 65536 characters" in error["message"]


def test_enormous_source_is_refused(api, job):
    huge = _with_body(job, '"""', '"""' + "#" * (2 << 20))
    error = _error(api.post("/v1/jobs", json=huge), 413)
    assert "(max_bundle_bytes)" in error["message"]


@pytest.mark.parametrize("action", [
    "asc.runtime.compiler.os.open('/etc/passwd', 0)",  # read a file
    "asc.runtime.compiler.subprocess.Popen(['touch', '{marker}'])",  # spawn a process
    "asc.lib.runtime.interface.os.system('touch {marker}')",  # spawn through a shell
    "asc.runtime.jit.pickle.loads(b'')",  # reach anything importable
])
def test_kernel_cannot_touch_the_host_at_compile_time(client, tmp_path, action):
    marker = tmp_path / "touched"
    path = tmp_path / "hostile.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef hostile(x: asc.GlobalAddress):\n"
                    f"    {action.format(marker=marker)}\n")
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(load_module(path).hostile, 1, np.zeros(8, np.float32))
    assert e.value.kind == "bundle_rejected"
    assert "kernels may use only asc's kernel language" in str(e.value)
    assert not marker.exists()


def test_memory_hog_ends_its_job_only(client, tmp_path):
    path = tmp_path / "hog.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef hog(x: asc.GlobalAddress):\n"
                    "    table = (0,) * 4_000_000_000\n    asc.pipe_barrier(asc.PipeID.PIPE_ALL)\n")
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(load_module(path).hog, 1, np.zeros(8, np.float32))
    assert e.value.kind == "limit" and "ran out of memory" in str(e.value)
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    client.launch(ops.spin_kernel, 1, x, z, 1)
    np.testing.assert_array_equal(z, x + 1)

"""The launch report: what kernels print (printf, DumpTensor, DumpAccChkPoint) returned as
LaunchResult.log, warnings, DataCopy's count form rounded down, and the bounds policy; through
run_local, the service (Client, AsyncClient, remote, the HTTP API), the CLI and the pytest plugin.

The expected text is built here from the format the reference shows (上板打印/printf.md,
DumpTensor.md, DumpAccChkPoint.md; the "[AIV Block i/n] " prefix of asc-devkit's printf impl)."""
import asyncio
import json
import re
import subprocess
import sys

import httpx
import numpy as np
import pytest

import ascrun
import report as rk
from ascrun_cli import PYASC_STYLE, ascrun as ascrun_cmd
from conftest import PAST_THE_END, ROOT, kernel_line, unsited

pytestmark = pytest.mark.kernel

KERNELS = ROOT / "tests" / "kernels" / "report.py"
N = 16
BLOCK_LOG = 1 << 20
LAUNCH_LOG = 4 << 20
GUARD = 1 << 20
WARN_UB = " (bounds=warn: the Unified Buffer after it was accessed)"
WARN_READ = " (bounds=warn: the part past its end came from a guard zone)"
WARN_WRITE = " (bounds=warn: the part past its end went to a guard zone, dropped after the launch)"


# --- the model of the host's print ------------------------------------------------------------

def _values(data) -> str:
    return ", ".join(f"{float(v):f}" if np.dtype(data.dtype).kind == "f" else str(int(v)) for v in data)


def _dump(desc, addr, dtype, position, data, shape=None) -> str:
    head = f"DumpTensor: desc={desc}, addr={addr:#x}, data_type={dtype}, position={position}, dump_size={len(data)}\n"
    if shape is None:
        return head + f"[{_values(data)}]\n"
    size = int(np.prod(shape))
    dims = ", ".join(map(str, shape))
    if size < len(data):
        head += f"shape is [{dims}], dumpSize is {len(data)}, dumpSize is greater than shapeSize.\n"
    elif size > len(data):
        head += f"shape is [{dims}], dumpSize is {len(data)}, data is not enough.\n"
    cells = [f"{float(v):f}" if data.dtype.kind == "f" else str(int(v)) for v in data[:size]]
    cells += ["-"] * (size - len(cells))
    rows = [", ".join(cells[r * shape[1]:(r + 1) * shape[1]]) for r in range(shape[0])]
    return head + "[" + ",\n".join(f"[{row}]" for row in rows) + "]\n"


def expected_print_log(x, h, k, blocks, n, scale) -> str:
    out = []
    for b in range(blocks):
        xs, hs, ks = x[b * n:(b + 1) * n], h[b * n:(b + 1) * n], k[b * n:(b + 1) * n]
        tag = f"[AIV Block {b}/{blocks}] "
        out += [tag + f"block {b} of {blocks}: n={n} scale={scale:f}\n",
                tag + f"text {n} {-n & (2**64 - 1):x} {n:5d}|{b:<4d}|{scale:.2f} %\n",
                _dump(1, 0, "float32", "UB", xs[:4]),
                _dump(2, b * n * 2, "float16", "GM", hs[:3]),
                _dump(3, 0x18000, "int32", "UB", ks[:5]),
                _dump(4, 0, "float32", "UB", xs[:6], (2, 3)),
                _dump(5, 0x18000, "int32", "UB", ks[:4], (2, 3)),
                _dump(6, 0x18000, "int32", "UB", ks[:8], (3, 2)),
                _dump(7, 8 * 4, "float32", "UB", xs[8:10]),
                _dump(8, (b * n + 3) * 4, "int32", "GM", ks[3:5])]
    return "".join(out)


def print_inputs(blocks, n=N):
    x = ((np.arange(blocks * n) - 7) / 4).astype(np.float32)
    h = (np.arange(blocks * n) / 8 - 1).astype(np.float16)
    k = (np.arange(blocks * n) * 3 - 20).astype(np.int32)
    return x, h, k


# --- printing through run_local -----------------------------------------------------------------

def test_printf_and_dumps_of_a_multi_block_kernel():
    x, h, k = print_inputs(3)
    result = ascrun.run_local(rk.print_kernel, 3, x, h, k, N, 0, 0, 1.5)
    assert result.log == expected_print_log(x, h, k, 3, N, 1.5)
    assert result.warnings == []
    assert result.outputs == {}  # printing writes no tensor


def _round_lines(block, blocks, rounds):
    tag = f"[AIV Block {block}/{blocks}] "
    return [f"{tag}round {i}: {'0123456789' * 7}\n" for i in range(rounds)]


def test_log_is_capped_per_block_and_per_launch():
    """6 blocks print ~2 MB each: each keeps its first 1 MiB of whole records and a marker; the
    launch keeps the first 4 MiB of the block-ordered text (whole lines) and a marker."""
    blocks, rounds = 6, 20000
    x, h, k = print_inputs(blocks)
    result = ascrun.run_local(rk.print_kernel, blocks, x, h, k, N, 1, rounds, 0.0)
    text = ""
    for b in range(blocks):
        kept, size = [], 0
        for line in _round_lines(b, blocks, rounds):
            if size + len(line) > BLOCK_LOG:
                break
            kept.append(line)
            size += len(line)
        text += "".join(kept) + (f"[ascrun] block {b} printed more than {BLOCK_LOG} bytes (a core's dump space); the "
                                 "rest of its output was dropped\n")
    cut = text[:LAUNCH_LOG]
    expected = cut[:cut.rfind("\n") + 1] + f"[ascrun] the log is cut at {LAUNCH_LOG} bytes; the rest was dropped\n"
    assert result.log == expected
    assert "[AIV Block 3/6]" in result.log and "[AIV Block 4/6]" not in result.log
    assert len(result.log) <= LAUNCH_LOG + 100


@pytest.mark.parametrize("mode, message", [
    (2, r'printf("%e\n"): %e is not a conversion the device supports (d i u x f F s p, with l or ll)'),
    (3, r'printf("%d\n"): conversion 1 (%d) takes an integer'),
    (4, r'printf("%d %d\n"): more conversions than the 1 arguments'),
    (5, "DumpTensor: the ShapeInfo was default-constructed, which leaves its shape undefined on the device "
        "(construct it from a shape, e.g. asc.ShapeInfo(asc.array(asc.uint32, [rows, cols])))"),
    (6, r'printf("%d\n"): 2 arguments for 1 conversions'),
    (7, 'printf("%#d\\n"): flag \'#\' is not defined for %d'),
    (8, "ShapeInfo: 9 dimensions, more than the 8 a ShapeInfo holds"),
    (10, r'printf("%*d\n"): a width taken from the arguments (*) is not supported by the device'),
    (11, r'printf("%5000d\n"): a field width over 4096'),
    (12, 'printf("100%"): the format ends inside a conversion'),
])
def test_what_the_device_does_not_define_faults(mode, message):
    x, h, k = print_inputs(1)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(rk.print_kernel, 1, x, h, k, N, mode, 0, 1.5)
    assert e.value.kind == "runtime_error"
    assert unsited(str(e.value)) == f"block 0: {message}"
    # what the block printed before it faulted comes with the error
    assert e.value.log == ("[AIV Block 0/1] about to fail\n" if mode == 4 else "")


def test_printf_of_a_pointer():
    x, h, k = print_inputs(1)
    log = ascrun.run_local(rk.print_kernel, 1, x, h, k, N, 13, 0, 0.0).log
    assert re.fullmatch(r"\[AIV Block 0/1\] (0x[0-9a-f]+) (0x[0-9a-f]+) *\|\n", log)
    first, second = log.split()[3:5]
    assert first == second and len(log.split("|")[0]) == len(f"[AIV Block 0/1] {first} ") + 20


@pytest.mark.parametrize("n, printed", [(7680, True), (7696, False)])
def test_a_dump_over_30_kb_prints_nothing(n, printed):
    x, h, k = print_inputs(1, n)
    result = ascrun.run_local(rk.print_kernel, 1, x, h, k, n, 9, 0, 0.0)
    if printed:  # 7680 floats: exactly 30 KB
        assert result.log == _dump(11, 0, "float32", "UB", x)
        assert result.warnings == []
    else:
        assert result.log == ""
        assert [unsited(w) for w in result.warnings] == [
            f"block 0: DumpTensor: desc=11: {n} elements ({n * 4} bytes) exceed the 30720 bytes one dump may print: "
            "nothing printed, as on the device"]


# --- DataCopy's count form ------------------------------------------------------------------------

def _moved(api, count, size):
    moved = count * size // 32 * 32
    return (f"block 0: {api}: count {count} x {size} bytes = {count * size} bytes is not a multiple of 32 bytes: "
            f"moved {moved} bytes ({moved // size} elements), rounded down as the device does (DataCopyPad moves "
            "other lengths)")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("count_in, count_ub, count_out", [(10, 12, 20), (17, 16, 17), (32, 32, 32), (5, 40, 40)])
def test_count_form_moves_whole_32_byte_blocks(dtype, count_in, count_ub, count_out):
    """GM->UB, UB->UB, UB->GM each move count * sizeof(T) rounded down to 32 bytes (GM与UB连续数据搬运,
    UBToUB连续数据搬运); the UB starts at 0, z at -1."""
    size = np.dtype(dtype).itemsize
    x = (np.arange(64) + 1).astype(dtype)
    z = np.full(64, -1, dtype)
    moved = {name: c * size // 32 * 32 // size for name, c in (("in", count_in), ("ub", count_ub), ("out", count_out))}
    a, c, expected = np.zeros(64, dtype), np.zeros(64, dtype), z.copy()
    a[:moved["in"]] = x[:moved["in"]]
    c[:moved["ub"]] = a[:moved["ub"]]
    expected[:moved["out"]] = c[:moved["out"]]
    result = ascrun.run_local(rk.copy_count_kernel, 1, x, z, 64, count_in, count_ub, count_out)
    np.testing.assert_array_equal(z, expected)
    assert [unsited(w) for w in result.warnings] == [
        _moved(api, count, size) for api, count in (("DataCopy(GM->UB)", count_in), ("DataCopy(UB->UB)", count_ub),
                                                    ("DataCopy(UB->GM)", count_out)) if count * size % 32]


# --- the bounds policy ------------------------------------------------------------------------------

OVERRUN_WARNINGS = [
    f"block 0: DataCopy(GM->UB): dst: 64 elements from UB offset 0x0 exceed the LocalTensor's 32 elements{WARN_UB} "
    "(16 times in 16 blocks; the first shown)",
    f"block 0: Add: dst: 64 elements from UB offset 0x8000 exceed the LocalTensor's 32 elements{WARN_UB} "
    "(16 times in 16 blocks; the first shown)",
    f"block 0: Add: src0: 64 elements from UB offset 0x0 exceed the LocalTensor's 32 elements{WARN_UB} "
    "(16 times in 16 blocks; the first shown)",
    f"block 0: Add: src1: 64 elements from UB offset 0x0 exceed the LocalTensor's 32 elements{WARN_UB} "
    "(16 times in 16 blocks; the first shown)",
    f"block 0: DataCopy(UB->GM): src: 64 elements from UB offset 0x8000 exceed the LocalTensor's 32 elements{WARN_UB} "
    "(16 times in 16 blocks; the first shown)",
    f"block 15: DataCopy(GM->UB): elements [960, 1024) of tensor argument 'x' are outside its 1000 elements{WARN_READ}",
    f"block 15: DataCopy(UB->GM): elements [960, 1024) of tensor argument 'z' are outside its 1000 "
    f"elements{WARN_WRITE}",
]


def test_bounds_warn_runs_a_kernel_that_overruns_gm_and_ub():
    """16 blocks of 64 over 1000 elements (the last block reads and writes past both tensors), in
    LocalTensors of 32 elements (every instruction runs past them, inside the Unified Buffer)."""
    x = (np.arange(1000) * 0.5 - 100).astype(np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(rk.overrun_kernel, 16, x, z, 64, 32, 0, 0, bounds="warn")
    np.testing.assert_array_equal(z, x + x)  # the guard zone's part was dropped, the rest is right
    assert [unsited(w) for w in result.warnings] == OVERRUN_WARNINGS


def test_bounds_fault_faults_on_the_same_kernel():
    x = np.ones(1000, np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(rk.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0)
    assert re.fullmatch(r"block \d+: DataCopy\(GM->UB\): dst: 64 elements from UB offset 0x0 exceed the "
                        r"LocalTensor's 32 elements", unsited(str(e.value)))
    with pytest.raises(ascrun.KernelError) as e:  # LocalTensors large enough: only the GM overrun is left
        ascrun.run_local(rk.overrun_kernel, 16, x, np.zeros_like(x), 64, 64, 0, 0, bounds="fault")
    message = unsited(str(e.value))
    assert message == ("block 15: DataCopy(GM->UB): elements [960, 1024) of tensor argument 'x' are outside its "
                       "1000 elements" + PAST_THE_END)


def test_bounds_warn_in_range_has_no_warnings_and_the_same_artifact():
    x = np.arange(1024, dtype=np.float32)
    z = np.zeros_like(x)
    fault = ascrun.run_local(rk.overrun_kernel, 16, x, z, 64, 64, 0, 0)
    z = np.zeros_like(x)
    result = ascrun.run_local(rk.overrun_kernel, 16, x, z, 64, 64, 0, 0, bounds="warn")
    np.testing.assert_array_equal(z, x + x)
    assert result.warnings == []
    assert result.cache == {"frontend": "hit", "build": "hit"} and result.ir_hash == fault.ir_hash


def test_bounds_warn_element_access_past_a_local_tensor():
    """xl (32 elements) viewed from element 40 (a sub-tensor with no elements), then its element 0."""
    x = np.arange(1000, dtype=np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(rk.overrun_kernel, 1, x, z, 64, 32, 0, 40, bounds="warn")
    assert z[1] == x[40]
    assert unsited(result.warnings[-1]) == ("block 0: LocalTensor<float>::GetValue(0): the index is outside the "
                                            f"tensor's 0 elements (UB offset 0xa0){WARN_UB}")
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(rk.overrun_kernel, 1, x, z, 64, 64, 0, 70)
    message = unsited(str(e.value))
    assert message == ("block 0: LocalTensor<float>[70]: the offset is past the end of the tensor's 64 elements "
                       "(UB offset 0x0)")


@pytest.mark.parametrize("cores, tile, half, skip, message", [
    # before the start of x
    (1, 64, 64, 8, "block 0: DataCopy(GM->UB): elements [-8, 56) of tensor argument 'x' are outside its 1000 "
                   "elements"),
    # past the guard zone after x
    (1, 64, 64, -264000, f"block 0: DataCopy(GM->UB): elements [264000, 264064) of tensor argument 'x' are outside "
                         f"its 1000 elements and past the {GUARD}-byte guard zone after it (bounds=warn)"),
    # past the 192 KiB Unified Buffer
    (1, 50000, 64, 0, "block 0: DataCopy(GM->UB): dst LocalTensor range [0x0, 0x30d40) is outside the Unified "
                      "Buffer (0x30000 bytes)"),
])
def test_bounds_warn_still_faults_outside_the_guard_and_the_unified_buffer(cores, tile, half, skip, message):
    x = np.ones(1000, np.float32)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(rk.overrun_kernel, cores, x, np.zeros_like(x), tile, half, skip, 0, bounds="warn")
    assert unsited(str(e.value)) == message


def test_unknown_bounds_is_a_clear_error():
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(rk.overrun_kernel, 1, np.ones(64, np.float32), np.ones(64, np.float32), 64, 64, 0, 0,
                         bounds="ignore")
    assert (e.value.kind, str(e.value)) == ("bad_request", "bounds must be 'fault' or 'warn', got 'ignore'")


# --- through the service ----------------------------------------------------------------------------

@pytest.mark.service
def test_service_returns_the_log_and_warnings(client):
    x, h, k = print_inputs(4)
    result = client.launch(rk.print_kernel, 4, x, h, k, N, 0, 0, 0.25)
    assert result.log == expected_print_log(x, h, k, 4, N, 0.25)
    record = httpx.get(f"{client.url}/v1/jobs/{result.job_id}").json()
    assert record["log"] == result.log and record["warnings"] == [] and record["bounds"] == "fault"
    listed = httpx.get(f"{client.url}/v1/jobs", params={"limit": 5}).json()["jobs"]
    assert [j.get("log", "absent") for j in listed if j["id"] == result.job_id] == ["absent"]  # lists leave logs out

    handle = client.submit(rk.print_kernel, 4, x, h, k, N, 0, 0, 0.25)
    assert handle.result().log == result.log


@pytest.mark.service
def test_service_bounds_warn_through_client_async_and_remote(client, service):
    x = (np.arange(1000) * 0.5 - 100).astype(np.float32)
    z = np.zeros_like(x)
    result = client.launch(rk.overrun_kernel, 16, x, z, 64, 32, 0, 0, bounds="warn")
    np.testing.assert_array_equal(z, x + x)
    assert [unsited(w) for w in result.warnings] == OVERRUN_WARNINGS
    assert httpx.get(f"{client.url}/v1/jobs/{result.job_id}").json()["bounds"] == "warn"

    async def main():
        async with ascrun.AsyncClient(service.url) as aclient:
            z2 = np.zeros_like(x)
            got = await aclient.launch(rk.overrun_kernel, 16, x, z2, 64, 32, 0, 0, bounds="warn")
            return z2, got

    z2, got = asyncio.run(main())
    np.testing.assert_array_equal(z2, x + x)
    assert [unsited(w) for w in got.warnings] == OVERRUN_WARNINGS

    z3 = np.zeros_like(x)
    remote = ascrun.remote(rk.overrun_kernel, client, bounds="warn")[16](x, z3, 64, 32, 0, 0)
    assert [unsited(w) for w in remote.warnings] == OVERRUN_WARNINGS
    np.testing.assert_array_equal(z3, x + x)
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(rk.overrun_kernel, 16, x, np.zeros_like(x), 64, 64, 0, 0)
    assert unsited(str(e.value)).startswith("block 15: DataCopy(GM->UB): elements [960, 1024) of tensor argument 'x'")


@pytest.mark.service
def test_service_failure_carries_the_log(client):
    x, h, k = print_inputs(1)
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(rk.print_kernel, 1, x, h, k, N, 4, 0, 1.5)
    printf = kernel_line(rk, 'asc.printf("%d %d')
    assert str(e.value) == printf + r': block 0: printf("%d %d\n"): more conversions than the 1 arguments'
    assert e.value.log == "[AIV Block 0/1] about to fail\n"


@pytest.mark.service
def test_service_rejects_an_unknown_bounds(client):
    bundle = ascrun.compiler.bundle.collect(rk.overrun_kernel).to_json()
    response = httpx.post(f"{client.url}/v1/jobs", json={"bundle": bundle, "core_num": 1, "args": [],
                                                         "bounds": "ignore"})
    assert response.status_code == 422
    assert response.json()["error"] == {"kind": "bad_request",
                                        "message": "invalid request: body.bounds: Input should be 'fault' or 'warn'"}
    requests = []
    client._http.event_hooks["request"].append(requests.append)
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(rk.overrun_kernel, 1, np.ones(64, np.float32), np.ones(64, np.float32), 64, 64, 0, 0,
                      bounds="ignore")
    assert (e.value.kind, str(e.value), requests) == ("bad_request", "bounds must be 'fault' or 'warn', got 'ignore'",
                                                      [])


# --- the command line and the pytest plugin -----------------------------------------------------------

@pytest.mark.service
def test_cli_launch_and_show_print_the_log(service, tmp_path):
    x, h, k = print_inputs(2)
    for name, array in (("x", x), ("h", h), ("k", k)):
        np.save(tmp_path / f"{name}.npy", array)
    args = ["launch", "--url", service.url, f"{KERNELS}::print_kernel", "--cores", 2,
            *(f"--arg={a}=@{tmp_path / a}.npy" for a in "xhk"), "--arg", f"n={N}", "--arg", "mode=0",
            "--arg", "rounds=0", "--arg", "scale=1.5"]
    out = ascrun_cmd(*args)
    expected = expected_print_log(x, h, k, 2, N, 1.5)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith(expected)  # the kernel's output, then the summary
    assert re.fullmatch(r"print_kernel x2 on cpu: job [0-9a-f]{32} finished in .*\n", out.stdout[len(expected):])
    report = json.loads(ascrun_cmd(*args, "--json").stdout)
    assert (report["log"], report["warnings"]) == (expected, [])

    shown = ascrun_cmd("show", report["job_id"], "--url", service.url).stdout
    assert shown.endswith("\nlog\n" + expected)
    assert json.loads(ascrun_cmd("show", report["job_id"], "--json", "--url", service.url).stdout)["log"] == expected


@pytest.mark.service
def test_cli_bounds_flag(service, tmp_path):
    x = (np.arange(1000) * 0.5 - 100).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "z.npy", np.zeros_like(x))
    args = ["launch", "--url", service.url, f"{KERNELS}::overrun_kernel", "--cores", 16,
            f"--arg=x=@{tmp_path / 'x.npy'}", f"--arg=z=@{tmp_path / 'z.npy'}", "--arg", "tile=64",
            "--arg", "half_tile=32", "--arg", "skip=0", "--arg", "peek=0", "--out", f"z={tmp_path / 'out.npy'}"]
    faulted = ascrun_cmd(*args)
    assert faulted.returncode == 1 and "exceed the LocalTensor's 32 elements" in faulted.stderr
    warned = ascrun_cmd(*args, "--bounds", "warn")
    assert warned.returncode == 0
    assert [unsited(w.removeprefix("ascrun: warning: ")) for w in warned.stderr.splitlines()] == OVERRUN_WARNINGS
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), x + x)
    job = re.search(r"job ([0-9a-f]{32})", warned.stdout).group(1)
    shown = ascrun_cmd("show", job, "--url", service.url).stdout.splitlines()
    assert "bounds    warn" in shown
    assert OVERRUN_WARNINGS[-1] in [unsited(w.removeprefix("warning   ")) for w in shown if w.startswith("warning")]
    bad = ascrun_cmd(*args, "--bounds", "ignore")
    assert bad.returncode == 2 and "argument --bounds: invalid choice: 'ignore'" in bad.stderr

    # exec: pyasc's own overrunning tiling (1000 elements on 16 cores) passes its assert with warn
    script = ascrun_cmd("exec", "--bounds", "warn", "--url", service.url, PYASC_STYLE / "overrun.py")
    assert script.returncode == 0, script.stderr
    copy_in = kernel_line(PYASC_STYLE / "test_vadd.py", "asc.data_copy(x_local")
    assert (f"ascrun: warning: {copy_in}: block 15: DataCopy(GM->UB): elements [993, 1001) of tensor argument 'x' are "
            f"outside its 1000 elements{WARN_READ} (2 times; the first shown)") in script.stderr.splitlines()


@pytest.mark.service
def test_pytest_plugin_bounds_and_log_in_the_report(service, tmp_path):
    (tmp_path / "test_prints.py").write_text(
        "import sys\nimport numpy as np\n"
        f"sys.path.insert(0, {str(KERNELS.parent)!r})\n"
        "import report\n\n"
        "def test_prints():\n"
        "    x = np.arange(32, dtype=np.float32)\n"
        "    report.print_kernel[2](x, x.astype(np.float16), x.astype(np.int32), 16, 0, 0, 1.5)\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rP", "--confcutdir",
                          str(PYASC_STYLE), "--ascrun-url", service.url,
                          "--ascrun-bounds", "warn", str(PYASC_STYLE / "overrun.py"), str(tmp_path / "test_prints.py")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    copy_out = kernel_line(PYASC_STYLE / "test_vadd.py", "asc.data_copy(z_gm")
    assert (f"warning: {copy_out}: block 15: DataCopy(UB->GM): elements [993, 1001) of tensor argument 'z' are outside "
            f"its 1000 elements{WARN_WRITE} (2 times; the first shown)") in lines
    x = np.arange(32, dtype=np.float32)
    log = expected_print_log(x, x.astype(np.float16), x.astype(np.int32), 2, 16, 1.5)
    assert "\n".join(log.splitlines()) in out.stdout


TAIL_OVERLAP = {  # the mask + repeat form's rule (vector/mask.h) and the count form's (core/tensor.h)
    0: "Add: dst range [0x100, 0x200) overlaps src1 range [0x80, 0x180) in a way the hardware does not define "
       "(within a repeat dst and src must coincide exactly or be disjoint, and no repeat may write what a later "
       "repeat reads)",
    1: "Add: dst range [0x100, 0x200) partially overlaps src1 range [0x80, 0x180) (operands must coincide or be "
       "disjoint)",
}


@pytest.mark.parametrize("count_form", [0, 1])
def test_bounds_warn_lets_operands_overlap_only_past_their_ends(count_form):
    """An Add of 128 halves over 64-element tensors: src1 read past its end runs into dst. With "warn"
    that overlap is a warning (the tensors' own elements are disjoint) and dst's own elements are right."""
    x, y = np.arange(64, dtype=np.float16), np.full(64, 0.5, np.float16)
    z = np.zeros_like(x)
    result = ascrun.run_local(rk.tail_overlap_kernel, 1, x, y, z, 64, 0x100, count_form, bounds="warn")
    np.testing.assert_array_equal(z, x + y)
    assert "block 0: " + TAIL_OVERLAP[count_form] + \
        " (bounds=warn: they overlap only past the tensors' own elements)" in [unsited(w) for w in result.warnings]
    with pytest.raises(ascrun.KernelError) as e:  # the same kernel under the default policy
        ascrun.run_local(rk.tail_overlap_kernel, 1, x, y, z, 64, 0x100, count_form)
    message = unsited(str(e.value))
    assert message == "block 0: Add: dst: 128 elements from UB offset 0x100 exceed the LocalTensor's 64 elements"


@pytest.mark.parametrize("count_form", [0, 1])
def test_bounds_warn_still_faults_when_the_tensors_themselves_overlap(count_form):
    x, y = np.ones(64, np.float16), np.ones(64, np.float16)
    with pytest.raises(ascrun.KernelError) as e:  # z's own elements start inside y's
        ascrun.run_local(rk.tail_overlap_kernel, 1, x, y, np.zeros_like(x), 64, 0xc0, count_form, bounds="warn")
    assert unsited(str(e.value)) == "block 0: " + TAIL_OVERLAP[count_form].replace("0x100, 0x200", "0xc0, 0x1c0")

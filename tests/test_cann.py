"""The CANN targets (sim, npu). The pure parts run everywhere; building and running need CANN,
bisheng and (npu) an Ascend device, and are skipped, saying so, on a host without them."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ascrun
from ascrun.compiler import bundle, frontend
from ascrun.compiler.sandbox import bwrap, framing
from ascrun.compiler.targets import cann
from ascrun.compiler.targets.cann import device as cann_device, jailed as cann_jailed, runner as cann_runner
from ascrun.compiler.targets.cann import toolchain as cann_toolchain
from ascrun.compiler.errors import KernelError
from ascrun.compiler.settings import HostSettings
from ascrun.compiler.frontend import ArgSpec
from ascrun.compiler.targets.contract import RunResult
from conftest import load_module

pytestmark = pytest.mark.kernel

NO_CANN = cann.missing_cann()
needs_cann = pytest.mark.skipif(NO_CANN is not None, reason=f"needs CANN and bisheng: {NO_CANN}")
needs_npu = pytest.mark.skipif(NO_CANN is not None or not Path("/dev/davinci0").exists(),
                               reason=f"needs CANN, bisheng and an Ascend NPU (/dev/davinci0): {NO_CANN or 'no device'}")
LIMITS = {"memory": 8 << 30, "files": 256, "cpu": 120}
FRAMEWORK_ARGS = [ArgSpec("tensor", "float32")] * 3 + [ArgSpec("scalar", "int", 2048), ArgSpec("scalar", "int", 128)]


# --- pure parts -------------------------------------------------------------------------------

def test_toolchain_id_changes_with_each_part():
    parts = ("compiler/version.info: Version=8.0.RC1", "bisheng 1.0", "dav-c220-cube,dav-c220-vec", ["-O3", "-std=c++17"])
    base = cann_toolchain.toolchain_id(*parts)
    assert cann_toolchain.toolchain_id(*parts) == base and len(base) == 64
    assert cann_toolchain.toolchain_id("compiler/version.info: Version=8.0.RC2", *parts[1:]) != base  # a CANN upgrade
    assert cann_toolchain.toolchain_id(parts[0], "bisheng 1.1", *parts[2:]) != base
    assert cann_toolchain.toolchain_id(*parts[:2], "dav-m200-vec", parts[3]) != base
    assert cann_toolchain.toolchain_id(*parts[:3], ["-O2", "-std=c++17"]) != base
    assert cann_toolchain.toolchain_id(*parts[:3], ["-O3 -std=c++17"]) != base  # flags are not merely joined by spaces


@pytest.mark.parametrize("soc, arch", [("Ascend910B1", "dav-c220"), ("Ascend950PR_9599", "dav-c310")])
def test_the_toolchain_asks_the_installed_pyasc_for_its_arch(tmp_path, monkeypatch, soc, arch):
    """pyasc 1.1.1's Compiler says its target as `platform`, the nightly's as `arch`: the CANN toolchain
    reads either (on the nightly it failed at start: no attribute 'platform'). No bisheng runs: the
    toolchain only finds it (a stand-in executable) and reads the installation's version file."""
    if soc not in frontend.known_socs():
        pytest.skip(f"pyasc {frontend.pyasc_version()} has no {soc} (pyasc's nightly has)")
    for tool in ("bisheng", "ld.lld"):
        (tmp_path / tool).write_text("#!/bin/sh\nexit 0\n")
        (tmp_path / tool).chmod(0o755)
    (tmp_path / "version.cfg").write_text("runtime_running_version=[8.5.0:8.5.0]\n")
    monkeypatch.setenv("PYASC_COMPILER", str(tmp_path / "bisheng"))
    monkeypatch.setenv("PYASC_LINKER", str(tmp_path / "ld.lld"))
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    chain = cann_toolchain.CannToolchain(soc)
    assert chain.arch == f"{arch}-cube,{arch}-vec"
    assert chain.bisheng == str(tmp_path / "bisheng")


def test_cann_version_is_read_from_the_installation(tmp_path):
    with pytest.raises(KernelError, match="no CANN version file under ASCEND_HOME_PATH") as e:
        cann_toolchain.cann_version(tmp_path)
    assert e.value.kind == "unavailable"
    (tmp_path / "compiler").mkdir()
    (tmp_path / "compiler" / "version.info").write_text("Version=8.0.RC1\nversion_dir=8.0.RC1\n")
    (tmp_path / "version.cfg").write_text("runtime_running_version=[7.5.0.1.100:8.0.RC1]\n")
    first = cann_toolchain.cann_version(tmp_path)
    assert cann_toolchain.cann_release(first) == "8.0.RC1"
    (tmp_path / "compiler" / "version.info").write_text("Version=8.0.RC2\nversion_dir=8.0.RC2\n")
    upgraded = cann_toolchain.cann_version(tmp_path)
    assert cann_toolchain.cann_release(upgraded) == "8.0.RC2"
    flags = ["-O3"]
    assert cann_toolchain.toolchain_id(first, "b", "a", flags) != cann_toolchain.toolchain_id(upgraded, "b", "a", flags)


def test_printing_read_from_pyasc_output(framework_example, tmp_path):
    vector = frontend.run(bundle.collect(framework_example.vadd_framework_kernel), FRAMEWORK_ARGS).source
    assert not cann_toolchain.prints(vector)
    path = tmp_path / "printing.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n    asc.printf('n=%d\\n', n)\n")
    printing = frontend.run(bundle.collect(load_module(path, "printing").k), [ArgSpec("scalar", "int", 1)]).source
    assert cann_toolchain.prints(printing)


def test_bisheng_errors_without_temporary_paths():
    message = ("compile failed!\nError message is /tmp/pyasc_compiler_x1/input.cce:3:5: error: unknown type 'T'\n"
               "Please rerun /opt/bisheng -c -x cce /tmp/pyasc_compiler_x1/input.cce -o /tmp/pyasc_compiler_x1/output.o")
    assert cann_toolchain.bisheng_diagnostics(message) == "Error message is input.cce:3:5: error: unknown type 'T'"


def test_dump_follows_ascendc_dump():
    dump = [HostSettings.from_env(environ).ascendc_dump for environ in ({}, {"ASCENDC_DUMP": "TRUE"},
                                                                        {"ASCENDC_DUMP": "0"}, {"ASCENDC_DUMP": "false"})]
    assert dump == [True, True, False, False]


def test_argument_words_lay_out_as_pyasc_launcher():
    lo = lambda *b: int.from_bytes(bytes(b).ljust(8, b"\0"), "little")  # noqa: E731
    assert cann_device.argument_words([0x1000, 0x2000]) == [0x1000, 0x2000]
    # an int32 takes 4 bytes; the next address is 8-aligned
    assert cann_device.argument_words([np.int32(-1), 0x1000]) == [0xFFFFFFFF, 0x1000]
    # two 4-byte scalars share a word; a 1- or 2-byte scalar is padded to 4; the end is padded to 8
    assert cann_device.argument_words([np.int32(1), np.float32(1.0)]) == [1 | (0x3F800000 << 32)]
    assert cann_device.argument_words([np.int8(5), np.int16(7), 0x10]) == [lo(5, 0, 0, 0, 7, 0, 0, 0), 0x10]
    assert cann_device.argument_words([0x10, np.int32(3)]) == [0x10, 3]
    # an 8-byte scalar follows directly, as pyasc appends it
    assert cann_device.argument_words([np.int64(-2), np.float64(0.5)]) == [2 ** 64 - 2, 0x3FE0000000000000]


def test_scalars_take_pyasc_types_and_are_checked():
    assert cann_device.scalar_value({"name": "n", "dtype": "int"}, 7).dtype == np.int32
    assert cann_device.scalar_value({"name": "s", "dtype": "float"}, 0.5).dtype == np.float32
    assert cann_device.scalar_value({"name": "b", "dtype": "bool"}, True) == 1
    assert cann_device.scalar_value({"name": "h", "dtype": "float16"}, 1.5).dtype == np.float16
    assert cann_device.scalar_value({"name": "u", "dtype": "uint64"}, 2 ** 63).dtype == np.uint64
    with pytest.raises(KernelError, match="scalar argument 'n' = 2147483648 does not fit int32"):
        cann_device.scalar_value({"name": "n", "dtype": "int"}, 2 ** 31)
    with pytest.raises(KernelError, match="scalar argument 'n' = 3.5 does not fit int32: not an integer"):
        cann_device.scalar_value({"name": "n", "dtype": "int"}, 3.5)
    with pytest.raises(KernelError, match="scalar argument 'u' = -1 does not fit uint8"):
        cann_device.scalar_value({"name": "u", "dtype": "uint8"}, -1)


def test_device_env_as_pyasc_quick_start_says():
    home, soc = "/opt/cann", "Ascend910B1"
    lib = "/opt/cann/tools/simulator/Ascend910B1/lib"
    env = cann_runner.device_env({"LD_LIBRARY_PATH": "/usr/lib"}, "Model", home, soc, torch_npu=False)
    assert env["LD_LIBRARY_PATH"] == f"{lib}:/usr/lib" and "LD_PRELOAD" not in env
    env = cann_runner.device_env({"LD_PRELOAD": "libjemalloc.so"}, "Model", home, soc, torch_npu=True)
    assert env["LD_LIBRARY_PATH"] == lib and env["LD_PRELOAD"] == "libruntime_camodel.so:libjemalloc.so"
    env = cann_runner.device_env({"LD_PRELOAD": "libruntime_camodel.so", "LD_LIBRARY_PATH": "/x"}, "NPU", home, "",
                          torch_npu=True)
    assert "LD_PRELOAD" not in env and env["LD_LIBRARY_PATH"] == "/x"


def test_artifact_carries_what_the_runner_needs():
    header = {"kernel_name": "k", "kernel_type": "AIV_ONLY", "core_type": "VectorCore", "debug": False,
              "toolchain": "t"}
    binary = b"\x7fELF\n\0binary\n"
    assert cann_toolchain.unpack_artifact(cann_toolchain.pack_artifact(header, binary)) == (header, binary)
    with pytest.raises(KernelError, match="not built by ascrun's CANN toolchain: rebuild the kernel"):
        cann_toolchain.unpack_artifact(b"\x7fELF a cpu target's library")


def test_run_result_timings_default_empty():
    assert RunResult(written=[], seconds=0.0).timings == {}


def test_without_cann_the_targets_say_why(monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    for target in (cann.SimTarget, cann.NpuTarget):
        with pytest.raises(KernelError) as e:
            target()
        assert str(e.value) == (f"target '{target.name}' needs CANN and bisheng, which this host lacks "
                                "(ASCEND_HOME_PATH is not set): use target 'cpu'")
        assert e.value.kind == "unavailable"


# --- on a CANN host ---------------------------------------------------------------------------

@needs_cann
def test_sim_runs_the_framework_tutorial(framework_example):
    rng = np.random.default_rng(0)
    x, y = rng.random(8 * 2048).astype(np.float32), rng.random(8 * 2048).astype(np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(framework_example.vadd_framework_kernel, 8, x, y, z, 2048, 128, target="sim")
    np.testing.assert_array_equal(z, x + y)
    assert "z" in result.outputs


@needs_cann
def test_sim_runner_times_phases_and_returns_printing(tmp_path):
    path = tmp_path / "printing_sim.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n    asc.printf('n=%d\\n', n)\n")
    target = cann.SimTarget()
    result = frontend.run(bundle.collect(load_module(path, "printing_sim").k), [ArgSpec("scalar", "int", 1)])
    artifact = target.toolchain.build(result.source, result.kernel_name)
    ran = target.runner.run(artifact, 1, result.params, result.kernel_args, [41])
    assert set(ran.timings) == {"h2d", "kernel", "d2h"} and ran.seconds == ran.timings["kernel"]
    assert "n=41" in ran.log


@needs_cann
def test_sim_toolchain_id_is_the_installation_s():
    target = cann.SimTarget()
    chain = target.toolchain
    assert chain.id == cann_toolchain.toolchain_id(cann_toolchain.cann_version(os.environ["ASCEND_HOME_PATH"]), chain.bisheng_version,
                                         chain.arch, chain.flags)
    caps = target.capabilities()
    assert caps["socs"] == [HostSettings.from_env().sim_soc]
    assert caps["cores"] > 0 and caps["kernel_types"] == list(cann_toolchain.KERNEL_TYPES) and caps["cann"]


@needs_npu
def test_npu_runs_the_framework_tutorial(framework_example):
    rng = np.random.default_rng(1)
    x, y = rng.random(8 * 2048).astype(np.float16), rng.random(8 * 2048).astype(np.float16)
    z = np.zeros_like(x)
    ascrun.run_local(framework_example.vadd_framework_kernel, 8, x, y, z, 2048, 128, target="npu")
    np.testing.assert_array_equal(z, x + y)
    assert cann.NpuTarget().capabilities()["socs"][0].startswith("Ascend910")


def test_a_cann_jail_sees_the_installation_and_no_secret(tmp_path):
    home = tmp_path / "ascend-toolkit" / "8.0"
    (home / "bin").mkdir(parents=True)
    latest = tmp_path / "ascend-toolkit" / "latest"
    latest.symlink_to(home)
    environ = {"ASCEND_HOME_PATH": str(latest), "ASCEND_OPP_PATH": f"{latest}/opp", "REDIS_URL": "redis://secret",
               "ASCRUN_TENANTS": "{}", "AWS_SECRET_ACCESS_KEY": "x", "PYASC_COMPILER": f"{home}/bin/bisheng",
               "LD_LIBRARY_PATH": f"{latest}/lib64:/nonexistent", "PATH": f"{latest}/bin:/root/.local/bin:/usr/bin"}
    ro, environment = cann_jailed.jail_view(environ)
    assert ro == sorted({str(latest), str(home), str(home / "bin")})
    assert environment == {"ASCEND_HOME_PATH": str(latest), "ASCEND_OPP_PATH": f"{latest}/opp",
                           "PYASC_COMPILER": f"{home}/bin/bisheng", "LD_LIBRARY_PATH": f"{latest}/lib64:/nonexistent",
                           "PATH": f"{latest}/bin:/usr/bin:/bin"}
    command = bwrap.python_command("device:NPU::0", LIMITS, ro, ["/dev/davinci0"], environment)
    assert command[command.index("--dev-bind") + 1:command.index("--dev-bind") + 3] == ["/dev/davinci0"] * 2
    assert "redis://secret" not in command and "--clearenv" in command


def test_the_device_process_starts_in_its_jail_and_says_why_it_cannot_run():
    """The device stage (targets/cann/device.py) for real: pyasc imported inside the jail, then its set_platform
    finds no runtime library on this host, and says so over the pipe."""
    ro, environment = cann_jailed.jail_view({"ASCEND_HOME_PATH": "/nonexistent/ascend", "PATH": "/usr/bin"})
    process = bwrap.popen(bwrap.python_command("device:Model:Ascend910B1:0", LIMITS, ro, [], environment),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        header, blobs = framing.read_message(process.stdout.fileno(), deadline=time.monotonic() + 120)
    except EOFError:
        bwrap.kill(process)
        raise AssertionError(process.stderr.read().decode()[-3000:])
    finally:
        bwrap.kill(process)
    assert header["error"]["kind"] == "unavailable" and not blobs
    assert header["error"]["message"].startswith("RuntimeError: Runtime library is not available!")


def test_a_cann_build_runs_in_its_jail_and_says_why_it_cannot_build(monkeypatch):
    """The cann-build stage (targets/cann/jailed.py) for real: without bisheng, pyasc's Compiler cannot start in
    the jail, and the broker gets that as the build's error."""
    monkeypatch.setenv("ASCEND_HOME_PATH", "/nonexistent/ascend")
    monkeypatch.delenv("PYASC_COMPILER", raising=False)
    probe = type("Probe", (), {"soc": "Ascend910B1", "id": "no-bisheng"})()
    chain = cann_jailed.JailedCannToolchain(probe, LIMITS)
    with pytest.raises(KernelError) as e:
        chain.build("extern \"C\" void k() {}", "k")
    assert e.value.kind == "unavailable" and str(e.value).startswith("pyasc's compiler cannot start:")


def test_a_build_only_npu_worker_needs_no_device_but_one_soc(monkeypatch):
    """A toolkit host builds for the NPU hosts (the compile/run split): no device process is
    started; it must be told the one SOC it builds for. Here it then stops at pyasc's Compiler,
    which finds no bisheng."""
    monkeypatch.setattr(cann, "missing_cann", lambda: None)
    monkeypatch.delenv("PYASC_COMPILER", raising=False)
    with pytest.raises(KernelError) as e:
        cann.NpuTarget(LIMITS, runs=False)
    assert str(e.value) == "a build-only 'npu' worker builds for one SOC: name it with --soc (0 given)"
    monkeypatch.setattr(cann, "CannRunner", None)  # starting a device process would fail the test
    with pytest.raises(KernelError) as e:
        cann.NpuTarget(LIMITS, runs=False, socs=["Ascend910B1"])
    assert e.value.kind == "unavailable" and str(e.value).startswith("pyasc's compiler cannot start:")


@needs_cann
def test_sim_in_jails_runs_the_framework_tutorial(framework_example):
    target = cann.SimTarget(LIMITS)
    try:
        result = frontend.run(bundle.collect(framework_example.vadd_framework_kernel), FRAMEWORK_ARGS)
        artifact = target.toolchain.build(result.source, result.kernel_name)
        rng = np.random.default_rng(2)
        x, y = rng.random(8 * 2048).astype(np.float32), rng.random(8 * 2048).astype(np.float32)
        z = np.zeros_like(x)
        target.runner.for_tenant("alice").run(artifact, 8, result.params, result.kernel_args, [x, y, z, 2048, 128])
        np.testing.assert_array_equal(z, x + y)
    finally:
        target.runner.close()


def test_device_process_says_why_it_cannot_start():
    """The device process for real, on this host: pyasc's set_platform finds no runtime library."""
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
    code = "from ascrun.compiler.targets.cann.device import serve_device; serve_device('Model', 'Ascend910B1', 0)"
    with subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env) as process:
        header, blobs = framing.read_message(process.stdout.fileno(), deadline=time.monotonic() + 120)
        assert process.wait(timeout=60) == 0
    assert header["error"]["kind"] == "unavailable" and not blobs
    assert header["error"]["message"].startswith("RuntimeError: Runtime library is not available!")

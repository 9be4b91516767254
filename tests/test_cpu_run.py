"""run_local on the cpu target: pyasc's tutorials and the count-form instructions against numpy,
and every runtime check provoked."""
import os
import shutil
import stat
import tempfile

import numpy as np
import pytest

import ascrun
import faulty
import ops
from ascrun.compiler.errors import BuildError
from ascrun.compiler.targets.cpu.toolchain import CpuToolchain
from conftest import PAST_THE_END, unsited

pytestmark = pytest.mark.kernel

RNG = np.random.default_rng(2025)


def _inputs(size, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.random(size).astype(dtype), RNG.random(size).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min // 2, -1000), min(info.max // 2, 1000)
    return RNG.integers(lo, hi, size).astype(dtype), RNG.integers(lo, hi, size).astype(dtype)


@pytest.mark.parametrize("size,cores", [(8 * 2048, 8), (4096, 1), (8192, 2), (65536, 16), (12 * 1024, 3)])
def test_tutorial_add(add_example, size, cores):
    x, y = _inputs(size, np.float32)
    z = np.zeros_like(x)
    result = ascrun.run_local(add_example.vadd_kernel, cores, x, y, z, size // cores)
    np.testing.assert_allclose(z, x + y)
    assert set(result.outputs) == {"z"} and result.outputs["z"] is z


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int16])
def test_tutorial_add_other_dtypes(add_example, dtype):
    size, cores = 8 * 4096, 8
    x, y = _inputs(size, dtype)
    z = np.zeros_like(x)
    ascrun.run_local(add_example.vadd_kernel, cores, x, y, z, size // cores)
    np.testing.assert_array_equal(z, x + y)  # one correctly rounded add per element


@pytest.mark.parametrize("size,cores", [(8 * 2048, 8), (4096, 2), (32768, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_tutorial_add_framework(framework_example, size, cores, dtype):
    x, y = _inputs(size, dtype)
    z = np.zeros_like(x)
    block = size // cores
    result = ascrun.run_local(framework_example.vadd_framework_kernel, cores, x, y, z, block, block // 16)
    np.testing.assert_array_equal(z, x + y)
    assert set(result.outputs) == {"z"}


def test_result_reports_stages_and_cache(framework_example):
    x, y = _inputs(4096, np.float32)
    runs = []
    for _ in range(2):
        z = np.zeros_like(x)
        runs.append(ascrun.run_local(framework_example.vadd_framework_kernel, 4, x, y, z, 1024, 64))
    first, second = runs
    assert set(first.timings) == {"frontend", "build", "run", "total"}
    assert all(v >= 0 for v in first.timings.values())
    assert second.cache == {"frontend": "hit", "build": "hit"}
    assert first.ir_hash == second.ir_hash and "AscendC::Add(" in second.source
    np.testing.assert_allclose(second.outputs["z"], x + y)


NUMPY_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
                "min": np.minimum}


@pytest.mark.parametrize("op", sorted(NUMPY_BINARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_binary_count_form(op, dtype):
    n, cores = 256, 4
    x, y = _inputs(n * cores, dtype)
    y = y + dtype(0.5)  # keep div away from zero
    z = np.zeros_like(x)
    ascrun.run_local(ops.binary_kernel, cores, x, y, z, n, op)
    expected = NUMPY_BINARY[op](x, y)
    assert expected.dtype == dtype
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("op", ["add", "sub", "max", "min"])
@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_binary_count_form_integers(op, dtype):
    n, cores = 256, 2
    x, y = _inputs(n * cores, dtype)
    z = np.zeros_like(x)
    ascrun.run_local(ops.binary_kernel, cores, x, y, z, n, op)
    np.testing.assert_array_equal(z, NUMPY_BINARY[op](x, y))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_adds_muls(dtype):
    n, cores = 256, 3
    x, _ = _inputs(n * cores, dtype)
    z = np.zeros_like(x)
    ascrun.run_local(ops.scalar_kernel, cores, x, z, n, 0.75, -3.0)
    expected = (x + dtype(0.75)) * dtype(-3.0)  # rounded to dtype after each instruction, like the hardware
    np.testing.assert_array_equal(z, expected)


def test_block_idx_and_block_num():
    n, cores = 64, 5
    x = np.arange(n * cores, dtype=np.int32)
    z = np.zeros_like(x)
    ascrun.run_local(ops.block_num_kernel, cores, x, z, n)
    np.testing.assert_array_equal(z, x * cores + np.repeat(np.arange(cores, dtype=np.int32), n))


# --- runtime checks: each provoked, each message asserted -------------------------------------

def _fails(kernel, cores, *args):
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, cores, *args)
    assert e.value.kind == "runtime_error"
    return str(e.value)


def test_local_tensor_outside_unified_buffer():
    msg = _fails(faulty.ub_overflow_kernel, 1, np.zeros(4096, np.float32), 4096)
    assert "block 0" in msg and "LocalTensor" in msg and "Unified Buffer" in msg
    assert "0x2d000" in msg  # the tensor starts at 180 KiB


def test_gm_access_outside_its_tensor_argument():
    x = np.ones(1024, np.float32)
    z = np.zeros(1024, np.float32)
    msg = _fails(faulty.gm_overrun_kernel, 5, x, z, 256)  # block 4 starts past the end
    message = unsited(msg)
    assert message == ("block 4: DataCopy(GM->UB): elements [1024, 1280) of tensor argument 'x' are outside its 1024 "
              "elements" + PAST_THE_END)


def test_deque_on_empty_queue():
    msg = _fails(faulty.deque_empty_kernel, 1, np.zeros(256, np.float32), 256)
    assert "DeQue" in msg and "empty" in msg


def test_more_alloc_tensor_than_buffers():
    msg = _fails(faulty.alloc_twice_kernel, 2, np.zeros(256, np.float32), 256)
    assert "AllocTensor" in msg and "1 buffer" in msg


def test_process_survives_faults_and_runs_the_next_kernel(add_example):
    _fails(faulty.ub_overflow_kernel, 1, np.zeros(4096, np.float32), 4096)
    x, y = _inputs(4096, np.float32)
    z = np.zeros_like(x)
    ascrun.run_local(add_example.vadd_kernel, 2, x, y, z, 2048)
    np.testing.assert_allclose(z, x + y)


def test_torch_cpu_tensors_are_written_in_place(add_example):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x = torch.rand(4096)
    y = torch.rand(4096)
    z = torch.zeros(4096)
    result = ascrun.run_local(add_example.vadd_kernel, 2, x, y, z, 2048)
    assert torch.equal(z, x + y)
    assert z.dtype == torch.float32 and set(result.outputs) == {"z"}


def test_non_contiguous_numpy_output_is_copied_back(add_example):
    x, y = _inputs(4096, np.float32)
    backing = np.zeros((4096, 2), np.float32)
    z = backing[:, 0]  # a strided view: the kernel runs on a contiguous copy, copied back
    ascrun.run_local(add_example.vadd_kernel, 2, x, y, z, 2048)
    np.testing.assert_array_equal(backing[:, 0], x + y)
    assert not backing[:, 1].any()


EMPTY_KERNEL = '#include "kernel_operator.h"\nextern "C" __global__ __aicore__ void k(__gm__ float* x) {}\n'


@pytest.mark.slow  # the runtime prebuilt from scratch: g++ over all its sources
def test_toolchain_prebuilds_the_runtime_in_a_folder_only_this_user_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert CpuToolchain().build(EMPTY_KERNEL, "k").startswith(b"\x7fELF")
    assert stat.S_IMODE((tmp_path / f"ascrun-{os.getuid()}").stat().st_mode) == 0o700  # builds stay private
    # readable by all (the build jails run as another user), writable by this user alone
    folder = tmp_path / f"ascrun-runtime-{os.getuid()}"
    [runtime] = folder.iterdir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert sorted(p.name for p in runtime.iterdir()) == ["binary.o", "core.o", "cross_core.o", "data_copy.o",
                                                         "hazards.o", "kernel_operator.h.gch", "launch.o", "mask.o",
                                                         "model.o", "registers.o", "report.o", "tensor.o", "timeline.o",
                                                         "tpipe.o", "trace.o"]


def test_toolchain_refuses_a_prebuilt_runtime_folder_others_can_write(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"ascrun-runtime-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(BuildError) as e:
        CpuToolchain().build(EMPTY_KERNEL, "k")
    assert str(e.value) == (f"{shared} is not a folder only this user can write (owned by uid {os.getuid()}, "
                            "not group- or world-writable): remove it, ascrun makes it anew")


def test_toolchain_refuses_a_runtime_folder_others_can_write(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"ascrun-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)  # another user could plant objects that every kernel would link
    with pytest.raises(BuildError) as e:
        CpuToolchain().build(EMPTY_KERNEL, "k")
    assert str(e.value) == (f"{shared} is not a folder private to this user (mode 700, owned by uid {os.getuid()}): "
                            "remove it, ascrun makes it anew")


def test_toolchain_removes_build_folders_that_killed_builds_left(tmp_path, monkeypatch):
    # the runtime prebuilt as usual (the session's, else built now), copied to the new temp dir: this
    # build compiles only the kernel (test_toolchain_prebuilds_... prebuilds from scratch)
    prebuilt = CpuToolchain()._prebuilt()[0]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    runtime = tmp_path / f"ascrun-runtime-{os.getuid()}"
    runtime.mkdir(mode=0o755)
    shutil.copytree(prebuilt, runtime / prebuilt.name)
    private = tmp_path / f"ascrun-{os.getuid()}"
    private.mkdir(mode=0o700)
    stale, live = private / "build_stale", private / "build_live"
    stale.mkdir()
    live.mkdir()
    (stale / "kernel.cpp").write_text("")
    os.utime(stale, (0, 0))  # older than any build may run
    CpuToolchain().build(EMPTY_KERNEL, "k")
    assert not stale.exists() and live.exists()


def test_a_kernel_type_from_a_hijacked_frontend_never_reaches_the_cpp():
    """The kernel type is the frontend's output, pasted into the translation unit's last line: a
    frontend taken over could answer C++ there. Only pyasc's names pass (both the in-process and
    the jailed build make the unit with translation_unit)."""
    injected = 'AIV_ONLY)\n#include "/etc/shadow"\n//'
    with pytest.raises(BuildError) as e:
        CpuToolchain.translation_unit(EMPTY_KERNEL, "k", injected)
    assert str(e.value) == (f"kernel type {injected!r} is not one of pyasc's: AIV_ONLY, AIC_ONLY, MIX_AIV_HARD_SYNC, "
                            "MIX_AIC_HARD_SYNC, MIX_AIV_1_0, MIX_AIC_1_0, MIX_AIC_1_1, MIX_AIC_1_2")
    assert CpuToolchain.translation_unit(EMPTY_KERNEL, "k", "MIX_AIC_1_2").endswith(
        "\nASCRUN_EXPORT_KERNEL(k, MIX_AIC_1_2)\n")

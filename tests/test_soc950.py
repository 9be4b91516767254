"""Ascend950 (C310, __NPU_ARCH__ 3510) as a SOC of the cpu target: asctile kernels generated for
Ascend950PR_9599 run on the cpu with the 950's core (runtime/ascrun/core/soc.h), their get_buf/rls_buf
buffer-ID synchronization (runtime/ascrun/sync/buf_id.h) fed to the hazard check and the modeled
timeline; a 950 build never shares an artifact with a 910B one. pyasc's nightly only (1.1.1 has
neither asctile nor the 950 SOCs): these skip on 1.1.1, like tests/test_asctile.py."""
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

import ascrun
from ascrun.args import launch_args
from ascrun.compiler import frontend, pipeline, socs
from conftest import kernel_line, load_module
from test_asctile import HAS_ASCTILE, needs_asctile

pytestmark = [pytest.mark.kernel, needs_asctile]

SOC_950, SOC_910B = "Ascend950PR_9599", "Ascend910B1"
VADD_PATH = Path(__file__).parent / "asctile_style" / "vadd.py"
N, TILE, BLOCKS = 4096, 256, 4


@pytest.fixture(scope="module")
def vadd():
    return load_module(VADD_PATH, "asctile_style_vadd")


def _inputs(n: int = N, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


@pytest.mark.parametrize("soc", [SOC_950, SOC_910B])
def test_vadd_runs_in_process_on_each_soc(vadd, soc):
    x, y = _inputs()
    z = np.zeros_like(x)
    result = ascrun.run_local(vadd.vadd, BLOCKS, x, y, z, N, TILE, soc=soc)
    np.testing.assert_array_equal(z, x + y)
    assert result.warnings == []
    # C310 code synchronizes by buffer IDs, C220 code by flags (through asctile's TQue on 910B)
    assert ("get_buf(PIPE_V" in result._source) == (soc == SOC_950)
    [core, *_] = result.model["cores"]
    assert {"MTE2", "V", "MTE3"} <= {p for p, c in core["busy"].items() if c > 0}


def test_run_local_follows_the_configured_platform(vadd):
    from asc.experimental import asctile
    x, y = _inputs()
    z = np.zeros_like(x)
    asctile.set_platform(asctile.Backend.Model, asctile.Platform.Ascend950PR_9599, check=False)
    try:
        result = ascrun.run_local(vadd.vadd, BLOCKS, x, y, z, N, TILE)
    finally:
        asctile.set_platform(asctile.Backend.Model, asctile.Platform.Ascend910B1, check=False)
    np.testing.assert_array_equal(z, x + y)
    assert "get_buf(PIPE_V" in result._source
    assert "get_buf" not in ascrun.run_local(vadd.vadd, BLOCKS, x, y, z, N, TILE)._source


def test_the_unified_buffer_is_the_socs(vadd):
    # three tiles of 72 KiB: 216 KiB fit the 950's 248 KiB Unified Buffer, not the 910B's 192 KiB
    n = 18432
    x, y = _inputs(n)
    z = np.zeros_like(x)
    ascrun.run_local(vadd.vadd, 1, x, y, z, n, n, soc=SOC_950)
    np.testing.assert_array_equal(z, x + y)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vadd.vadd, 1, x, y, z, n, n, soc=SOC_910B)
    assert str(e.value).endswith("block 0: TPipe::InitBuffer(TQue<VECIN, 1>, 1, 73728): 1 x 73728 bytes from UB offset "
                                 "0x24000 do not fit in the Unified Buffer (0x30000 bytes, 0xc000 left)")
    # three of 88 KiB: past the 950's 248 KiB (0x3e000) too
    n = 22528
    x, y = _inputs(n)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(vadd.vadd, 1, x, y, np.zeros_like(x), n, n, soc=SOC_950)
    assert str(e.value).endswith("block 0: LocalTensor<float>(VECCALC, 0x2c000, 22528): range [0x2c000, 0x42000) is "
                                 "outside the Unified Buffer (0x3e000 bytes)")


def _frontend(vadd, soc: str, tile: int = TILE):
    x, y = _inputs()
    z = np.zeros_like(x)
    bundle, host = launch_args(vadd.vadd, (x, y, z, N, tile))
    return frontend.run(bundle, host.specs, {}, soc), host, (x, y, z)


def test_the_arch_travels_with_the_result_and_keys_the_artifact(vadd):
    result_950, _, _ = _frontend(vadd, SOC_950)
    result_910b, _, _ = _frontend(vadd, SOC_910B)
    assert (result_950.npu_arch, result_910b.npu_arch) == (socs.ARCH_3510, socs.ARCH_2201)
    assert frontend.FrontendResult.from_json(json.loads(json.dumps(result_950.to_json()))) == result_950
    # the same source built for the two archs: two artifacts
    as_910b = dataclasses.replace(result_950, npu_arch=socs.ARCH_2201)
    toolchain_id = pipeline.get_target("cpu").toolchain.id
    assert pipeline.artifact_key(toolchain_id, result_950) != pipeline.artifact_key(toolchain_id, as_910b)


def test_every_pyasc_soc_has_a_modelled_arch():
    from asc.runtime.config import Platform, platform_to_arch
    for platform in Platform:
        arch = socs.npu_arch(platform.value)
        assert {"c220": socs.ARCH_2201, "c310": socs.ARCH_3510}[platform_to_arch(platform).value] == arch
    assert socs.modelled(p.value for p in Platform) == [p.value for p in Platform]
    with pytest.raises(ValueError, match="SOC 'Ascend310P3' has no NPU architecture ascrun models"):
        socs.npu_arch("Ascend310P3")


# ---- get_buf / rls_buf: the 950's vadd with its pairs edited -------------------------------------------

def _edited_run(vadd, edit, hazards: str = "warn", soc: str = SOC_950):
    """The vadd kernel for `soc`, its Ascend C passed through `edit` (lines kept: the sites stay
    right), built and run on the cpu target: (RunResult, z, x + y)."""
    result, host, (x, y, z) = _frontend(vadd, soc)
    edited = dataclasses.replace(result, source=edit(result.source))
    target = pipeline.get_target("cpu")
    artifact = target.toolchain.build(edited.source, edited.kernel_name, edited.kernel_type, edited.npu_arch)
    ran = pipeline.run(pipeline.Build(edited, artifact), target, 1, host.values, hazards=hazards)
    return ran, host.values["z_ptr"], x + y


def _drop(*calls: str):
    """An edit that blanks the lines `calls` (each once, the first of its text)."""
    def edit(source: str) -> str:
        for call in calls:
            assert f"    {call};\n" in source, call
            source = source.replace(f"    {call};\n", "\n", 1)
        return source
    return edit


def _replace(old: str, new: str):
    def edit(source: str) -> str:
        assert old in source
        return source.replace(old, new, 1)
    return edit


# where messages say the calls are: vadd.py's lines
SITE = kernel_line(VADD_PATH, "asctile.copy_out(x + y")  # the Add and the copy-out
COPY_X = kernel_line(VADD_PATH, "x = asctile.copy_in(")


def test_the_950_kernel_as_generated_has_no_hazards(vadd):
    ran, z, expected = _edited_run(vadd, lambda source: source)
    np.testing.assert_array_equal(z, expected)
    assert ran.warnings == []


PAIR = "flag or get_buf/rls_buf pair of one buffer ID between them"


def test_an_add_without_its_output_pair_races_the_copy_out(vadd):
    # z's tile (buffer ID 2) on V: the copy-out no longer waits for the Add's write (its get_buf waits
    # for the last rls_buf of ID 2, which is its own previous one), nor the next Add for its read
    ran, z, expected = _edited_run(vadd, _drop("get_buf(PIPE_V, 2, 0)", "rls_buf(PIPE_V, 2, 0)"))
    np.testing.assert_array_equal(z, expected)  # the cpu runs in program order: only the model sees it
    assert ran.warnings == [
        f"{SITE}: block 0: MTE3 DataCopyPad(UB->GM) reads UB [0x0, 0x400) written by V Add at {SITE} with no V->MTE3 "
        f"{PAIR} (16 times; the first shown)",
        f"{SITE}: block 0: V Add writes UB [0x0, 0x400) read by MTE3 DataCopyPad(UB->GM) at {SITE} with no MTE3->V "
        f"{PAIR} (15 times; the first shown)"]


def test_an_add_without_an_input_pair_races_the_next_copy_in(vadd):
    # x's tile (ID 0) on V: the Add still reads it after its copy-in (it waits for y's, which MTE2 runs
    # after x's), but the next tile's copy-in of x overwrites it without waiting for the Add
    ran, _, _ = _edited_run(vadd, _drop("get_buf(PIPE_V, 0, 0)", "rls_buf(PIPE_V, 0, 0)"))
    assert ran.warnings == [
        f"{COPY_X}: block 0: MTE2 DataCopyPad(GM->UB) writes UB [0x800, 0xc00) read by V Add at {SITE} with no "
        f"V->MTE2 {PAIR} (15 times; the first shown)"]


def test_a_missing_pair_faults_under_the_fault_policy(vadd):
    with pytest.raises(ascrun.KernelError) as e:
        _edited_run(vadd, _drop("get_buf(PIPE_MTE3, 2, 0)", "rls_buf(PIPE_MTE3, 2, 0)"), hazards="fault")
    assert str(e.value) == (f"{SITE}: block 0: MTE3 DataCopyPad(UB->GM) reads UB [0x0, 0x400) written by V Add at "
                            f"{SITE} with no V->MTE3 {PAIR} (hazards=\"fault\")")


@pytest.mark.parametrize("edit, message", [
    (_drop("get_buf(PIPE_V, 0, 0)"),
     f"{SITE}: block 0: rls_buf(PIPE_V, 0, 0): buffer ID 0 is not held by PIPE_V (no get_buf holds it): an rls_buf "
     "follows the get_buf of its ID on the same pipe (undefined on the device)"),
    (_drop("rls_buf(PIPE_MTE2, 0, 0)"),
     f"{SITE}: block 0: get_buf(PIPE_V, 0, 0): buffer ID 0 is still held by PIPE_MTE2 (its get_buf at "
     f"{COPY_X}) with no rls_buf since: get_buf/rls_buf pairs of one ID may not nest, whatever "
     "their pipes (undefined on the device)"),
    (_replace("rls_buf(PIPE_V, 1, 0)", "rls_buf(PIPE_V, 1, 1)"),
     f"{SITE}: block 0: rls_buf(PIPE_V, 1, 1): mode 1 differs from its get_buf's 0 (get_buf at {SITE}) (a pair has "
     "one mode; undefined on the device)"),
    (_replace("get_buf(PIPE_V, 2, 0)", "get_buf(PIPE_ALL, 2, 0)"),
     f"{SITE}: block 0: get_buf(PIPE_ALL, 2, 0): pipe PIPE_ALL has no buffer IDs (get_buf/rls_buf take PIPE_S, "
     "PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 or PIPE_FIX)"),
    (_replace("get_buf(PIPE_V, 2, 0)", "get_buf(PIPE_V, 32, 0)"),
     f"{SITE}: block 0: get_buf(PIPE_V, 32, 0): buffer ID 32 is out of range (buffer IDs are 0 to 31)"),
    (_replace("get_buf(PIPE_V, 2, 0)", "get_buf(PIPE_V, 2, 2)"),
     f"{SITE}: block 0: get_buf(PIPE_V, 2, 2): mode 2 is neither 0 (block the pipe) nor 1 (do not block it)"),
])
def test_bad_get_buf_rls_buf_calls_fault_naming_the_call(vadd, edit, message):
    with pytest.raises(ascrun.KernelError) as e:
        _edited_run(vadd, edit)
    assert e.value.kind == "runtime_error"
    assert str(e.value) == message


def test_a_get_buf_never_released_is_reported(vadd):
    # the last copy-out's rls_buf gone: no later get_buf of ID 2 is left to hang, the finding says so
    def edit(source: str) -> str:
        last = source.rindex("    rls_buf(PIPE_MTE3, 2, 0);\n")
        return source[:last] + "    if (v13 + 1 < v7) rls_buf(PIPE_MTE3, 2, 0);\n" + source[last + 29:]
    ran, z, expected = _edited_run(vadd, edit)
    np.testing.assert_array_equal(z, expected)
    assert ran.warnings == [f"{SITE}: block 0: get_buf(PIPE_MTE3, 2, 0) is never released: no "
                            "rls_buf(PIPE_MTE3, 2, 0) follows it before the kernel ends (a later get_buf of buffer ID 2 "
                            "would wait forever)"]


def test_buffer_ids_are_the_950s_only(vadd):
    def edit(source: str) -> str:
        return source.replace("  AscendC::TPipe", "  get_buf(PIPE_V, 0, 0);\n  rls_buf(PIPE_V, 0, 0);\n  AscendC::TPipe", 1)
    with pytest.raises(ascrun.KernelError) as e:
        _edited_run(vadd, edit, soc=SOC_910B)
    assert str(e.value).endswith("get_buf(PIPE_V, 0, 0): buffer-ID synchronization (get_buf/rls_buf, "
                                 "Mutex::Lock/Unlock) is Ascend 950's (__NPU_ARCH__ 3510); this kernel is built for "
                                 "dav-2201, which has none")


def _spans(trace: str, pipe: str, api: str):
    return [(e["args"]["cycle"], e["args"]["cycle"] + e["args"]["cycles"]) for e in json.loads(trace)["traceEvents"]
            if e["ph"] == "X" and e["pid"] == 0 and e["cat"] == pipe and e["name"] == api]


def test_the_timeline_waits_at_get_buf(vadd):
    ran, _, _ = _edited_run(vadd, lambda source: source)
    copies, adds = _spans(ran.trace, "MTE2", "DataCopyPad(GM->UB)"), _spans(ran.trace, "V", "Add")
    outs = _spans(ran.trace, "MTE3", "DataCopyPad(UB->GM)")
    assert len(copies) == 2 * len(adds) == 2 * len(outs) == 32
    for i, (start, end) in enumerate(adds):
        # get_buf(PIPE_V, 0/1): the Add starts once its tile's two copy-ins have released their IDs
        assert start >= max(copies[2 * i][1], copies[2 * i + 1][1])
        # get_buf(PIPE_MTE3, 2): the copy-out once the Add released ID 2
        assert outs[i][0] >= end
        if i:  # get_buf(PIPE_V, 2): the Add overwrites its output once the last copy-out released it
            assert start >= outs[i - 1][1]
    # without x's pair the Add waits for y's copy-in only (and the next copy-in of x for nothing)
    unordered, _, _ = _edited_run(vadd, _drop("get_buf(PIPE_V, 0, 0)", "rls_buf(PIPE_V, 0, 0)"))
    copies = _spans(unordered.trace, "MTE2", "DataCopyPad(GM->UB)")
    assert any(c_start < a_end and a_start < c_end for a_start, a_end in _spans(unordered.trace, "V", "Add")
               for c_start, c_end in copies[::2])


# ---- the SOC in the pool: workers, host tiling ----------------------------------------------------------

def test_a_cpu_target_serves_every_soc_it_models_unless_told():
    from ascrun.compiler.targets.cpu import CpuTarget
    said = CpuTarget().capabilities()["socs"]
    assert said == frontend.known_socs() and {SOC_950, SOC_910B, "Ascend950PR_950z", "Ascend910_9391"} <= set(said)
    assert CpuTarget(socs=[SOC_910B]).capabilities()["socs"] == [SOC_910B]  # the operator's --soc


def test_host_tiling_knows_the_950s_core():
    from ascrun.compat.host_tiling import CoreMemType, PlatformAscendC
    platform, a2 = PlatformAscendC(SOC_950), PlatformAscendC(SOC_910B)
    sizes = {t: platform.get_core_mem_size(t) for t in (CoreMemType.UB, CoreMemType.L1, CoreMemType.L0_A,
                                                        CoreMemType.L0_B, CoreMemType.L0_C, CoreMemType.BT)}
    assert sizes == {CoreMemType.UB: 248 * 1024, CoreMemType.L1: 512 * 1024, CoreMemType.L0_A: 64 * 1024,
                     CoreMemType.L0_B: 64 * 1024, CoreMemType.L0_C: 256 * 1024, CoreMemType.BT: 4 * 1024}
    assert a2.get_core_mem_size(CoreMemType.UB) == 192 * 1024
    assert (platform.get_core_num_aic(), platform.get_core_num_aiv()) == (24, 48)
    from asc.runtime.config import Platform
    for p in Platform:  # every SOC the nightly knows has host tiling
        assert PlatformAscendC(p).get_soc_version() == p.value


@pytest.mark.service
def test_an_ascrun_up_pool_runs_950_scripts(service, client, tmp_path):
    from ascrun_cli import NO_SIM_NOTICE, ascrun as cli
    printed = "asctile vadd: z == x + y for 8192 float32\n"
    cpu = next(t for t in client.targets() if t["name"] == "cpu")
    assert all(SOC_950 in w["socs"] and SOC_910B in w["socs"] for w in cpu["live"]) and len(cpu["live"]) == 2
    # the script's own platform: asctile.set_platform(..., Platform.Ascend950PR_9599, ...)
    script = tmp_path / "vadd950.py"
    script.write_text(VADD_PATH.read_text().replace("Platform.Ascend910B1", "Platform.Ascend950PR_9599"))
    out = cli("exec", "--json", "--url", service.url, script)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["exit_code"], report["platform"], report["error"]) == (0, SOC_950, None)
    [launch] = report["launches"]
    assert (launch["target"], launch["status"]) == ("cpu", "finished")
    assert client.job(launch["job_id"])["soc"] == SOC_950
    # the unmodified script with --soc
    out = cli("exec", "--soc", SOC_950, "--url", service.url, VADD_PATH)
    assert (out.returncode, out.stdout, out.stderr) == (0, printed, NO_SIM_NOTICE + "\n")

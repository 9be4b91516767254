"""asctile's vf_fusion on the cpu target: for an Ascend950 SOC (arch C310) pyasc's nightly fuses a
tile's element-wise chain into one VF written with Ascend C's register API (`__VEC_SCOPE__`,
`AscendC::Reg::*`), which the runtime's reg/ family implements. The fused chains (kernels/vf_fusion.py)
run through pyasc's frontend, the cpu toolchain and runner (pipeline.build/run, as run_local does)
against numpy, with vf_fusion on and off giving the same bytes; the VF's loads and stores are seen
by the hazard check; a register instruction the device would run on garbage (an unwritten register
or mask, a misaligned or out-of-UB address, outside a VF, an unknown mask pattern, a negative shift,
an arch without the register API) faults naming the call, shown on the emitted source with that one
fault put in. pyasc 1.1.1 has no asctile: these skip there (`make test-nightly` runs them)."""
import dataclasses
import functools
import importlib.util
import re

import numpy as np
import pytest

import ascrun
from ascrun.compiler import pipeline
from ascrun.compiler.bundle import collect
from ascrun.compiler.errors import KernelError
from ascrun.compiler.frontend import ArgSpec, pyasc_version
from conftest import kernel_line, unsited

HAS_ASCTILE = importlib.util.find_spec("asc.experimental") is not None and \
    importlib.util.find_spec("asc.experimental.asctile") is not None
pytestmark = [pytest.mark.kernel, pytest.mark.skipif(not HAS_ASCTILE, reason=(
    f"pyasc {pyasc_version()} has no asc.experimental.asctile (pyasc's nightly has): make test-nightly runs these"))]

SOC = "Ascend950PR_9599"
BLOCKS = 4
UB_BYTES = 253952  # the Ascend950's Unified Buffer the runtime models (runtime/ascrun/core/soc.h, __NPU_ARCH__ 3510)
REFERENCES = {
    "add_mul": lambda x, y, w: (x + y) * w,
    "exp_relu": lambda x, y, w: np.maximum(np.exp(x) - y, 0) * w,
    "scalar": lambda x, y, w: x * x.dtype.type(2.0) + w,
    "max_min": lambda x, y, w: np.minimum(np.maximum(x, y), w),
    "div": lambda x, y, w: (x - y) / w,
    "sqrt_log": lambda x, y, w: np.sqrt(np.abs(x)) + np.log(np.abs(y)) * w,
}
EXACT = {"add_mul", "scalar", "max_min", "div"}  # one rounding per operation, as numpy's; exp/log/sqrt: in float
# Chains without a scalar: their unfused form is vector instructions only. A scalar operand
# (x * 2.0) unfused is `Muls<float, 0>(dst, src, 2.0f, count)`, the count form with isSetMask =
# false, which the cpu runtime faults on (tests/test_asctile.py): only its fused form runs here.
TENSOR_ONLY = sorted(set(REFERENCES) - {"scalar"})


class _Cache(dict):
    """The builds' caches: this module's own, in memory."""
    def put(self, key, value):
        self[key] = value


@pytest.fixture(scope="module")
def kernels():
    import vf_fusion
    return vf_fusion


@functools.lru_cache(maxsize=None)
def _build(kernel, dtype: str, n: int, tile: int, op: str, vf: bool) -> pipeline.Build:
    specs = [ArgSpec("tensor", dtype)] * 4 + [ArgSpec("scalar", "int", n), ArgSpec("scalar", "int", tile),
                                              ArgSpec("scalar", "str", op)]
    cache = _Cache()
    return pipeline.build(collect(kernel), specs, pipeline.get_target("cpu"), frontend_cache=cache,
                          artifact_cache=cache, options={"vf_fusion": vf}, soc=SOC)


def _launch(built: pipeline.Build, x, y, w, blocks: int = BLOCKS):
    z = np.zeros_like(x)
    ran = pipeline.run(built, pipeline.get_target("cpu"), blocks, {"x_ptr": x, "y_ptr": y, "w_ptr": w, "z_ptr": z})
    return z, ran


def _inputs(n: int, dtype: str, seed: int = 2026):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return [rng.integers(-1000, 1000, n).astype(dtype) for _ in range(3)]
    return [(rng.random(n, dtype=np.float32) * 4 - 2).astype(dtype) for _ in range(3)]


def _per_tile(values, tile, reduce):
    return np.repeat(reduce(values.reshape(-1, tile), axis=1), tile)


def _fused_and_plain(kernels, op, dtype, n, tile):
    x, y, w = _inputs(n, dtype)
    fused, ran = _launch(_build(kernels.chain, dtype, n, tile, op, True), x, y, w)
    plain, _ = _launch(_build(kernels.chain, dtype, n, tile, op, False), x, y, w)
    return (x, y, w), fused, plain, ran


@pytest.mark.parametrize("op", TENSOR_ONLY)
def test_a_fused_chain_matches_numpy_and_the_unfused_kernel(kernels, op):
    (x, y, w), fused, plain, ran = _fused_and_plain(kernels, op, "float32", 4096, 256)
    source = _build(kernels.chain, "float32", 4096, 256, op, True).frontend.source
    assert "__VEC_SCOPE__" in source and "AscendC::Reg::LoadAlign" in source  # fused: one VF per tile
    assert "__VEC_SCOPE__" not in _build(kernels.chain, "float32", 4096, 256, op, False).frontend.source
    np.testing.assert_array_equal(fused, plain)
    expected = REFERENCES[op](x, y, w)
    if op in EXACT:
        np.testing.assert_array_equal(fused, expected)
    else:
        np.testing.assert_allclose(fused, expected, rtol=1e-6, atol=1e-6)
    assert not [m for m in ran.warnings if "Reg::" in m]


def test_a_scalar_in_a_fused_chain_is_a_register_of_it(kernels):
    x, y, w = _inputs(4096, "float32")
    built = _build(kernels.chain, "float32", 4096, 256, "scalar", True)
    assert re.search(r"AscendC::Reg::Duplicate\(v\d+, c2_f32, v\d+\)", built.frontend.source)
    fused, _ = _launch(built, x, y, w)
    np.testing.assert_array_equal(fused, x * np.float32(2.0) + w)


# A VF that reduces (asctile: per-lane partials over the tile's registers, Reg::ReduceSum/ReduceMax,
# Duplicate of element 0), and integer chains (Reg::And/Or/Not, ShiftLefts). Their unfused forms use
# vector instructions the cpu runtime does not take (Duplicate from a tensor, the isSetMask = false
# count forms): numpy is the reference.
WITH_REDUCTIONS = {
    "sum": ("float32", lambda x, y, w, tile: _per_tile(x * y, tile, np.sum) + w),
    "softmax": ("float32", lambda x, y, w, tile: np.exp(x - _per_tile(x, tile, np.max)) * w),
    "bits": ("int32", lambda x, y, w, tile: (x & y) | (x ^ w)),
    "shift": ("int32", lambda x, y, w, tile: (x << 2) + y * w),
}


@pytest.mark.parametrize("tile", [256, 100])
@pytest.mark.parametrize("op", sorted(WITH_REDUCTIONS))
def test_a_fused_reduction_or_integer_chain_matches_numpy(kernels, op, tile):
    dtype, reference = WITH_REDUCTIONS[op]
    built = _build(kernels.chain, dtype, 4 * 2 * tile, tile, op, True)
    if op in ("sum", "softmax"):
        assert re.search(r"AscendC::Reg::Reduce(Sum|Max)\(", built.frontend.source)
    if op == "sum" and tile % 64:  # the partial last register: Select, after a store and reload
        assert "AscendC::Reg::Select(" in built.frontend.source
        assert "AscendC::Reg::LocalMemBar<" in built.frontend.source
    x, y, w = _inputs(4 * 2 * tile, dtype)
    fused, _ = _launch(built, x, y, w)
    expected = reference(x, y, w, tile)
    if dtype == "int32":
        np.testing.assert_array_equal(fused, expected)
    else:  # the VF adds in its own order (per lane, then Reduce.md's binary tree)
        np.testing.assert_allclose(fused, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["add_mul", "exp_relu"])
def test_a_tile_not_a_multiple_of_the_register_stores_only_its_elements(kernels, op):
    """100 floats: two 64-lane registers, the second loaded whole (past the tile, as the device
    does) and stored under UpdateMask's 36 lanes."""
    source = _build(kernels.chain, "float32", 800, 100, op, True).frontend.source
    assert "UpdateMask<float>" in source and "{c100_idx}" in source
    (x, y, w), fused, plain, _ = _fused_and_plain(kernels, op, "float32", 800, 100)
    np.testing.assert_array_equal(fused, plain)
    np.testing.assert_allclose(fused, REFERENCES[op](x, y, w), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["add_mul", "exp_relu"])
def test_half_chains_round_after_every_operation(kernels, op):
    (x, y, w), fused, plain, _ = _fused_and_plain(kernels, op, "float16", 2048, 256)
    assert "RegTensor<half>" in _build(kernels.chain, "float16", 2048, 256, op, True).frontend.source
    np.testing.assert_array_equal(fused, plain)
    if op == "exp_relu":
        np.testing.assert_allclose(fused, REFERENCES[op](x, y, w), rtol=1e-3)
    else:
        np.testing.assert_array_equal(fused, REFERENCES[op](x, y, w))


@pytest.mark.parametrize("cols", [64, 40])
@pytest.mark.parametrize("op", ["softmax", "bias"])
def test_a_fused_row_wise_chain_matches_numpy(kernels, op, cols):
    """A 16 x cols tile: each row's softmax (a reduction per row; 40 columns: a partial register), or
    a row broadcast over the tile."""
    rng = np.random.default_rng(7)
    x = rng.random((16, cols), dtype=np.float32) * 4 - 2
    b = rng.random((1, cols), dtype=np.float32) * 4 - 2
    cache = _Cache()
    built = pipeline.build(collect(kernels.rows), [ArgSpec("tensor", "float32")] * 3 + [
        ArgSpec("scalar", "int", 16), ArgSpec("scalar", "int", cols), ArgSpec("scalar", "str", op)],
        pipeline.get_target("cpu"), frontend_cache=cache, artifact_cache=cache, options={"vf_fusion": True}, soc=SOC)
    assert "__VEC_SCOPE__" in built.frontend.source
    z = np.zeros_like(x)
    pipeline.run(built, pipeline.get_target("cpu"), 1, {"x_ptr": x, "b_ptr": b, "z_ptr": z})
    if op == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(z, e / e.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(z, np.maximum(x + b, 0) * x)


# --- what the device would do silently or refuse: faults naming the call ------------------------

def _fault_in(kernels, change, npu_arch=None) -> str:
    """The fault of the fused add_mul kernel's emitted source with `change(source)` made to it (built
    for `npu_arch`, default its own)."""
    built = _build(kernels.chain, "float32", 1024, 256, "add_mul", True)
    source = change(built.frontend.source)
    assert source != built.frontend.source
    target = pipeline.get_target("cpu")
    result = dataclasses.replace(built.frontend, source=source, npu_arch=npu_arch or built.frontend.npu_arch)
    changed = pipeline.Build(result, target.toolchain.build(source, result.kernel_name, result.kernel_type,
                                                                result.npu_arch))
    with pytest.raises(KernelError) as e:
        _launch(changed, *_inputs(1024, "float32"), blocks=1)
    assert e.value.kind == "runtime_error"
    return unsited(str(e.value))


def _first_address(source: str):
    """(the first register pointer's tensor variable, its UB offset) in an emitted VF."""
    tensor = re.search(r"reinterpret_cast<__ubuf__ float\*>\((v\d+)\.GetPhyAddr\(\)\)", source).group(1)
    declared = re.search(rf"LocalTensor<float> {tensor}\{{AscendC::TPosition::VECCALC, (\d+),", source)
    return tensor, int(declared.group(1))


def test_a_vf_without_its_output_pair_races_the_copy_out(kernels):
    """The VF's loads and stores are V-pipe operands of the pipe model: with the output tile's
    get_buf/rls_buf on V (buffer ID 3) taken out, the copy-out no longer waits for the StoreAlign."""
    built = _build(kernels.chain, "float32", 1024, 256, "add_mul", True)
    source = built.frontend.source
    for call in ("get_buf(PIPE_V, 3, 0)", "rls_buf(PIPE_V, 3, 0)"):
        assert f"    {call};\n" in source
        source = source.replace(f"    {call};\n", "\n", 1)  # lines kept: the sites stay right
    target = pipeline.get_target("cpu")
    result = dataclasses.replace(built.frontend, source=source)
    edited = pipeline.Build(result, target.toolchain.build(source, result.kernel_name, result.kernel_type,
                                                           result.npu_arch))
    x, y, w = _inputs(1024, "float32")
    z, ran = _launch(edited, x, y, w, blocks=1)
    np.testing.assert_array_equal(z, (x + y) * w)  # the cpu runs in program order: only the model sees it
    vf = kernel_line(kernels, "z = (x + y) * w", "def chain")  # the fused statement's site
    out = kernel_line(kernels, "asctile.copy_out(z, z_gm", "def chain")
    pair = "flag or get_buf/rls_buf pair of one buffer ID between them"
    assert ran.warnings == [
        f"{out}: block 0: MTE3 DataCopyPad(UB->GM) reads UB [0x0, 0x400) written by V Reg::StoreAlign at {vf} with "
        f"no V->MTE3 {pair} (4 times; the first shown)",
        f"{vf}: block 0: V Reg::StoreAlign writes UB [0x0, 0x100) read by MTE3 DataCopyPad(UB->GM) at {out} with no "
        f"MTE3->V {pair} (12 times; the first shown)"]


def test_a_misaligned_register_address_faults(kernels):
    offset = []

    def misalign(source):
        tensor, at = _first_address(source)
        offset.append(at + 4)
        return source.replace(f"({tensor}.GetPhyAddr())", f"({tensor}.GetPhyAddr() + 4)", 1)
    message = _fault_in(kernels, misalign)
    assert message == (f"block 0: Reg::LoadAlign: srcAddr (UB offset {offset[0]:#x}) is not 32-byte aligned "
                       "(LoadAlign/StoreAlign's DIST_NORM needs it)")


def test_a_register_past_the_unified_buffer_faults(kernels):
    past = UB_BYTES - 128  # aligned, but its 256 bytes end past the UB

    def beyond(source):
        tensor, at = _first_address(source)
        return source.replace(f"({tensor}.GetPhyAddr())", f"({tensor}.GetPhyAddr() + {past - at})", 1)
    assert _fault_in(kernels, beyond) == (
        f"block 0: Reg::LoadAlign: srcAddr (UB offset {past:#x}) + the register's 256 bytes runs past the Unified "
        f"Buffer ({UB_BYTES} bytes)")


def test_a_register_read_before_anything_wrote_it_faults(kernels):
    def unloaded(source):  # the first LoadAlign goes: the Add reads a register nothing loaded
        return re.sub(r"AscendC::Reg::LoadAlign<[^;]*;\n", "", source, count=1)
    assert _fault_in(kernels, unloaded) == (
        "block 0: Reg::Add: srcReg0 is a RegTensor nothing has written (its value is undefined)")


def test_a_float_scalar_outside_an_integer_registers_range_faults(kernels):
    """Its conversion is undefined behaviour in C++ (review): the register API faults, NaN included."""
    def huge(source):
        return re.sub(r"__VEC_SCOPE__\s*\{", lambda m: m.group(0) + "\n    { AscendC::Reg::RegTensor<int32_t> bad; "
                      "AscendC::Reg::Duplicate(bad, 1e10f); }", source, count=1)
    assert _fault_in(kernels, huge) == (
        "block 0: Reg::Duplicate: scalarValue 1e+10 is outside int32_t's range (its conversion is undefined)")


def test_a_mask_never_set_faults(kernels):
    def unset(source):
        return re.sub(r"(AscendC::Reg::MaskReg v\d+) = AscendC::Reg::CreateMask<[^;]*;", r"\1;", source, count=1)
    assert _fault_in(kernels, unset) == (
        "block 0: Reg::Add: mask is a MaskReg nothing has written (its value is undefined)")


def test_an_unknown_mask_pattern_faults(kernels):
    def unknown(source):
        return source.replace("AscendC::Reg::MaskPattern::ALL>", "static_cast<AscendC::Reg::MaskPattern>(14)>", 1)
    assert _fault_in(kernels, unknown) == (
        "block 0: Reg::CreateMask: MaskPattern 14 is not one of MaskReg.md's patterns (ALL, VL1..VL128, M3, M4, H, "
        "Q, ALLF)")


def test_the_register_api_on_atlas_a2_faults(kernels):
    """Built for __NPU_ARCH__ 2201 (without the buffer IDs, which fault there first)."""
    def no_buffer_ids(source):
        return re.sub(r"^ *(get|rls)_buf\(.*\n", "", source, flags=re.M)
    assert _fault_in(kernels, no_buffer_ids, npu_arch=2201) == (
        "block 0: Reg::CreateMask: the register API is Ascend 950's (__NPU_ARCH__ 3510); this kernel is built for "
        "dav-2201, which has none")


def test_a_register_instruction_outside_a_vf_faults(kernels):
    def unscoped(source):
        return source.replace("__VEC_SCOPE__", "", 1)
    assert _fault_in(kernels, unscoped) == (
        "block 0: Reg::CreateMask: a register instruction outside a __VEC_SCOPE__ (the register API runs only "
        "inside a VF)")


def test_a_negative_shift_count_faults(kernels):
    """ShiftLefts.md: "scalarValue不支持设置为负数，负数行为未定义"; the count is the kernel's scalar."""
    cache = _Cache()
    built = pipeline.build(collect(kernels.shift_by), [ArgSpec("tensor", "int32")] * 2 + [
        ArgSpec("scalar", "int", 256), ArgSpec("scalar", "int32", 3)], pipeline.get_target("cpu"), frontend_cache=cache,
        artifact_cache=cache, options={"vf_fusion": True}, soc=SOC)
    assert "AscendC::Reg::ShiftLefts(" in built.frontend.source
    x = np.arange(-128, 128, dtype=np.int32)
    for count, expected in ((3, (x << 3) + x), (31, (x << 31) + x), (32, x)):  # past the width: 0 (ShiftLefts.md)
        z = np.zeros_like(x)
        pipeline.run(built, pipeline.get_target("cpu"), 1, {"x_ptr": x, "z_ptr": z, "count": np.int32(count)})
        np.testing.assert_array_equal(z, expected)
    with pytest.raises(KernelError) as e:
        pipeline.run(built, pipeline.get_target("cpu"), 1,
                     {"x_ptr": x, "z_ptr": np.zeros_like(x), "count": np.int32(-1)})
    assert unsited(str(e.value)) == (
        "block 0: Reg::ShiftLefts: shift count -1 is negative (the reference leaves a negative count undefined)")


def test_a_kernel_asking_for_vf_fusion_runs_through_run_local(kernels):
    """The user's path: @asctile.jit(vf_fusion=True), run_local for the Ascend950."""
    x, y, w = _inputs(1000, "float32")
    z = np.zeros_like(x)
    result = ascrun.run_local(kernels.add_mul_fused, 1, x, y, w, z, 1000, soc=SOC)
    np.testing.assert_array_equal(z, (x + y) * w)
    assert "__VEC_SCOPE__" in result.source and "AscendC::Reg::StoreAlign" in result.source
    assert result.warnings == []

"""pyasc Struct kernel parameters (asc.language.core.struct) through the whole pipeline: in-process,
through the service, and from an `ascrun exec` script where pyasc is not installed (the stand-in).

pyasc specializes a kernel on a Struct argument's class only (its cache factor is the class), so
changing the values reuses the compiled artifact; the launcher sends Struct.pack() (ctypes, the
class's pack=) and the kernel copies sizeof(S) bytes of its `#pragma pack(push, 8)` struct.
"""
import httpx
import numpy as np
import pytest
from asc.language.core.dtype import KnownTypes as KT
from asc.language.core.struct import Field, Struct

import ascrun
import struct_params as sp
from pyasc_port import test_vadd_tiling as vt
from pyasc_port.inputs import operand
from ascrun.compiler import bundle, frontend, pipeline, structs
from ascrun.compiler.cache import DiskCache
from ascrun.compiler.errors import BundleRejected, CompileError, KernelError, KernelRuntimeError
from ascrun_cli import ascrun as ascrun_cli
from conftest import ROOT

pytestmark = pytest.mark.kernel

torch = pytest.importorskip("torch")

X = np.linspace(-3, 5, 4 * 256, dtype=np.float32)


def scaled_params(scale=2.5, bias=-1.0, offset=-(2 ** 40) - 5, shift=-3, flag=-7, enabled=True, seed=2 ** 64 - 3):
    return sp.ScaledTiles(tiling=sp.Tiling(block_length=256, tile_length=64, tile_num=4), flag=flag,
                          affine=sp.Affine(scale=scale, bias=bias),
                          marks=sp.Marks(shift=shift, offset=offset, enabled=enabled, seed=seed))


def run_scaled(launch, params):
    """Launch scaled_tiles_kernel with `launch(kernel, core_num, *args)` and check every output."""
    z, words, seeds = np.zeros_like(X), np.zeros(4, np.int64), np.zeros(1, np.uint64)
    result = launch(sp.scaled_tiles_kernel, 4, X, z, words, seeds, params)
    affine = params.affine
    np.testing.assert_array_equal(z, X * np.float32(affine.scale) + np.float32(affine.bias))
    marks = params.marks
    assert words.tolist() == [marks.offset, marks.shift, params.flag, int(marks.enabled)]
    assert seeds.tolist() == [marks.seed]
    return result


def test_several_field_dtypes_in_process():
    result = run_scaled(ascrun.run_local, scaled_params())
    assert "struct ScaledTiles {" in result.source and "__gm__ ScaledTiles* v5_params" in result.source


def test_new_values_reuse_the_compiled_kernel_in_process():
    run_scaled(ascrun.run_local, scaled_params())
    again = run_scaled(ascrun.run_local, scaled_params(scale=-0.5, bias=3.25, offset=2 ** 62, shift=127, flag=0,
                                                       enabled=False, seed=1))
    assert again.cache == {"frontend": "hit", "build": "hit"}


@pytest.mark.unit
def test_bytes_are_pyasc_own_and_the_size_of_the_cpp_struct():
    params = scaled_params()
    defs = {}
    structs.describe(sp.ScaledTiles, defs)
    packed = structs.pack(defs, "ScaledTiles", structs.values_of(params))
    assert packed == params.pack()  # pyasc's Struct.pack(), what its launcher sends
    # Tiling 12 bytes, flag at 12, Affine at 16, Marks (8-aligned: shift, offset at 8, enabled, seed at 24) at 24
    assert len(packed) == 56
    assert [f.offset for f in (sp.ScaledTiles.ctypes_class.flag, sp.ScaledTiles.ctypes_class.affine,
                               sp.ScaledTiles.ctypes_class.marks)] == [12, 16, 24]


def test_a_size_mismatch_with_the_cpp_struct_is_an_error():
    b = bundle.collect(sp.scaled_tiles_kernel).with_structs({})
    specs = [frontend.ArgSpec("tensor", "float32")] * 2 + [frontend.ArgSpec("tensor", "int64"),
                                                             frontend.ArgSpec("tensor", "uint64"),
                                                             frontend.ArgSpec("struct", "ScaledTiles",
                                                                              structs.values_of(scaled_params()))]
    target = pipeline.get_target("cpu")
    built = pipeline.build(b, specs, target, DiskCache.default(), DiskCache.default())
    arrays = [np.zeros_like(X), np.zeros_like(X), np.zeros(4, np.int64), np.zeros(1, np.uint64)]
    with pytest.raises(KernelRuntimeError) as e:
        target.runner.run(built.artifact, 4, built.frontend.params, built.frontend.kernel_args,
                          arrays + [scaled_params().pack()[:48]])
    assert str(e.value) == "struct argument 'params' (ScaledTiles) packs to 48 bytes, but the kernel's C++ struct is 56 bytes"


# --- errors: values that do not fit, classes that cannot be shipped --------------------------

def test_field_values_of_the_wrong_type_are_refused_before_compiling():
    b = bundle.collect(vt.vadd_kernel)
    good = {"block": {"block_length": 64}, "tile": {"tile_length": 64, "tile_num": 1}}
    cases = [
        ({"block": {"block_length": 1.5}, "tile": good["tile"]},
         "struct KernelConfig field 'block.block_length' is int32: got 1.5, not an integer"),
        ({"block": {"block_length": 2 ** 31}, "tile": good["tile"]},
         "struct KernelConfig field 'block.block_length' is int32: 2147483648 is outside [-2147483648, 2147483647]"),
        ({"block": {"block_length": True}, "tile": good["tile"]},
         "struct KernelConfig field 'block.block_length' is int32: got True"),
        ({"block": good["block"]}, "struct KernelConfig (KernelConfig) lacks a value for field 'tile'"),
        ({**good, "stride": 1}, "struct KernelConfig (KernelConfig) has no field 'stride'"),
        ({"block": 64, "tile": good["tile"]}, "struct KernelConfig field 'block' must be an object of field values, got int"),
    ]
    tensor = frontend.ArgSpec("tensor", "float32")
    for value, message in cases:
        with pytest.raises(KernelError) as e:
            frontend.run(b, [tensor] * 3 + [frontend.ArgSpec("scalar", "int", 1),
                                            frontend.ArgSpec("struct", "KernelConfig", value)])
        assert (e.value.kind, str(e.value)) == ("bad_request", message)


def test_a_struct_class_under_another_name_is_not_shipped():
    with pytest.raises(BundleRejected) as e:
        ascrun.run_local(sp.aliased_struct_kernel, 1, np.zeros(8, np.int32), sp.Count(count=3))
    line = next(n for n, text in enumerate(open(sp.__file__), 1) if "def aliased_struct_kernel" in text)
    assert str(e.value) == (f"kernel reads 'CountAlias' in 'aliased_struct_kernel' ({sp.__file__}:{line}), an alias "
                            "of Struct 'Count': name Struct classes by their own name (the kernel's C++ does)")


def test_two_struct_classes_of_one_name_are_not_shipped():
    class Count(Struct):  # not the kernel's Count
        count = Field(dtype=KT.int64, default=0)

    with pytest.raises(BundleRejected) as e:
        ascrun.run_local(sp.count_kernel, 1, np.zeros(8, np.int32), Count(count=3))
    assert str(e.value) == ("two different Struct classes are named 'Count': the kernel's C++ declares structs by "
                            "class name, rename one")


def test_a_pack_that_moves_fields_is_a_compile_error():
    with pytest.raises(CompileError) as e:
        ascrun.run_local(sp.packed_struct_kernel, 1, np.zeros(8, np.int64), sp.Packed(count=1, total=2))
    assert str(e.value) == ("struct Packed: pyasc would write field 'total' at byte 4 (ctypes with the class's pack=), "
                            "but the kernel's C++ (#pragma pack(push, 8)) reads it at byte 8; declare the struct with "
                            "pack=8 (the default)")


def test_a_struct_argument_of_a_class_the_kernel_does_not_name_is_shipped():
    # count_kernel names Count; the argument's class Packed travels with the launch (and is checked)
    with pytest.raises(CompileError) as e:
        ascrun.run_local(sp.count_kernel, 1, np.zeros(8, np.int64), sp.Packed(count=1, total=2))
    assert str(e.value).startswith("struct Packed: pyasc would write field 'total' at byte 4")


# --- pyasc's test_vadd_tiling (tests/pyasc_port runs all its cases, in process and through the pool)

@pytest.mark.parametrize("size, past_the_end", [((1000,), True), ((8192,), False)])
def test_vadd_tiling_warns_exactly_when_tiles_run_past_the_tensors(size, past_the_end):
    """pyasc's launch: 16 blocks of whole 512-element tiles. Over 1000 elements every block runs past
    its part and the last past the tensors, as on the device: bounds "warn" reports it; over 8192
    each block is one tile and nothing runs past."""
    x, y = operand(torch.float32, size), operand(torch.float32, size)
    z = torch.zeros_like(x)
    block_length = (z.numel() + 15) // 16
    config = vt.KernelConfig(block=vt.BlockConfig(block_length=block_length),
                             tile=vt.TileConfig(tile_length=512, tile_num=(block_length + 511) // 512))
    result = ascrun.run_local(vt.vadd_kernel, 16, x, y, z, 1, config, bounds="warn")
    assert torch.equal(z, x + y)
    assert bool(result.warnings) == past_the_end


# --- through the service ----------------------------------------------------------------------

@pytest.mark.service
def test_several_field_dtypes_through_the_service(client):
    run_scaled(client.launch, scaled_params())

    def remote(kernel, core_num, *args):
        return ascrun.remote(kernel, client)[core_num](*args)

    again = run_scaled(remote, scaled_params(scale=4.0, bias=0.5, offset=-1, shift=-128, flag=127, enabled=False,
                                             seed=0))
    assert again.cache == {"frontend": "hit", "build": "hit"}


def submission(kernel, *args):
    body, _, _ = ascrun.service.submission.submission(kernel, 1, args, "cpu", None, "fault")
    return body


@pytest.mark.service
@pytest.mark.parametrize("change, message", [
    (lambda body: body["args"][1]["value"].update(count=2.5),
     "argument 1: struct Count field 'count' is int32: got 2.5, not an integer"),
    (lambda body: body["args"][1]["value"].pop("count"),
     "argument 1: struct Count (Count) lacks a value for field 'count'"),
    (lambda body: body["args"][1].update(dtype="Other"),
     "argument 1 is a struct Other, which the bundle does not define"),
    (lambda body: body["bundle"]["structs"]["Count"]["fields"][0].update(dtype="float16"),
     "invalid request: body.bundle.structs.Count.fields.0.dtype: Input should be 'int1', 'int8', 'int16', 'int32', "
     "'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float32' or 'float64'"),
    (lambda body: body["bundle"]["structs"]["Count"]["fields"][0].update(name="__class__"),
     "struct 'Count' field '__class__': a field name must be an identifier not starting "
     "with '_'"),
])
def test_malformed_struct_arguments_are_a_422(service, change, message):
    body = submission(sp.count_kernel, np.zeros(8, np.int32), sp.Count(count=3))
    change(body)
    response = httpx.post(f"{service.url}/v1/jobs", json=body, timeout=30)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["message"] == message


@pytest.mark.service
def test_struct_arguments_from_a_script_without_pyasc(bare_python, service, tmp_path):
    script = tmp_path / "scaled_tiles.py"
    script.write_text(f"""import sys
import numpy as np
import asc.lib.runtime as rt
sys.path.insert(0, {str(ROOT / 'tests' / 'kernels')!r})
import struct_params as sp

x = np.linspace(-3, 5, 1024, dtype=np.float32)
z, words, seeds = np.zeros_like(x), np.zeros(4, np.int64), np.zeros(1, np.uint64)
tiling = sp.Tiling(block_length=256, tile_length=64, tile_num=0)
tiling.tile_num = 4
params = sp.ScaledTiles(tiling=tiling, flag=-7, affine=sp.Affine(scale=2.5, bias=-1.0))
params.marks = sp.Marks(shift=-3, offset=-5, enabled=True, seed=2 ** 64 - 3)
sp.scaled_tiles_kernel[4, rt.current_stream()](x, z, words, seeds, params)
assert np.array_equal(z, x * np.float32(2.5) - np.float32(1.0)), z
assert words.tolist() == [-5, -3, -7, 1] and seeds.tolist() == [2 ** 64 - 3], (words, seeds)
print("struct launch ok", type(params).__module__, "standin" in sp.asc.__file__)
""")
    out = ascrun_cli("exec", "--bounds", "warn", "--url", service.url, script, python=bare_python, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "struct launch ok struct_params True\n"), out.stderr

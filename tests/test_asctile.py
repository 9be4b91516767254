"""asctile (pyasc's nightly: asc.experimental.asctile, the tile-level front end) on the cpu target,
for Ascend910B1 (the default SOC): its kernels pass the gate and run through run_local and
Client.launch against numpy; what it can paste into the C++ (asctile.inline, inline_vf) is refused,
and its reach stops at its kernel language; its compile options pass through. On pyasc 1.1.1,
which has no asctile, these skip (`make test-nightly` runs them) and an asctile kernel's bundle is
refused saying so."""
import functools
import importlib.util
import math

import numpy as np
import pytest
from pydantic import ValidationError

import ascrun
from ascrun.compiler import bundle as bundles, frontend, gate
from ascrun.compiler.bundle import KernelBundle
from ascrun.compiler.errors import BundleRejected
from ascrun.server.models import CompileOptions
from conftest import load_module, unsited

pytestmark = pytest.mark.kernel

HAS_ASCTILE = importlib.util.find_spec("asc.experimental") is not None and \
    importlib.util.find_spec("asc.experimental.asctile") is not None
needs_asctile = pytest.mark.skipif(not HAS_ASCTILE, reason=(
    f"pyasc {frontend.pyasc_version()} has no asc.experimental.asctile (pyasc's nightly has): "
    "make test-nightly runs these"))

N, TILE, BLOCKS = 4096, 256, 4
REFERENCES = {"abs": np.abs, "relu": lambda x: np.maximum(x, 0), "exp": np.exp, "erf": np.vectorize(math.erf),
              "tanh": np.tanh}


@pytest.fixture(scope="module")
def tile():
    import tile
    return tile


def _inputs(count: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [((rng.random(N) - 0.5) * 4).astype(np.float32) for _ in range(count)]


@needs_asctile
def test_vadd_runs_in_process(tile):
    x, y = _inputs()
    z = np.zeros_like(x)
    result = ascrun.run_local(tile.vadd, BLOCKS, x, y, z, N, TILE)
    np.testing.assert_array_equal(z, x + y)
    assert result.warnings == []
    assert "AscendC::Add(" in result.source


@needs_asctile
@pytest.mark.parametrize("op", sorted(REFERENCES))
def test_unary_ops_run_in_process(tile, op):
    (x,) = _inputs(1)
    z = np.zeros_like(x)
    ascrun.run_local(tile.unary, BLOCKS, x, z, N, TILE, op)
    np.testing.assert_allclose(z, REFERENCES[op](x).astype(np.float32), rtol=1e-5, atol=1e-6)


@needs_asctile
def test_asctiles_builtins_are_its_own(tile):
    x, y, w = _inputs(3)
    z = np.zeros_like(x)
    ascrun.run_local(tile.vmax3, 1, x, y, w, z, N)
    np.testing.assert_array_equal(z, np.maximum(np.maximum(x, y), w) + ((w + x) + y))


@needs_asctile
def test_a_scalar_op_the_nightly_emits_for_910B_faults_as_the_device_would_misbehave(tile):
    """The nightly writes `Muls<float, 0>(dst, src, 2.0f, count)`: the count form with isSetMask = false.
    Adds.md/Muls.md: then "本接口入参中的count不生效" (the count is not used); asc-devkit's c220 MulsImpl
    (impl/basic_api/dav_c220/kernel_operator_vec_binary_scalar_impl.h) issues one repeat under the mask
    register as it is, so without SetMaskCount the device computes 256 bytes, not `count` elements."""
    (x,) = _inputs(1)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(tile.unary, 1, x, np.zeros_like(x), N, TILE, "scale")
    assert unsited(str(e.value)) == (
        "block 0: Muls: the count form with isSetMask = false takes its element count from the mask register in "
        "counter mode; call SetMaskCount and SetVectorMask first (in normal mode the count is undefined)")


QUEUE_LIMIT = ("TQue<VECIN, 1>, 1, 1024): 9 TQue buffers on TPosition VECIN (at most 8 on Atlas A2/A3, Ascend C's "
               "TQue简介.md \"TQue Buffer限制\": a freed buffer holds one of its position's 8 hardware event IDs "
               "until it is allocated again)")


@needs_asctile
def test_the_nightlys_ninth_live_tile_on_vecin_is_refused_as_the_910B_would_run_out_of_event_ids(tile):
    """The nightly gives each live copy_in tile a VECIN TQue of one buffer and frees them all at the
    end: 8 run; a 9th is over the limit Ascend C documents (TQue简介.md), and asc-devkit's c220 queue
    code would ask at its 9th FreeTensor for a 9th V_MTE2 event ID of 8 (framework/tpipe.cpp cites it)."""
    rows = [row[:256] for row in _inputs(9)]  # 1 KiB tiles: 9 and their sums fit in the Unified Buffer
    z = np.zeros_like(rows[0])
    ascrun.run_local(tile.sum_rows, 1, np.concatenate(rows[:8]), z, 256, 8)
    np.testing.assert_array_equal(z, functools.reduce(np.add, rows[:8]))
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(tile.sum_rows, 1, np.concatenate(rows), z, 256, 9)
    assert e.value.kind == "runtime_error"
    assert unsited(str(e.value)) == f"block 0: TPipe::InitBuffer({QUEUE_LIMIT}"


@needs_asctile
def test_compile_options_in_the_decorator_reach_pyasc(tile):
    x, y = _inputs()
    z = np.zeros_like(x[:1024])
    ascrun.run_local(tile.vsub_with_options, 1, x[:1024], y[:1024], z, 1024)
    np.testing.assert_array_equal(z, x[:1024] - y[:1024])


@needs_asctile
@pytest.mark.service
def test_asctile_kernels_run_through_the_service(client, tile):
    x, y = _inputs()
    z, e = np.zeros_like(x), np.zeros_like(x)
    client.launch(tile.vadd, BLOCKS, x, y, z, N, TILE)  # no SOC: the default, Ascend910B1
    np.testing.assert_array_equal(z, x + y)
    client.launch(tile.unary, BLOCKS, x, e, N, TILE, "erf")
    np.testing.assert_allclose(e, REFERENCES["erf"](x).astype(np.float32), rtol=1e-5, atol=1e-6)


def _kernel(tmp_path, body: str, decorator: str = "@asctile.jit"):
    path = tmp_path / "tile_kernel.py"
    path.write_text(f"from asc.experimental import asctile\n\n\n{decorator}\ndef k(x: asctile.GlobalAddress):\n"
                    f"    {body}\n")
    return path, load_module(path).k


@needs_asctile
@pytest.mark.parametrize("body, decorator, message", [
    ("asctile.block_idx()", "@asctile.jit(reuse_alloc=3)", "'reuse_alloc' is only allowed to be 0, 1, 2"),
    ("asctile.block_idx()", "@asctile.jit(vf_fusion=True)", "VF fusion is not supported for the c220 architecture"),
], ids=["reuse_alloc-out-of-range", "vf_fusion-on-910B"])
def test_compile_options_pyasc_refuses_are_compile_errors(tmp_path, body, decorator, message):
    path, kernel = _kernel(tmp_path, body, decorator)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, np.zeros(8, np.float32))
    assert e.value.kind == "compile_error"
    assert str(e.value) == f"pyasc's pass pipeline failed for 'k': {message}"


# --- what asctile can carry into the C++ ----------------------------------------------------------

VERBATIM = "C++ written into the kernel verbatim is not accepted"


@needs_asctile
@pytest.mark.parametrize("body, message", [
    ('asctile.inline("system(\\"id\\");")', f"asctile.inline: {VERBATIM}"),
    ('asctile.inline("#include \\"/etc/passwd\\"", before_function=True)', f"asctile.inline: {VERBATIM}"),
    ('asctile.inline("int y = $0;", [x])', f"asctile.inline: {VERBATIM}"),
    ('asctile.inline_vf("}; system(\\"id\\"); {", [8], asctile.float32, '
     '[asctile.copy_in(asctile.global_tensor(x, [8]), [0], [8])])', f"asctile.inline_vf: {VERBATIM}"),
], ids=["inline", "inline-before-function", "inline-with-args", "inline_vf"])
def test_asctile_calls_that_paste_cpp_are_refused(tmp_path, body, message):
    path, kernel = _kernel(tmp_path, body)
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, np.zeros(8, np.float32))
    assert e.value.kind == "compile_error"
    assert str(e.value) == f"pyasc could not compile the kernel: in kernel 'k' at {path}:6: {message}"


@needs_asctile
def test_device_assert_prints_its_message_as_written_then_traps(tmp_path):
    """debug=True keeps asctile's debug ops: the message reaches the C++ as a literal pyasc escapes (and
    the source guard checks), so it prints as the kernel wrote it; the core then traps."""
    message = 'q"); system("id"); //\\'
    path = tmp_path / "asserts.py"
    path.write_text("from asc.experimental import asctile\n\n\n@asctile.jit(debug=True)\n"
                    "def k(x: asctile.GlobalAddress, limit: int):\n"
                    f"    asctile.device_assert(asctile.block_idx() < limit, {message!r})\n"
                    "    asctile.device_print('block', asctile.block_idx(), end='')\n")
    kernel = load_module(path).k
    printed = ascrun.run_local(kernel, 2, np.zeros(8, np.float32), 2).log
    assert printed == "[AIV Block 0/2] block 0[AIV Block 1/2] block 1"
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, np.zeros(8, np.float32), 0)  # one block: the other's print would race
    assert e.value.kind == "runtime_error"
    assert unsited(str(e.value)).startswith("block 0: Trap: the kernel stopped its core")
    assert e.value.log.startswith("[AIV Block 0/1] Assertion failed at ")
    assert e.value.log.endswith(f":6:5: {message}\n")


@needs_asctile
@pytest.mark.parametrize("chain, why", [
    ("asctile.runtime", "the module asc.experimental.asctile.runtime"),
    ("asctile.profiling", "the module asc.lib.profiling"),
    ("asctile.set_platform", "from asc.runtime.config"),  # functools.wraps of asc's: not an enum
    ("asctile.CompileOptions", "from asc.experimental.asctile.runtime.compiler"),
    ("asctile.language.low_level_ops.global_builder", "pyasc's IR builder"),
    ("asctile.language.low_level_ops.asctile", "the module asc._C.libpyasc.asctile"),
])
def test_asctile_reaches_only_its_kernel_language(tmp_path, chain, why):
    path, kernel = _kernel(tmp_path, f"{chain}.x")
    with pytest.raises(BundleRejected) as e:
        ascrun.run_local(kernel, 1, np.zeros(8, np.float32))
    assert str(e.value) == (f"kernel 'k' ({path}:6): '{chain}' is {why}; kernels may use only asc's kernel "
                            "language")


@needs_asctile
def test_asctiles_enums_are_in_reach(tmp_path):
    """The nightly renames its pybind11 enum class (TensorLocation.__name__ = "TensorLocation"): the
    gate knows asctile's enums by what they are, not by their name."""
    path = tmp_path / "located.py"
    path.write_text("from asc.experimental import asctile\n\n\n@asctile.jit\n"
                    "def twice(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress,\n"
                    "          n: asctile.ConstExpr[int]):\n"
                    "    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n], asctile.TensorLocation.UB)\n"
                    "    asctile.copy_out(x + x, asctile.global_tensor(z_ptr, [n]), [0])\n")
    (x,) = _inputs(1)
    x, z = x[:256], np.zeros(256, np.float32)
    ascrun.run_local(load_module(path).twice, 1, x, z, 256)
    np.testing.assert_array_equal(z, x + x)


SHAPED = ("from asc.experimental import asctile\n\n\n@asctile.jit\n"
          "def fill(z_ptr: asctile.GlobalAddress, shape: asctile.ConstExpr, dtype: asctile.ConstExpr):\n"
          "    z = asctile.global_tensor(z_ptr, shape)\n"
          "    asctile.copy_out(asctile.full(shape, 3, dtype), z, [0] * len(shape))\n")


def _fills_with(launch, tmp_path) -> None:
    """SHAPED's fill launched by `launch(kernel, z, shape, dtype)` for a 2-D half shape and a 1-D float
    list, each against numpy."""
    from asc.experimental import asctile
    path = tmp_path / "shaped.py"
    path.write_text(SHAPED)
    for shape, dtype, np_dtype in (((8, 64), asctile.float16, np.float16), ([512], asctile.float32, np.float32)):
        z = np.zeros(shape, np_dtype)
        launch(load_module(path).fill, z, shape, dtype)
        np.testing.assert_array_equal(z, np.full(shape, 3, np_dtype))


@needs_asctile
def test_a_constexpr_may_be_a_shape_or_a_dtype(tmp_path):
    """asc2's tests (and asctile's own) pass shapes as tuples and dtypes as asctile's; elsewhere those
    are refused as a string is."""
    from asc.experimental import asctile
    _fills_with(lambda kernel, *args: ascrun.run_local(kernel, 1, *args), tmp_path)
    path = tmp_path / "unshaped.py"
    path.write_text(SHAPED.replace("shape: asctile.ConstExpr", "shape"))
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(load_module(path).fill, 1, np.zeros(8, np.float32), (8,), asctile.float32)
    assert str(e.value) == "argument 'shape' is a tuple: only a ConstExpr parameter takes one"


@needs_asctile
@pytest.mark.service
def test_a_shape_and_a_dtype_travel_to_the_service(client, tmp_path):
    _fills_with(lambda kernel, *args: client.launch(kernel, 1, *args), tmp_path)


APPLIED = ("from asc.experimental import asctile\n\n\n@asctile.jit\n"
           "def apply(x_ptr: asctile.GlobalAddress, z_ptr: asctile.GlobalAddress, n: asctile.ConstExpr[int],\n"
           "          op: asctile.ConstExpr):\n"
           "    x = asctile.copy_in(asctile.global_tensor(x_ptr, [n]), [0], [n])\n"
           "    asctile.copy_out(op(x), asctile.global_tensor(z_ptr, [n]), [0])\n")


@needs_asctile
def test_a_constexpr_may_be_a_function_of_the_kernel_language(tmp_path):
    """asc2's op tests pass the operation itself (asctile.exp): a function of asc's or asctile's
    kernel language travels by its name; any other function is refused as the gate refuses it."""
    from asc.experimental import asctile
    import os
    path = tmp_path / "applied.py"
    path.write_text(APPLIED)
    apply = load_module(path).apply
    (x,) = _inputs(1)
    x = x[:256]
    for op, reference in ((asctile.exp, np.exp), (asctile.abs, np.abs)):
        z = np.zeros_like(x)
        ascrun.run_local(apply, 1, x, z, 256, op)
        np.testing.assert_allclose(z, reference(x), rtol=1e-6)
    for op, owner in ((os.system, "posix"), (np.exp, "numpy")):
        with pytest.raises(ascrun.KernelError) as e:
            ascrun.run_local(apply, 1, x, np.zeros_like(x), 256, op)
        assert e.value.kind == "bad_request"
        assert str(e.value) == (f"argument 'op' is a function from {owner}: a ConstExpr function must be one of "
                                "asc's or asctile's kernel language")


# --- options of a job, and pyasc 1.1.1 ------------------------------------------------------------

@pytest.mark.parametrize("options", [{"cv_ratio": 3}, {"cv_ratio": 0}, {"reuse_alloc": 3}, {"reuse_alloc": -1},
                                     {"static_alloc": "maybe"}, {"vf_fusion": 2}, {"insert_syncs": True}])
def test_a_jobs_asctile_options_are_bounded(options):
    with pytest.raises(ValidationError):
        CompileOptions.model_validate(options)


def test_a_jobs_asctile_options_are_kept():
    options = {"insert_sync": False, "static_alloc": True, "reuse_alloc": 2, "vf_fusion": False, "cv_ratio": 2}
    assert CompileOptions.model_validate(options).model_dump(exclude_none=True) == options


@needs_asctile
def test_a_jobs_options_reach_asctiles_compiler(tile):
    bundle = bundles.collect(tile.vadd)
    args = [frontend.ArgSpec("tensor", "float32")] * 3 + [frontend.ArgSpec("scalar", "int", N),
                                                         frontend.ArgSpec("scalar", "int", TILE)]
    synced = frontend.run(bundle, args, {"insert_sync": True})
    unsynced = frontend.run(bundle, args, {"insert_sync": False, "reuse_alloc": 2, "static_alloc": False})
    assert "EnQue" in synced.source and "EnQue" not in unsynced.source


def test_asctiles_builtins_are_not_an_asc_kernels(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n    print(max(n, 1))\n")
    with pytest.raises(BundleRejected) as e:
        bundles.collect(load_module(path).k)
    assert str(e.value) == f"kernel uses builtin 'print' in 'k' ({path}:6), which kernels may not use"
    source = "@asc.jit\ndef k(n: int):\n    max(n, 1)\n"
    bundle = KernelBundle.from_json({"entry": "k", "functions": [{"name": "k", "source": source, "filename": "k.py",
                                                                    "lineno": 4}],
                                     "constants": {}, "modules": {"asc": "asc"}})
    with pytest.raises(BundleRejected) as e:
        gate.validate(bundle)
    assert str(e.value) == "kernel 'k' (k.py:6) reads 'max', which the bundle does not define"


@pytest.mark.skipif(HAS_ASCTILE, reason="asctile is installed: the refusal is for a pyasc without it")
def test_an_asctile_kernel_on_a_pyasc_without_asctile_is_refused_saying_so():
    source = "@asctile.jit\ndef k(n: int):\n    asctile.block_idx()\n"
    bundle = KernelBundle.from_json({"entry": "k", "functions": [{"name": "k", "source": source, "filename": "k.py",
                                                                    "lineno": 4}],
                                     "constants": {}, "modules": {"asctile": "asc.experimental.asctile"}})
    with pytest.raises(BundleRejected) as e:
        frontend.run(bundle, [frontend.ArgSpec("scalar", "int", 1)])
    assert str(e.value) == (f"the kernel uses asc.experimental.asctile (asctile), which the installed pyasc "
                            f"{frontend.pyasc_version()} does not have: asctile comes with pyasc's nightly (pyasc-dev)")

"""Frontend: pyasc's real codegen, passes and translation; the IR hash; compile errors."""
import re
import subprocess
import sys

import numpy as np
import pytest

import ascrun
from ascrun.compiler import bundle, frontend, gate
from ascrun.compiler.bundle import KernelBundle
from ascrun.compiler.errors import BundleRejected, CompileError
from ascrun.compiler.frontend import ArgSpec
from conftest import ROOT, load_module

pytestmark = pytest.mark.kernel

FRAMEWORK_ARGS = [ArgSpec("tensor", "float32")] * 3 + [ArgSpec("scalar", "int", 2048), ArgSpec("scalar", "int", 128)]


def _compile_copy(tmp_path, name, edit=lambda text: text):
    """Compile a copy of examples/add_framework.py, edited."""
    path = tmp_path / f"{name}.py"
    path.write_text(edit((ROOT / "examples" / "add_framework.py").read_text()))
    kernel = load_module(path, name).vadd_framework_kernel
    return frontend.run(bundle.collect(kernel), FRAMEWORK_ARGS)


def test_frontend_emits_ascend_c_and_argument_kinds(framework_example):
    result = frontend.run(bundle.collect(framework_example.vadd_framework_kernel), FRAMEWORK_ARGS)
    assert result.kernel_name == "vadd_framework_kernel"
    assert '#include "kernel_operator.h"' in result.source
    assert "AscendC::TQue<AscendC::TPosition::VECIN, 2>" in result.source
    assert "AscendC::Add(" in result.source
    assert "ascendc.add_l2" in result.ir  # ASC-IR after pyasc's passes
    assert result.kernel_args == ("explicit",) * 4 + ("ffts_addr",)
    assert [p["name"] for p in result.params] == ["x", "y", "z", "block_length"]  # tile_length is ConstExpr
    assert len(result.ir_hash) == 64


def test_ir_hash_ignores_comments_and_moves_but_not_edits(tmp_path):
    base = _compile_copy(tmp_path, "base")
    commented = _compile_copy(tmp_path, "commented", lambda t: t.replace(
        "    z_local = out_queue_z.alloc_tensor(z_gm.dtype)\n",
        "    # a comment\n\n    z_local = out_queue_z.alloc_tensor(z_gm.dtype)  # another\n"))
    moved = _compile_copy(tmp_path, "moved", lambda t: t.replace("TILE_NUM = 8\n", "TILE_NUM = 8\n" + "\n" * 40))
    edited = _compile_copy(tmp_path, "edited", lambda t: t.replace("asc.add(z_local", "asc.sub(z_local"))
    assert commented.ir != base.ir  # the locations did move ...
    assert commented.ir_hash == base.ir_hash  # ... but the hash ignores them
    assert moved.ir_hash == base.ir_hash
    # the Ascend C has no locations: the artifact key, over the source, hits too
    assert commented.source == moved.source == base.source
    assert edited.ir_hash != base.ir_hash
    assert "AscendC::Sub(" in edited.source


def test_constexpr_values_specialize(framework_example):
    b = bundle.collect(framework_example.vadd_framework_kernel)
    other = FRAMEWORK_ARGS[:4] + [ArgSpec("scalar", "int", 64)]
    assert frontend.memo_key(b, FRAMEWORK_ARGS, {}) != frontend.memo_key(b, other, {})
    runtime_changed = FRAMEWORK_ARGS[:3] + [ArgSpec("scalar", "int", 4096), FRAMEWORK_ARGS[4]]
    assert frontend.memo_key(b, FRAMEWORK_ARGS, {}) == frontend.memo_key(b, runtime_changed, {})
    assert frontend.run(b, FRAMEWORK_ARGS).ir_hash != frontend.run(b, other).ir_hash


def test_the_soc_keys_the_frontend_and_reaches_pyasc(framework_example):
    """The SOC's arch changes the generated code: it is in both cache keys, and pyasc's Compiler
    compiles for it (the nightly writes the arch into the module; 1.1.1 emits the same c220 code
    for every SOC it knows)."""
    from ascrun.compiler import pipeline
    b = bundle.collect(framework_example.vadd_framework_kernel)
    default = frontend.memo_key(b, FRAMEWORK_ARGS, {})
    assert frontend.memo_key(b, FRAMEWORK_ARGS, {}, frontend.DEFAULT_SOC) == default
    assert frontend.memo_key(b, FRAMEWORK_ARGS, {}, "Ascend910_9391") != default
    assert pipeline.frontend_key(b, FRAMEWORK_ARGS, {}, "t", "Ascend910_9391") != pipeline.frontend_key(
        b, FRAMEWORK_ARGS, {}, "t")
    on_910b = frontend.run(b, FRAMEWORK_ARGS)
    on_910_93 = frontend.run(b, FRAMEWORK_ARGS, soc="Ascend910_9391")
    assert "AscendC::Add(" in on_910_93.source and on_910_93.kernel_args == on_910b.kernel_args
    if "Ascend950PR_9599" in frontend.known_socs():  # the nightly: arch c310
        on_950 = frontend.run(b, FRAMEWORK_ARGS, soc="Ascend950PR_9599")
        assert on_950.ir_hash != on_910b.ir_hash and "c310" in on_950.ir and "c310" not in on_910b.ir


def test_a_soc_pyasc_does_not_know_is_a_bad_request(framework_example):
    b = bundle.collect(framework_example.vadd_framework_kernel)
    with pytest.raises(ascrun.KernelError) as e:
        frontend.run(b, FRAMEWORK_ARGS, soc="Ascend999Z")
    assert e.value.kind == "bad_request"
    assert str(e.value).startswith(f"unknown SOC 'Ascend999Z': pyasc {frontend.pyasc_version()} compiles for ")
    assert "Ascend910B1" in str(e.value)


def test_pyasc_error_reaches_user_with_kernel_line(tmp_path):
    path = tmp_path / "bad_call.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(x: asc.GlobalAddress, n: asc.ConstExpr[int]):\n"
                    "    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)\n"
                    "    asc.exp(xl, xl, 3.5, 7)\n")
    b = bundle.collect(load_module(path).k)
    with pytest.raises(CompileError) as e:
        frontend.run(b, [ArgSpec("tensor", "float32"), ArgSpec("scalar", "int", 64)])
    msg = str(e.value)
    assert e.value.kind == "compile_error"
    assert f"in kernel 'k' at {path}:7" in msg
    assert "No viable candidates were found to dispatch exp()" in msg  # pyasc's own message


FAILS_INSIDE_AN_IF = """import asc
import numpy as np
import pytest

import ascrun


@asc.jit
def k(x: asc.GlobalAddress, n: int):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    if n == 1:
        m = n + 1
        asc.adds(t, t, m, "eight")


@pytest.mark.parametrize("i", range(4))
def test_fails(i):
    ascrun.run_local(k, 1, np.zeros(8, np.float32), 1)
"""


def test_a_kernel_failing_inside_an_if_leaves_pytest_running(tmp_path):
    """pyasc builds an `if` body in a block Python owns: failing inside it, the block stayed in the
    error's frames and pytest's garbage collection freed it after pyasc's context, crashing the
    process (on both pyasc versions; the nightly's gather_mask tests took a test run down so)."""
    (tmp_path / "test_if.py").write_text(FAILS_INSIDE_AN_IF)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", "-rf",
                          "--confcutdir", str(tmp_path), "test_if.py"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr  # not -11: pytest reports the four failures
    failed = [line for line in out.stdout.splitlines() if line.startswith("FAILED test_if.py::test_fails[")]
    assert len(failed) == 4 and all(" - ascrun.compiler.errors.CompileError: " in line for line in failed), out.stdout


def test_the_excerpt_marks_the_failing_line_of_the_kernels_file(tmp_path):
    """The excerpt's caret sits under the failing call, its lines numbered as in the file (pyasc
    1.1.1's own excerpt numbers them from the `def` and so showed the caret one line above)."""
    path = tmp_path / "mix.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):\n"
                    "    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)\n"
                    "    yl = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, 4096, n)\n"
                    "    asc.add(xl, xl, yl, n)\n"
                    "    asc.sub(xl, xl, xl, n)\n")
    with pytest.raises(CompileError) as e:
        frontend.run(bundle.collect(load_module(path, "mix").k),
                     [ArgSpec("tensor", "float32"), ArgSpec("tensor", "float16"), ArgSpec("scalar", "int", 64)])
    assert str(e.value) == "\n".join([
        f"pyasc could not compile the kernel: in kernel 'k' at {path}:8: TypeError: Src0 and src1 must be same type.",
        "    5 | def k(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):",
        "    6 |     xl = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)",
        "    7 |     yl = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, 4096, n)",
        "    8 |     asc.add(xl, xl, yl, n)",
        "      |     ^",
        "    9 |     asc.sub(xl, xl, xl, n)"])


def test_a_kernels_own_error_text_is_bounded(tmp_path):
    """`assert False, text` returns the kernel's text in the compile_error (nothing secret is in a
    jailed frontend's reach); its length is bounded."""
    path = tmp_path / "asserts.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n    assert False, 'y' * 100000\n")
    with pytest.raises(CompileError) as e:
        frontend.run(bundle.collect(load_module(path).k), [ArgSpec("scalar", "int", 1)])
    prefix = f"pyasc could not compile the kernel: in kernel 'k' at {path}:6: "
    message = str(e.value)
    # then pyasc's own text, cut, and the excerpt
    assert message.startswith(prefix + "AssertionError: yyy")
    excerpt = "\n    5 | def k(n: int):\n    6 |     assert False, 'y' * 100000\n      |     ^"
    cut = re.fullmatch(r".*yyy\.\.\. \(cut: the message has (\d+) characters\)" + re.escape(excerpt), message, re.S)
    assert cut and int(cut.group(1)) > 100000
    said = f"... (cut: the message has {cut.group(1)} characters)"
    assert len(message) == len(prefix) + 4000 + len(said) + len(excerpt)


def test_wrong_argument_count_is_a_compile_error(framework_example):
    b = bundle.collect(framework_example.vadd_framework_kernel)
    with pytest.raises(CompileError, match=r"takes 5 arguments \(x, y, z, block_length, tile_length\), got 2"):
        frontend.run(b, FRAMEWORK_ARGS[:2])


def _compile_printf(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(f"import asc\n\n\n@asc.jit\ndef k(n: int):\n    asc.printf({text!r}, n)\n")
    return frontend.run(bundle.collect(load_module(path, name).k), [ArgSpec("scalar", "int", 1)])


def test_ir_hash_is_over_the_ir_mlir_prints_without_locations(tmp_path):
    """A string's text is part of the hash, `loc(` in it too: MLIR strips the debug info, not a
    pattern over the printed text."""
    plain = _compile_printf(tmp_path, "plain", "Hello world %d\\n")
    tricky = _compile_printf(tmp_path, "tricky", "Hello loc(<C++>) world %d\\n")
    assert 'desc = "Hello loc(<C++>) world %d\\\\n"' in tricky.ir
    assert "loc(\"<ascrun:" in tricky.ir  # the IR shown keeps its locations
    assert plain.ir_hash != tricky.ir_hash
    again = _compile_printf(tmp_path, "again", "Hello world %d\\n")  # another file, same kernel
    assert again.ir != plain.ir and again.ir_hash == plain.ir_hash


def test_a_printf_newline_prints_as_one_on_either_pyasc(tmp_path):
    """pyasc 1.1.1 writes a format into the C++ as it is and the nightly escapes it: the control
    characters of a Python string print as themselves on both (the nightly printed '\\n')."""
    path = tmp_path / "newline.py"
    path.write_text('import asc\n\n\n@asc.jit\ndef k(n: int):\n    asc.printf("n=%d\\tx\\n", n)\n')
    assert ascrun.run_local(load_module(path, "newline").k, 1, 7).log == "[AIV Block 0/1] n=7\tx\n"


def test_a_quote_in_a_printf_format_stays_inside_its_literal_on_either_pyasc(tmp_path):
    """The attack a format carries: on 1.1.1 (the format as it is) the guard refuses a bare quote; on
    the nightly (it escapes the format) it prints as written, the C++ holding it escaped."""
    path = tmp_path / "quoted.py"
    path.write_text('import asc\n\n\n@asc.jit\ndef k(n: int):\n    asc.printf(\'x");system("id\')\n')
    kernel = load_module(path, "quoted").k
    if frontend._printf_translation == "verbatim":
        with pytest.raises(ascrun.KernelError, match="a bare '\"' would end the C\\+\\+ string literal"):
            ascrun.run_local(kernel, 1, 7)
    else:
        result = ascrun.run_local(kernel, 1, 7)
        assert result.log == '[AIV Block 0/1] x");system("id'
        assert 'printf("x\\");system(\\"id"' in result.source


@pytest.mark.unit
def test_an_ir_operation_that_takes_text_unreviewed_is_refused():
    """Fails closed: a builder method that takes a string and that no guard names (an op a newer pyasc
    adds, or one it renames) refuses its strings; a guarded one keeps its guard; the rest pass."""
    class Builder:  # pybind11's methods give their signatures in their docstrings
        def create_asctile_InlineOp(self, code):
            """create_asctile_InlineOp(self: Builder, code: str) -> Operation"""
            return code

        def create_asctile_InlineCodeOp(self, values, code):
            """create_asctile_InlineCodeOp(self: Builder, values: List[Value], code: llvm::StringRef) -> Operation"""
            return code

        def create_asctile_NoteOp(self, value, note=None):
            """create_asctile_NoteOp(self: Builder, value: Value, note: Optional[str] = None) -> Operation"""
            return note

        def create_asc_AddOp(self, a, b):
            """create_asc_AddOp(self: Builder, a: Value, b: Value) -> Operation"""
            return a

        def set_loc(self, filename, line):
            """set_loc(self: Builder, filename: str, line: int) -> None"""
            return filename

    frontend._guard_builder(Builder)
    builder = Builder()
    with pytest.raises(frontend.StringRefused) as refused:
        builder.create_asctile_InlineCodeOp([], 'system("id");')
    assert str(refused.value) == ("pyasc's IR operation create_asctile_InlineCodeOp: it takes text for the C++ that "
                                  "ascrun has not reviewed")
    with pytest.raises(frontend.StringRefused, match="^pyasc's IR operation create_asctile_NoteOp: "):
        builder.create_asctile_NoteOp(1, note="*/ system();")
    with pytest.raises(frontend.StringRefused, match="^asctile.inline: C\\+\\+ written into the kernel verbatim"):
        builder.create_asctile_InlineOp("int y = 0;")
    assert builder.create_asc_AddOp(1, 2) == 1
    assert builder.set_loc("k.py", 3) == "k.py"


def test_every_ir_operation_of_the_installed_pyasc_that_takes_text_is_guarded_or_reviewed():
    """A pyasc that adds one fails here first: review what it carries into the C++, then guard it
    (frontend._STRING_GUARDS) or list it as reviewed."""
    from asc._C import ir
    unreviewed = sorted(name for name in dir(ir.Builder) if not name.startswith("_") and frontend._takes_text(
        getattr(ir.Builder, name)) and name not in frontend._STRING_GUARDS
        and name not in frontend._REVIEWED_STRING_METHODS)
    assert unreviewed == []
    assert frontend._takes_text(ir.Builder.create_emitc_VerbatimOp)  # the signatures read as the guard reads them


@pytest.mark.unit
def test_a_printf_translation_ascrun_does_not_know_gets_no_printf(monkeypatch):
    """One that escapes a backslash but not a quote would let a format out of its quotes either way."""
    monkeypatch.setattr(frontend, "_printf_translation", "unknown")
    with pytest.raises(frontend.StringRefused, match="printf is refused"):
        frontend.printf_format("n=%d\n")


@pytest.mark.parametrize("name", ["asc.language.core.utils:global_builder", "asc.language.not_loaded:f",
                                  "asc.language.core.utils:KernelError", "posix:system"])
def test_a_function_constexpr_is_resolved_only_in_the_kernel_language(tmp_path, name):
    """The worker trusts the API's checks but the frontend resolves a function's name itself: only a
    callable of a loaded kernel-language module that the gate lets a kernel reach; nothing is imported."""
    path = tmp_path / "applied.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int, op: asc.ConstExpr):\n    asc.printf(\"%d\", n)\n")
    with pytest.raises(ascrun.KernelError) as e:
        frontend.run(bundle.collect(load_module(path, "applied").k),
                     [ArgSpec("scalar", "int", 1), ArgSpec("scalar", "function", name)])
    assert str(e.value) == f"{name} is not a function of asc's or asctile's kernel language here"


@pytest.mark.unit
def test_bundle_digest_covers_everything_define_uses(framework_example):
    """The frontend memo is keyed by the digest: each part of the bundle changes it."""
    data = bundle.collect(framework_example.vadd_framework_kernel).to_json()
    digests = {KernelBundle.from_json(data).digest}
    fn = data["functions"][0]
    for changed in ({"source": fn["source"] + "\n"}, {"filename": fn["filename"] + "x"}, {"lineno": fn["lineno"] + 1}):
        digests.add(KernelBundle.from_json({**data, "functions": [{**fn, **changed}, *data["functions"][1:]]}).digest)
    digests.add(KernelBundle.from_json({**data, "constants": {**data["constants"], "EXTRA": "1"}}).digest)
    digests.add(KernelBundle.from_json({**data, "modules": {**data["modules"], "lang": "asc.language"}}).digest)
    struct = {"S": {"pack": 0, "fields": [{"name": "a", "dtype": "int32"}]}}
    digests.add(KernelBundle.from_json({**data, "structs": struct}).digest)
    assert len(digests) == 7


def _matmul_args():
    import asc
    return (np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32),
            asc.adv.TCubeTiling(), np.zeros(1024, np.uint8))


def test_a_tcubetiling_argument_is_pyascs_own_type():
    """pyasc types its own tiling structs as themselves (a pointer to TCubeTiling, which Matmul's
    registration takes), not as a generic struct."""
    import cube
    from ascrun.args import launch_args
    kernel_bundle, host = launch_args(cube.matmul_kernel, _matmul_args())
    source = frontend.run(kernel_bundle, host.specs).source
    assert "__gm__ TCubeTiling* v4_tiling" in source and "REGIST_MATMUL_OBJ(" in source


def _mlir_error_line():
    import cube
    path = cube.__file__
    line = next(i for i, text in enumerate(open(path), 1) if "REGISTER_LINE" in text)
    # the column is the call's on pyasc's nightly, its argument's on 1.1.1
    return re.escape(f"pyasc's pass pipeline failed for 'misregistered_matmul_kernel': Failed to run passes\n"
                     f"{path}:{line}:") + r"\d+" + re.escape(": error: 'ascendc.regist_matmul_obj' op operand #2 "
                                                             "must be , but got '!ascendc.cube_tiling'")


def test_mlir_diagnostics_are_in_the_compile_error_with_the_kernels_line():
    """MLIR prints them to stderr (fd 2); the error a user sees has its error lines, located in
    the kernel's file, without the IR dumps of its notes."""
    import cube
    with pytest.raises(CompileError) as e:
        ascrun.run_local(cube.misregistered_matmul_kernel, 1, *_matmul_args())
    assert re.fullmatch(_mlir_error_line(), str(e.value))


@pytest.mark.service
def test_mlir_diagnostics_come_back_from_the_workers_jail(client):
    import cube
    with pytest.raises(ascrun.KernelError) as e:
        client.launch(cube.misregistered_matmul_kernel, 1, *_matmul_args())
    assert e.value.kind == "compile_error" and re.fullmatch(_mlir_error_line(), str(e.value))


ESCAPE = "n.reshape(1).ctypes._ctypes.pythonapi.PyRun_SimpleString(b\"open('{marker}', 'w')\")"


def _numpy_escape(tmp_path, head: str) -> KernelBundle:
    """A ConstExpr parameter given a numpy scalar: numpy's objects reach ctypes without a dunder."""
    path = tmp_path / "escape.py"
    body = ESCAPE.format(marker=tmp_path / "escaped")
    path.write_text(f"import asc\n\n\n@asc.jit\ndef k(x: asc.GlobalAddress, n: asc.ConstExpr):\n{head}    {body}\n")
    return bundle.collect(load_module(path).k)


def test_a_constexpr_parameter_has_no_attributes_at_the_gate(tmp_path):
    with pytest.raises(BundleRejected) as e:
        gate.validate(_numpy_escape(tmp_path, ""))
    assert str(e.value) == (f"kernel 'k' ({tmp_path / 'escape.py'}:6): 'n.reshape': a ConstExpr parameter is a "
                            "plain Python value in the kernel language, without attributes")
    assert not (tmp_path / "escaped").exists()


def test_a_constexpr_value_is_a_plain_python_value_past_the_gate(tmp_path):
    """The walk the gate refuses, through an alias it does not follow: the value pyasc sees is a
    Python float, which has no numpy attributes."""
    b = _numpy_escape(tmp_path, "    m = n\n")
    b = KernelBundle.from_json({**b.to_json(), "functions": [
        {**f, "source": f["source"].replace("    n.reshape", "    m.reshape")} for f in b.to_json()["functions"]]})
    with pytest.raises(CompileError) as e:
        frontend.run(b, [ArgSpec("tensor", "float32"), ArgSpec("scalar", "float32", 1.5)])
    assert "'float' object has no attribute 'reshape'" in str(e.value)
    assert not (tmp_path / "escaped").exists()

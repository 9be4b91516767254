"""KernelBundle: collection from live kernels, canonical JSON, and the refusals."""
import json
import textwrap
import typing

import numpy as np

import pytest

import asc
import ascrun
from ascrun.compiler import bundle, gate
from ascrun.compiler.bundle import KernelBundle, KernelFunction
from ascrun.compiler.errors import BundleRejected
from conftest import load_module

pytestmark = pytest.mark.unit

TABLE = np.arange(4)
SCALE = 2.5
SHAPE = (4, 8)


@asc.jit
def reads_array(x: asc.GlobalAddress):
    asc.data_copy(x, x, TABLE[0])


@asc.jit
def helper(x: asc.GlobalAddress, n: int):
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


@asc.jit
def uses_helper(x: asc.GlobalAddress, n: int):
    helper(x, n * SHAPE[0] * SCALE)


def test_collects_kernel_callees_and_constants(framework_example):
    b = bundle.collect(framework_example.vadd_framework_kernel)
    assert b.entry == "vadd_framework_kernel"
    assert [f.name for f in b.functions] == ["compute", "copy_in", "copy_out", "vadd_framework_kernel"]
    assert dict(b.constants) == {"BUFFER_NUM": "2", "TILE_NUM": "8"}
    assert dict(b.modules) == {"asc": "asc"}
    entry = next(f for f in b.functions if f.name == b.entry)
    assert entry.source.startswith("@asc.jit\ndef vadd_framework_kernel(")
    assert entry.filename.endswith("examples/add_framework.py")


def test_json_round_trip_keeps_digest():
    b = bundle.collect(uses_helper)
    wire = json.loads(json.dumps(b.to_json()))
    assert KernelBundle.from_json(wire) == b
    assert KernelBundle.from_json(wire).digest == b.digest
    assert dict(b.constants) == {"SCALE": "2.5", "SHAPE": "(4, 8)"}


def test_plain_function_is_accepted():
    b = bundle.collect(uses_helper.fn)
    assert b.entry == "uses_helper" and {f.name for f in b.functions} == {"helper", "uses_helper"}


def test_refuses_global_ndarray():
    with pytest.raises(BundleRejected) as e:
        bundle.collect(reads_array)
    msg = str(e.value)
    assert "'TABLE'" in msg and "'reads_array'" in msg and "numpy.ndarray" in msg
    assert "test_bundle.py:" in msg
    assert e.value.kind == "bundle_rejected"


def test_refuses_other_module(tmp_path):
    path = tmp_path / "uses_os.py"
    path.write_text(textwrap.dedent("""
        import os
        import asc

        @asc.jit
        def k(x: asc.GlobalAddress):
            os.system("true")
    """))
    with pytest.raises(BundleRejected, match=r"module 'os' \(os\).*only the 'asc' package"):
        bundle.collect(load_module(path).k)


def test_refuses_undefined_name(tmp_path):
    path = tmp_path / "undefined.py"
    path.write_text("import asc\n\n@asc.jit\ndef k(x: asc.GlobalAddress):\n    asc.add(x, x, x, MISSING)\n")
    with pytest.raises(BundleRejected, match=r"reads 'MISSING' in 'k' \(.*undefined.py:5\), which is not defined"):
        bundle.collect(load_module(path).k)


def _one_function_bundle(source: str, name: str = "k") -> KernelBundle:
    return KernelBundle(entry=name, functions=(KernelFunction(name, textwrap.dedent(source).lstrip("\n"), "kern.py", 10),),
                        constants=(), modules=(("asc", "asc"),))


def test_validation_refuses_import_in_bundle():
    b = _one_function_bundle("""
        @asc.jit
        def k(x: asc.GlobalAddress):
            import os
            os.system("echo pwned")
    """)
    with pytest.raises(BundleRejected, match=r"kernel 'k' \(kern.py:12\): imports are not allowed"):
        gate.validate(b)


def test_validation_refuses_non_jit_decorator():
    b = _one_function_bundle("""
        @functools.lru_cache
        def k(x: asc.GlobalAddress):
            pass
    """)
    with pytest.raises(BundleRejected, match=r"kernel 'k' \(kern.py:10\): must be decorated with exactly @asc.jit"):
        gate.validate(b)


def test_jit_options_may_be_constants_of_the_bundles_asc_modules():
    # pyasc's own tests write @asc.jit(kernel_type=config.KernelType.AIV_ONLY).
    source = """
        @asc.jit(kernel_type=config.KernelType.AIV_ONLY)
        def k(x: asc.GlobalAddress):
            pass
    """
    fn = KernelFunction("k", textwrap.dedent(source).lstrip("\n"), "kern.py", 10)
    with_config = KernelBundle(entry="k", functions=(fn,), constants=(),
                               modules=(("asc", "asc"), ("config", "asc.runtime.config")))
    namespace = gate.define(with_config, __import__("importlib").import_module)
    assert namespace["k"].fn.__name__ == "k"
    # a name that is not one of the bundle's modules is still refused
    without_config = KernelBundle(entry="k", functions=(fn,), constants=(), modules=(("asc", "asc"),))
    with pytest.raises(BundleRejected, match=r"must be decorated with exactly @asc.jit"):
        gate.validate(without_config)


def test_validation_refuses_statements_beside_the_function():
    b = _one_function_bundle("""
        @asc.jit
        def k(x: asc.GlobalAddress):
            pass
        print(open('/etc/passwd').read())
    """)
    with pytest.raises(BundleRejected, match="exactly one function definition"):
        gate.validate(b)


def test_validation_refuses_calls_in_annotations_and_defaults():
    annotation = _one_function_bundle("""
        @asc.jit
        def k(x: open('/etc/passwd')):
            pass
    """)
    with pytest.raises(BundleRejected, match="annotation of 'x' must be a type"):
        gate.validate(annotation)
    default = _one_function_bundle("""
        @asc.jit
        def k(x: int = __import__('os').getpid()):
            pass
    """)
    with pytest.raises(BundleRejected, match="default values must be literals"):
        gate.validate(default)


def test_validation_refuses_non_literal_constant_and_foreign_module():
    b = KernelBundle.from_json({**bundle.collect(uses_helper).to_json(), "constants": {"SCALE": "__import__('os')"}})
    with pytest.raises(BundleRejected, match="constant 'SCALE' is not a literal"):
        gate.validate(b)
    b = KernelBundle.from_json({**bundle.collect(uses_helper).to_json(), "modules": {"asc": "os"}})
    with pytest.raises(BundleRejected, match=r"bundle imports module 'os' as 'asc': only asc, its kernel language"):
        gate.validate(b)


def test_defined_functions_see_restricted_builtins():
    namespace = gate.define(bundle.collect(uses_helper), __import__("importlib").import_module)
    kernel = namespace["uses_helper"]
    assert type(kernel).__name__ == "JITFunction"
    assert "open" not in kernel.fn.__globals__["__builtins__"]
    assert kernel.fn.__globals__["SHAPE"] == (4, 8)
    # the namespace's __import__ answers only the import Python itself makes (3.12: typing, for a
    # subscripted annotation)
    interpreter_import = kernel.fn.__globals__["__builtins__"]["__import__"]
    assert interpreter_import("typing") is typing
    for name in ("os", "sys", "asc", "builtins"):
        with pytest.raises(ImportError, match=f"a kernel may not import '{name}'"):
            interpreter_import(name)


def test_a_constexpr_annotation_defines_on_every_python():
    """On 3.12 `asc.ConstExpr[int]` in a def looked up __import__ in the restricted builtins (KeyError)."""
    b = _one_function_bundle("""
        @asc.jit
        def k(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
            pass
    """)
    namespace = gate.define(b, __import__("importlib").import_module)
    assert type(namespace["k"]).__name__ == "JITFunction"


def test_malformed_bundle_json():
    with pytest.raises(BundleRejected, match="malformed kernel bundle"):
        KernelBundle.from_json({"entry": "k"})


@pytest.mark.kernel
def test_kernel_cannot_reach_modules_outside_the_kernel_language(tmp_path):
    """pyasc's codegen calls what a kernel names: asc.runtime...os.system must never get that far."""
    from ascrun.compiler import frontend
    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.py"
    path.write_text(f"import asc\n\n@asc.jit\ndef k(x: asc.GlobalAddress):\n"
                    f"    asc.runtime.compiler.os.system('touch {marker}')\n")
    b = bundle.collect(load_module(path).k)
    with pytest.raises(BundleRejected, match=r"'asc.runtime' is the module asc.runtime; kernels may use only"):
        frontend.run(b, [frontend.ArgSpec("tensor", "float32")])
    assert not marker.exists()


@pytest.mark.kernel
def test_kernel_cannot_name_open_or_import(tmp_path):
    from ascrun.compiler import frontend
    b = _one_function_bundle("""
        @asc.jit
        def k(x: asc.GlobalAddress):
            open('/etc/passwd').read()
    """)
    with pytest.raises(BundleRejected, match=r"kernel 'k' \(kern.py:12\) reads 'open', which the bundle does not"):
        frontend.run(b, [frontend.ArgSpec("tensor", "float32")])


def test_validation_refuses_recursion():
    b = KernelBundle(entry="a", modules=(("asc", "asc"),), constants=(), functions=(
        KernelFunction("a", "@asc.jit\ndef a(x: int):\n    b(x)\n", "k.py", 1),
        KernelFunction("b", "@asc.jit\ndef b(x: int):\n    a(x)\n", "k.py", 5)))
    with pytest.raises(BundleRejected, match=r"kernel 'a' calls itself \(a -> b -> a\): recursion is not supported"):
        gate.validate(b)


# --- the gate: every route from a bundle to Python or C++ it did not write ------------------------

def _bundle(source: str, modules=(("asc", "asc"),), name="k", filename="kern.py", lineno=10) -> KernelBundle:
    return KernelBundle(entry=name, functions=(KernelFunction(name, textwrap.dedent(source).lstrip("\n"), filename,
                                                              lineno),),
                        constants=(), modules=tuple(modules))


def _define(b: KernelBundle):
    return gate.define(b, __import__("importlib").import_module)


@pytest.mark.parametrize("module", ["asc.runtime.compiler", "asc.lib.runtime", "asc.codegen", "asc._C", "os",
                                    "asc.languagex", ""])
def test_module_aliases_are_asc_its_language_or_config(module):
    b = _bundle("@asc.jit\ndef k(n: int):\n    o.os.system('id')\n", modules=(("asc", "asc"), ("o", module)))
    with pytest.raises(BundleRejected) as e:
        gate.validate(b)
    assert str(e.value) == (f"bundle imports module {module!r} as 'o': only asc, its kernel language (asc.language.*), "
                            "asc.runtime.config and asc.experimental.asctile are allowed")


def test_collect_refuses_a_module_outside_the_kernel_language(tmp_path):
    path = tmp_path / "aliases.py"
    path.write_text("import asc\nimport asc.runtime.compiler as o\n\n\n@asc.jit\ndef k(n: int):\n    o.os\n")
    with pytest.raises(BundleRejected) as e:
        bundle.collect(load_module(path).k)
    assert str(e.value) == (f"kernel reads module 'o' (asc.runtime.compiler) in 'k' ({path}:7): only the 'asc' "
                            "package, its kernel language (asc.language), asc.runtime.config and "
                            "asc.experimental.asctile can be used in kernels")


@pytest.mark.parametrize("body", [
    "m = asc\n    m.runtime.compiler.os.system('touch MARKER')",
    "(asc if n else asc).runtime.compiler.os.system('touch MARKER')",
    "[asc][0].runtime.compiler.os.system('touch MARKER')",
    "isinstance(asc, int)",
    "for m in (asc,):\n        pass",
    "asc = 1",
], ids=["rebind", "conditional", "list", "argument", "loop", "store"])
def test_a_module_alias_is_only_the_head_of_a_checked_chain(tmp_path, body):
    marker = tmp_path / "pwned"
    b = _bundle(f"@asc.jit\ndef k(n: int):\n    {body.replace('MARKER', str(marker))}\n")
    with pytest.raises(BundleRejected) as e:
        _define(b)
    assert str(e.value) == "kernel 'k' (kern.py:12): module 'asc' may only be used as 'asc.name'"
    assert not marker.exists()


@pytest.mark.parametrize("body", [
    "u = asc.language.core.utils\n    u.inspect.os.system('touch MARKER')",
    "isinstance(asc.language.core, int)",
], ids=["rebind", "argument"])
def test_a_module_reached_by_a_chain_is_only_the_head_of_a_longer_one(tmp_path, body):
    """A submodule of the kernel language is allowed as a step, but held in a local its own
    attributes (utils.inspect.os) would never be checked."""
    marker = tmp_path / "pwned"
    b = _bundle(f"@asc.jit\ndef k(n: int):\n    {body.replace('MARKER', str(marker))}\n")
    with pytest.raises(BundleRejected) as e:
        _define(b)
    chain = body.split("=")[-1].split("\n")[0].strip() if "=" in body else "asc.language.core"
    assert str(e.value) == (f"kernel 'k' (kern.py:12): '{chain}' is a module, which may only be used as "
                            f"'{chain}.name'")
    assert not marker.exists()


@pytest.mark.parametrize("call", ["'{0.__globals__}'.format(asc.jit)", "'{f.__globals__}'.format_map({'f': asc.jit})",
                                  "str.format('{0.__globals__}', asc.jit)"])
def test_str_format_is_refused(call):
    attr = "format_map" if "format_map" in call else "format"
    with pytest.raises(BundleRejected) as e:
        gate.validate(_bundle(f"@asc.jit\ndef k(n: int):\n    asc.printf({call})\n"))
    assert str(e.value) == (f"kernel 'k' (kern.py:12): '.{attr}' is not allowed in kernels (it reads attributes "
                            "named in its text): use an f-string")


def test_percent_formatting_and_f_strings_read_no_hidden_attributes():
    """`%` reads no attributes by name; an f-string's fields are parsed, so the dunder rule sees them."""
    _define(_bundle("@asc.jit\ndef k(n: int):\n    asc.printf('%s' % 'x')\n"))
    with pytest.raises(BundleRejected) as e:
        gate.validate(_bundle("@asc.jit\ndef k(n: int):\n    asc.printf(f'{asc.jit.__globals__}')\n"))
    assert str(e.value) == "kernel 'k' (kern.py:12): dunder attribute '__globals__' is not allowed in kernels"


def test_type_is_not_a_kernel_builtin(tmp_path):
    """type() with three arguments creates classes; isinstance and issubclass cover what kernels ask."""
    with pytest.raises(BundleRejected) as e:
        gate.validate(_bundle("@asc.jit\ndef k(n: int):\n    type('C', (), {})\n"))
    assert str(e.value) == "kernel 'k' (kern.py:12) reads 'type', which the bundle does not define"
    path = tmp_path / "uses_type.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n    type(n)\n")
    with pytest.raises(BundleRejected) as e:
        bundle.collect(load_module(path).k)
    assert str(e.value) == f"kernel uses builtin 'type' in 'k' ({path}:6), which kernels may not use"


@pytest.mark.parametrize("source, message", [
    ("@asc.jit(opt_level=asc.runtime.compiler.os.system)\ndef k(n: int):\n    pass\n",
     "kernel 'k' (kern.py:10): 'asc.runtime' is the module asc.runtime; kernels may use only asc's kernel language"),
    ("@asc.jit\n@asc.jit\ndef k(n: int):\n    pass\n",
     "kernel 'k' (kern.py:10): must be decorated with exactly @asc.jit or @asc.jit(option=literal or asc "
     "constant, ...) (or asctile's @asctile.jit)"),
    ("@asc.jit(opt=asc.printf('x'))\ndef k(n: int):\n    pass\n",
     "kernel 'k' (kern.py:10): must be decorated with exactly @asc.jit or @asc.jit(option=literal or asc "
     "constant, ...) (or asctile's @asctile.jit)"),
    ("@asc.jit(bisheng_options='-include /etc/passwd')\ndef k(n: int):\n    pass\n",
     "kernel 'k' (kern.py:10): @jit option(s) 'bisheng_options' are not among those a kernel may set: "
     "auto_sync, capture_exceptions, cv_ratio, debug, insert_sync, ir_multithreading, kernel_type, matmul_cube_only, "
     "opt_level, reuse_alloc, run_passes, static_alloc, strip_loc, verify_sync, vf_fusion"),
    ("@asc.jit\ndef k(n: int = asc.runtime.compiler.os.system('id')):\n    pass\n",
     "kernel 'k' (kern.py:11): default values must be literals"),
    ("@asc.jit\ndef k(n: asc.runtime.compiler.os.system('id')):\n    pass\n",
     "kernel 'k' (kern.py:11): annotation of 'n' must be a type name, attribute or subscript"),
    ("@asc.jit\ndef k(n: asc.runtime.compiler.os.environ['REDIS_URL']):\n    pass\n",
     "kernel 'k' (kern.py:11): 'asc.runtime' is the module asc.runtime; kernels may use only asc's kernel language"),
    ("@asc.jit\ndef k(n: int) -> asc.language.core.utils.dataclass:\n    pass\n",
     "kernel 'k' (kern.py:11): 'asc.language.core.utils.dataclass' is from dataclasses; kernels may use only asc's "
     "kernel language"),
], ids=["decorator-option", "two-decorators", "decorator-call", "decorator-compiler-flags", "default", "annotation-call", "annotation-chain",
        "return-annotation"])
def test_decorators_defaults_and_annotations_run_nothing(source, message):
    """All three are evaluated when the def executes: refused before it does."""
    with pytest.raises(BundleRejected) as e:
        _define(_bundle(source))
    assert str(e.value) == message


@pytest.mark.parametrize("use, message", [
    ("config.set_platform('Model')", "'config.set_platform' is from asc.runtime.config"),
    ("config.Enum('E', 'a b')", "'config.Enum' is from enum"),
    ("config.rt.use_model()", "'config.rt' is the module asc.lib.runtime"),
    ("asc.jit.__wrapped__", None),
])
def test_config_offers_its_enums_only(use, message):
    source = f"@asc.jit(kernel_type=config.KernelType.AIV_ONLY)\ndef k(n: int):\n    {use}\n"
    b = _bundle(source, modules=(("asc", "asc"), ("config", "asc.runtime.config")))
    with pytest.raises(BundleRejected) as e:
        _define(b)
    assert str(e.value) == (f"kernel 'k' (kern.py:12): {message}; kernels may use only asc's kernel language"
                            if message else "kernel 'k' (kern.py:12): dunder attribute '__wrapped__' is not allowed "
                            "in kernels")


def test_chains_from_a_kernel_function_stay_in_asc():
    b = KernelBundle(entry="k", modules=(("asc", "asc"),), constants=(), functions=(
        KernelFunction("h", "@asc.jit\ndef h(n: int):\n    pass\n", "kern.py", 1),
        KernelFunction("k", "@asc.jit\ndef k(n: int):\n    h.fn(n)\n", "kern.py", 5)))
    with pytest.raises(BundleRejected) as e:
        _define(b)
    assert str(e.value) == ("kernel 'k' (kern.py:7): 'h.fn' is from ascrun_bundle; kernels may use only asc's kernel "
                            "language")


@pytest.mark.parametrize("changes, message", [
    ({"lineno": 2_000_000_000}, "function 'k': lineno 2000000000 is out of range (1 to 1000000)"),
    ({"lineno": 0}, "function 'k': lineno 0 is out of range (1 to 1000000)"),
    ({"lineno": -5}, "function 'k': lineno -5 is out of range (1 to 1000000)"),
    ({"source": "@asc.jit\ndef k(n: int):\n    pass\n" + "#" * 100_000},
     "the bundle's sources have 100033 characters, more than 100000 (MAX_SOURCE_CHARS)"),
    ({"filename": "a\x00b.py"}, "function 'k': its file name 'a\\x00b.py' holds the control character '\\x00'"),
    ({"filename": "a\nb.py"}, "function 'k': its file name 'a\\nb.py' holds the control character '\\n'"),
    ({"filename": "x" * 5000}, "function 'k': its file name has 5000 characters, more than 4096"),
])
def test_bundle_metadata_is_bounded(changes, message):
    fn = {"name": "k", "source": "@asc.jit\ndef k(n: int):\n    pass\n", "filename": "kern.py", "lineno": 1}
    b = KernelBundle.from_json({"entry": "k", "functions": [{**fn, **changes}], "constants": {},
                                "modules": {"asc": "asc"}})
    with pytest.raises(BundleRejected) as e:
        _define(b)
    assert str(e.value) == message


HEAD = "@asc.jit\ndef k(n: int):\n"


@pytest.mark.parametrize("body, message", [
    ("    v = (" + ", ".join(["n"] * 10_000) + ")\n", "the bundle's functions have more than 20000 syntax nodes "
                                                      "(MAX_NODES)"),
    ("    pass\n" * 2_001, "the bundle's functions have more than 2000 statements (MAX_STATEMENTS)"),
    ("    v = " + " + ".join(["n"] * 101) + "\n", "kernel 'k' (kern.py:3): code nested more than 100 levels deep "
                                                   "(MAX_DEPTH)"),
])
def test_syntax_trees_are_bounded_before_the_gate_walks_them(body, message):
    b = KernelBundle.from_json({"entry": "k", "functions": [{"name": "k", "source": HEAD + body, "filename": "kern.py",
                                                             "lineno": 1}], "constants": {}, "modules": {"asc": "asc"}})
    with pytest.raises(BundleRejected) as e:
        gate.validate(b)
    assert str(e.value) == message


def test_an_elif_chain_is_as_deep_as_its_if():
    """Kernels dispatch on a ConstExpr with long elif chains: each elif is not a level deeper."""
    chain = "".join(f"    {'if' if i == 0 else 'elif'} n == {i}:\n        v = {i}\n" for i in range(150))
    gate.validate(KernelBundle.from_json({"entry": "k", "functions": [{"name": "k", "source": HEAD + chain,
                                                                  "filename": "kern.py", "lineno": 1}],
                                     "constants": {}, "modules": {"asc": "asc"}}))


def test_many_functions_cannot_add_up_past_the_bounds():
    functions = [{"name": f"f{i}", "source": f"@asc.jit\ndef f{i}(n: int):\n    pass\n", "filename": "kern.py",
                  "lineno": 900_000} for i in range(3)]
    b = KernelBundle.from_json({"entry": "f0", "functions": functions, "constants": {}, "modules": {"asc": "asc"}})
    with pytest.raises(BundleRejected) as e:
        _define(b)
    assert str(e.value) == ("the bundle's functions reach 2700009 lines in all, counted from each one's lineno, more "
                            "than 2000000")


def test_a_kernel_named_like_a_cpp_keyword_is_refused():
    with pytest.raises(BundleRejected) as e:
        gate.validate(_bundle("@asc.jit\ndef template(n: int):\n    pass\n", name="template"))
    assert str(e.value) == "function 'template': its name is a C++ keyword, rename it"


# --- typing forms in annotations ------------------------------------------------------------------

@pytest.mark.kernel
def test_typing_forms_are_collected_for_annotations_and_the_kernel_runs():
    import ops
    collected = bundle.collect(ops.typed_helper_copy_kernel)
    assert collected.annotations == (("Tuple", "Tuple"),)
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    ascrun.run_local(ops.typed_helper_copy_kernel, 1, x, z)
    np.testing.assert_array_equal(z, x)


@pytest.mark.service
def test_a_typed_helper_runs_through_the_service(client):
    import ops
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    client.launch(ops.typed_helper_copy_kernel, 1, x, z)
    np.testing.assert_array_equal(z, x)


@pytest.mark.parametrize("body", ["    t = Tuple\n", "    Tuple.copy_with((int,))\n", "    n = len(Tuple[int])\n"])
def test_a_typing_form_is_refused_outside_annotations(body):
    b = KernelBundle(entry="k", functions=(KernelFunction("k", "@asc.jit\ndef k(n: int) -> Tuple[int]:\n" + body,
                                                          "kern.py", 1),),
                     constants=(), modules=(("asc", "asc"),), annotations=(("Tuple", "Tuple"),))
    with pytest.raises(BundleRejected, match=r"kernel 'k' \(kern.py:3\): 'Tuple' is a typing form: it may only be "
                                             r"used in annotations"):
        gate.validate(b)


@pytest.mark.parametrize("form", ["get_type_hints", "TYPE_CHECKING", "cast", "NamedTuple"])
def test_only_typing_forms_may_be_named(form):
    b = KernelBundle(entry="k", functions=(KernelFunction("k", "@asc.jit\ndef k(n: T):\n    pass\n", "kern.py", 1),),
                     constants=(), modules=(("asc", "asc"),), annotations=(("T", form),))
    with pytest.raises(BundleRejected, match=f"bundle names '{form}' as 'T' for its annotations: only typing's Any"):
        gate.validate(b)


def test_a_kernels_jit_options_are_the_jobs_compile_options_and_its_kernel_type():
    from ascrun.server.models import CompileOptions
    assert gate.JIT_OPTIONS == {"kernel_type", *CompileOptions.model_fields}

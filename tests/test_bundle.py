"""KernelBundle: collection from live kernels, canonical JSON, and the refusals."""
import json
import textwrap

import numpy as np
import pytest

import asc
from ascrun.compiler import bundle
from ascrun.compiler.bundle import KernelBundle, KernelFunction
from ascrun.compiler.errors import BundleRejected
from conftest import load_module

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
        bundle.validate(b)


def test_validation_refuses_non_jit_decorator():
    b = _one_function_bundle("""
        @functools.lru_cache
        def k(x: asc.GlobalAddress):
            pass
    """)
    with pytest.raises(BundleRejected, match=r"kernel 'k' \(kern.py:10\): must be decorated with exactly @asc.jit"):
        bundle.validate(b)


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
    namespace = bundle.define(with_config, __import__("importlib").import_module)
    assert namespace["k"].fn.__name__ == "k"
    # a name that is not one of the bundle's modules is still refused
    without_config = KernelBundle(entry="k", functions=(fn,), constants=(), modules=(("asc", "asc"),))
    with pytest.raises(BundleRejected, match=r"must be decorated with exactly @asc.jit"):
        bundle.validate(without_config)


def test_validation_refuses_statements_beside_the_function():
    b = _one_function_bundle("""
        @asc.jit
        def k(x: asc.GlobalAddress):
            pass
        print(open('/etc/passwd').read())
    """)
    with pytest.raises(BundleRejected, match="exactly one function definition"):
        bundle.validate(b)


def test_validation_refuses_calls_in_annotations_and_defaults():
    annotation = _one_function_bundle("""
        @asc.jit
        def k(x: open('/etc/passwd')):
            pass
    """)
    with pytest.raises(BundleRejected, match="annotation of 'x' must be a type"):
        bundle.validate(annotation)
    default = _one_function_bundle("""
        @asc.jit
        def k(x: int = __import__('os').getpid()):
            pass
    """)
    with pytest.raises(BundleRejected, match="default values must be literals"):
        bundle.validate(default)


def test_validation_refuses_non_literal_constant_and_foreign_module():
    b = KernelBundle.from_json({**bundle.collect(uses_helper).to_json(), "constants": {"SCALE": "__import__('os')"}})
    with pytest.raises(BundleRejected, match="constant 'SCALE' is not a literal"):
        bundle.validate(b)
    b = KernelBundle.from_json({**bundle.collect(uses_helper).to_json(), "modules": {"asc": "os"}})
    with pytest.raises(BundleRejected, match=r"bundle imports module .os. as .asc.: only asc, its kernel language \(asc.language.\*\) and asc.runtime.config are allowed"):
        bundle.validate(b)


def test_defined_functions_see_restricted_builtins():
    namespace = bundle.define(bundle.collect(uses_helper), __import__("importlib").import_module)
    kernel = namespace["uses_helper"]
    assert type(kernel).__name__ == "JITFunction"
    assert "open" not in kernel.fn.__globals__["__builtins__"]
    assert "__import__" not in kernel.fn.__globals__["__builtins__"]
    assert kernel.fn.__globals__["SHAPE"] == (4, 8)


def test_malformed_bundle_json():
    with pytest.raises(BundleRejected, match="malformed kernel bundle"):
        KernelBundle.from_json({"entry": "k"})


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
        bundle.validate(b)

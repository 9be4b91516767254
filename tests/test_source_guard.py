"""A frontend taken over answers any C++ and any metadata: the broker checks the answer
(source_guard.py) before a cache keeps it or a toolchain builds it. Each attack comes from a
hijacked frontend through pipeline.build, as a worker's jailed frontend's answer would."""
import dataclasses

import pytest

from ascrun.compiler import pipeline
from ascrun.compiler.cache import DiskCache
from ascrun.compiler.bundle import collect
from ascrun.compiler.errors import KernelError
from ascrun.compiler.frontend import ArgSpec

pytestmark = pytest.mark.kernel

SPECS = [ArgSpec("tensor", "float32")] * 3 + [ArgSpec("scalar", "int", 2048)]


class Hijacked:
    """The cpu target with a frontend that answers `edit` of the real answer; builds are counted."""

    def __init__(self, edit):
        self.real, self.edit, self.builds = pipeline.get_target("cpu"), edit, 0
        self.toolchain = self

    def frontend(self, bundle, args, options, soc=None):
        return self.edit(self.real.frontend(bundle, args, options, soc))

    @property
    def id(self):
        return self.real.toolchain.id

    def build(self, *args):
        self.builds += 1
        return self.real.toolchain.build(*args)


def _answer(add_example, tmp_path, edit) -> KernelError:
    target = Hijacked(edit)
    cache = DiskCache(tmp_path / "cache")
    with pytest.raises(KernelError) as e:
        pipeline.build(collect(add_example.vadd_kernel), SPECS, target, cache, cache)
    assert target.builds == 0 and not (tmp_path / "cache").exists()  # neither built nor cached
    return e.value


def _with_source(text: str):
    return lambda r: dataclasses.replace(r, source=r.source.replace('#include "kernel_operator.h"\n',
                                                                    f'#include "kernel_operator.h"\n{text}\n'))


@pytest.mark.parametrize("text, refused", [
    ('#include "/etc/passwd"', "the preprocessor directive '#include \"/etc/passwd\"'"),
    ('  /* hidden */ #pragma GCC optimize("O0")', "the preprocessor directive '#pragma GCC optimize(\"O0\")'"),
    ('%:include "/etc/passwd"', "the preprocessor directive '%:include \"/etc/passwd\"'"),
    ('_Pragma("message(\\"x\\")") int a;', "'_Pragma'"),
    ('asm(".incbin \\"/etc/passwd\\"");', "'asm'"),
    ('const char* s = R"(raw)";', "a string literal with a prefix"),
    ('const char* s = "a\\q";', "a string literal: '\\\\q' is not a C escape"),
    ('const char* s = "??/";', "the trigraph '??/'"),
    ('const char* s = "open', "a literal that does not end on its line"),
    ('int a; \\\n#include "/etc/passwd"', "a line continuation"),
])
def test_a_hijacked_frontends_cpp_is_refused(add_example, tmp_path, text, refused):
    error = _answer(add_example, tmp_path, _with_source(text))
    assert error.kind == "compile_error"
    assert str(error).startswith("the Ascend C generated for 'vadd_kernel' is refused at line 2: " + refused)


@pytest.mark.parametrize("change, said", [
    ({"kernel_name": "main"}, "the frontend answered the kernel name 'main' for 'vadd_kernel'"),
    ({"kernel_type": "AIV_ONLY)\nint x;//"}, "the frontend answered the kernel type 'AIV_ONLY)\\nint x;//' for "
                                            "'vadd_kernel'"),
    ({"ir_hash": "x"}, "the frontend answered an IR hash that is not a sha256 for 'vadd_kernel'"),
    ({"params": ({"name": "secret", "kind": "tensor", "dtype": "float32"},)},
     "the frontend answered parameters the kernel does not have for 'vadd_kernel'"),
    ({"kernel_args": ("explicit", "shell")}, "the frontend answered a kernel argument of an unknown kind for "
                                             "'vadd_kernel'"),
])
def test_a_hijacked_frontends_metadata_is_refused(add_example, tmp_path, change, said):
    error = _answer(add_example, tmp_path, lambda r: dataclasses.replace(r, **change))
    assert (error.kind, str(error)) == ("runtime_error", said)


@pytest.mark.parametrize("forge", [
    lambda file: (f"{file}:12\nerror: made up by the frontend",),  # text after the line number
    lambda file: (f"{file}:x",),
    lambda file: (f"{file}:0",),
    lambda file: (f"{file}:1",) * 100_000,  # more sites than the kernel has lines: a message's size
])
def test_a_hijacked_frontends_sites_are_refused(add_example, tmp_path, forge):
    error = _answer(add_example, tmp_path,
                    lambda r: dataclasses.replace(r, sites=forge(r.sites[0].rpartition(":")[0])))
    assert (error.kind, str(error)) == ("runtime_error", "the frontend answered sites that are not lines of the "
                                                         "kernel's files for 'vadd_kernel'")


def test_a_frontend_answer_over_its_size_is_a_limit(add_example, tmp_path):
    error = _answer(add_example, tmp_path, lambda r: dataclasses.replace(r, ir="x" * (4 << 20) + "x"))
    assert (error.kind, str(error)) == ("limit", f"the ASC-IR generated for 'vadd_kernel' is {(4 << 20) + 1} bytes, "
                                                 f"over the {4 << 20} a job may generate")

"""Strings a kernel controls reach the C++ exactly as written, or are refused naming the call and
the character; and two tenants' colliding kernels each run their own binary (a real stack).

pyasc 1.1.1 writes a printf format between the quotes of a C string literal as it is (its docs write
asc.printf("x=%u\\n")), so the Python string is the body of that literal: escapes are C's. Its nightly
escapes the format (frontend's printf probe): the text prints as written, C escapes included, and
what is an attack on 1.1.1 stays inside its literal there."""

import numpy as np
import pytest

import ascrun
from ascrun.compiler import frontend
from ascrun.compiler.errors import BundleRejected
from conftest import load_module, tenant_entry, tenants_service

pytestmark = pytest.mark.kernel

TAG = "[AIV Block 0/1] "
ESCAPES = "\\n \\t \\r \\a \\b \\f \\v \\\\ \\\" \\' \\? \\0-\\7 \\xHH"


def _escaping() -> bool:
    """Whether the installed pyasc escapes a printf format (the nightly) rather than writing it as it is."""
    frontend._probe_printf_translation()
    return frontend._printf_translation == "escaping"


def _kernels(tmp_path, name, text):
    """A kernel printing `text` as a literal (line 6), and one printing a ConstExpr[str] (line 11)."""
    path = tmp_path / f"{name}.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef literal(n: int):\n"
                    f"    asc.printf({text!r}, n)\n\n\n"
                    "@asc.jit\ndef via_constexpr(n: int, fmt: asc.ConstExpr[str]):\n"
                    "    asc.printf(fmt, n)\n")
    return path, load_module(path, name)


def test_printf_prints_what_the_kernel_wrote(tmp_path):
    text = "n=%d\\t|%%|\\\"q\\\"|\\'|\\\\|é中✓|*/ /*|\\x41\\101|?? ?\\?|\\n#include <stdio.h>\\n"
    printed = "n=7\t|%|\"q\"|'|\\|é中✓|*/ /*|AA|?? ??|\n#include <stdio.h>\n"
    if _escaping():  # the C escapes print as written
        printed = text.replace("%d", "7").replace("%%", "%")
    path, module = _kernels(tmp_path, "prints", text)
    assert ascrun.run_local(module.literal, 1, 7).log == TAG + printed
    assert ascrun.run_local(module.via_constexpr, 1, 7, text).log == TAG + printed
    # the control characters a Python string holds print as their C escapes do: "x=%d\n" works too
    path, module = _kernels(tmp_path, "controls", "n=%d\tcr\r\x01\n")
    assert ascrun.run_local(module.literal, 1, 7).log == TAG + "n=7\tcr\r\x01\n"
    assert ascrun.run_local(module.via_constexpr, 1, 7, "n=%d\tcr\r\x01\n").log == TAG + "n=7\tcr\r\x01\n"
    # printf's %s arguments join the format before it reaches the IR, and are checked with it
    path.write_text("import asc\n\n\n@asc.jit\ndef words(n: int, word: asc.ConstExpr[str]):\n"
                    "    asc.printf(\"%s=%d %s\\n\", word, n, \"später\")\n")
    words = load_module(path, "words").words
    assert ascrun.run_local(words, 1, 3, "wört").log == TAG + "wört=3 später\n"
    if _escaping():  # the quote stays inside the literal
        assert ascrun.run_local(words, 1, 3, 'x");system("id').log == TAG + 'x");system("id=3 später\n'
        return
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(words, 1, 3, 'x");system("id')
    assert str(e.value) == (f"pyasc could not compile the kernel: in kernel 'words' at {path}:6: asc.printf: a bare "
                            "'\"' would end the C++ string literal: write \\\" for a quote (character 1 of "
                            "'x\");system(\"id=%d später\\n')")


QUOTE = "a bare '\"' would end the C++ string literal: write \\\" for a quote"
NOT_AN_ESCAPE = f"is not a C escape ({ESCAPES}): write \\\\ for a backslash"
TRIGRAPH = "is a trigraph, which a C++ compiler may read as another character"


# why: 1.1.1's refusal; nightly: the nightly's, where it escapes the format (what no C literal keeps
# whatever its escapes), or None: the format stays inside its literal and prints as written
@pytest.mark.parametrize("text, index, why, nightly", [
    ('x");system("id', 1, QUOTE, None),
    ('\n#include "/etc/passwd"\n', 10, QUOTE, None),
    ("a\\\n\");system(\"id", 1, f"'\\\\\\n' {NOT_AN_ESCAPE}", None),
    ("a??/", 1, "'??/' is a trigraph: write '?\\?/'", f"'??/' {TRIGRAPH}"),
    ("a??=define", 1, "'??=' is a trigraph: write '?\\?='", f"'??=' {TRIGRAPH}"),
    ("a\x00b", 1, "a NUL would end the format", "a NUL would end the format"),
    ("abc\\", 3, "a '\\' at the end would escape the closing quote: write \\\\ for a backslash", None),
    ("\\q", 0, f"'\\\\q' {NOT_AN_ESCAPE}", None),
    ("\\u0022", 0, f"'\\\\u' {NOT_AN_ESCAPE}", None),
], ids=["quote", "newline-directive", "backslash-newline", "trigraph", "trigraph-define", "nul",
        "trailing-backslash", "unknown-escape", "universal-name"])
def test_injection_through_printf_is_refused(tmp_path, text, index, why, nightly):
    if _escaping():
        why = nightly
        if why is None:
            path = tmp_path / "attack.py"
            path.write_text(f"import asc\n\n\n@asc.jit\ndef k(n: int):\n    asc.printf({text!r})\n")
            assert ascrun.run_local(load_module(path, "attack").k, 1, 7).log == TAG + text
            return
    path, module = _kernels(tmp_path, "attack", text)
    for kernel, line, args in ((module.literal, 6, (1,)), (module.via_constexpr, 11, (1, text))):
        with pytest.raises(ascrun.KernelError) as e:
            ascrun.run_local(kernel, 1, *args)
        assert e.value.kind == "compile_error"
        assert str(e.value) == (f"pyasc could not compile the kernel: in kernel '{kernel.fn.__name__}' at "
                                f"{path}:{line}: asc.printf: {why} (character {index} of {text!r})")


@pytest.mark.parametrize("body, message", [
    ('asc.inline("#include \\"/etc/passwd\\"")', "asc.inline: C++ written into the kernel verbatim is not accepted"),
    ('asc.inline("int x;", before_function=True)', "asc.inline: C++ written into the kernel verbatim is not accepted"),
    ('asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 8).to_file("/tmp/out")',
     "LocalTensor.to_file: kernels may not write files"),
])
def test_calls_that_put_text_into_the_cpp_are_refused(tmp_path, body, message):
    path = tmp_path / "verbatim.py"
    path.write_text(f"import asc\n\n\n@asc.jit\ndef k(x: asc.GlobalAddress):\n    {body}\n")
    kernel = load_module(path, "verbatim").k
    with pytest.raises(ascrun.KernelError) as e:
        ascrun.run_local(kernel, 1, np.zeros(8, np.float32))
    assert e.value.kind == "compile_error"
    assert str(e.value) == f"pyasc could not compile the kernel: in kernel 'k' at {path}:6: {message}"


def test_the_ir_builder_is_out_of_a_kernels_reach(tmp_path):
    path = tmp_path / "builder.py"
    path.write_text("import asc\n\n\n@asc.jit\ndef k(n: int):\n"
                    "    asc.language.core.utils.global_builder.get_ir_builder().create_emitc_IncludeOp('x')\n")
    kernel = load_module(path, "builder").k
    with pytest.raises(BundleRejected) as e:
        ascrun.run_local(kernel, 1, 1)
    assert str(e.value) == (f"kernel 'k' ({path}:6): 'asc.language.core.utils.global_builder' is pyasc's IR builder; "
                            "kernels may use only asc's kernel language")


# --- two tenants, colliding kernels, through a real stack -----------------------------------------

TOKENS = {"alice": "alice-injection-token", "bob": "bob-injection-token"}


@pytest.fixture(scope="module")
def pool(redis_url, service):
    """A server with two tenants, served by the session's workers."""
    with tenants_service(redis_url, [tenant_entry(name, token) for name, token in TOKENS.items()]) as svc:
        yield svc


def _hello(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(f"import asc\n\n\n@asc.jit\ndef hello(n: int):\n    asc.printf({text!r}, n)\n")
    return load_module(path, name).hello


@pytest.mark.service
def test_colliding_kernels_of_two_tenants_each_run_their_own(pool, tmp_path):
    """Text-stripping ` loc(...)` once gave these two the same IR hash, so bob ran alice's binary."""
    evil = _hello(tmp_path, "alice_hello", "Hello loc(<C++>) world %d\n")  # a newline: it prints one on either pyasc
    innocent = _hello(tmp_path, "bob_hello", "Hello world %d\n")
    with ascrun.Client(pool.url, token=TOKENS["alice"]) as alice, ascrun.Client(pool.url, token=TOKENS["bob"]) as bob:
        a = alice.launch(evil, 1, 41)
        b = bob.launch(innocent, 1, 42)
        assert a.log == TAG + "Hello loc(<C++>) world 41\n"
        assert b.log == TAG + "Hello world 42\n"
        assert b.cache == {"frontend": "miss", "build": "miss"}  # not a hit of alice's artifact
        assert a.ir_hash != b.ir_hash
        assert 'AscendC::printf("Hello world %d\\n", ' in bob.source(b.job_id)
        assert "loc(" not in bob.source(b.job_id)
        assert 'AscendC::printf("Hello loc(<C++>) world %d\\n", ' in alice.source(a.job_id)

        # the same kernel from another file: its own frontend run, the same C++, so alice's build is
        # reused for her; bob's caches are his own
        same = _hello(tmp_path, "alice_copy", "Hello loc(<C++>) world %d\n")
        again = alice.launch(same, 1, 43)
        assert again.log == TAG + "Hello loc(<C++>) world 43\n"
        assert again.cache == {"frontend": "miss", "build": "hit"}
        assert again.ir_hash == a.ir_hash
        assert bob.launch(same, 1, 44).cache == {"frontend": "miss", "build": "miss"}

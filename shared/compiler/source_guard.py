"""The broker's check of what a frontend answered, before anything builds it or a cache keeps it: a
frontend runs the tenant's Python (in its jail) and may have been made to answer anything, so its
answer is data with a schema (names, kinds, sizes) and its C++ gets again the guards pyasc's IR
builder applies while it emits (frontend.py): no preprocessor directive but the ones pyasc writes,
every string literal as a kernel may write one (frontend.literal_body's rules), nothing that reads
files or writes pragmas at build time. The build and run jails hold whatever passes: this is the
second line.
"""
from __future__ import annotations

import re

from .bundle import KernelBundle
from .errors import CompileError, KernelError
from .frontend import FrontendResult, StringRefused, literal_body, param_names
from .targets.contract import PYASC_KERNEL_TYPES

MAX_SOURCE_BYTES = 4 << 20  # the generated Ascend C, and the ASC-IR, each
PARAM_KINDS = ("tensor", "scalar", "struct")
KERNEL_ARG_KINDS = ("explicit", "ffts_addr", "dump_addr")  # dump_addr: a kernel compiled with debug=True (asctile)
# What pyasc's translation writes on a line of its own (asc._C's emitter).
DIRECTIVES = frozenset({'#include "kernel_operator.h"', '#include "lib/matmul_intf.h"', "#pragma pack(push, 8)",
                        "#pragma pack(pop)", "#define ASCENDC_CUBE_ONLY"})
# Identifiers that read files or pass text to the assembler or preprocessor at build time.
REFUSED_WORDS = ("_Pragma", "asm", "__asm", "__asm__", "__has_include", "__has_include_next")
_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_][A-Za-z0-9_]*|.',
                    re.S)
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>-]")
_SITE = re.compile(r"(.*):[1-9][0-9]{0,8}", re.S)  # a kernel file's name, then a line number


def check_result(result: FrontendResult, bundle: KernelBundle) -> None:
    """KernelError unless `result` is what pyasc could have answered for `bundle`."""
    def wrong(what: str) -> KernelError:
        return KernelError(f"the frontend answered {what} for '{bundle.entry}'", kind="runtime_error")

    if result.kernel_name != bundle.entry:
        raise wrong(f"the kernel name {result.kernel_name[:100]!r}")
    if result.kernel_type not in PYASC_KERNEL_TYPES:
        raise wrong(f"the kernel type {result.kernel_type[:100]!r}")
    if not re.fullmatch(r"[0-9a-f]{64}", result.ir_hash):
        raise wrong("an IR hash that is not a sha256")
    names = set(param_names(bundle))
    if any(not isinstance(p, dict) or p.get("name") not in names or p.get("kind") not in PARAM_KINDS
           or not isinstance(p.get("dtype"), str) for p in result.params):
        raise wrong("parameters the kernel does not have")
    if any(kind not in KERNEL_ARG_KINDS for kind in result.kernel_args):
        raise wrong("a kernel argument of an unknown kind")
    files = {f.filename for f in bundle.functions}
    statements = sum(f.source.count("\n") + 1 for f in bundle.functions)  # a site per line at most
    if len(result.sites) > statements or any(
            not isinstance(s, str) or not (site := _SITE.fullmatch(s)) or site.group(1) not in files
            for s in result.sites):
        raise wrong("sites that are not lines of the kernel's files")
    for what, text in (("ASC-IR", result.ir), ("Ascend C", result.source)):
        size = len(text.encode())
        if size > MAX_SOURCE_BYTES:
            raise KernelError(f"the {what} generated for '{bundle.entry}' is {size} bytes, over the "
                              f"{MAX_SOURCE_BYTES} a job may generate", kind="limit")
    check_source(result.source, bundle.entry)


def check_source(source: str, kernel_name: str) -> None:
    """CompileError unless `source` is C++ pyasc could have written for the kernel `kernel_name`."""
    def refuse(at: int, why: str) -> CompileError:
        line = source.count("\n", 0, at) + 1
        return CompileError(f"the Ascend C generated for '{kernel_name}' is refused at line {line}: {why}")

    for marker, why in (("\\\n", "a line continuation"), ("\r", "a carriage return")):
        if marker in source:
            raise refuse(source.index(marker), why)
    trigraph = _TRIGRAPH.search(source)
    if trigraph:
        raise refuse(trigraph.start(), f"the trigraph {trigraph.group()!r}")
    line_start = True
    for token in _TOKEN.finditer(source):
        text = token.group()
        if text == "\n":
            line_start = True
            continue
        if text.isspace() or text.startswith(("//", "/*")):
            continue
        if line_start and (text == "#" or (text == "%" and source.startswith("%:", token.start()))):
            end = source.find("\n", token.start())
            directive = source[token.start():end if end >= 0 else len(source)].strip()
            if directive not in DIRECTIVES:
                raise refuse(token.start(), f"the preprocessor directive {directive[:200]!r}")
        elif text in ('"', "'"):
            raise refuse(token.start(), "a literal that does not end on its line")
        elif text[0] in "\"'":
            try:
                literal_body("a string literal", text[1:-1])
            except StringRefused as e:
                raise refuse(token.start(), str(e)) from None
            if text[0] == '"' and source[max(0, token.start() - 1):token.start()] in ("R", "8", "u", "U", "L"):
                raise refuse(token.start(), "a string literal with a prefix")
        elif text in REFUSED_WORDS:
            raise refuse(token.start(), f"'{text}'")
        line_start = False

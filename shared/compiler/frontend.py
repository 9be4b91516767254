"""Frontend: bundle + argument specs + SOC -> ASC-IR, Ascend C source, kernel arguments, IR hash.

This is pyasc's own Compiler flow (codegen, then Compiler.run: whatever hooks the installed pyasc
runs around its pass pipeline, and the Ascend C translation), stopped before bisheng: nothing
here needs CANN or a device. pyasc 1.1.1 and its nightly (distribution pyasc-dev) both work.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

from . import socs, structs
from .bundle import ASCTILE_MODULE, LANGUAGE_FUNCTION, KernelBundle, KernelFunction
from .gate import define, reach_refusal
from .errors import BundleRejected, CompileError, KernelError

SCALAR_TYPES = ("int", "float", "bool")
# The SOC a launch that names none compiles for: pyasc's own default (asc.lib.runtime's state
# before a set_platform).
DEFAULT_SOC = "Ascend910B1"
# A compile error's message carries what the kernel computed (`assert False, text`): bounded,
# as it is stored with the job.
MAX_MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class ArgSpec:
    """What the frontend needs to know of one launch argument.

    kind "tensor": `dtype` is a numpy dtype name. kind "scalar": `dtype` is int/float/bool (a
    Python scalar) or a numpy scalar dtype name, `value` its value (it specializes the kernel
    only for ConstExpr parameters). kind "struct": `dtype` is the Struct class's name (one of the
    bundle's structs), `value` its field values (structs.py); like pyasc, only the class
    specializes the kernel, the values are runtime data.
    """
    kind: str
    dtype: str
    value: Any = None

    def to_json(self) -> Dict[str, Any]:
        data = {"kind": self.kind, "dtype": self.dtype}
        if self.kind != "tensor":
            data["value"] = self.value
        return data


@dataclass(frozen=True)
class FrontendResult:
    """pyasc's output for one specialization of a kernel.

    `params` are the kernel's runtime (non-ConstExpr) parameters in order, each
    {"name", "kind": "tensor"|"scalar"|"struct", "dtype"} (a struct's also "structs": the
    definitions of it and what it nests, structs.py JSON); `kernel_args` is pyasc's list of the
    generated function's arguments ("explicit" for each runtime parameter, then extras such
    as "ffts_addr"); `kernel_type` is the name of pyasc's KernelType that its Compiler chose
    (the `kernel_type` option, else AIV_ONLY, or for a kernel with a matmul object MIX_AIC_1_2,
    AIC_ONLY when compiled matmul_cube_only): which cores a block runs. `npu_arch` is the
    `__NPU_ARCH__` of the SOC it was compiled for (socs.py): what the toolchain builds it for.
    """
    kernel_name: str
    ir: str
    source: str
    ir_hash: str
    params: Tuple[Dict[str, str], ...]
    kernel_args: Tuple[str, ...]
    kernel_type: str
    sites: Tuple[str, ...] = ()  # "file:line" of each statement the source's site markers name (name_sites)
    npu_arch: int = socs.DEFAULT_NPU_ARCH

    def to_json(self) -> Dict[str, Any]:
        return {"kernel_name": self.kernel_name, "ir": self.ir, "source": self.source, "ir_hash": self.ir_hash,
                "params": list(self.params), "kernel_args": list(self.kernel_args), "kernel_type": self.kernel_type,
                "sites": list(self.sites), "npu_arch": self.npu_arch}

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "FrontendResult":
        return cls(data["kernel_name"], data["ir"], data["source"], data["ir_hash"],
                   tuple(data["params"]), tuple(data["kernel_args"]), data["kernel_type"], tuple(data["sites"]),
                   int(data["npu_arch"]))


def _param(name: str, spec: Dict[str, Any], defs: structs.Definitions) -> Dict[str, Any]:
    """A runtime parameter as the runner needs it; a struct's carries the definitions to pack it."""
    param = {"name": name, "kind": spec["kind"], "dtype": spec["dtype"]}
    if spec["kind"] == "struct":
        param["structs"] = {n: d.to_json() for n, d in structs.reachable(defs, spec["dtype"]).items()}
    return param


@functools.lru_cache(maxsize=1024)
def _entry_node(source: str) -> ast.FunctionDef:
    return ast.parse(source).body[0]


def _entry(bundle: KernelBundle) -> ast.FunctionDef:
    return _entry_node(next(f for f in bundle.functions if f.name == bundle.entry).source)


@functools.lru_cache(maxsize=None)
def pyasc_version() -> str:
    """The version of whichever distribution provides the `asc` package: pyasc, or the nightly's
    pyasc-dev."""
    from importlib.metadata import packages_distributions, version
    return version(min(packages_distributions().get("asc", ["pyasc"])))


def constexpr_params(bundle: KernelBundle) -> List[str]:
    """Names of the entry's ConstExpr parameters, read from its annotations (no execution)."""
    node = _entry(bundle)
    names = []
    for arg in node.args.args:
        ann = arg.annotation
        if isinstance(ann, ast.Subscript):
            ann = ann.value
        if (isinstance(ann, ast.Name) and ann.id == "ConstExpr") or (
                isinstance(ann, ast.Attribute) and ann.attr == "ConstExpr"):
            names.append(arg.arg)
    return names


def param_names(bundle: KernelBundle) -> List[str]:
    return [a.arg for a in _entry(bundle).args.args]


def param_annotations(bundle: KernelBundle) -> List[str]:
    """Each of the entry's parameters' annotation as the kernel spells it ("" for none)."""
    return [ast.unparse(a.annotation) if a.annotation is not None else "" for a in _entry(bundle).args.args]


def specialization(bundle: KernelBundle, args: Sequence[ArgSpec]) -> Dict[str, Any]:
    """The part of a launch that selects the compiled kernel: dtypes, scalar types, ConstExpr values."""
    names = param_names(bundle)
    if len(args) != len(names):
        raise CompileError(f"kernel '{bundle.entry}' takes {len(names)} arguments ({', '.join(names)}), "
                           f"got {len(args)}")
    constexprs = set(constexpr_params(bundle))
    spec = {}
    for name, arg in zip(names, args):
        entry = {"kind": arg.kind, "dtype": arg.dtype}
        if name in constexprs:
            if arg.kind != "scalar":
                raise CompileError(f"argument '{name}' of '{bundle.entry}' is a ConstExpr: pass a Python scalar, "
                                   f"not a {arg.kind}")
            entry["value"] = arg.value
        spec[name] = entry
    return spec


# of FrontendResult's JSON: 2 added kernel_type, 3 sites, 4 npu_arch (a cached older result lacks them)
RESULT_FORMAT = 4


def memo_key(bundle: KernelBundle, args: Sequence[ArgSpec], options: Dict[str, Any], soc: str | None = None) -> str:
    """Cache key of a frontend run: same bundle, specialization, options, SOC and pyasc -> same
    result (the SOC's arch changes the generated code)."""
    payload = {"bundle": bundle.digest, "spec": specialization(bundle, args), "options": options,
               "soc": soc or DEFAULT_SOC, "pyasc": pyasc_version(), "result": RESULT_FORMAT}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Strings that reach the Ascend C

# pyasc's translation writes a printf format between double quotes as it is, so the string a
# kernel passes is the body of a C string literal (pyasc's docs write both asc.printf("x=%u\\n")
# and asc.printf("x=%u\n")). Both print a newline: a control character the kernel's string holds
# is written as its C escape; every backslash must begin a C escape; no bare quote, no NUL (it
# would end the format), no trigraph (whether a compiler reads those depends on its -std).
_SIMPLE_ESCAPES = "ntrabfv\\\"'?01234567"
_TRIGRAPH_ENDS = "=/'()!<>-"
_HEX_DIGITS = "0123456789abcdefABCDEF"
_CONTROL_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
                    "\r": "\\r"}


class StringRefused(Exception):
    """A string a kernel passes would not reach the C++ as the kernel wrote it."""


def literal_body(call: str, text: str) -> str:
    """`text` as the body of one C string literal (control characters escaped); StringRefused if
    it cannot be one."""
    def refuse(i: int, why: str) -> StringRefused:
        return StringRefused(f"{call}: {why} (character {i} of {text[:200]!r})")

    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            escape = text[i + 1:i + 2]
            if escape == "":
                raise refuse(i, "a '\\' at the end would escape the closing quote: write \\\\ for a backslash")
            if escape == "x" and text[i + 2:i + 3] and text[i + 2] in _HEX_DIGITS:
                out.append(text[i:i + 3])
                i += 3
                continue
            if escape not in _SIMPLE_ESCAPES:
                raise refuse(i, f"{c + escape!r} is not a C escape (\\n \\t \\r \\a \\b \\f \\v \\\\ \\\" \\' \\? "
                                "\\0-\\7 \\xHH): write \\\\ for a backslash")
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == '"':
            raise refuse(i, "a bare '\"' would end the C++ string literal: write \\\" for a quote")
        if c == "\0":
            raise refuse(i, "a NUL would end the format")
        if ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(_CONTROL_ESCAPES.get(c) or f"\\{ord(c):03o}")
            i += 1
            continue
        if text.startswith("??", i) and text[i + 2:i + 3] and text[i + 2] in _TRIGRAPH_ENDS:
            raise refuse(i, f"'??{text[i + 2]}' is a trigraph: write '?\\?{text[i + 2]}'")
        out.append(c)
        i += 1
    return "".join(out)


# pyasc 1.1.1's translation writes a printf format between the quotes as it is; the nightly's
# escapes it (a backslash becomes \\, a quote \"): the format the guard gives it is the literal's
# body for the first, the text itself for the second. Which one is installed is seen once, on a
# probe of ours whose format (a backslash, an n, a quote) each translation writes its own way; a
# translation that writes it any other way (escaping one but not the other) gets no printf at all.
_PRINTF_PROBE = KernelBundle(entry="ascrun_printf_probe", constants=(), modules=(("asc", "asc"),), functions=(
    KernelFunction("ascrun_printf_probe", '@asc.jit\ndef ascrun_printf_probe(x: asc.GlobalAddress):\n'
                   "    asc.printf('\\\\n\"')\n", "<ascrun printf probe>", 1),))
_PRINTF_TRANSLATIONS = {'printf("\\n"")': "verbatim", 'printf("\\\\n\\"")': "escaping"}
_printf_translation: str | None = None  # None: not probed yet; then "probing", one of the above, or "unknown"


def _probe_printf_translation() -> None:
    global _printf_translation
    if _printf_translation is None:
        _printf_translation = "probing"  # the probe's format goes to the translation as it is
        source = run(_PRINTF_PROBE, [ArgSpec("tensor", "float32")]).source
        _printf_translation = next((how for written, how in _PRINTF_TRANSLATIONS.items() if written in source),
                                   "unknown")


def printf_format(text: str) -> str:
    """A printf format as the installed pyasc's translation takes it (above); StringRefused for
    what no C literal keeps (a NUL, a trigraph), and for all where the translation is not known."""
    if _printf_translation == "probing":
        return text
    if _printf_translation == "verbatim":
        return literal_body("asc.printf", text)
    if _printf_translation != "escaping":
        raise StringRefused("asc.printf: the installed pyasc writes a printf format into the C++ in a way ascrun "
                            "does not know, so it cannot keep a format inside its quotes: printf is refused")
    for i, c in enumerate(text):
        if c == "\0":
            raise StringRefused(f"asc.printf: a NUL would end the format (character {i} of {text[:200]!r})")
        if text.startswith("??", i) and text[i + 2:i + 3] and text[i + 2] in _TRIGRAPH_ENDS:
            raise StringRefused(f"asc.printf: '??{text[i + 2]}' is a trigraph, which a C++ compiler may read as "
                                f"another character (character {i} of {text[:200]!r})")
    return text


def _refuse_call(call: str, why: str) -> Callable[[str], str]:
    def refuse(_: str) -> str:
        raise StringRefused(f"{call}: {why}")
    return refuse


# The IR builder's methods that put a string the kernel chose into the C++, and what each
# string becomes (or the refusal). Applied where the string enters the IR, whatever Python
# computed it from (a literal, a ConstExpr[str], printf's %s arguments, a constant).
_STRING_GUARDS: Dict[str, Callable[[str], str]] = {
    "create_asc_PrintfOp": printf_format,
    "create_emitasc_VerbatimOp": _refuse_call("asc.inline", "C++ written into the kernel verbatim is not accepted"),
    "create_emitc_VerbatimOp": _refuse_call("asc.inline", "C++ written into the kernel verbatim is not accepted"),
    "create_emitc_IncludeOp": _refuse_call("an #include", "kernels may not include files"),
    "create_asc_LocalTensorToFileOp": _refuse_call("LocalTensor.to_file", "kernels may not write files"),
    # asctile's (the nightly's): inline pastes its text as a statement, inline_vf as a __VEC_SCOPE__ body
    "create_asctile_InlineOp": _refuse_call("asctile.inline", "C++ written into the kernel verbatim is not accepted"),
    "create_asctile_InlineVFOp": _refuse_call("asctile.inline_vf",
                                              "C++ written into the kernel verbatim is not accepted"),
}


def _guarded(method: Callable, guard: Callable[[str], str]) -> Callable:
    @functools.wraps(method)
    def guarded(builder: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(guard(a) if isinstance(a, str) else a for a in args)
        kwargs = {k: guard(v) if isinstance(v, str) else v for k, v in kwargs.items()}
        return method(builder, *args, **kwargs)
    return guarded


# The builder's other methods that take a string, each reviewed: what reaches the C++ through them is
# a name pyasc checks or makes (an op, a struct member, a function, a type, an attribute, a location)
# or, asctile's device_assert message, a literal pyasc escapes (tests/test_asctile.py); the source
# guard checks the C++ behind them all.
_REVIEWED_STRING_METHODS = frozenset({
    "create", "create_emitasc_MemberOp", "create_emitasc_SetMemberOp", "create_func_CallOp", "create_func_FuncOp",
    "get_emitasc_PyStructType", "get_opaque_attr", "get_opaque_type", "get_str_attr", "set_loc",
    "create_asctile_AssertOp"})
# a string parameter, defaulted, optional or a list of them ("code: str", "msg: Optional[str] = None")
_TEXT_PARAMETER = re.compile(r": (?:Optional\[)?(?:str|llvm::StringRef|std::string|List\[str\])(?![\w:])")


def _takes_text(method: Any) -> bool:
    """Whether a pybind11 method takes a string, by the signatures its docstring gives."""
    return _TEXT_PARAMETER.search(getattr(method, "__doc__", None) or "") is not None


def _guard_builder(builder_class: type) -> None:
    """Guard every method of `builder_class` that takes a string: as _STRING_GUARDS says, else, if it
    is not among the reviewed, by refusing its strings. Fails closed: an op a newer pyasc adds or
    renames, which could carry the kernel's text into the C++, is refused until it is reviewed."""
    for name in dir(builder_class):
        method = getattr(builder_class, name)
        guard = _STRING_GUARDS.get(name)
        if guard is None and not name.startswith("_") and name not in _REVIEWED_STRING_METHODS \
                and _takes_text(method):
            guard = _refuse_call(f"pyasc's IR operation {name}", "it takes text for the C++ that ascrun has not "
                                 "reviewed")
        if guard is not None:
            setattr(builder_class, name, _guarded(method, guard))


@functools.lru_cache(maxsize=None)
def _guard_ir_builder() -> None:
    """Wrap the builder's string-taking methods, and mark the kernel's statements, once per process."""
    from asc._C import ir as asc_ir
    _mark_statements(asc_ir.Builder.create_emitasc_VerbatimOp)
    _guard_builder(asc_ir.Builder)


# ---------------------------------------------------------------------------------------------
# The kernel's Python lines in the C++

# Before each statement's C++, the generated code names the statement: `ascrun::at(N);`, the N-th
# (from 1) of the FrontendResult's sites ("file:line", runtime core/site.h). The runtime's faults
# and warnings, and the build's errors (python_line), write a site as the token "py#N", which
# name_sites makes "file:line": the C++ (hence the artifact) does not depend on where the author
# keeps the kernel nor on the lines around it, as the IR hash does not.
SITE_MARKER = re.compile(r"^[ \t]*ascrun::at\(([0-9]{1,9})\);$")
_SITE_MARKER_LINE = re.compile(r"^[ \t]*ascrun::at\([0-9]{1,9}\);\n", re.M)
_SITE_TOKEN = re.compile(r"\bpy#([0-9]{1,9})\b")
_sites: List[str] | None = None  # the sites of the run in progress (under _PYASC_LOCK)


def _statement_site(location: Any, node: ast.stmt) -> Tuple[str, int]:
    """The author's file and line of `node`, a statement of the function pyasc visits at `location`
    (gate.define names each function's source after the author's file, with its line numbers)."""
    named = re.fullmatch(r"<ascrun:[0-9a-f]{12}:[A-Za-z_][A-Za-z0-9_]*:(.*)>", location.filename, re.S)
    return (named.group(1) if named else location.filename), location.line_offset + node.lineno


def _mark_statements(create_verbatim: Callable) -> None:
    """pyasc's codegen, wrapped: in a frontend run, a site marker before each statement of a kernel
    function."""
    from asc.codegen import function_visitor
    from asc.language.core.utils import global_builder

    visit = function_visitor.FunctionVisitor.visit

    @functools.wraps(visit)
    def visit_marking(self: Any, node: Any) -> Any:
        # a statement pyasc made itself (`m += 1` becomes an assignment without a line) is part of
        # the one the kernel wrote, marked already
        if (_sites is not None and isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef)
                and hasattr(node, "lineno") and self.state.inside_function and not self.state.discard_everything):
            file, line = _statement_site(self.location, node)
            site = f"{file}:{line}"
            if site not in _sites:
                _sites.append(site)
            create_verbatim(global_builder.get_ir_builder(), f"ascrun::at({_sites.index(site) + 1})", None)
        return visit(self, node)

    function_visitor.FunctionVisitor.visit = visit_marking


def site_tokens(source: str) -> List[str | None]:
    """For each line of `source` (lines end at "\n" alone, as the C++ compiler's do), the site token
    ("py#N", name_sites) of the kernel's statement whose C++ holds it: the last site marker at or
    above it; None before the first."""
    tokens, token = [], None
    for text in source.split("\n"):
        marker = SITE_MARKER.match(text)
        if marker:
            token = f"py#{marker.group(1)}"
        tokens.append(token)
    return tokens


def name_sites(text: str, sites: Sequence[str]) -> str:
    """`text` with each site token "py#N" written as the N-th of `sites` ("file:line")."""
    def named(token: re.Match) -> str:
        n = int(token.group(1))
        return sites[n - 1] if 0 < n <= len(sites) else token.group(0)
    return _SITE_TOKEN.sub(named, text)


def without_sites(source: str) -> str:
    """The generated C++ without its site markers (for a compiler with no ascrun runtime: bisheng)."""
    return _SITE_MARKER_LINE.sub("", source)


def ir_hash(module: Any) -> str:
    """sha256 of the module printed by MLIR after its strip-debuginfo pass (it mutates the module:
    call once the translation is done)."""
    from asc._C import passes
    pm = passes.PassManager(module.get_context())
    passes.common.add_strip_debug_info(pm)
    pm.run(module)
    return hashlib.sha256(str(module).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Running pyasc

# pyasc keeps its IR builder and its SOC in module-level state: one compile at a time per process.
_PYASC_LOCK = threading.Lock()


def known_socs() -> List[str]:
    """The SOCs the installed pyasc compiles for (its Platform enum)."""
    from asc.runtime.config import Platform
    return [p.value for p in Platform]


def _platform(soc: str | None) -> Any:
    """pyasc's Platform named `soc` (DEFAULT_SOC for none); bad_request if the installed pyasc has none."""
    from asc.runtime.config import Platform
    if (soc or DEFAULT_SOC) not in known_socs():
        raise KernelError(f"unknown SOC {soc!r}: pyasc {pyasc_version()} compiles for {', '.join(known_socs())}",
                          kind="bad_request")
    return Platform(soc or DEFAULT_SOC)


@contextlib.contextmanager
def _soc_version(platform: Any) -> Iterator[None]:
    """pyasc's SOC (what its codegen and Compiler read) set to `platform` meanwhile, then back."""
    from asc.lib import runtime as rt
    before = rt.get_soc_version()
    rt.set_soc_version(platform)
    try:
        yield
    finally:
        rt.set_soc_version(before)


@contextlib.contextmanager
def _executables_found() -> Iterator[None]:
    """pyasc's Compiler constructor looks for bisheng and ld.lld, which this half never runs:
    "true" stands for both meanwhile."""
    saved = {name: os.environ.get(name) for name in ("PYASC_COMPILER", "PYASC_LINKER")}
    os.environ.update(dict.fromkeys(saved, "true"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@functools.lru_cache(maxsize=None)
def _source_compiler(compiler: type) -> type:
    """pyasc's Compiler class `compiler` (the kernel's JITFunction names it) stopped where it would
    call bisheng: its `run` answers (Ascend C source, kernel argument attributes). Everything
    before, hooks included, is the installed pyasc's own."""
    class SourceCompiler(compiler):
        def __init__(self, options: Any) -> None:
            with _executables_found():
                super().__init__(options)

        def run_compilation(self, source: str, kernel_args: Any = None, **_: Any) -> Tuple[str, Any]:
            return source, kernel_args

        def _gen_init_dump_code(self, source: str, func_name: str) -> str:
            return source  # the dump buffer is a device's: the cpu runner's printf needs none

    return SourceCompiler


def _mock_arg(asc_jit, dtype_cls, namespace: Dict[str, Any], defs: structs.Definitions, arg: ArgSpec,
              constexpr: bool) -> Any:
    """What pyasc's codegen gets for one argument. A ConstExpr's value is a plain Python value, as
    pyasc's own launch would pass it: a numpy scalar's attributes would reach ctypes."""
    if arg.kind == "tensor":
        return asc_jit.MockTensor(dtype_cls(arg.dtype))
    if arg.kind == "struct":  # pyasc specializes on the class; the instance makes it recognise one
        structs.check_value(defs, arg.dtype, arg.value)
        return structs.instance(namespace[arg.dtype], defs, arg.value)
    if arg.dtype in SCALAR_TYPES:
        return {"int": int, "float": float, "bool": bool}[arg.dtype](arg.value)
    if arg.dtype == "tuple":  # a shape
        return tuple(int(v) for v in arg.value)
    if arg.dtype == "dtype":
        return dtype_cls(arg.value)
    if arg.dtype == "function":  # of a kernel language, loaded already: nothing is imported for it
        module_name, _, name = arg.value.partition(":")
        function = getattr(sys.modules.get(module_name), name, None)
        if not LANGUAGE_FUNCTION.fullmatch(arg.value) or not callable(function) or reach_refusal(function):
            raise KernelError(f"{arg.value} is not a function of asc's or asctile's kernel language here",
                              kind="bad_request")
        return function
    import numpy as np
    value = np.dtype(arg.dtype).type(arg.value)
    return value.item() if constexpr else value


MAX_DIAGNOSTIC_BYTES = 1 << 20
MAX_DIAGNOSTIC_LINE = 2000
MAX_DIAGNOSTICS = 10
_DEFINED_AS = re.compile(r"<ascrun:[0-9a-f]{12}:[A-Za-z_][A-Za-z0-9_]*:(.*?)>:(\d+:\d+): ")  # gate.define's names


@contextlib.contextmanager
def _native_stderr() -> Iterator[Callable[[], str]]:
    """What native code (MLIR's diagnostics) writes to fd 2 meanwhile, readable by the function
    yielded; afterwards it goes on to the process's stderr as before."""
    sys.stderr.flush()
    sink = os.memfd_create("pyasc-diagnostics")
    saved = os.dup(2)
    os.dup2(sink, 2)
    try:
        yield lambda: os.pread(sink, MAX_DIAGNOSTIC_BYTES, 0).decode(errors="replace")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        try:
            os.write(2, os.pread(sink, MAX_DIAGNOSTIC_BYTES, 0))
        except OSError:
            pass  # no stderr to pass it on to
        os.close(sink)


def diagnostics(text: str) -> List[str]:
    """MLIR's error lines, located in the author's file (gate.define registers each function
    under a name of its own, with the author's line numbers), without the IR dumps of its notes."""
    found = []
    for line in text.splitlines():
        if ": error: " in line and len(found) < MAX_DIAGNOSTICS:
            line = _DEFINED_AS.sub(lambda m: f"{m.group(1)}:{m.group(2)}: ", line)
            found.append(line if len(line) <= MAX_DIAGNOSTIC_LINE else line[:MAX_DIAGNOSTIC_LINE] + " ...")
    return found


def _compile_error(exc: BaseException, bundle: KernelBundle, fn_name: str | None, kernel: Any) -> KernelError:
    """pyasc's message, plus where in the author's file it points."""
    cause = exc
    while cause is not None:
        if isinstance(cause, MemoryError):
            return KernelError(f"compiling '{bundle.entry}' ran out of memory: the kernel builds more at compile "
                               "time than this host allows", kind="limit")
        if isinstance(cause, StringRefused):
            break
        cause = cause.__cause__ or cause.__context__
    message = str(cause if isinstance(cause, StringRefused) else exc) or exc.__class__.__name__
    node = getattr(exc, "node", None)
    location = ""
    if node is not None and hasattr(node, "lineno"):
        fn = next((f for f in bundle.functions if f.name == fn_name), None)
        src_lines = getattr(exc, "src", None)
        if fn is None and src_lines:
            # Errors in a callee carry the callee's own source: find which function it is.
            first = next((ln for ln in src_lines if ln.strip().startswith("def ")), "")
            fn = next((f for f in bundle.functions if f"def {f.name}(" in first), None)
        if fn is not None:
            # pyasc 1.1.1 numbers lines from the `def` line, the nightly from the first decorator:
            # where its parse of the kernel put the kernel's `def` says which.
            def_offset = 0 if kernel.node.lineno > 1 else next(
                i for i, ln in enumerate(fn.source.splitlines()) if ln.lstrip().startswith("def "))
            line = fn.lineno + def_offset + node.lineno - 1
            location = f"in kernel '{fn.name}' at {fn.filename}:{line}: "
            excerpt = _excerpt(fn, line, getattr(node, "col_offset", None))
            reason = getattr(exc, "error_message", None)
            if excerpt and reason and not isinstance(cause, StringRefused):
                # pyasc's own excerpt numbers 1.1.1's lines from the `def` in a source that starts at the
                # decorator, so its caret sat a line above the failing one: the file's lines, numbered
                message = (reason if len(reason) <= MAX_MESSAGE_CHARS else
                           f"{reason[:MAX_MESSAGE_CHARS]}... (cut: the message has {len(reason)} characters)") + excerpt
    return CompileError(f"pyasc could not compile the kernel: {location}{message}")


def _free_codegen_frames(exc: BaseException) -> None:
    """Frees the locals of the frames a failed codegen left in `exc` (and the exceptions it chains)
    now, while pyasc's module and context live. pyasc builds an `if` or loop body in a block of its
    own (ir.Block() in compute_inout) that Python owns until it is merged: a failure inside it left
    that block in the error's frames, and the garbage collector could free it after pyasc's context,
    crashing the process in mlir::Operation's destructor (both pyasc versions; pytest runs did)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__


EXCERPT_CONTEXT = 3  # lines before and after the failing one, as pyasc shows


def _excerpt(fn: Any, line: int, column: int | None) -> str:
    """The kernel's lines around file line `line` as a compiler shows them (numbered, a caret under
    `column` of the function's dedented source), or "" if `line` is not in the function."""
    lines = fn.source.splitlines()
    at = line - fn.lineno
    if column is None or not 0 <= at < len(lines):
        return ""
    indent = next((len(ln) - len(ln.lstrip()) for ln in lines if ln.lstrip().startswith("def ")), 0)
    first = max(at - EXCERPT_CONTEXT, next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("def ")), 0))
    width = len(str(fn.lineno + min(at + EXCERPT_CONTEXT, len(lines) - 1))) + 4
    shown = []
    for i in range(first, min(at + EXCERPT_CONTEXT + 1, len(lines))):
        shown.append(f"{fn.lineno + i:>{width}} | {lines[i]}".rstrip())
        if i == at:
            shown.append(f"{'':>{width}} | {' ' * (indent + column)}^")
    return "\n" + "\n".join(shown)


def _compile_options_class(compiler: type) -> type:
    """The options dataclass `compiler` takes (the nightly's Compiler names it; 1.1.1's is CompileOptions)."""
    from asc.runtime.compiler import CompileOptions
    return getattr(compiler, "options_cls", CompileOptions)


def _has_bfloat16() -> bool:
    """pyasc 1.1.1 has no bfloat16 DataType (its IR builder none either); the nightly has."""
    from asc.language.core import dtype
    return hasattr(dtype.KnownTypes, "bfloat16")


def _import_kernel_module(name: str) -> Any:
    """A module a bundle names (the gate allowed it); asctile's, on a pyasc without it, a clear refusal."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        if name != ASCTILE_MODULE:
            raise
        raise BundleRejected(f"the kernel uses {ASCTILE_MODULE} (asctile), which the installed pyasc "
                             f"{pyasc_version()} does not have: asctile comes with pyasc's nightly (pyasc-dev)"
                             ) from None


def run(bundle: KernelBundle, args: Sequence[ArgSpec], options: Dict[str, Any] | None = None,
        soc: str | None = None) -> FrontendResult:
    """Run pyasc's codegen and its Compiler up to the Ascend C for one specialization, for `soc`
    (DEFAULT_SOC for none)."""
    import asc.runtime.jit as asc_jit
    from asc.codegen.function_visitor import CodegenOptions
    from asc.codegen.specialization import Specialization
    from asc.common.compat import get_annotations, merge_dict
    from asc.language.core.dtype import DataType

    _guard_ir_builder()
    _probe_printf_translation()
    platform = _platform(soc)
    namespace = define(bundle, _import_kernel_module)
    kernel = namespace[bundle.entry]
    if not isinstance(kernel, asc_jit.JITFunction):
        raise BundleRejected(f"'{bundle.entry}' is not an @asc.jit function")
    spec_args = specialization(bundle, args)  # checks the argument count
    defs = dict(bundle.structs)
    for name, arg in zip(param_names(bundle), args):
        if arg.kind == "struct":
            if arg.dtype not in defs:
                raise KernelError(f"argument '{name}' is a struct {arg.dtype}, which the kernel bundle does not "
                                  "define", kind="bad_request")
            structs.check_layout(defs, arg.dtype)
        if arg.kind == "tensor" and arg.dtype == "bfloat16" and not _has_bfloat16():
            raise KernelError(f"tensor '{name}' is bfloat16, which the installed pyasc {pyasc_version()} has no dtype "
                              "for: bfloat16 tensors need pyasc's nightly (pyasc-dev)", kind="bad_request")
    constexpr_names = set(constexpr_params(bundle))
    try:
        values = [_mock_arg(asc_jit, DataType, namespace, defs, a, name in constexpr_names)
                  for name, a in zip(param_names(bundle), args)]
    except (TypeError, ValueError) as e:
        raise CompileError(f"unsupported argument type for '{bundle.entry}': {e}") from None
    try:
        kwargs = merge_dict(kernel.default_options, dict(options or {}))
        codegen_options = kernel.extract_kwargs(CodegenOptions, kwargs)
        compiler = _source_compiler(kernel.compiler)
        compile_options = kernel.extract_kwargs(_compile_options_class(compiler), kwargs)
        if kwargs:
            raise CompileError(f"unknown compile options: {', '.join(sorted(kwargs))}")
        call_args = inspect.signature(kernel.fn).bind(*values).arguments
        runtime_args, constexprs = kernel.split_args(call_args, get_annotations(kernel.fn))
        arg_types = {name: kernel.get_arg_type(v) for name, v in runtime_args.items()}
    except CompileError:
        raise
    except Exception as e:  # pyasc's own argument checks (ConstExpr types, dtypes)
        raise _compile_error(e, bundle, bundle.entry, kernel) from None

    global _sites
    with _PYASC_LOCK, _soc_version(platform):
        _sites = sites = []
        try:
            module = kernel._run_codegen(Specialization(arg_types, constexprs), codegen_options)
        except Exception as e:
            error = _compile_error(e, bundle, None, kernel)
            _free_codegen_frames(e)
            raise error from None
        finally:
            _sites = None
        with _native_stderr() as printed:
            try:
                compiling = compiler(compile_options)  # checks the options against the SOC
                source, kernel_arg_attrs = compiling.run(module, kernel.fn.__name__)
                ir_text = str(module)  # after the passes and the hooks (the SOC's arch is an attribute)
                kernel_args = tuple(re.sub(r"(?<!^)(?=[A-Z])", "_", a.name).lower() for a in kernel_arg_attrs)
                stripped_hash = ir_hash(module)
                kernel_type = compiling.options.kernel_type.name  # what pyasc chose, or the option
            except Exception as e:
                # 1.1.1's MLIR prints its diagnostics (fd 2); the nightly's puts them in its message,
                # after a first line: both are cut to their error lines
                message, more = str(e), ""
                first, _, rest = message.partition("\n")
                if diagnostics(rest):
                    message, more = first.rstrip(":"), rest
                said = "".join(f"\n{line}" for line in diagnostics(more + "\n" + printed()))
                raise CompileError(f"pyasc's pass pipeline failed for '{bundle.entry}': {message}{said}") from None

    params = tuple(_param(name, spec_args[name], defs) for name in runtime_args)
    return FrontendResult(kernel_name=kernel.fn.__name__, ir=ir_text, source=source, ir_hash=stripped_hash,
                          params=params, kernel_args=kernel_args, kernel_type=kernel_type, sites=tuple(sites),
                          npu_arch=socs.npu_arch(platform.value))

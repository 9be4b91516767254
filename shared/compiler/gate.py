"""The gate: a KernelBundle checked with `ast` before anything in it executes, then defined.

Only decorated function definitions, literal constants, references to the `asc` package and Struct
definitions (structs.py: data, rebuilt with pyasc's own classes) pass. The gate is a second line:
the frontend runs in a jail (sandbox/frontend.py) whatever passes it.
"""
from __future__ import annotations

import ast
import builtins
import enum
import functools
import linecache
import types
import typing
from typing import Any, Callable, Dict, Iterable, Mapping, Tuple

from . import structs as struct_defs
from .bundle import (ALLOWED_MODULE, ASCTILE_BUILTINS, ASCTILE_LANGUAGE, ASCTILE_MODULE, CONFIG_MODULE, KERNEL_BUILTINS,
                     LANGUAGE_MODULE, TYPING_FORMS, KernelBundle, KernelFunction, free_names, is_allowed_module,
                     is_literal_constant)
from .errors import BundleRejected

# str.format and format_map read attributes and items named in their text ("{0.__globals__}"),
# out of the validator's sight; f-strings and % formatting are parsed or read no attributes.
FORBIDDEN_ATTRIBUTES = ("format", "format_map")
# What a bundle's metadata may cost: define() pads each source to its line number.
MAX_LINENO = 1_000_000
MAX_DEFINED_LINES = 2_000_000  # all functions, padded
# What checking a bundle may cost, bounded far below what max_bundle_bytes lets through (the gate's
# parse costs about 5 us a node, its other passes about 20): the largest kernels of the tests and
# pyasc's tutorials have ~3 300 nodes, 255 statements and 12 levels. Sources are measured before they
# are parsed, trees in one pass before any other.
MAX_SOURCE_CHARS = 100_000  # all functions
MAX_NODES = 20_000  # all functions' syntax trees
MAX_STATEMENTS = 2_000  # all functions
MAX_DEPTH = 100  # a syntax tree's nesting (an elif is as deep as its if)
MAX_FILENAME_CHARS = 4096
# A kernel's name is a C++ function's: these Python identifiers are C++ keywords (and the
# alternative tokens), which would only make the build fail.
CPP_KEYWORDS = frozenset("""alignas alignof and_eq asm auto bitand bitor bool catch char char8_t char16_t char32_t
    compl concept const consteval constexpr constinit const_cast co_await co_return co_yield decltype default delete
    do double dynamic_cast enum explicit export extern float friend goto inline int long mutable namespace new
    noexcept not_eq nullptr operator or_eq private protected public register reinterpret_cast requires short signed
    sizeof static static_assert static_cast struct switch template this thread_local throw typedef typeid typename
    union unsigned using virtual void volatile wchar_t xor xor_eq""".split())


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return False


def _is_type_expression(node: ast.AST) -> bool:
    """Annotations such as `int`, `asc.GlobalAddress`, `asc.ConstExpr[int]`."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _is_type_expression(node.value)
    if isinstance(node, ast.Subscript):
        return _is_type_expression(node.value) and (
            _is_type_expression(node.slice) or _is_literal(node.slice)
            or (isinstance(node.slice, ast.Tuple) and all(_is_type_expression(e) or _is_literal(e)
                                                          for e in node.slice.elts)))
    return _is_literal(node)


# What a kernel's @asc.jit / @asctile.jit may set: the job's CompileOptions (server/models.py, the
# closed set) and the kernel type; not bisheng_options (the pool's compiler flags are the operator's),
# auto_sync_log (a file path) nor the debugging switches pyasc has beside them.
JIT_OPTIONS = frozenset({"kernel_type", "debug", "strip_loc", "verify_sync", "run_passes", "opt_level", "auto_sync",
                         "insert_sync", "matmul_cube_only", "capture_exceptions", "ir_multithreading", "cv_ratio",
                         "static_alloc", "reuse_alloc", "vf_fusion"})


def _is_jit_decorator(node: ast.AST, asc_names: Iterable[str], module_names: Iterable[str]) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if not (isinstance(target, ast.Attribute) and target.attr == "jit" and isinstance(target.value, ast.Name)
            and target.value.id in asc_names):
        return False
    if isinstance(node, ast.Call):
        return not node.args and all(kw.arg is not None and (_is_literal(kw.value) or _is_module_constant(
            kw.value, module_names)) for kw in node.keywords)
    return True


def _is_module_constant(node: ast.AST, module_names: Iterable[str]) -> bool:
    """An option such as `config.KernelType.AIV_ONLY`: an attribute of one of the bundle's asc
    modules (_check_reach keeps the chain inside asc)."""
    chain = _attribute_chain(node) if isinstance(node, ast.Attribute) else None
    return chain is not None and chain[0] in module_names


def validate(bundle: KernelBundle) -> None:
    """Refuse anything but decorated kernel definitions and literal constants."""
    _validate_digest(bundle.digest, bundle)


@functools.lru_cache(maxsize=1024)
def _validate_digest(digest: str, bundle: KernelBundle) -> None:
    """validate() once per distinct bundle (a raise is not cached, so refusals are re-checked)."""
    for fn in bundle.functions:
        _validate_metadata(fn)
    chars = sum(len(fn.source) for fn in bundle.functions)
    if chars > MAX_SOURCE_CHARS:
        raise BundleRejected(f"the bundle's sources have {chars} characters, more than {MAX_SOURCE_CHARS} "
                             "(MAX_SOURCE_CHARS)")
    lines = sum(fn.lineno + fn.source.count("\n") for fn in bundle.functions)
    if lines > MAX_DEFINED_LINES:
        raise BundleRejected(f"the bundle's functions reach {lines} lines in all, counted from each one's lineno, "
                             f"more than {MAX_DEFINED_LINES}")
    _check_size(bundle)
    names = [f.name for f in bundle.functions]
    if len(set(names)) != len(names):
        raise BundleRejected("bundle defines a function twice")
    if bundle.entry not in names:
        raise BundleRejected(f"bundle has no function named '{bundle.entry}' (its entry)")
    asc_names = [alias for alias, module in bundle.modules if module in (ALLOWED_MODULE, ASCTILE_MODULE)]
    for alias, module in bundle.modules:
        if not alias.isidentifier() or not is_allowed_module(module):
            raise BundleRejected(f"bundle imports module {module!r} as {alias!r}: only {ALLOWED_MODULE}, its kernel "
                                 f"language ({LANGUAGE_MODULE}.*), {CONFIG_MODULE} and {ASCTILE_MODULE} are allowed")
    for name, literal in bundle.constants:
        if not name.isidentifier():
            raise BundleRejected(f"constant name {name!r} is not an identifier")
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise BundleRejected(f"constant '{name}' is not a literal: {literal[:80]!r}") from None
        if not is_literal_constant(value):
            raise BundleRejected(f"constant '{name}' is a {type(value).__name__}: only int, float, bool, str, "
                                 "None and tuples of these are allowed")
    for alias, form in bundle.annotations:
        if not alias.isidentifier() or form not in TYPING_FORMS:
            raise BundleRejected(f"bundle names {form!r} as {alias!r} for its annotations: only typing's "
                                 f"{', '.join(TYPING_FORMS)} are allowed")
    struct_defs.validate(dict(bundle.structs))
    globals_ = ([n for n, _ in bundle.constants] + [n for n, _ in bundle.modules] + [n for n, _ in bundle.structs]
                + [n for n, _ in bundle.annotations])
    clash = sorted(set(names) & set(globals_) | {n for n in globals_ if globals_.count(n) > 1})
    if clash:
        raise BundleRejected(f"name(s) {clash} are defined twice in the bundle")
    for fn in bundle.functions:
        _validate_function(fn, asc_names, [alias for alias, _ in bundle.modules], [a for a, _ in bundle.annotations])
    _validate_names_and_calls(bundle)


@functools.lru_cache(maxsize=16)
def _parse(fn: KernelFunction) -> ast.Module:
    """The function's syntax tree, parsed once for the gate's passes (BundleRejected if it does not parse)."""
    try:
        return ast.parse(fn.source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise _rejection(fn, getattr(e, "lineno", 1) or 1,
                         f"source does not parse: {e.__class__.__name__}: {e}") from None


def _rejection(fn: KernelFunction, line: int, why: str) -> BundleRejected:
    return BundleRejected(f"kernel '{fn.name}' ({fn.filename}:{fn.lineno + line - 1}): {why}")


def _check_size(bundle: KernelBundle) -> None:
    """The bundle's trees within MAX_NODES, MAX_STATEMENTS and MAX_DEPTH: one pass, which stops at
    the first bound passed, before the gate's other passes (whose cost grows with the trees)."""
    nodes = statements = 0
    for fn in bundle.functions:
        todo = [(_parse(fn), 0, 1)]
        while todo:
            node, depth, line = todo.pop()
            nodes += 1
            statements += isinstance(node, ast.stmt)
            if nodes > MAX_NODES:
                raise BundleRejected(f"the bundle's functions have more than {MAX_NODES} syntax nodes (MAX_NODES)")
            if statements > MAX_STATEMENTS:
                raise BundleRejected(f"the bundle's functions have more than {MAX_STATEMENTS} statements "
                                     "(MAX_STATEMENTS)")
            line = getattr(node, "lineno", line)
            if depth > MAX_DEPTH:
                raise _rejection(fn, line, f"code nested more than {MAX_DEPTH} levels deep (MAX_DEPTH)")
            elif_ = node.orelse[0] if isinstance(node, ast.If) and len(node.orelse) == 1 else None
            todo.extend((child, depth if child is elif_ and isinstance(child, ast.If) else depth + 1, line)
                        for child in ast.iter_child_nodes(node))


def _validate_metadata(fn: KernelFunction) -> None:
    """Bounds on what a function's name, file and line cost, and characters a file name may hold
    (it reaches MLIR's locations)."""
    if not 1 <= fn.lineno <= MAX_LINENO:
        raise BundleRejected(f"function {fn.name[:80]!r}: lineno {fn.lineno} is out of range (1 to {MAX_LINENO})")
    if len(fn.filename) > MAX_FILENAME_CHARS:
        raise BundleRejected(f"function {fn.name[:80]!r}: its file name has {len(fn.filename)} characters, more "
                             f"than {MAX_FILENAME_CHARS}")
    if fn.name in CPP_KEYWORDS:
        raise BundleRejected(f"function '{fn.name}': its name is a C++ keyword, rename it")
    bad = next((c for c in fn.filename if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        raise BundleRejected(f"function {fn.name[:80]!r}: its file name {fn.filename[:200]!r} holds the control "
                             f"character {bad!r}")


def _validate_names_and_calls(bundle: KernelBundle) -> None:
    """Every name a kernel reads is defined by the bundle, and no kernel calls itself (pyasc
    inlines calls, so recursion would never end)."""
    functions = {f.name for f in bundle.functions}
    asctile = any(module == ASCTILE_MODULE for _, module in bundle.modules)
    defined = (functions | {n for n, _ in bundle.constants} | {n for n, _ in bundle.modules}
               | {n for n, _ in bundle.structs} | {n for n, _ in bundle.annotations} | set(KERNEL_BUILTINS)
               | set(ASCTILE_BUILTINS if asctile else ()))
    calls: Dict[str, set] = {}
    for fn in bundle.functions:
        tree = _parse(fn).body[0]
        for name, line in free_names(tree):
            if name not in defined:
                raise BundleRejected(f"kernel '{fn.name}' ({fn.filename}:{fn.lineno + line - 1}) reads '{name}', "
                                     "which the bundle does not define")
        calls[fn.name] = {n.func.id for n in ast.walk(tree)
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in functions}
    for start in calls:
        path, todo = {start: None}, [start]
        while todo:
            caller = todo.pop()
            for callee in calls[caller]:
                if callee == start:
                    cycle = [caller]
                    while path[cycle[-1]] is not None:
                        cycle.append(path[cycle[-1]])
                    chain = " -> ".join(reversed(cycle)) + f" -> {start}"
                    raise BundleRejected(f"kernel '{start}' calls itself ({chain}): recursion is not supported")
                if callee not in path:
                    path[callee] = caller
                    todo.append(callee)


def _validate_function(fn: KernelFunction, asc_names: Iterable[str], module_names: Iterable[str],
                       typing_names: Iterable[str] = ()) -> None:
    def reject(line: int, why: str) -> BundleRejected:
        return _rejection(fn, line, why)

    module = _parse(fn)
    if len(module.body) != 1 or not isinstance(module.body[0], ast.FunctionDef):
        line = module.body[0].lineno if module.body else 1
        raise reject(line, "a bundle function must be exactly one function definition")
    node = module.body[0]
    if node.name != fn.name:
        raise reject(node.lineno, f"source defines '{node.name}', not '{fn.name}'")
    if len(node.decorator_list) != 1 or not _is_jit_decorator(node.decorator_list[0], asc_names, module_names):
        line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        raise reject(line, "must be decorated with exactly @asc.jit or @asc.jit(option=literal or asc constant, ...) "
                           "(or asctile's @asctile.jit)")
    refused = [kw.arg for kw in getattr(node.decorator_list[0], "keywords", ()) if kw.arg not in JIT_OPTIONS]
    if refused:
        raise reject(node.decorator_list[0].lineno, f"@jit option(s) {', '.join(map(repr, refused))} are not "
                                                    f"among those a kernel may set: {', '.join(sorted(JIT_OPTIONS))}")
    args = node.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
        if arg.annotation is not None and not _is_type_expression(arg.annotation):
            raise reject(arg.lineno, f"annotation of '{arg.arg}' must be a type name, attribute or subscript")
    if node.returns is not None and not _is_type_expression(node.returns):
        raise reject(node.lineno, "return annotation must be a type name, attribute or subscript")
    for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
        if not _is_literal(default):
            raise reject(default.lineno, "default values must be literals")
    annotated = {id(n) for a in [*(arg.annotation for arg in args.posonlyargs + args.args + args.kwonlyargs),
                                 node.returns] if a is not None for n in ast.walk(a)}
    plain = {arg.arg: kind for arg in args.posonlyargs + args.args + args.kwonlyargs
             if (kind := _plain_value_annotation(arg.annotation))}
    chain_heads = {id(a.value) for a in ast.walk(node) if isinstance(a, ast.Attribute)}
    typing_names = set(typing_names)
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in typing_names and id(inner) not in annotated:
            raise reject(inner.lineno, f"'{inner.id}' is a typing form: it may only be used in annotations")
        if isinstance(inner, ast.Name) and inner.id in module_names and id(inner) not in chain_heads:
            raise reject(inner.lineno, f"module '{inner.id}' may only be used as '{inner.id}.name'")
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id in plain:
            name = inner.value.id
            raise reject(inner.lineno, f"'{name}.{inner.attr}': a {plain[name]} parameter is a plain Python value in "
                                       "the kernel language, without attributes")
        if isinstance(inner, ast.Attribute) and inner.attr in FORBIDDEN_ATTRIBUTES:
            raise reject(inner.lineno, f"'.{inner.attr}' is not allowed in kernels (it reads attributes named in "
                                       "its text): use an f-string")
        if isinstance(inner, (ast.Import, ast.ImportFrom)):
            raise reject(inner.lineno, "imports are not allowed in kernels")
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and inner is not node:
            raise reject(inner.lineno, "nested functions, lambdas and classes are not allowed in kernels")
        if isinstance(inner, (ast.Global, ast.Nonlocal)):
            raise reject(inner.lineno, "global/nonlocal statements are not allowed in kernels")
        if isinstance(inner, ast.Attribute) and inner.attr.startswith("__"):
            raise reject(inner.lineno, f"dunder attribute '{inner.attr}' is not allowed in kernels")
        if isinstance(inner, ast.Name) and inner.id.startswith("__"):
            raise reject(inner.lineno, f"dunder name '{inner.id}' is not allowed in kernels")


PLAIN_VALUE_TYPES = ("int", "float", "bool", "str")


def _plain_value_annotation(annotation: ast.AST | None) -> str | None:
    """"ConstExpr" or the type name, if a parameter so annotated is a plain Python value when pyasc
    runs the kernel (a ConstExpr's value, a scalar's): the kernel language gives it no attribute."""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, ast.Name) and annotation.id in (*PLAIN_VALUE_TYPES, "ConstExpr"):
        return annotation.id
    if isinstance(annotation, ast.Attribute) and annotation.attr == "ConstExpr":
        return "ConstExpr"
    return None


def _attribute_chain(node: ast.Attribute) -> Tuple[str, ...] | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return (node.id, *reversed(names))


# pyasc's IR builder: a kernel that holds it can put any string into the IR.
IR_BUILDER = ("asc.language.core.utils", "GlobalBuilder")
JIT_DECORATORS = (("asc.runtime.jit", "jit"), (ASCTILE_MODULE + ".runtime.jit", "jit"))
# asctile's enums (TensorLocation.UB, ...) are pybind11 classes of its IR module, which is otherwise
# out of reach: known by identity, as the nightly renames them (TensorLocation.__name__ = "TensorLocation").
ASCTILE_ENUMS = ("asctile_DistribMode", "asctile_RoundMode", "asctile_TensorLocation")


@functools.lru_cache(maxsize=1)
def _asctile_enums() -> Tuple[type, ...]:
    """asctile's enum classes, as its IR module defines them (none without asctile)."""
    try:
        from asc._C import libpyasc
    except ImportError:
        return ()
    ir = getattr(getattr(libpyasc, "asctile", None), "ir", None)
    return tuple(c for c in (getattr(ir, name, None) for name in ASCTILE_ENUMS) if isinstance(c, type))

_DATA = (bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset, type(None))


def _owner(value: Any) -> str:
    """The module that defines a class or function, or else the value's class."""
    if isinstance(value, types.BuiltinFunctionType) and not isinstance(value.__self__, (types.ModuleType, type(None))):
        return _owner(value.__self__)  # a method of an object: what that object is
    if isinstance(value, types.BuiltinFunctionType):
        return getattr(value.__self__, "__name__", None) or value.__module__ or "builtins"
    if isinstance(value, (type, types.FunctionType, types.MethodType)):
        return value.__module__ or ""
    return type(value).__module__


def _in_language(module: str) -> bool:
    return any(module == package or module.startswith(package + ".") for package in (LANGUAGE_MODULE, ASCTILE_LANGUAGE))


def reach_refusal(value: Any) -> str | None:
    """Why a kernel may not hold `value`, or None: it may hold the kernel language (asc's, asctile's),
    plain data, the @asc.jit and @asctile.jit decorators, asctile's enums and the config module's
    enums (not its functions, which load runtimes; nor asctile's set_platform, runtime, profiling or
    CompileOptions)."""
    if isinstance(value, types.ModuleType):
        return None if _in_language(value.__name__) else f"the module {value.__name__}"
    if (type(value).__module__, type(value).__name__) == IR_BUILDER:
        return "pyasc's IR builder"
    owner = _owner(value)
    if _in_language(owner):
        return None
    if owner == "builtins" and isinstance(value, _DATA):
        return None
    if (owner, getattr(value, "__name__", None)) in JIT_DECORATORS:
        return None
    if (value if isinstance(value, type) else type(value)) in _asctile_enums():
        return None
    if owner == CONFIG_MODULE and (not callable(value) or isinstance(value, type) and issubclass(value, enum.Enum)):
        return None
    return f"from {owner}"


def _check_reach(fn: KernelFunction, heads: Mapping[str, Any]) -> None:
    """Every `name.a.b...` chain from a module alias or a bundle function must stay inside the
    asc package's kernel language: no module outside it, nothing defined outside asc, not the
    IR layer."""
    tree = _parse(fn)
    steps = {id(a.value) for a in ast.walk(tree) if isinstance(a, ast.Attribute)}  # chains inside longer ones
    for node in ast.walk(tree):
        chain = _attribute_chain(node) if isinstance(node, ast.Attribute) else None
        if chain is None or chain[0] not in heads:
            continue
        line = fn.lineno + node.lineno - 1
        value = heads[chain[0]]
        for depth, attr in enumerate(chain[1:], start=1):
            try:
                value = getattr(value, attr)
            except Exception:  # noqa: BLE001 - a missing or failing attribute: pyasc reports it, nothing to hold
                break
            why = reach_refusal(value)
            if why is not None:
                raise BundleRejected(f"kernel '{fn.name}' ({fn.filename}:{line}): '{'.'.join(chain[:depth + 1])}' "
                                     f"is {why}; kernels may use only asc's kernel language")
        else:
            # a module held as a value (a local, an argument) would have its attributes read unchecked
            if isinstance(value, types.ModuleType) and id(node) not in steps:
                name = ".".join(chain)
                raise BundleRejected(f"kernel '{fn.name}' ({fn.filename}:{line}): '{name}' is a module, which may "
                                     f"only be used as '{name}.name'")


def _interpreter_import(name: str, globals=None, locals=None, fromlist=(), level: int = 0) -> types.ModuleType:
    """The one import Python itself makes while a kernel's def runs: from 3.12 a subscripted
    annotation (`asc.ConstExpr[int]`) looks up `typing` through the namespace's `__import__`. A
    kernel's own imports never get here (the gate refuses import statements and dunder names)."""
    if name == "typing" and not level:
        return typing
    raise ImportError(f"a kernel may not import {name!r}")


def define(bundle: KernelBundle, import_module: Callable[[str], types.ModuleType]) -> Mapping[str, Any]:
    """Validate the bundle, then define its functions in one namespace with restricted builtins.

    Returns the namespace; `namespace[bundle.entry]` is the kernel (a pyasc JITFunction).
    `import_module` resolves the bundle's module aliases (importlib.import_module on a worker).
    """
    validate(bundle)
    safe_builtins = {name: getattr(builtins, name) for name in KERNEL_BUILTINS}
    safe_builtins["__import__"] = _interpreter_import
    namespace: Dict[str, Any] = {"__builtins__": safe_builtins, "__name__": "ascrun_bundle"}
    for alias, module in bundle.modules:
        namespace[alias] = import_module(module)
    modules = {alias: namespace[alias] for alias, _ in bundle.modules}
    for fn in bundle.functions:  # before anything executes: annotations are evaluated by the def
        _check_reach(fn, modules)
    for name, literal in bundle.constants:
        namespace[name] = ast.literal_eval(literal)
    for name, form in bundle.annotations:
        namespace[name] = getattr(typing, form)
    if bundle.structs:
        namespace.update(struct_defs.define(dict(bundle.structs), import_module))
    for fn in bundle.functions:
        # pyasc reads kernel sources with inspect.getsource: register each function under a
        # name of its own, padded so that line numbers match the author's file.
        filename = f"<ascrun:{bundle.digest[:12]}:{fn.name}:{fn.filename}>"
        text = "\n" * (fn.lineno - 1) + fn.source
        if not text.endswith("\n"):
            text += "\n"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        code = compile(text, filename, "exec", dont_inherit=True)
        exec(code, namespace)  # noqa: S102 - validated above: one decorated def, nothing else
    functions = {fn.name: namespace[fn.name] for fn in bundle.functions}
    for fn in bundle.functions:
        _check_reach(fn, functions)
    return namespace

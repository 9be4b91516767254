"""KernelBundle: the sources of a kernel's @asc.jit functions and the constants they read.

A bundle is what travels from the author's machine to a worker: plain data (JSON), collected here
from the author's functions. gate.py checks it before anything in it executes, and defines it.
"""
from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import inspect
import json
import re
import textwrap
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Mapping, Tuple

from . import structs as struct_defs
from .errors import BundleRejected

# The package a kernel may reference by module; everything else must be a literal constant.
ALLOWED_MODULE = "asc"
# pyasc's codegen calls whatever Python callable a kernel names, so a kernel may reach only the
# kernel language through `asc.`: a chain such as asc.runtime.compiler.os.system is refused.
LANGUAGE_MODULE = "asc.language"
# Modules a bundle may import under an alias: asc itself, its kernel language, and the config
# module whose enums @asc.jit options name (config.KernelType.AIV_ONLY).
CONFIG_MODULE = "asc.runtime.config"
# pyasc's tile-level front end (the nightly's, absent from pyasc 1.1.1): a kernel may import it
# (`from asc.experimental import asctile`) and reach its language (asctile.language.*), through
# which it builds IR as through asc.language; asctile.inline and inline_vf are refused where their
# text enters the IR (frontend._STRING_GUARDS).
ASCTILE_MODULE = "asc.experimental.asctile"
ASCTILE_LANGUAGE = ASCTILE_MODULE + ".language"
# a function a ConstExpr argument may be (asc2's op tests pass asctile.exp), "module:name": one of
# the kernel languages', no dunder on the way (a module's __getattr__, __class__...)
LANGUAGE_FUNCTION = re.compile(rf"(?:{re.escape(LANGUAGE_MODULE)}|{re.escape(ASCTILE_LANGUAGE)})(?:\.(?!__)\w+)*"
                               r":(?!__)[A-Za-z_]\w*")
# Builtins a kernel may name: those pyasc's codegen resolves (NameScope.builtins) but `type`,
# which with three arguments creates classes; plus bool for annotations. Defined functions see
# only these, so a bundle cannot reach open(), __import__ or exec through its namespace.
KERNEL_BUILTINS = ("bool", "dict", "float", "int", "isinstance", "issubclass", "len", "list", "range", "repr",
                   "str", "tuple")
# Builtins an asctile kernel may name besides: asctile's codegen resolves them to its own
# (asc.experimental.asctile.runtime.custom_builtins: tile-wise max/min/sum, device_print), never to
# Python's, and the bundle's namespace does not hold them.
ASCTILE_BUILTINS = ("max", "min", "print", "sum")
# typing's forms a kernel may name in its annotations, and nowhere else (pyasc accepts
# `-> Tuple[int, int]` on a helper); `from typing import Tuple` binds them, so they are globals.
TYPING_FORMS = ("Any", "Dict", "List", "Optional", "Sequence", "Tuple", "Union")


def is_allowed_module(name: str) -> bool:
    return (name in (ALLOWED_MODULE, CONFIG_MODULE, ASCTILE_MODULE) or name == LANGUAGE_MODULE
            or name.startswith(LANGUAGE_MODULE + "."))


@dataclass(frozen=True)
class KernelFunction:
    """One @asc.jit function: its source as written (decorator included) and where it was."""
    name: str
    source: str
    filename: str
    lineno: int

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "source": self.source, "filename": self.filename, "lineno": self.lineno}


@dataclass(frozen=True)
class KernelBundle:
    """The kernel `entry`, every @asc.jit function it reaches, constants (as Python literals),
    module aliases (local name -> module name inside the asc package), the Struct classes the
    kernels name or the arguments are (by class name, with the ones they nest) and the typing
    forms their annotations name (local name -> one of TYPING_FORMS)."""
    entry: str
    functions: Tuple[KernelFunction, ...]
    constants: Tuple[Tuple[str, str], ...]
    modules: Tuple[Tuple[str, str], ...]
    structs: Tuple[Tuple[str, struct_defs.StructDef], ...] = ()
    annotations: Tuple[Tuple[str, str], ...] = ()

    def to_json(self) -> Dict[str, Any]:
        data = {
            "entry": self.entry,
            "functions": [f.to_json() for f in self.functions],
            "constants": dict(self.constants),
            "modules": dict(self.modules),
        }
        if self.structs:  # absent otherwise: a bundle without structs keeps its digest and older servers' schema
            data["structs"] = {name: d.to_json() for name, d in self.structs}
        if self.annotations:  # likewise
            data["annotations"] = dict(self.annotations)
        return data

    def with_structs(self, defs: Mapping[str, struct_defs.StructDef]) -> "KernelBundle":
        """This bundle with the definitions of the Struct classes of the launch's arguments too."""
        merged = dict(self.structs)
        for name, d in defs.items():
            if merged.setdefault(name, d) != d:
                raise BundleRejected(f"two different Struct classes are named '{name}': the kernel's C++ declares "
                                     "structs by class name, rename one")
        return KernelBundle(self.entry, self.functions, self.constants, self.modules, tuple(sorted(merged.items())),
                            self.annotations)

    @classmethod
    def from_json(cls, data: Any) -> "KernelBundle":
        try:
            functions = tuple(
                KernelFunction(str(f["name"]), str(f["source"]), str(f["filename"]), int(f["lineno"]))
                for f in data["functions"])
            constants = tuple(sorted((str(k), str(v)) for k, v in data["constants"].items()))
            modules = tuple(sorted((str(k), str(v)) for k, v in data["modules"].items()))
            structs = data.get("structs") or {}
            annotations = tuple(sorted((str(k), str(v)) for k, v in (data.get("annotations") or {}).items()))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise BundleRejected(f"malformed kernel bundle: {e.__class__.__name__}: {e}") from None
        return cls(str(data["entry"]), tuple(sorted(functions, key=lambda f: f.name)), constants, modules,
                   tuple(sorted(struct_defs.definitions_from_json(structs).items())), annotations)

    @property
    def digest(self) -> str:
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Collecting a bundle from a live kernel (client side; needs no pyasc).

def _python_function(kernel: Any) -> Callable:
    """The plain function behind a pyasc JITFunction (its `.fn`), or the function itself."""
    fn = getattr(kernel, "fn", kernel)
    if not isinstance(fn, types.FunctionType):
        raise BundleRejected(f"{kernel!r} is not a kernel: expected an @asc.jit function")
    return fn


def _is_jit_function(value: Any) -> bool:
    return type(value).__name__ == "JITFunction" and isinstance(getattr(value, "fn", None), types.FunctionType)


@functools.lru_cache(maxsize=1024)
def _code_info(code: types.CodeType, fn: Callable) -> Tuple[str, int, Tuple[Tuple[str, int], ...]]:
    """Source, first line and free names of a function, read once per code object (immutable:
    an edited and reloaded kernel has a new one)."""
    try:
        lines, lineno = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise BundleRejected(f"cannot read the source of kernel '{fn.__name__}': {e}") from None
    source = textwrap.dedent("".join(lines))
    return source, lineno, tuple(free_names(ast.parse(source).body[0]))


def free_names(tree: ast.FunctionDef) -> Iterable[Tuple[str, int]]:
    """Names a function reads that it does not bind itself, with the line of first use."""
    bound = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    seen = set()
    # Decorators and annotations are read at definition time, so they count too.
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in bound and node.id not in seen:
                seen.add(node.id)
                yield node.id, node.lineno


def is_literal_constant(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, tuple) and all(is_literal_constant(v) for v in value)


def collect(kernel: Any) -> KernelBundle:
    """Build the bundle of `kernel` (an @asc.jit JITFunction or a plain function)."""
    entry_fn = _python_function(kernel)
    functions: Dict[str, KernelFunction] = {}
    constants: Dict[str, Tuple[str, str]] = {}  # name -> (literal, function that read it)
    modules: Dict[str, str] = {}
    structs: Dict[str, struct_defs.StructDef] = {}
    annotations: Dict[str, str] = {}
    pending = [entry_fn]
    while pending:
        fn = pending.pop()
        if fn.__name__ in functions:
            continue
        source, lineno, free_names = _code_info(fn.__code__, fn)
        functions[fn.__name__] = KernelFunction(fn.__name__, source, fn.__code__.co_filename, lineno)
        closure = inspect.getclosurevars(fn).nonlocals if fn.__closure__ else {}
        builtin_names = KERNEL_BUILTINS + (ASCTILE_BUILTINS if _reads_asctile(fn, free_names) else ())
        for name, line in free_names:
            where = f"in '{fn.__name__}' ({fn.__code__.co_filename}:{lineno + line - 1})"
            if name in closure:
                raise BundleRejected(f"kernel reads '{name}' from an enclosing function {where}: "
                                     "define kernels at module level")
            if name not in fn.__globals__:
                if hasattr(builtins, name):
                    if name not in builtin_names:
                        raise BundleRejected(f"kernel uses builtin '{name}' {where}, which kernels may not use")
                    continue
                raise BundleRejected(f"kernel reads '{name}' {where}, which is not defined")
            value = fn.__globals__[name]
            if isinstance(value, types.ModuleType):
                if not is_allowed_module(value.__name__):
                    raise BundleRejected(f"kernel reads module '{name}' ({value.__name__}) {where}: "
                                         f"only the '{ALLOWED_MODULE}' package, its kernel language "
                                         f"({LANGUAGE_MODULE}), {CONFIG_MODULE} and {ASCTILE_MODULE} can be "
                                         "used in kernels")
                _merge(modules, name, value.__name__, where)
            elif _is_jit_function(value):
                if value.fn.__name__ != name:
                    raise BundleRejected(f"kernel calls '{name}' {where}, an alias of '{value.fn.__name__}': "
                                         "call @asc.jit functions by their own name")
                pending.append(value.fn)
            elif struct_defs.is_struct_class(value):
                if value.__name__ != name:
                    raise BundleRejected(f"kernel reads '{name}' {where}, an alias of Struct '{value.__name__}': "
                                         "name Struct classes by their own name (the kernel's C++ does)")
                struct_defs.describe(value, structs)
            elif _typing_form(value) is not None:
                form = _typing_form(value)
                if annotations.setdefault(name, form) != form:
                    raise BundleRejected(f"'{name}' names typing.{annotations[name]} elsewhere but typing.{form} "
                                         f"{where}")
            elif is_literal_constant(value):
                literal = repr(value)
                previous = constants.setdefault(name, (literal, fn.__name__))
                if previous[0] != literal:
                    raise BundleRejected(f"global '{name}' is {previous[0]} in '{previous[1]}' but {literal} "
                                         f"{where}: rename one of them")
            else:
                kind = f"{type(value).__module__}.{type(value).__qualname__}"
                raise BundleRejected(f"kernel reads global '{name}' {where}, a {kind}: kernels may read only "
                                     "int, float, bool, str, None or tuples of these, @asc.jit functions, "
                                     "Struct classes and the asc package")
    clash = set(functions) & (set(constants) | set(modules) | set(structs) | set(annotations))
    if clash:
        raise BundleRejected(f"name(s) {sorted(clash)} mean both a kernel function and a global")
    return KernelBundle(
        entry=entry_fn.__name__,
        functions=tuple(sorted(functions.values(), key=lambda f: f.name)),
        constants=tuple(sorted((k, v[0]) for k, v in constants.items())),
        modules=tuple(sorted(modules.items())),
        structs=tuple(sorted(structs.items())),
        annotations=tuple(sorted(annotations.items())),
    )


def _reads_asctile(fn: Callable, free_names: Iterable[Tuple[str, int]]) -> bool:
    """Whether `fn` names the asctile module (then asctile's builtins are its)."""
    return any(isinstance(value, types.ModuleType) and value.__name__ == ASCTILE_MODULE
               for value in (fn.__globals__.get(name) for name, _ in free_names))


def _typing_form(value: Any) -> str | None:
    """Which of TYPING_FORMS `value` is, if any."""
    return next((form for form in TYPING_FORMS if getattr(typing, form) is value), None)


def _merge(table: Dict[str, str], name: str, value: str, where: str) -> None:
    if table.setdefault(name, value) != value:
        raise BundleRejected(f"'{name}' names module {table[name]} elsewhere but {value} {where}")

"""Struct kernel parameters (pyasc's asc.language.core.struct): definitions, values and bytes.

pyasc passes a Struct argument to the device as bytes in GM: the launcher sends `Struct.pack()`
(a ctypes.Structure of the fields, `_pack_` from the class's `pack=`, default 8), the kernel
takes `__gm__ S*` and copies sizeof(S) bytes into a local S. The generated C++ declares every
struct inside `#pragma pack(push, 8)` whatever the class's `pack` (pyasc's EmitAsc.cpp).

Here a definition travels in the bundle as data (never as code): its name, `pack` and fields in
order, each a Field (pyasc dtype name, and the Field's `name=`/`enum=` if given) or a
StructField (the nested struct's name). A value travels as JSON: {field: number or nested dict}.
The worker rebuilds the classes with pyasc's own Struct, Field and StructField.
"""
from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Type

from .errors import BundleRejected, CompileError, KernelError

# pyasc's struct.dtype_ctype: the dtypes a Field may have, and the C type of each.
FIELD_CTYPES: Dict[str, Type[ctypes._SimpleCData]] = {
    "int1": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}
CPP_PACK = 8  # the `#pragma pack(push, 8)` pyasc emits around every struct
STRUCT_MODULE = "asc.language.core.struct"  # where Struct lives, in pyasc and in ascrun's stand-in
PYASC_TILING_MODULE = "asc.language.adv.tiling"  # pyasc's own tiling structs (TCubeTiling, SoftmaxTiling, ...)
MAX_PACK = 1 << 16
MAX_FIELDS = 1024
MAX_DEPTH = 32  # struct inside struct, levels
MAX_LEAVES = 8192  # Fields of a struct with its nested structs spelled out (what packing and the layout check walk)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CPP_TYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*")
_FLOAT32_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class Member:
    """One field: a Field has `dtype`, a StructField has `struct` (the nested struct's name)."""
    name: str
    dtype: Optional[str] = None
    struct: Optional[str] = None
    ir_name: Optional[str] = None  # Field(name=...): the C++ member the kernel's reads name
    enum: Optional[str] = None  # Field(enum=...): the C++ type a kernel's assignment constructs

    def to_json(self) -> Dict[str, str]:
        data = {"name": self.name}
        for key in ("dtype", "struct", "ir_name", "enum"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data


@dataclass(frozen=True)
class StructDef:
    name: str
    pack: int
    members: Tuple[Member, ...]

    def to_json(self) -> Dict[str, Any]:
        return {"pack": self.pack, "fields": [m.to_json() for m in self.members]}


Definitions = Mapping[str, StructDef]


def definitions_from_json(data: Any) -> Dict[str, StructDef]:
    """The bundle's "structs" object -> definitions; BundleRejected if it is not well formed."""
    if not isinstance(data, dict):
        raise BundleRejected("malformed kernel bundle: 'structs' must be an object")
    defs = {}
    for name, body in data.items():
        try:
            pack = body["pack"]
            members = tuple(Member(str(f["name"]), *(None if f.get(k) is None else str(f[k])
                                                     for k in ("dtype", "struct", "ir_name", "enum")))
                            for f in body["fields"])
        except (KeyError, TypeError, AttributeError) as e:
            raise BundleRejected(f"malformed struct '{name}' in the bundle: {e.__class__.__name__}: {e}") from None
        if type(pack) is not int:
            raise BundleRejected(f"struct '{name}': pack must be an integer, got {pack!r}")
        defs[str(name)] = StructDef(str(name), pack, members)
    validate(defs)
    return defs


def validate(defs: Definitions) -> None:
    """Names that can only be C++ identifiers, known dtypes, nested structs defined, no cycle."""
    for name, d in defs.items():
        if not _IDENTIFIER.fullmatch(name) or name.startswith("__"):
            raise BundleRejected(f"struct name {name!r} is not an identifier")
        if not 0 <= d.pack <= MAX_PACK:
            raise BundleRejected(f"struct '{name}': pack {d.pack} is out of range (0 to {MAX_PACK})")
        if not 1 <= len(d.members) <= MAX_FIELDS:
            raise BundleRejected(f"struct '{name}' must have 1 to {MAX_FIELDS} fields, has {len(d.members)}")
        seen = set()
        for m in d.members:
            where = f"struct '{name}' field {m.name!r}"
            if not _IDENTIFIER.fullmatch(m.name) or m.name.startswith("_"):
                raise BundleRejected(f"{where}: a field name must be an identifier not starting with '_'")
            if m.name in seen:
                raise BundleRejected(f"{where} is defined twice")
            seen.add(m.name)
            if (m.dtype is None) == (m.struct is None):
                raise BundleRejected(f"{where} must have exactly one of a dtype (Field) or a struct (StructField)")
            if m.dtype is not None and m.dtype not in FIELD_CTYPES:
                raise BundleRejected(f"{where} has dtype {m.dtype!r}: a struct Field takes one of "
                                     f"{', '.join(FIELD_CTYPES)}")
            if m.struct is not None and m.struct not in defs:
                raise BundleRejected(f"{where} nests struct {m.struct!r}, which the bundle does not define")
            if m.struct is not None and (m.ir_name is not None or m.enum is not None):
                raise BundleRejected(f"{where}: a StructField has no name= or enum=")
            if m.ir_name is not None and not _IDENTIFIER.fullmatch(m.ir_name):
                raise BundleRejected(f"{where}: name= {m.ir_name!r} is not an identifier")
            if m.enum is not None and not _CPP_TYPE.fullmatch(m.enum):
                raise BundleRejected(f"{where}: enum= {m.enum!r} is not a C++ type name")
    leaves: Dict[str, int] = {}
    for name in defs:
        _nesting(defs, name, (), leaves)


def _nesting(defs: Definitions, name: str, path: Tuple[str, ...], leaves: Dict[str, int]) -> int:
    """The number of Fields of struct `name` spelled out; each struct is walked once (`leaves`
    memoizes), so a diamond of nestings costs its size, not its paths."""
    if name in leaves:
        return leaves[name]
    if name in path:
        raise BundleRejected(f"struct '{name}' contains itself ({' -> '.join(path + (name,))})")
    if len(path) >= MAX_DEPTH:
        raise BundleRejected(f"struct '{path[0]}' nests structs more than {MAX_DEPTH} levels deep")
    count = sum(1 if m.struct is None else _nesting(defs, m.struct, path + (name,), leaves)
                for m in defs[name].members)
    if count > MAX_LEAVES:
        raise BundleRejected(f"struct '{name}' has {count} fields with its nested structs spelled out, "
                             f"more than {MAX_LEAVES}")
    leaves[name] = count
    return count


# ---------------------------------------------------------------------------------------------
# Client side: a live pyasc (or stand-in) Struct class and instance -> definitions and values.

def is_struct_class(value: Any) -> bool:
    return isinstance(value, type) and any(
        base.__name__ == "Struct" and base.__module__ == STRUCT_MODULE for base in value.__mro__[1:])


def is_struct(value: Any) -> bool:
    return is_struct_class(type(value))


def describe(cls: type, into: Dict[str, StructDef]) -> None:
    """Add the definition of `cls` and of the structs it nests to `into` (by class name)."""
    members = []
    for name, field in cls.struct_fields.items():
        nested = getattr(field, "struct_cls", None)
        if nested is not None:
            describe(nested, into)
            members.append(Member(name, struct=nested.__name__))
        else:
            members.append(Member(name, dtype=field.dtype.name, ir_name=field.name, enum=field.enum_name))
    d = StructDef(cls.__name__, cls.ctypes_class._pack_, tuple(members))
    if into.setdefault(d.name, d) != d:
        raise BundleRejected(f"two different Struct classes are named '{d.name}': the kernel's C++ declares "
                             "structs by class name, rename one")


def values_of(instance: Any) -> Dict[str, Any]:
    """A Struct instance's field values as JSON data, nested structs as nested objects."""
    return _ctypes_values(type(instance), instance.ctypes_struct)


def _ctypes_values(cls: type, data: ctypes.Structure) -> Dict[str, Any]:
    values = {}
    for name, field in cls.struct_fields.items():
        nested = getattr(field, "struct_cls", None)
        values[name] = _ctypes_values(nested, getattr(data, name)) if nested is not None else getattr(data, name)
    return values


# ---------------------------------------------------------------------------------------------
# Values: checked against the definition, then packed as pyasc's launcher packs them.

def check_value(defs: Definitions, name: str, value: Any) -> None:
    """KernelError (bad_request) unless `value` gives every field of struct `name` a value of its
    dtype (ctypes, and so pyasc, would silently wrap an int that does not fit)."""
    _check(defs, name, name, value, "")


def _check(defs: Definitions, root: str, name: str, value: Any, path: str) -> None:
    where = f"struct {root}" + (f" field '{path}'" if path else "")
    if not isinstance(value, dict):
        raise KernelError(f"{where} must be an object of field values, got {type(value).__name__}",
                          kind="bad_request")
    fields = {m.name: m for m in defs[name].members}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise KernelError(f"{where} ({name}) has no field {unknown[0]!r}", kind="bad_request")
    missing = [f for f in fields if f not in value]
    if missing:
        raise KernelError(f"{where} ({name}) lacks a value for field {missing[0]!r}", kind="bad_request")
    for field, m in fields.items():
        inner = f"{path}.{field}" if path else field
        if m.struct is not None:
            _check(defs, root, m.struct, value[field], inner)
        else:
            problem = _field_problem(m.dtype, value[field])
            if problem:
                raise KernelError(f"struct {root} field '{inner}' is {m.dtype}: {problem}", kind="bad_request")


def _field_problem(dtype: str, v: Any) -> Optional[str]:
    if dtype == "int1":
        return None if isinstance(v, bool) else f"got {v!r}, not true or false"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"got {v!r}"
    if dtype.startswith("float"):
        if dtype == "float32" and math.isfinite(v) and abs(v) > _FLOAT32_MAX:
            return f"{v!r} is out of its range"
        return None
    if not isinstance(v, int):
        return f"got {v!r}, not an integer"
    bits = int(dtype.lstrip("uint"))
    low, high = (0, 2 ** bits - 1) if dtype.startswith("u") else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)
    return None if low <= v <= high else f"{v} is outside [{low}, {high}]"


def ctypes_class(defs: Definitions, name: str, pack: Optional[int] = None) -> Type[ctypes.Structure]:
    """The ctypes.Structure pyasc builds for struct `name` (its own `pack`, or `pack` for all)."""
    d = defs[name]
    fields = [(m.name, ctypes_class(defs, m.struct, pack) if m.struct is not None else FIELD_CTYPES[m.dtype])
              for m in d.members]
    return type(f"_ctypes_{name}", (ctypes.Structure,), {"_fields_": fields, "_pack_": d.pack if pack is None else pack})


def check_layout(defs: Definitions, name: str) -> None:
    """CompileError if pyasc's bytes (ctypes with the class's `pack`) would not have the layout
    of the struct the kernel declares (`#pragma pack(push, 8)`): the kernel would read fields at
    other offsets than the launcher wrote them."""
    sent, declared = ctypes_class(defs, name), ctypes_class(defs, name, CPP_PACK)
    for path, sent_at, declared_at in _offsets(defs, name, sent, declared, "", 0, 0):
        if sent_at != declared_at:
            raise CompileError(f"struct {name}: pyasc would write field '{path}' at byte {sent_at} (ctypes with the "
                               f"class's pack=), but the kernel's C++ (#pragma pack(push, {CPP_PACK})) reads it at "
                               f"byte {declared_at}; declare the struct with pack={CPP_PACK} (the default)")
    if ctypes.sizeof(sent) != ctypes.sizeof(declared):
        raise CompileError(f"struct {name}: pyasc would send {ctypes.sizeof(sent)} bytes but the kernel's C++ "
                           f"struct has {ctypes.sizeof(declared)}; declare it with pack={CPP_PACK} (the default)")


def _offsets(defs, name, sent, declared, path, sent_base, declared_base):
    for m in defs[name].members:
        where = f"{path}.{m.name}" if path else m.name
        a, b = sent_base + getattr(sent, m.name).offset, declared_base + getattr(declared, m.name).offset
        yield where, a, b
        if m.struct is not None:
            sub_sent = dict(sent._fields_)[m.name]
            sub_declared = dict(declared._fields_)[m.name]
            yield from _offsets(defs, m.struct, sub_sent, sub_declared, where, a, b)


def pack(defs: Definitions, name: str, value: Dict[str, Any]) -> bytes:
    """The bytes pyasc's launcher sends for this value (Struct.pack()), after check_value."""
    check_value(defs, name, value)
    data = _fill(defs, name, ctypes_class(defs, name)(), value)
    return ctypes.string_at(ctypes.addressof(data), ctypes.sizeof(data))


def _fill(defs: Definitions, name: str, data: ctypes.Structure, value: Dict[str, Any]) -> ctypes.Structure:
    for m in defs[name].members:
        if m.struct is not None:
            _fill(defs, m.struct, getattr(data, m.name), value[m.name])
        else:
            setattr(data, m.name, value[m.name])
    return data


def reachable(defs: Definitions, name: str) -> Dict[str, StructDef]:
    """`name` and every struct it nests."""
    out, todo = {}, [name]
    while todo:
        current = todo.pop()
        if current not in out:
            out[current] = defs[current]
            todo.extend(m.struct for m in defs[current].members if m.struct is not None)
    return out


# ---------------------------------------------------------------------------------------------
# Worker side: the definitions as pyasc classes.

def _pyasc_own(import_module: Callable[[str], Any], defs: Definitions) -> Dict[str, type]:
    """pyasc's own tiling structs (asc.adv.TCubeTiling, ...) that definitions describe exactly:
    pyasc's passes type those as themselves (a TCubeTiling operand of Matmul's registration), not
    as a generic struct, so the kernel must get pyasc's class."""
    try:
        module = import_module(PYASC_TILING_MODULE)
    except ImportError:  # ascrun's stand-in for pyasc has none
        return {}
    own = {}
    for name, cls in vars(module).items():
        if name in defs and isinstance(cls, type) and is_struct_class(cls) and cls.__module__ == module.__name__:
            described: Dict[str, StructDef] = {}
            describe(cls, described)
            if all(defs.get(n) == d for n, d in described.items()):
                own[name] = cls
    return own


def define(defs: Definitions, import_module: Callable[[str], Any]) -> Dict[str, type]:
    """pyasc Struct subclasses for the definitions (nested ones first), by name: pyasc's own
    class where a definition is exactly one of its tiling structs."""
    struct_module = import_module(STRUCT_MODULE)
    from_name = import_module("asc.language.core.dtype").DataType
    classes: Dict[str, type] = _pyasc_own(import_module, defs)

    def build(name: str) -> type:
        if name not in classes:
            d = defs[name]
            attrs: Dict[str, Any] = {"__module__": "ascrun_bundle", "__qualname__": name}
            for m in d.members:
                if m.struct is not None:
                    # every value arrives complete: no default is ever needed
                    attrs[m.name] = struct_module.StructField(build(m.struct), default=struct_module.missing)
                else:
                    attrs[m.name] = struct_module.Field(from_name(m.dtype), name=m.ir_name, enum=m.enum)
            classes[name] = type(name, (struct_module.Struct,), attrs, pack=d.pack)
        return classes[name]

    for name in defs:
        build(name)
    return classes


def instance(cls: type, defs: Definitions, value: Dict[str, Any]) -> Any:
    """A host-side instance of the pyasc class `cls` with these (checked) values."""
    kwargs = {}
    for m in defs[cls.__name__].members:
        kwargs[m.name] = instance(cls.get_field(m.name).struct_cls, defs, value[m.name]) if m.struct is not None \
            else value[m.name]
    return cls(**kwargs)

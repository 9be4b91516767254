"""The rules a launch's arguments obey, in one place: the client checks them early (a friendly
error before anything is sent), the API authoritatively (server/models.py, server/admission.py),
and the worker trusts the API's record. Pure: numpy and the compiler's bundle names only, no
pydantic or FastAPI (the client package does not have them). Each check returns the problem as the user reads it, or None."""
from __future__ import annotations

import math
import re
from typing import Any, Collection, Optional, Sequence

import numpy as np

from .compiler.bundle import LANGUAGE_FUNCTION

NUMPY_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                "float32", "float64")
# bfloat16 (torch.bfloat16, ml_dtypes.bfloat16), which numpy itself lacks, is held as its bits: a
# uint16 array, under its own name wherever the dtype is named.
BITS = {"bfloat16": "uint16"}
TENSOR_DTYPES = NUMPY_DTYPES + tuple(BITS)
# str, tuple and dtype: a ConstExpr's alone (they specialize the kernel): a string, a shape (a
# tuple of ints) and one of pyasc's dtypes by name (asc.float16, asctile.float32)
CONSTEXPR_ONLY = {"str": "a string", "tuple": "a tuple", "dtype": "a pyasc dtype", "function": "a function"}

SCALAR_DTYPES = ("int", "float", "bool") + tuple(CONSTEXPR_ONLY) + NUMPY_DTYPES  # int: a Python int
MAX_TUPLE_ITEMS = 32  # a shape's dimensions, as a tensor's
CONSTEXPR_DTYPES = tuple(d for d in TENSOR_DTYPES if d != "bool")  # pyasc's names (it has no bool)
# A Python int goes to a kernel parameter of up to 64 bits, signed or unsigned (a uint64_t mask is
# passed as an int): the runner checks it against the parameter's own type.
PYTHON_INT = (-2 ** 63, 2 ** 64 - 1)
FLOAT_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38}


def count_problem(kernel: str, names: Sequence[str], given: int) -> Optional[str]:
    """A launch gives each of the kernel's parameters (`names`) one argument."""
    if given == len(names):
        return None
    return f"kernel '{kernel}' takes {len(names)} arguments ({', '.join(names)}), got {given}"


def storage_dtype(name: str) -> np.dtype:
    """The numpy dtype a tensor of dtype `name` (one of TENSOR_DTYPES) is held in."""
    return np.dtype(BITS.get(name, name))


def tensor_dtype_problem(name: str, dtype: np.dtype) -> Optional[str]:
    if dtype.kind in "biuf" or dtype.name in BITS:
        return None
    return (f"tensor '{name}' has dtype {dtype}: only bool, int, uint, float and bfloat16 tensors can be kernel "
            "arguments")


def scalar_problem(dtype: str, value: Any) -> Optional[str]:
    """A scalar's value is one of its dtype: int dtypes an integer in range, float dtypes any
    number (NaN and infinities too, as a Python float can be), bool true or false, str a string."""
    if dtype == "str":
        return None if isinstance(value, str) else f"got {value!r}, not a string"
    if dtype == "dtype":
        return None if value in CONSTEXPR_DTYPES else f"got {value!r}, not one of {', '.join(CONSTEXPR_DTYPES)}"
    if dtype == "function":
        if isinstance(value, str) and len(value) <= 256 and LANGUAGE_FUNCTION.fullmatch(value):
            return None
        return f"got {_shown(value)}, not 'module:name' of a function of asc's or asctile's kernel language"
    if dtype == "tuple":
        if not isinstance(value, (list, tuple)) or len(value) > MAX_TUPLE_ITEMS:
            return f"got {_shown(value)}, not a list of at most {MAX_TUPLE_ITEMS} integers"
        return next((f"item {i}: {problem}" for i, problem in enumerate(scalar_problem("int64", v) for v in value)
                     if problem), None)
    if not isinstance(value, (bool, int, float, str)):
        return f"got {_shown(value)}, not {'true or false' if dtype == 'bool' else 'a number'}"
    if dtype == "bool":
        return None if isinstance(value, bool) else f"got {value!r}, not true or false"
    if isinstance(value, (bool, str)):
        return f"got {value!r}, not a number"
    if dtype == "float" or dtype.startswith("float"):
        limit = FLOAT_MAX.get(dtype)
        if limit is not None and math.isfinite(value) and abs(value) > limit:
            return f"{value!r} is out of its range"
        return None
    if not isinstance(value, int):
        return f"got {value!r}, not an integer"
    low, high = PYTHON_INT if dtype == "int" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    return None if low <= value <= high else f"{value} is outside [{low}, {high}]"


def constexpr_only_problem(name: str, dtype: str, constexprs: Collection[str]) -> Optional[str]:
    """A string, tuple or dtype argument is only for a ConstExpr parameter (it specializes the kernel)."""
    if dtype not in CONSTEXPR_ONLY or name in constexprs:
        return None
    return f"argument '{name}' is {CONSTEXPR_ONLY[dtype]}: only a ConstExpr parameter takes one"


# What a parameter's annotation lets through (pyasc types a scalar by its value, not by the
# annotation, so a misfit would compile as another kernel or fail deep in pyasc's passes): a Python
# int fits `float`, as in Python; numpy scalars fit by their dtype.
_INTS = ("int", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
FITTING_DTYPES = {"int": _INTS, "float": ("float", "float16", "float32", "float64", "int"), "bool": ("bool",),
                  "str": ("str",)}
_SCALAR_ANNOTATION = re.compile(r"(?:\w+\.)*ConstExpr\[(int|float|bool|str)\]|(int|float|bool|str)")
_TENSOR_ANNOTATION = re.compile(r"(?:\w+\.)*GlobalAddress")
_SHOWN_CHARS = 40


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= _SHOWN_CHARS else shown[:_SHOWN_CHARS] + "..."


def _a(word: str) -> str:
    return f"{'an' if word[0] in 'aeio' else 'a'} {word}"


def annotation_problem(kernel: str, name: str, annotation: str, kind: str, dtype: str, value: Any) -> Optional[str]:
    """An argument (`kind` tensor, scalar or struct, its `dtype` and a scalar's `value`) fits its
    parameter's annotation as the kernel spells it: int, float, bool, str (bare or in a ConstExpr)
    take scalars of those dtypes, a GlobalAddress a tensor; any other annotation is not checked."""
    scalar = _SCALAR_ANNOTATION.fullmatch(annotation)
    if scalar:
        fits = kind == "scalar" and dtype in FITTING_DTYPES[scalar.group(1) or scalar.group(2)]
    elif _TENSOR_ANNOTATION.fullmatch(annotation):
        fits = kind == "tensor"
    else:
        return None
    if fits:
        return None
    if kind == "scalar":
        got = f"{_shown(value)} ({_a(dtype)})"
    else:
        got = f"{_a(dtype)} {kind}"
    return f"argument '{name}' of kernel '{kernel}' is annotated {annotation}: got {got}"

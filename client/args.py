"""Launch arguments: the caller's arrays, scalars and Structs -> ArgSpecs + C-contiguous host
buffers (a Struct: its field values), and back."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .compiler import structs
from .compiler.bundle import LANGUAGE_FUNCTION, KernelBundle, collect
from .compiler.errors import KernelError, Kind
from .compiler.frontend import ArgSpec, constexpr_params, param_annotations, param_names
from .launch_checks import (BITS, annotation_problem, count_problem, scalar_problem, constexpr_only_problem,
                            tensor_dtype_problem)


@dataclass
class HostArgs:
    specs: List[ArgSpec]
    values: Dict[str, Any]  # parameter name -> C-contiguous ndarray, scalar or a struct's field values
    callers: Dict[str, Any] = field(default_factory=dict)  # tensor name -> the caller's own object
    structs: Dict[str, structs.StructDef] = field(default_factory=dict)  # the Struct arguments' classes

    def detached(self) -> "HostArgs":
        """These arguments, writing back nowhere: for a run whose outputs are only compared."""
        return HostArgs(self.specs, self.values, callers={}, structs=self.structs)

    def write_back(self, name: str, data: np.ndarray) -> None:
        """Put `data` into the caller's tensor `name` in place (a no-op when it is the same memory,
        or when these arguments are detached)."""
        target = self.callers.get(name)
        if target is None:
            return
        if _is_torch_tensor(target):
            import torch
            bf16 = target.dtype == torch.bfloat16  # `data` holds its bits
            source = torch.from_numpy(np.ascontiguousarray(data.view(np.int16) if bf16 else data)
                                      .reshape(tuple(target.shape)))
            if bf16:
                source = source.view(torch.bfloat16)
            if source.data_ptr() != target.data_ptr():
                target.copy_(source)
        elif not np.shares_memory(target, data):
            np.copyto(target, data.view(target.dtype).reshape(target.shape))


def _is_torch_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def as_declared(data: np.ndarray, dtype: str) -> np.ndarray:
    """A tensor's array as the caller reads it: bfloat16 bits as ml_dtypes.bfloat16 where ml_dtypes
    is installed (numpy has no bfloat16 of its own), else the bits (uint16) themselves."""
    if dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            return data
        return data.view(ml_dtypes.bfloat16)
    return data


def _as_array(name: str, value: Any) -> Any:
    """A tensor argument as numpy (bfloat16: its bits, see launch_checks.BITS); anything else as is."""
    if _is_torch_tensor(value):
        if value.device.type != "cpu":
            raise KernelError(f"tensor '{name}' is on {value.device}: pass CPU tensors", kind=Kind.BAD_REQUEST)
        import torch
        if value.dtype == torch.bfloat16:
            return value.detach().view(torch.int16).numpy().view(np.uint16)
        try:
            return value.detach().numpy()
        except TypeError as e:  # a dtype numpy lacks, e.g. float8_e4m3fn
            raise KernelError(f"tensor '{name}' has dtype {value.dtype}, which cannot be sent yet: {e}",
                              kind=Kind.BAD_REQUEST) from None
    if isinstance(value, np.ndarray) and value.dtype.name in BITS:
        return value.view(BITS[value.dtype.name])
    return value


def _is_pyasc_dtype(value: Any) -> bool:
    """asc.float16, asctile.float32, ...: pyasc's DataType (known by its class, pyasc need not be here)."""
    kind = type(value)
    return (kind.__module__, kind.__name__) == ("asc.language.core.dtype", "DataType")


def _dtype_name(value: Any, array: np.ndarray) -> str:
    """The dtype a tensor argument is named by: the caller's own for bfloat16 (`array` holds its bits)."""
    if _is_torch_tensor(value):
        import torch
        return "bfloat16" if value.dtype == torch.bfloat16 else array.dtype.name
    return value.dtype.name


def launch_args(kernel: Any, args: Sequence[Any]) -> Tuple[KernelBundle, HostArgs]:
    """The kernel's bundle (with its Struct arguments' classes) and the launch's host arguments."""
    bundle = collect(kernel)
    names = param_names(bundle)
    problem = count_problem(bundle.entry, names, len(args))
    if problem:
        raise KernelError(problem, kind=Kind.BAD_REQUEST)
    host = prepare(names, args)
    constexprs = constexpr_params(bundle)
    for name, annotation, spec in zip(names, param_annotations(bundle), host.specs):
        problem = (constexpr_only_problem(name, spec.dtype, constexprs) if spec.kind == "scalar" else None) or \
            annotation_problem(bundle.entry, name, annotation, spec.kind, spec.dtype, spec.value)
        if problem:
            raise KernelError(problem, kind=Kind.BAD_REQUEST)
    return bundle.with_structs(host.structs), host


def prepare(names: Sequence[str], args: Sequence[Any]) -> HostArgs:
    """The host arguments of parameters `names` (as many as `args`), checked as the API checks
    them (launch_checks): a launch it would refuse fails here, before anything is sent."""
    host = HostArgs(specs=[], values={})
    for name, value in zip(names, args):
        array = _as_array(name, value)
        if isinstance(array, np.ndarray):
            problem = tensor_dtype_problem(name, value.dtype if isinstance(value, np.ndarray) else array.dtype)
            if problem:
                raise KernelError(problem, kind=Kind.BAD_REQUEST)
            host.specs.append(ArgSpec("tensor", _dtype_name(value, array)))
            host.values[name] = np.ascontiguousarray(array)
            host.callers[name] = value
        elif isinstance(value, (bool, int, float, str)):  # str: ConstExpr only
            host.specs.append(ArgSpec("scalar", type(value).__name__, value))
            host.values[name] = value
        elif isinstance(value, (tuple, list)):  # a shape: ConstExpr only
            host.specs.append(ArgSpec("scalar", "tuple", [int(v) if isinstance(v, np.integer) else v for v in value]))
            host.values[name] = tuple(host.specs[-1].value)
        elif _is_pyasc_dtype(value):  # ConstExpr only
            host.specs.append(ArgSpec("scalar", "dtype", value.name))
            host.values[name] = value
        elif callable(value) and not isinstance(value, type):  # ConstExpr only, and of a kernel language
            module = getattr(value, "__module__", None) or type(value).__module__
            function = f"{module}:{getattr(value, '__qualname__', '')}"
            if not LANGUAGE_FUNCTION.fullmatch(function):
                raise KernelError(f"argument '{name}' is a function from {module}: a ConstExpr function must be one "
                                  "of asc's or asctile's kernel language", kind=Kind.BAD_REQUEST)
            host.specs.append(ArgSpec("scalar", "function", function))
            host.values[name] = value
        elif isinstance(value, np.generic) and value.dtype.kind in "biuf":
            host.specs.append(ArgSpec("scalar", value.dtype.name, value.item()))
            host.values[name] = value.item()
        elif structs.is_struct(value):
            structs.describe(type(value), host.structs)
            host.specs.append(ArgSpec("struct", type(value).__name__, structs.values_of(value)))
            host.values[name] = host.specs[-1].value
        else:
            raise KernelError(f"argument '{name}' is a {type(value).__name__}: pass numpy arrays, torch CPU "
                              "tensors, Python/numpy scalars, pyasc Structs or (for ConstExpr) strings, tuples "
                              "of ints, pyasc dtypes and kernel-language functions", kind=Kind.BAD_REQUEST)
        spec = host.specs[-1]
        problem = scalar_problem(spec.dtype, spec.value) if spec.kind == "scalar" else None
        if problem:
            raise KernelError(f"argument '{name}': scalar of dtype {spec.dtype}: {problem}", kind=Kind.BAD_REQUEST)
    return host

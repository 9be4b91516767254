"""Launch arguments: the caller's arrays, scalars and Structs -> ArgSpecs + C-contiguous host
buffers (a Struct: its field values), and back."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .compiler import structs
from .compiler.bundle import KernelBundle, collect
from .compiler.errors import KernelError, Kind
from .compiler.frontend import ArgSpec, constexpr_params, param_annotations, param_names
from .launch_checks import (annotation_problem, count_problem, scalar_problem, string_problem,
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
            source = torch.from_numpy(np.ascontiguousarray(data).reshape(tuple(target.shape)))
            if source.data_ptr() != target.data_ptr():
                target.copy_(source)
        elif not np.shares_memory(target, data):
            np.copyto(target, data.reshape(target.shape))


def _is_torch_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _as_array(name: str, value: Any) -> np.ndarray:
    if _is_torch_tensor(value):
        if value.device.type != "cpu":
            raise KernelError(f"tensor '{name}' is on {value.device}: pass CPU tensors", kind=Kind.BAD_REQUEST)
        try:
            return value.detach().numpy()
        except TypeError as e:  # e.g. bfloat16, which numpy lacks
            raise KernelError(f"tensor '{name}' has dtype {value.dtype}, which cannot be sent yet: {e}",
                              kind=Kind.BAD_REQUEST) from None
    return value


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
        problem = (string_problem(name, constexprs) if spec.kind == "scalar" and spec.dtype == "str" else None) or \
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
            problem = tensor_dtype_problem(name, array.dtype)
            if problem:
                raise KernelError(problem, kind=Kind.BAD_REQUEST)
            host.specs.append(ArgSpec("tensor", array.dtype.name))
            host.values[name] = np.ascontiguousarray(array)
            host.callers[name] = value
        elif isinstance(value, (bool, int, float, str)):  # str: ConstExpr only
            host.specs.append(ArgSpec("scalar", type(value).__name__, value))
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
                              "tensors, Python/numpy scalars, pyasc Structs or (for ConstExpr) strings",
                              kind=Kind.BAD_REQUEST)
        spec = host.specs[-1]
        problem = scalar_problem(spec.dtype, spec.value) if spec.kind == "scalar" else None
        if problem:
            raise KernelError(f"argument '{name}': scalar of dtype {spec.dtype}: {problem}", kind=Kind.BAD_REQUEST)
    return host

"""`device="npu"` under ascrun: the pool is the NPU, the caller's tensors live on the host.

pyasc's tests and tutorials make their tensors with `torch.randn(..., device="npu")` when the backend
is NPU, which needs torch_npu and a device. While an `ascrun exec` or `pytest --ascrun-url` session
is active and torch_npu is not installed, the device "npu" names the host: `device="npu"` or
"npu:N" in any torch call, `torch.device("npu")`, `tensor.to("npu")` and `tensor.npu()` give CPU
tensors (`.cpu()` already does). Each launch sends them to the pool and writes the outputs back
into them, so the code's own asserts check what the pool computed. Where torch_npu is installed
torch is left alone.

The mapping is a torch.overrides.TorchFunctionMode (torch dispatches factory calls, `Tensor.to` and
`torch.device(...)` to it before parsing the device string, so torch needs no "npu" backend). It is
entered when torch is first imported (at once if it already is), in that thread, and undone when
the session ends.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import Any, Callable, List

NPU = "npu"
OPTION_HELP = ("leave torch's device 'npu' alone; by default, where torch_npu is not installed, device='npu' "
               "tensors are host tensors under ascrun (the pool is the NPU)")


def _names_npu(device: Any) -> bool:
    return isinstance(device, str) and device.partition(":")[0] == NPU


def _mode_class():
    import torch
    from torch.overrides import TorchFunctionMode

    class NpuIsHost(TorchFunctionMode):
        """Rewrites the device "npu" to "cpu" in every torch call made while it is active."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.device:
                if _names_npu(args[0] if args else kwargs.get("type")):
                    return torch.device("cpu")
                return func(*args, **kwargs)
            if _names_npu(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to:  # tensor.to("npu"), tensor.to("npu:0", torch.float16)
                args = tuple("cpu" if _names_npu(arg) else arg for arg in args)
            return func(*args, **kwargs)

    return NpuIsHost


def _tensor_npu(self, device: Any = None, non_blocking: bool = False):
    """torch_npu's `tensor.npu()`: here the host tensor itself, as `.cpu()` of a CPU tensor is."""
    return self.to("cpu", non_blocking=non_blocking)


class _Then(importlib.abc.Loader):
    """A module's own loader, then `after` once the module has run."""

    def __init__(self, loader: importlib.abc.Loader, after: Callable[[], None]):
        self.loader, self.after = loader, after

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self.loader
        self.after()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _OnTorchImport(importlib.abc.MetaPathFinder):
    """First on sys.meta_path until torch is imported: the import then runs `after` (torch costs
    seconds to import, and a numpy-only script should not pay for it)."""

    def __init__(self, after: Callable[[], None]):
        self.after = after

    def find_spec(self, name: str, path: Any = None, target: Any = None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _Then(spec.loader, self.after)
        return spec


def install() -> Callable[[], None]:
    """Make "npu" the host for torch from now on (unless torch_npu is installed); returns the undo."""
    if importlib.util.find_spec("torch_npu") is not None:
        return lambda: None
    undo: List[Callable[[], None]] = []

    def enter() -> None:
        import torch
        mode = _mode_class()()
        mode.__enter__()
        undo.append(lambda: mode.__exit__(None, None, None))
        if not hasattr(torch.Tensor, NPU):
            torch.Tensor.npu = _tensor_npu
            undo.append(lambda: delattr(torch.Tensor, NPU))

    if "torch" in sys.modules:
        enter()
    else:
        hook = _OnTorchImport(enter)
        sys.meta_path.insert(0, hook)
        undo.append(lambda: hook in sys.meta_path and sys.meta_path.remove(hook))

    def uninstall() -> None:
        for step in reversed(undo):
            step()

    return uninstall

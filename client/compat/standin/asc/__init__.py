"""ascrun's stand-in for pyasc's `asc` package, on sys.path only under `ascrun exec` and
`pytest --ascrun-url` where pyasc is not installed (it never shadows a real pyasc).

It has what a kernel file touches at import and launch time: @asc.jit, the kernel-language types
that signatures name, the dtypes, Struct kernel arguments (`asc.language.core.struct`),
`asc.runtime.config`, `asc.lib.runtime`, the Matmul host tiling `asc.lib.host` (ascrun's own,
ascrun.compat.host_tiling) and the tiling structs of `asc.adv`. Kernel bodies never run here:
the service compiles them with the real pyasc. Any other name fails with an error naming it.
"""
from ascrun.compat.script import MissingName, active, not_in_standin

from . import language, lib, runtime  # noqa: F401 - asc.language, asc.lib and asc.runtime are attributes of asc
from .language import adv  # noqa: F401 - pyasc's asc.adv is asc.language.adv
from .language.core.dtype import (  # noqa: F401 - the dtypes pyasc exports at the top level
    DataType, double, float16, float32, float64, float_, half, int8, int16, int32, int64, int_, uint8, uint16,
    uint32, uint64, void)


class JITFunction:
    """An @asc.jit function: `.fn` is the Python function, launched as `kernel[core_num, stream](*args)`."""

    def __init__(self, fn, **options):
        self.fn = fn
        self.default_options = options

    def __getitem__(self, launch):
        return active().launcher(self, launch)


def jit(fn=None, **options):
    """@asc.jit or @asc.jit(option=value, ...)."""
    if fn is None:
        return lambda f: JITFunction(f, **options)
    return JITFunction(fn, **options)


class _LanguageType:
    """A kernel-language type as annotations name it; the service's pyasc gives it meaning."""


class GlobalAddress(_LanguageType):
    pass


class GlobalTensor(_LanguageType):
    pass


class LocalTensor(_LanguageType):
    pass


class LocalTensorAuto(_LanguageType):
    pass


class TBuf(_LanguageType):
    pass


class TPipe(_LanguageType):
    pass


class TQue(_LanguageType):
    pass


class TQueBind(_LanguageType):
    pass


class ConstExpr(_LanguageType):
    """`asc.ConstExpr[int]`: a parameter whose value specializes the kernel."""

    def __class_getitem__(cls, item):
        return cls


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.{name}"))

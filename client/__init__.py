"""ascrun: compile and run pyasc kernels without an NPU or CANN.

`ascrun.run_local(kernel, core_num, *args)` runs the whole pipeline in this process on the
`cpu` target. This package imports neither pyasc nor the server's dependencies.
"""
from .compiler.errors import AscrunError, KernelError
from .local import run_local
from .result import LaunchResult

__all__ = ["AscrunError", "KernelError", "LaunchResult", "run_local"]

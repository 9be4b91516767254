"""ascrun: compile and run pyasc kernels without an NPU or CANN.

`ascrun.run_local(kernel, core_num, *args)` runs the whole pipeline in this process on the
`cpu` target; `ascrun.Client().launch(...)` and `ascrun.remote(kernel)[core_num](...)` run it
on an ascrun service. This package imports neither pyasc nor the server's dependencies.
Where pyasc is installed without CANN, importing it makes pyasc's `asc.lib.host` (the Matmul host
tiling) ascrun's own, compat/host_tiling.py.
"""
from .bench import Benchmark, GateFailed, Gates, benchmark_local
from .compat.host_tiling import use_when_cann_is_missing
from .compiler.errors import AscrunError, KernelError
from .local import run_local
from .result import LaunchResult
from .service.async_client import AsyncClient
from .service.client import Client, RemoteKernel, remote
from .service.handle import AsyncLaunchHandle, LaunchHandle

use_when_cann_is_missing()

__all__ = ["AscrunError", "AsyncClient", "AsyncLaunchHandle", "Benchmark", "Client", "GateFailed", "Gates",
           "KernelError", "LaunchHandle", "LaunchResult", "RemoteKernel", "benchmark_local", "remote", "run_local"]

"""run_local: the whole pipeline in this process, with an on-disk cache."""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

from .args import as_declared, launch_args
from .compiler import pipeline
from .compiler.cache import Cache, DiskCache
from .compiler.targets.contract import RunResult, check_bounds, check_hazards
from .compat.host_tiling import configured_soc
from .result import LaunchResult


def run_local(kernel: Any, core_num: int, *args: Any, target: str = "cpu", bounds: str = "fault",
              hazards: str = "warn", cache: Optional[Cache] = None, model: bool = True,
              soc: Optional[str] = None) -> LaunchResult:
    """Compile `kernel` for these arguments and `soc` and run it on `core_num` blocks here.

    Tensors the kernel writes are copied back into the caller's arrays, as pyasc's launch does.
    `bounds="warn"` turns accesses past a tensor argument (into a guard zone) or past a LocalTensor
    (inside the Unified Buffer) into `result.warnings` instead of a fault. `hazards` ("off", "warn",
    "fault"): what races between a core's pipes (a missing SetFlag/WaitFlag) become on the cpu
    target; with "warn", `result.warnings`. `result.model` and `result.trace`: the modeled timeline
    (cpu; `model=False`: none, and a faster run).
    Raises ascrun.KernelError (kind bad_request, bundle_rejected, compile_error, build_error or
    runtime_error; a runtime_error carries the kernel's `log` and `warnings` up to the fault).
    `cache`: the frontend's and toolchain's (default: on disk, DiskCache.default()).
    `soc`: the SOC pyasc generates for (one of its Platform names); the cpu target models its
    architecture (Ascend910B*/Ascend910_93*: 2201, Ascend950PR_*: 3510). Default: as a launch in an
    `ascrun exec` session chooses it (--soc, else the script's set_platform), else pyasc's configured
    platform (config.set_platform), else Ascend910B1.
    """
    return launch_here(kernel, core_num, args, target, bounds, hazards, cache, lambda run, tensors: (run(), None),
                       model, soc)[0]


def launch_here(kernel: Any, core_num: int, args: Sequence[Any], target: str, bounds: str, hazards: str,
                cache: Optional[Cache],
                repeat: Callable[[Callable[[], RunResult], Dict[str, Any]], Tuple[RunResult, Any]],
                model: bool = True, soc: Optional[str] = None) -> Tuple[LaunchResult, Any]:
    """The pipeline here: build, then `repeat(run, tensors)` runs the built kernel (once, or as a
    benchmark does) and answers (the run whose outputs count, anything else for the caller); the
    LaunchResult of that run, its outputs copied into the caller's arrays. `soc`: run_local's."""
    start = time.perf_counter()
    check_bounds(bounds)
    check_hazards(hazards)
    bundle, host = launch_args(kernel, args)
    chosen = pipeline.get_target(target)
    cache = cache if cache is not None else DiskCache.default()
    built = pipeline.build(bundle, host.specs, chosen, frontend_cache=cache, artifact_cache=cache,
                           soc=soc or configured_soc())
    tensors = {name: value for name, value in host.values.items() if isinstance(value, np.ndarray)}
    run_start = time.perf_counter()
    ran, extra = repeat(lambda: pipeline.run(built, chosen, core_num, host.values, bounds=bounds, hazards=hazards,
                                             model=model), tensors)
    run_seconds = ran.seconds if extra is None else time.perf_counter() - run_start
    outputs = {}
    specs = dict(zip(host.values, host.specs))
    for name in ran.written:
        host.write_back(name, host.values[name])
        outputs[name] = as_declared(host.values[name], specs[name].dtype)
    # ran.timings: h2d, kernel and d2h, where the target measures them apart (CANN)
    timings = dict(built.timings, run=run_seconds, **ran.timings, total=time.perf_counter() - start)
    return LaunchResult(outputs=outputs, timings=timings, cache=dict(built.cache), ir_hash=built.frontend.ir_hash,
                        log=ran.log, warnings=ran.warnings, model=ran.model, _source=built.frontend.source,
                        _trace=ran.trace), extra

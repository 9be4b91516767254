"""The stages chained: bundle -> Frontend -> Toolchain -> Runner, with their caches.

run_local and the service's worker both call these two functions; only the caches differ
(on disk for run_local, Redis for workers).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Sequence

from . import frontend, source_guard, structs, targets
from .bundle import KernelBundle
from .cache import Cache
from .errors import KernelError
from .frontend import ArgSpec, FrontendResult, name_sites
from .targets.contract import RunResult, Target


@dataclass
class Build:
    """A compiled kernel, with how long each stage took and whether its cache served it."""
    frontend: FrontendResult
    artifact: bytes
    timings: Dict[str, float] = field(default_factory=dict)
    cache: Dict[str, str] = field(default_factory=dict)


def get_target(name: str) -> Target:
    """The target `name` running its stages in this process; one per name and process, so loaded
    artifacts are reused."""
    return targets.load(name)


def artifact_key(toolchain_id: str, result: FrontendResult, caches: str = "") -> str:
    """Computed by the caller (the broker) over what is really built, never taken from a stage: the
    exact Ascend C source, the symbol the runner loads, the NPU arch it is built for and the toolchain. `caches`: whose caches
    (a tenant's, or the group it shares them with): a hit never tells one tenant what another built."""
    built = json.dumps({"toolchain": toolchain_id, "kernel": result.kernel_name, "source": result.source,
                        "kernel_type": result.kernel_type, "npu_arch": result.npu_arch, "caches": caches}, sort_keys=True)
    return "artifact-" + hashlib.sha256(built.encode()).hexdigest()


def frontend_key(bundle: KernelBundle, args: Sequence[ArgSpec], options: Dict[str, Any], caches: str = "",
                 soc: str | None = None) -> str:
    """The frontend cache's key of a launch for `soc` (frontend.DEFAULT_SOC for none): where its
    Ascend C and IR are, once compiled, in the caches of `caches` (artifact_key)."""
    memo = json.dumps({"memo": frontend.memo_key(bundle, args, options, soc), "caches": caches}, sort_keys=True)
    return "frontend-" + hashlib.sha256(memo.encode()).hexdigest()


def build(bundle: KernelBundle, args: Sequence[ArgSpec], target: Target, frontend_cache: Cache,
          artifact_cache: Cache, options: Dict[str, Any] | None = None,
          on_frontend: Callable[[str], None] | None = None, caches: str = "", soc: str | None = None) -> Build:
    """Frontend (for `soc`) and toolchain, each skipped when its cache has the result (in the caches
    of `caches`).

    `on_frontend(frontend_key)` is called once the Ascend C exists, before the toolchain runs, so
    that a failed build can still show its source."""
    options = dict(options or {})
    timings: Dict[str, float] = {}
    cache: Dict[str, str] = {}

    start = time.perf_counter()
    memo = frontend_key(bundle, args, options, caches, soc)
    cached = frontend_cache.get(memo)
    if cached is not None:
        result = FrontendResult.from_json(json.loads(cached))
        cache["frontend"] = "hit"
    else:
        result = target.frontend(bundle, args, options, soc)
        source_guard.check_result(result, bundle)  # before a cache keeps it or a toolchain builds it
        frontend_cache.put(memo, json.dumps(result.to_json()).encode())
        cache["frontend"] = "miss"
    timings["frontend"] = time.perf_counter() - start
    if on_frontend is not None:
        on_frontend(memo)

    start = time.perf_counter()
    key = artifact_key(target.toolchain.id, result, caches)
    artifact = artifact_cache.get(key)
    if artifact is not None:
        cache["build"] = "hit"
    else:
        try:
            artifact = target.toolchain.build(result.source, result.kernel_name, result.kernel_type, result.npu_arch)
        except KernelError as e:
            raise _named(e, result) from None
        artifact_cache.put(key, artifact)
        cache["build"] = "miss"
    timings["build"] = time.perf_counter() - start
    return Build(result, artifact, timings, cache)


def from_caches(bundle: KernelBundle, args: Sequence[ArgSpec], toolchain_id: str, frontend_cache: Cache,
          artifact_cache: Cache, options: Dict[str, Any] | None = None, caches: str = "",
          soc: str | None = None) -> Build | None:
    """What `build` would give, from the caches alone (a host that only runs); None on a miss."""
    start = time.perf_counter()
    cached = frontend_cache.get(frontend_key(bundle, args, dict(options or {}), caches, soc))
    if cached is None:
        return None
    result = FrontendResult.from_json(json.loads(cached))
    artifact = artifact_cache.get(artifact_key(toolchain_id, result, caches))
    if artifact is None:
        return None
    return Build(result, artifact, {"frontend": 0.0, "build": time.perf_counter() - start},
                 {"frontend": "hit", "build": "hit"})


def run(built: Build, target: Target, core_num: int, arguments: Dict[str, Any], bounds: str = "fault",
        hazards: str = "warn", model: bool = True) -> RunResult:
    """Launch a build; `arguments` maps every kernel parameter name to its value (tensors as
    C-contiguous ndarrays). ConstExpr values were compiled in, so only runtime ones are passed.
    `bounds` ("fault" or "warn"), `hazards` ("off", "warn" or "fault", targets.contract) and `model`
    (the modeled timeline, cpu) are launch options: the artifact does not depend on them.
    A struct's value is its field values (structs.py), sent as the bytes pyasc's launcher packs."""
    values = [structs.pack(structs.definitions_from_json(p["structs"]), p["dtype"], arguments[p["name"]])
              if p["kind"] == "struct" else arguments[p["name"]] for p in built.frontend.params]
    try:
        ran = target.runner.run(built.artifact, core_num, built.frontend.params, built.frontend.kernel_args, values,
                                bounds=bounds, hazards=hazards, model=model)
    except KernelError as e:
        raise _named(e, built.frontend) from None
    return dataclasses.replace(ran, warnings=[name_sites(w, built.frontend.sites) for w in ran.warnings])


def _named(error: KernelError, result: FrontendResult) -> KernelError:
    """`error` with the kernel's sites in its message and warnings named by their files."""
    return KernelError.of(error.kind, name_sites(str(error), result.sites), error.log,
                          [name_sites(w, result.sites) for w in error.warnings])

"""Unmodified pyasc code against the service: what `ascrun exec` and the pytest plugin run.

Every `kernel[core_num, stream](*args)` becomes a job on the service and its outputs are written
back into the caller's tensors, so the code's own asserts check remote results; torch tensors made
for the device "npu" are host tensors (npu_host.py) unless torch_npu is installed. Where pyasc is
installed only its launch, `config.set_platform` and `rt.current_stream` are replaced; where it
is not, the stand-in asc package (standin/asc) provides what kernel files touch at import and
launch time, and anything else fails with an error naming it.
"""
from __future__ import annotations

import enum
import functools
import importlib.abc
import importlib.util
import inspect
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from ..compiler.errors import KernelError
from ..job_status import JobStatus
from ..result import LaunchResult
from ..service.client import Client
from . import npu_host

__tracebackhide__ = True  # pytest: a failed launch's traceback ends at the line that launched
STANDIN = Path(__file__).parent / "standin"
# pyasc's backends (config.Backend values) and the pool's target for each.
BACKEND_TARGETS = {"Model": "sim", "NPU": "npu"}

# The status of a launch that neither returned nor raised KernelError (something else interrupted
# it, e.g. an answer that was not JSON): not a job state, as its job may not exist; exec's --json says so.
NOT_ENDED = "running"

_active: Optional["RemoteLaunches"] = None


class QuietProgress:
    """What a session shows of a launch in flight: nothing (the CLI's progress.py shows more on a
    terminal). `on_upload`/`on_status` are None, so the client long-polls."""
    on_upload = None
    on_status = None

    def begin(self, label: str) -> None:
        pass

    def end(self, line: str) -> None:
        pass

    def close(self) -> None:
        pass


class NotInStandIn(Exception):
    """pyasc is not installed here, and ascrun's stand-in for it lacks what the code asked for."""


class MissingName(NotInStandIn, AttributeError):
    pass


class MissingModule(NotInStandIn, ModuleNotFoundError):
    pass


WHY_NOT = "not part of ascrun's stand-in for pyasc (pyasc is not installed here): install pyasc to use it"


def not_in_standin(name: str) -> str:
    return f"{name} is {WHY_NOT}"


def current() -> Optional["RemoteLaunches"]:
    """The session pyasc's launches go to, if one is installed."""
    return _active


def active() -> "RemoteLaunches":
    """The session the stand-in's launches go to."""
    if _active is None:
        raise RuntimeError("ascrun's stand-in asc package launches kernels only under `ascrun exec` or "
                           "`pytest --ascrun-url`")
    return _active


@dataclass
class Launch:
    """One redirected launch, for reports (exec's --json, the pytest plugin's sections)."""
    kernel: str
    core_num: int
    target: str
    job_id: Optional[str] = None
    result: Optional[LaunchResult] = None
    error: Optional[KernelError] = None
    benchmark: Optional[Any] = None  # a launch of a test marked ascrun_benchmark: its Benchmark (bench.py)

    @property
    def status(self) -> str:
        """The job's end (job_status.JobStatus), or NOT_ENDED."""
        return JobStatus.FINISHED.value if self.result else JobStatus.FAILED.value if self.error else NOT_ENDED

    @property
    def log(self) -> str:
        """What the kernel printed (also when it faulted)."""
        return getattr(self.result or self.error, "log", "")

    @property
    def warnings(self) -> List[str]:
        return getattr(self.result or self.error, "warnings", [])

    def summary(self) -> str:
        head = f"{self.kernel} x{self.core_num} on {self.target}" + (f": job {self.job_id}" if self.job_id else "")
        if self.error is not None:
            return f"{head} failed: {self.error.kind}: {self.error}"
        if self.result is None:
            return f"{head} did not end"
        timings = self.result.timings
        stages = ", ".join(f"{k} {timings[k]:.3f}" for k in ("queue", "frontend", "build", "run") if k in timings)
        cache = ", ".join(f"{k} {v}" for k, v in self.result.cache.items())
        return f"{head} finished in {timings['total']:.2f} s ({stages} s; cache {cache})"

    def to_json(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"kernel": self.kernel, "core_num": self.core_num, "target": self.target,
                                "job_id": self.job_id, "status": self.status}
        if self.result is not None:
            data.update(timings=self.result.timings, cache=self.result.cache, ir_hash=self.result.ir_hash)
            if self.result.model is not None:  # cpu: the modeled timeline
                data["model"] = self.result.model
            if self.result.comparison is not None:
                data["comparison"] = self.result.comparison.to_json()
        if self.error is not None:
            data["error"] = {"kind": self.error.kind, "message": str(self.error)}
        data.update(log=self.log, warnings=self.warnings)
        return data

    @property
    def mismatched(self) -> bool:
        """Whether this launch was compared and its outputs differ between the targets."""
        return self.result is not None and self.result.comparison is not None and not self.result.comparison.matches

    def report(self) -> str:
        """The summary, then each warning and what the kernel printed (the pytest plugin's section)."""
        return "\n".join([self.summary(), *(f"warning: {w}" for w in self.warnings),
                          *([f"benchmark: {self.benchmark.summary()}"] if self.benchmark else [])]) + (
            "\n" + self.log.rstrip("\n") if self.log else "")


class RemoteLaunches:
    """pyasc's runtime entry points (launch, set_platform, current_stream), served by the pool.

    The target is `target` if given, else the one the code's backend maps to (`-r Model` -> sim,
    `-r NPU` -> npu) when the pool has a worker for it, else cpu; `notice` says so once. Every
    launch has the bounds policy `bounds` and the hazards policy `hazards`, and the modeled timeline
    unless `model` is False (a benchmark's launches keep it: their gates need it); with `echo`, what a
    kernel printed goes to stdout and its warnings to stderr once it has run, as an NPU run's
    output would appear. With `compare`,
    every launch also runs there and how its outputs compare goes to stderr."""

    def __init__(self, client: Client, target: Optional[str] = None, timeout: Optional[float] = None,
                 progress: Any = None, notice: Optional[Callable[[str], None]] = None, bounds: str = "fault",
                 echo: bool = False, soc: Optional[str] = None, compare: Optional[str] = None,
                 hazards: str = "warn", model: bool = True):
        self.client, self.forced_target, self.timeout = client, target, timeout
        self.forced_soc = soc
        self.bounds, self.echo, self.compare = bounds, echo, compare
        self.hazards, self.model = hazards, model
        self.progress = progress or QuietProgress()
        self.notice = notice or (lambda message: print(message, file=sys.stderr))
        self.backend: Optional[str] = None
        self.platform: Optional[str] = None
        self.launches: List[Launch] = []
        self._workers: Optional[Dict[str, int]] = None
        self._noticed: set = set()
        self.benchmark: Any = None  # while a test marked ascrun_benchmark runs: its bench.MarkedBenchmark

    def set_platform(self, backend: Any, soc_version: Any = None, device_id: Any = None, check: bool = True) -> None:
        """pyasc's config.set_platform: remembers the backend and SOC; the pool owns the devices."""
        value = backend.value if isinstance(backend, enum.Enum) else str(backend)
        if value not in BACKEND_TARGETS:
            raise ValueError(f"Unknown execution backend: {backend}")
        self.backend = value
        self.platform = soc_version.value if isinstance(soc_version, enum.Enum) else soc_version

    def current_stream(self) -> None:
        return None  # a stream means nothing remotely; pyasc's LaunchOptions accepts None

    def target(self) -> str:
        if self.forced_target:
            return self.forced_target
        wanted = BACKEND_TARGETS.get(self.backend or "")
        if wanted is None:
            return "cpu"
        if self._workers is None:
            targets = self.client.targets()
            self._workers = {t["name"]: t["workers"] for t in targets}
        if self._workers.get(wanted):
            return wanted
        if wanted not in self._noticed:
            self._noticed.add(wanted)
            self.notice(f"ascrun: backend {self.backend} maps to target '{wanted}', which has no worker in the pool: "
                        "running on 'cpu' (--target chooses)")
        return "cpu"

    def soc(self) -> Optional[str]:
        """The SOC a launch asks for: the one given (--soc), else the script's `config.set_platform`
        SOC (its `-v`), on every target: the cpu one models its NPU arch (compiler/socs.py)."""
        return self.forced_soc or self.platform

    def launcher(self, kernel: Any, launch: Any) -> Callable[..., LaunchResult]:
        """`kernel[core_num]` or `kernel[core_num, stream]`."""
        core_num = launch[0] if isinstance(launch, tuple) else launch
        return functools.partial(self.launch, kernel, core_num)

    def launch(self, kernel: Any, core_num: int, *args: Any, **kwargs: Any) -> LaunchResult:
        bound = inspect.signature(kernel.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        launch = Launch(kernel.fn.__name__, core_num, self.target())
        self.launches.append(launch)
        self.progress.begin(f"{launch.kernel} x{core_num} on {launch.target}")
        try:
            handle = self.client.submit(kernel, core_num, *bound.args, target=launch.target, timeout=self.timeout,
                                        on_upload=self.progress.on_upload, bounds=self.bounds,
                                        soc=self.soc(), compare=self.compare, hazards=self.hazards,
                                        model=self.model or self.benchmark is not None,
                                        benchmark=self.benchmark.policy if self.benchmark else None)
            launch.job_id = handle.id
            launch.result = handle.result(on_status=self.progress.on_status)
            if self.benchmark is not None:
                self.benchmark.checked(launch, handle.record)  # GateFailed: the test fails here
            if launch.result.comparison is not None:
                print(f"ascrun: compare {launch.kernel}: {launch.result.comparison.summary()}", file=sys.stderr)
            return launch.result
        except KernelError as e:
            launch.error = e
            raise
        finally:
            self.progress.end(launch.summary())
            if self.echo:
                sys.stdout.write(launch.log)
                sys.stdout.flush()
                for warning in launch.warnings:
                    print(f"ascrun: warning: {warning}", file=sys.stderr)


class StandInGaps(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: an asc.* module the stand-in does not have fails, naming it."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.startswith("asc."):
            raise MissingModule(not_in_standin(name), name=name)
        return None


def install(session: RemoteLaunches, npu_is_host: bool = True) -> Callable[[], None]:
    """Send pyasc launches to `session`, and with `npu_is_host` make torch's device "npu" the host
    (npu_host.py; not where torch_npu is installed); returns the function that undoes it."""
    global _active
    _active = session
    # ascrun's own HTTP requests are not the code's: keep httpx's INFO lines out of its logs
    httpx_log = logging.getLogger("httpx")
    undo = [functools.partial(httpx_log.setLevel, httpx_log.level)]
    httpx_log.setLevel(logging.WARNING)
    if importlib.util.find_spec("asc") is None:
        gaps = StandInGaps()
        sys.path.insert(0, str(STANDIN))
        sys.meta_path.append(gaps)
        undo += [lambda: sys.path.remove(str(STANDIN)), lambda: sys.meta_path.remove(gaps)]
    else:
        import asc.lib.runtime as rt
        import asc.runtime.config as config
        from asc.runtime.jit import JITFunction
        saved = [(JITFunction, "__getitem__", JITFunction.__getitem__), (config, "set_platform", config.set_platform),
                 (rt, "current_stream", rt.current_stream)]
        JITFunction.__getitem__ = lambda kernel, launch: session.launcher(kernel, launch)
        config.set_platform = session.set_platform
        rt.current_stream = session.current_stream
        undo += [functools.partial(setattr, *entry) for entry in saved]
    if npu_is_host:
        undo.append(npu_host.install())

    def uninstall() -> None:
        global _active
        for step in undo:
            step()
        _active = None

    return uninstall


def standin_gap(error: BaseException) -> Optional[str]:
    """What is missing, if `error` is a gap of the stand-in: a NotInStandIn, or the ImportError of
    `from asc... import NAME` for a NAME it lacks."""
    if isinstance(error, NotInStandIn):
        return str(error)
    path = getattr(error, "path", None) if isinstance(error, ImportError) else None
    if path and Path(path).is_relative_to(STANDIN):
        return f"{error.msg.split(' (')[0]}: it is {WHY_NOT}"
    return None

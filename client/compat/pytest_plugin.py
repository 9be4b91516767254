"""pytest plugin: existing pyasc tests against an ascrun pool, unmodified.

    pytest --ascrun-url URL [--ascrun-target T] [--ascrun-token TOKEN] [--ascrun-bounds warn]
           [--ascrun-hazards fault] [--ascrun-no-model] [--ascrun-no-npu-host] [--ascrun-update-baseline]
           path/to/pyasc/tests

Each `kernel[core_num, stream](...)` a test makes runs on the pool; the test's own asserts then
check the outputs written back into its tensors. device="npu" tensors are host tensors under
ascrun: the pool is the NPU, so where torch_npu is not installed `device="npu"`, "npu:N",
`torch.device("npu")`, `tensor.to("npu")` and `tensor.npu()` give CPU tensors (npu_host.py), and
pyasc's tests that make their inputs on "npu" run as they are (--ascrun-no-npu-host leaves torch
alone; torch_npu installed, it is always left alone). A failed launch raises ascrun.KernelError with
the remote message; each test's report gets an "ascrun" section listing its jobs with their
warnings and what the kernels printed, and its JUnit XML entry, per launch, the properties
`ascrun_job`, `ascrun_error_kind` (a failed one), `ascrun_warning` (each) and `ascrun_cycles` (cpu).
The service and the token are checked once at the session's start: a dead pool or a refused token
ends the session with one message naming the URL (exit 4).
A test marked `@pytest.mark.ascrun_benchmark(max_cycles=..., baseline=..., tolerance=...)` runs
each of its launches as a benchmark job and fails when a cycle gate fails (bench.py, README
"Benchmarks"). `--ascrun-url` defaults to $ASCRUN_URL and `--ascrun-token` to $ASCRUN_TOKEN; with
neither URL the plugin does nothing (the marker is registered, and inert).
"""
from __future__ import annotations

from typing import List, Tuple

import pytest

from ..bench import MARKER, MARKER_HELP, MarkedBenchmark
from ..compiler.errors import KernelError
from ..compiler.settings import ClientSettings
from ..compiler.targets import NAMES as TARGETS
from ..compiler.targets.contract import BOUNDS, HAZARDS
from ..service.client import Client
from . import npu_host
from .script import Launch, RemoteLaunches, install


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ascrun", "run pyasc kernel launches on an ascrun pool")
    settings = ClientSettings.from_env()
    group.addoption("--ascrun-url", default=settings.url if settings.url_given else None,
                    help="the ascrun service; kernel launches go there (default: $ASCRUN_URL; neither: the plugin "
                         "does nothing)")
    group.addoption("--ascrun-target", default=None, choices=TARGETS,
                    help="target of every launch (default: from each test's backend, cpu while the pool has "
                         "no sim/npu worker)")
    group.addoption("--ascrun-soc", default=None,
                    help="SOC of every launch (default: on sim/npu, each test's config.set_platform SOC)")
    group.addoption("--ascrun-token", default=settings.token,
                    help="bearer token (default: $ASCRUN_TOKEN)")
    group.addoption("--ascrun-bounds", default="fault", choices=BOUNDS,
                    help="fault (default): an access out of its operand fails the launch; warn: one the device "
                         "would perform silently is a warning in the report and the run goes on")
    group.addoption("--ascrun-hazards", default="warn", choices=HAZARDS,
                    help="cpu target: races between a core's pipes that no flag orders are warnings in the report "
                         "(warn, default), fail the launch (fault) or go unchecked (off)")
    group.addoption("--ascrun-no-model", dest="ascrun_model", action="store_false",
                    help="cpu target: no modeled timeline (no ascrun_cycles property, no trace), for faster "
                         "launches; tests marked ascrun_benchmark keep it")
    group.addoption("--ascrun-no-npu-host", action="store_true", help=npu_host.OPTION_HELP)
    group.addoption("--ascrun-update-baseline", action="store_true",
                    help="tests marked ascrun_benchmark(baseline=...) write their launches' modeled cycles to the "
                         "baseline file instead of comparing with it")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Before any conftest.py: pyasc's own conftests import asc (the stand-in, where pyasc is absent)."""
    options = early_config.known_args_namespace
    if options.ascrun_url:
        early_config.pluginmanager.register(AscrunPool(options.ascrun_url, options.ascrun_token,
                                                       options.ascrun_target, options.ascrun_bounds,
                                                       npu_is_host=not options.ascrun_no_npu_host,
                                                       soc=options.ascrun_soc, hazards=options.ascrun_hazards,
                                                       model=options.ascrun_model),
                                           "ascrun-pool")


def junit_properties(launch: Launch) -> List[Tuple[str, str]]:
    """A launch in the JUnit XML: its job, how it failed, its warnings, its modeled cycles (cpu)."""
    properties = [("ascrun_job", launch.job_id)] if launch.job_id else []
    if launch.error is not None:
        properties.append(("ascrun_error_kind", launch.error.kind))
    properties.extend(("ascrun_warning", warning) for warning in launch.warnings)
    model = launch.result.model if launch.result is not None else None
    if model is not None:
        properties.append(("ascrun_cycles", str(model["cycles"])))
    return properties


class AscrunPool:

    def __init__(self, url: str, token: str | None, target: str | None, bounds: str = "fault",
                 npu_is_host: bool = True, soc: str | None = None, hazards: str = "warn", model: bool = True):
        self.url = url
        self.token = token
        self.client = Client(url, token=token)
        self.notices: List[str] = []
        self.launches = RemoteLaunches(self.client, target=target, notice=self.notices.append, bounds=bounds,
                                       soc=soc, hazards=hazards, model=model)
        self._uninstall = install(self.launches, npu_is_host=npu_is_host)
        self._reported = 0

    def pytest_report_header(self) -> str:
        return f"ascrun: kernel launches go to {self.url}"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """The service and the token, checked once before any test: a dead pool or a refused token
        stops the session with one message rather than failing every test after its retries."""
        with Client(self.url, token=self.token, retries=1) as probe:
            try:
                probe.targets()
            except KernelError as e:
                pytest.exit(f"ascrun: the service at {self.url} cannot take launches: {e}",
                            returncode=pytest.ExitCode.USAGE_ERROR)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        new = self.launches.launches[self._reported:]
        self._reported = len(self.launches.launches)
        if new:
            report.sections.append((f"ascrun ({report.when})", "\n".join(launch.report() for launch in new)))
            item.user_properties.extend(property for launch in new for property in junit_properties(launch))
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        """A test marked ascrun_benchmark: its launches are benchmarks, their gates checked (bench.py)."""
        marker = item.get_closest_marker(MARKER)
        if marker is None:
            return (yield)
        if marker.args:
            raise TypeError(f"{MARKER} takes keyword arguments only")
        self.launches.benchmark = MarkedBenchmark(dict(marker.kwargs), item.nodeid, item.config.rootpath,
                                                  update=item.config.getoption("ascrun_update_baseline"))
        try:
            return (yield)
        finally:
            self.launches.benchmark = None

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for notice in self.notices:
            terminalreporter.write_line(notice)

    def pytest_unconfigure(self) -> None:
        self._uninstall()
        self.client.close()

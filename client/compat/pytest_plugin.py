"""pytest plugin: existing pyasc tests against an ascrun pool, unmodified.

    pytest --ascrun-url URL [--ascrun-target T] [--ascrun-token TOKEN] [--ascrun-bounds warn]
           [--ascrun-hazards fault] [--ascrun-no-npu-host] [--ascrun-update-baseline] path/to/pyasc/tests

Each `kernel[core_num, stream](...)` a test makes runs on the pool; the test's own asserts then
check the outputs written back into its tensors. device="npu" tensors are host tensors under
ascrun: the pool is the NPU, so where torch_npu is not installed `device="npu"`, "npu:N",
`torch.device("npu")`, `tensor.to("npu")` and `tensor.npu()` give CPU tensors (npu_host.py), and
pyasc's tests that make their inputs on "npu" run as they are (--ascrun-no-npu-host leaves torch
alone; torch_npu installed, it is always left alone). A failed launch raises ascrun.KernelError with
the remote message; each test's report gets an "ascrun" section listing its jobs with their
warnings and what the kernels printed, and its JUnit XML entry an `ascrun_job` property per job.
A test marked `@pytest.mark.ascrun_benchmark(max_cycles=..., baseline=..., tolerance=...)` runs
each of its launches as a benchmark job and fails when a cycle gate fails (bench.py, README
"Benchmarks"). Without --ascrun-url the plugin does nothing (the marker is registered, and inert).
"""
from __future__ import annotations

from typing import List

import pytest

from ..bench import MARKER, MARKER_HELP, MarkedBenchmark
from ..compiler.settings import ClientSettings
from ..compiler.targets import NAMES as TARGETS
from ..compiler.targets.contract import BOUNDS, HAZARDS
from ..service.client import Client
from . import npu_host
from .script import RemoteLaunches, install


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ascrun", "run pyasc kernel launches on an ascrun pool")
    group.addoption("--ascrun-url", default=None, help="the ascrun service; kernel launches go there")
    group.addoption("--ascrun-target", default=None, choices=TARGETS,
                    help="target of every launch (default: from each test's backend, cpu while the pool has "
                         "no sim/npu worker)")
    group.addoption("--ascrun-soc", default=None,
                    help="SOC of every launch (default: on sim/npu, each test's config.set_platform SOC)")
    group.addoption("--ascrun-token", default=ClientSettings.from_env().token,
                    help="bearer token (default: $ASCRUN_TOKEN)")
    group.addoption("--ascrun-bounds", default="fault", choices=BOUNDS,
                    help="fault (default): an access out of its operand fails the launch; warn: one the device "
                         "would perform silently is a warning in the report and the run goes on")
    group.addoption("--ascrun-hazards", default="warn", choices=HAZARDS,
                    help="cpu target: races between a core's pipes that no flag orders are warnings in the report "
                         "(warn, default), fail the launch (fault) or go unchecked (off)")
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
                                                       soc=options.ascrun_soc, hazards=options.ascrun_hazards),
                                           "ascrun-pool")


class AscrunPool:

    def __init__(self, url: str, token: str | None, target: str | None, bounds: str = "fault",
                 npu_is_host: bool = True, soc: str | None = None, hazards: str = "warn"):
        self.url = url
        self.client = Client(url, token=token)
        self.notices: List[str] = []
        self.launches = RemoteLaunches(self.client, target=target, notice=self.notices.append, bounds=bounds,
                                       soc=soc, hazards=hazards)
        self._uninstall = install(self.launches, npu_is_host=npu_is_host)
        self._reported = 0

    def pytest_report_header(self) -> str:
        return f"ascrun: kernel launches go to {self.url}"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        new = self.launches.launches[self._reported:]
        self._reported = len(self.launches.launches)
        if new:
            report.sections.append((f"ascrun ({report.when})", "\n".join(launch.report() for launch in new)))
            item.user_properties.extend(("ascrun_job", launch.job_id) for launch in new if launch.job_id)
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

"""pyasc's own kernel tests, rewritten for ascrun's cpu target (one module per source file of
pyasc's python/test; pyasc's files themselves are not copied: their licence limits them to Huawei's
processors). The kernels call what pyasc's kernels call, the parameter lists and the asserts are
pyasc's; tensors are torch CPU tensors or numpy arrays instead of device="npu".

Launches use pyasc's own syntax, `kernel[core_num, rt.current_stream()](...)`:
  pytest tests/pyasc_port                                  in-process, through ascrun.run_local
  python tests/pyasc_port/through_the_pool.py              the same cases through the service
  (= pytest tests/pyasc_port --ascrun-url URL --ascrun-target cpu --ascrun-bounds warn --ascrun-hazards fault)

The bounds policy is "warn" for every launch: pyasc's tilings read and write past the end of their
tensors (e.g. 16 blocks of 512-element tiles over 1000 elements), which the device does silently;
the warnings are in each case's report section. The hazard policy is "fault": pyasc's kernels run
on the device, so a race between their pipes that the cpu target's pipe model reports would be a
false report (none is: every case passes with it).

At the end: "pyasc kernel tests on cpu: P of N cases pass", with each case that did not.
"""
import functools
import inspect

import pytest

import ascrun

BOUNDS = "warn"
HAZARDS = "fault"
SUMMARY = "pyasc kernel tests on cpu: {passed} of {total} cases pass"


def through_pool(config: pytest.Config) -> bool:
    return bool(config.getoption("ascrun_url", default=None))


@pytest.fixture(autouse=True)
def cpu_launches(request, monkeypatch):
    """In-process: `kernel[core_num, stream](...)` is ascrun.run_local on the cpu target. Through the
    pool, the ascrun pytest plugin has already sent launches there."""
    if through_pool(request.config):
        if request.config.getoption("ascrun_bounds") != BOUNDS:
            pytest.fail(f"pyasc's tilings run past their tensors as the device allows: pass --ascrun-bounds {BOUNDS}")
        if request.config.getoption("ascrun_hazards") != HAZARDS:
            pytest.fail(f"pyasc's kernels run on the device, so none may race: pass --ascrun-hazards {HAZARDS}")
        return
    import asc.lib.runtime as rt
    from asc.runtime.jit import JITFunction

    warnings = []
    request.node.ascrun_warnings = warnings

    def launch(kernel, core_num, *args, **kwargs):  # keyword arguments as pyasc's launch takes them
        bound = inspect.signature(kernel.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        result = ascrun.run_local(kernel, core_num, *bound.args, bounds=BOUNDS, hazards=HAZARDS)
        warnings.extend(result.warnings)
        return result

    def launcher(kernel, grid):
        return functools.partial(launch, kernel, grid[0] if isinstance(grid, tuple) else grid)

    monkeypatch.setattr(JITFunction, "__getitem__", launcher)
    monkeypatch.setattr(rt, "current_stream", lambda: None)  # a stream means nothing on the cpu target


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    warnings = getattr(item, "ascrun_warnings", None)
    if call.when == "call" and warnings:
        report.sections.append(("ascrun warnings (run_local)", "\n".join(warnings)))
    return report


def pytest_terminal_summary(terminalreporter, config):
    def ours(report):
        return "pyasc_port/" in report.nodeid.replace("\\", "/") and report.when in ("call", "setup")

    stats = terminalreporter.stats
    passed = sum(1 for r in stats.get("passed", []) if ours(r) and r.when == "call")
    not_passing = [(kind, r) for kind in ("failed", "error", "xfailed", "xpassed", "skipped")
                   for r in stats.get(kind, []) if ours(r)]
    total = passed + len(not_passing)
    if total == 0:
        return
    where = f"through the pool at {config.getoption('ascrun_url')}" if through_pool(config) else "in-process, run_local"
    terminalreporter.write_line(SUMMARY.format(passed=passed, total=total) + f" ({where})")
    for kind, report in not_passing:
        reason = getattr(report, "wasxfail", "") or ""
        terminalreporter.write_line(f"  {kind}: {report.nodeid}" + (f": {reason}" if reason else ""))

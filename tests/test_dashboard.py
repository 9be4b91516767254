"""The dashboard (/dashboard) in a real headless browser: Debian's chromium driven by Playwright.
Against the real service: a launched job appears and finishes, queued ones say their place, a
job's page shows its highlighted Ascend C, a bar per timed stage and its modeled pipe lanes (a
cpu job's trace), a wrong token shows the API's 401. Each page's screenshot is kept in tmp_path;
with ASCRUN_UPDATE_SCREENSHOT=1 the job page's also becomes docs/dashboard.png (the README's)."""
import json
import os
import re
import shutil
from pathlib import Path

import httpx
import numpy as np
import pytest
import redis
from playwright.sync_api import expect, sync_playwright

import ascrun
import ops
import report
import uncompilable
from ascrun.compiler.errors import CompileError
from ascrun.job_status import TERMINAL, JobStatus
from ascrun.server.models import JobSummary
from ascrun.server.store.summary import SUMMARY_MAX_BYTES
from conftest import ROOT, Service, ghost_worker, start_redis, tenant_entry
from kernels.hazards import vadd_sync_kernel

pytestmark = pytest.mark.service

CHROMIUM = Path("/usr/bin/chromium")  # Debian's: Playwright's own browser builds cannot be downloaded here

TOKEN = "dashboard-secret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
OTHER_TOKEN, OPERATOR_TOKEN = "dashboard-other-token", "dashboard-operator-token"
GHOST_SOC = "GhostDash"  # a SOC only a heartbeat claims: jobs for it stay queued
EXPECT_MS = 20_000


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory):
    """Its own Redis: the jobs left queued for the ghost SOC must not weigh on other tests."""
    proc, url = start_redis(tmp_path_factory.mktemp("dashboard-redis"))
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def tenant_pool(own_redis):
    """A server with three tenants: "dash", "other" (at most 8 cores) and the operator "ops"; and a worker."""
    config = {"tenants": [tenant_entry("dash", TOKEN), tenant_entry("other", OTHER_TOKEN, limits={"max_core_num": 8}),
                          tenant_entry("ops", OPERATOR_TOKEN, operator=True)]}
    svc = Service(own_redis, {"ASCRUN_TENANTS": json.dumps(config)})
    svc.add_worker()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def open_pool(own_redis, tenant_pool):
    """The same pool (tenant_pool's worker) behind a server in open mode: no tenants."""
    svc = Service(own_redis)
    svc.wait_for_workers(1)
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}, the browser these tests drive (Debian's package chromium; "
                    "`make test` installs it when run as root)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    yield context.new_page()
    context.close()


def enter_token(page, token: str):
    page.fill("#token", token)
    page.click("#token-form button")


def screenshot(page, tmp_path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def test_the_page_is_served_without_a_token_and_only_its_own_files(tenant_pool):
    page = httpx.get(f"{tenant_pool.url}/dashboard")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    assert httpx.get(f"{tenant_pool.url}/dashboard/app.js").headers["content-type"].startswith("text/javascript")
    for name in ("nothing.js", "..%2Fapp.py", "%2E%2E"):
        missing = httpx.get(f"{tenant_pool.url}/dashboard/{name}")
        assert missing.status_code == 404 and missing.json()["error"]["kind"] == "not_found", name


def test_open_mode_needs_no_token(open_pool, page, tmp_path):
    page.goto(f"{open_pool.url}/dashboard")
    expect(page.locator("#health")).to_contain_text("open mode", timeout=EXPECT_MS)
    expect(page.locator("#pool tbody tr").first).to_contain_text("cpu", timeout=EXPECT_MS)
    # a cpu worker serves every SOC it models: one column counts them, each named in its title
    expect(page.locator("#pool tbody tr").first).to_contain_text(re.compile(r"\d+ SOCs"))
    expect(page.locator("#pool tbody tr span[title]").first).to_have_attribute(
        "title", re.compile(r"^Ascend910B1: \d+ worker"))
    assert page.locator("#token-form").is_hidden() and page.locator("#error").is_hidden()
    screenshot(page, tmp_path, "open-mode")


def test_the_pages_job_states_are_the_python_tables(open_pool, page):
    """The page's scripts import a job's states from /dashboard/states.js, which the API server
    makes from job_status.py: what the browser reads is JobStatus and TERMINAL, as Python says them."""
    answer = httpx.get(f"{open_pool.url}/dashboard/states.js")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/javascript")
    assert answer.headers["content-security-policy"].startswith("default-src 'self'")
    page.goto(f"{open_pool.url}/dashboard")
    expect(page.locator("#health")).to_contain_text("open mode", timeout=EXPECT_MS)  # its modules loaded
    states = page.evaluate("""async () => {
        const states = await import("/dashboard/states.js");
        return {statuses: states.JobStatus, terminal: [...states.TERMINAL], frozen: Object.isFrozen(states.JobStatus)};
    }""")
    assert states == {"statuses": {status.name: status.value for status in JobStatus},
                      "terminal": [status.value for status in JobStatus if status in TERMINAL], "frozen": True}


def test_a_wrong_token_shows_the_apis_401(tenant_pool, page, tmp_path):
    page.goto(f"{tenant_pool.url}/dashboard")
    expect(page.locator("#token-form")).to_be_visible(timeout=EXPECT_MS)  # the service has tenants
    expect(page.locator("#health")).to_contain_text("a token is needed", timeout=EXPECT_MS)
    enter_token(page, "not-the-token")
    expect(page.locator("#error")).to_have_text(
        "401 unauthorized: token not recognised: no tenant of this service has it (check --token or $ASCRUN_TOKEN, "
        "or ask the operator for one)", timeout=EXPECT_MS)
    expect(page.locator("#token-form")).to_be_visible()
    expect(page.locator("#health")).to_contain_text("a token is needed")
    screenshot(page, tmp_path, "wrong-token")


def test_a_launched_job_appears_finishes_and_shows_its_code_and_timings(tenant_pool, page, tmp_path):
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{tenant_pool.url}/dashboard")
    expect(page.locator("#health")).to_contain_text("a token is needed", timeout=EXPECT_MS)
    enter_token(page, TOKEN)
    expect(page.locator("#forget-token")).to_be_visible(timeout=EXPECT_MS)
    expect(page.locator("#health")).to_contain_text("tenant dash", timeout=EXPECT_MS)  # whose token it took
    expect(page.locator("#health")).not_to_contain_text("a token is needed")

    x, y = np.random.default_rng(0).random((2, 8 * 512), dtype=np.float32)
    z = np.zeros_like(x)
    connection = redis.Redis.from_url(tenant_pool.env["REDIS_URL"])
    ghost = {"cpu": {"socs": [GHOST_SOC]}}
    with ascrun.Client(tenant_pool.url, token=TOKEN) as client:
        launched = client.submit(ops.binary_kernel, 8, x, y, z, 512, "add")
        row = page.locator(f'#jobs tr[data-job="{launched.id}"]')
        expect(row).to_be_visible(timeout=EXPECT_MS)
        expect(row.locator(".status")).to_have_text("finished", timeout=EXPECT_MS)
        launched.result()
        np.testing.assert_array_equal(z, x + y)
        client.launch(ops.binary_kernel, 8, x, y, np.zeros_like(x), 512, "add")  # both caches hit
        with ghost_worker(connection, ghost, "test-dashboard-ghost"):
            queued = [client.submit(ops.spin_kernel, 1, np.full(64, i, np.float32), np.zeros(64, np.float32), 1,
                                    soc=GHOST_SOC) for i in range(2)]
            for handle, place in zip(queued, ("1st", "2nd")):
                expect(page.locator(f'#jobs tr[data-job="{handle.id}"] .status')).to_have_text(
                    f"queued: {place} of 2", timeout=EXPECT_MS)
        # the list's summaries place them: no job's record is read until one is opened
        assert [url for url in requested if "/v1/jobs/" in url] == []
        with page.expect_response(lambda answer: "/v1/jobs?" in answer.url, timeout=EXPECT_MS) as polled:
            pass  # the next poll's list
        rows = polled.value.json()["jobs"]
        assert launched.id in [job["id"] for job in rows]
        for job in rows:  # summaries: no outputs, log or warnings, whatever the jobs returned
            assert set(job) <= set(JobSummary.model_fields) and "outputs" not in job, job
        assert len(polled.value.body()) <= len(rows) * SUMMARY_MAX_BYTES
        record = client.job(launched.id)
    expect(page.locator("#cache-rates")).to_contain_text("frontend")

    row.click()
    assert page.evaluate("location.hash") == f"#job={launched.id}"
    expect(page.locator("#source .tok-function", has_text="binary_kernel").first).to_be_visible(timeout=EXPECT_MS)
    expect(page.locator("#ir .tok-symbol").first).to_be_visible()
    stages = [stage for stage in record["timings"] if stage != "total"]
    assert page.locator("#timing-chart .stage").evaluate_all("bars => bars.map(b => b.dataset.stage)") == stages
    expect(page.locator("#outputs tbody")).to_contain_text("float32")
    # the trace, read with the tenant's token: a lane per pipe that ran, per block
    expect(page.locator('#trace .core[data-core="block 7"] .lane[data-pipe="MTE2"]')).to_be_visible()
    shot = screenshot(page, tmp_path, "job")
    if os.environ.get("ASCRUN_UPDATE_SCREENSHOT"):  # the README's picture, renewed on request only
        shutil.copyfile(shot, ROOT / "docs" / "dashboard.png")

    page.goto(f"{tenant_pool.url}/dashboard#job={launched.id}")  # a link to the job, in a new load
    expect(page.locator("#job-title")).to_contain_text(launched.id, timeout=EXPECT_MS)
    page.evaluate(f"location.hash = 'job={launched.id[:12]}'")  # a link with the 12 characters the list shows
    expect(page.locator(f'#jobs tr[data-job="{launched.id}"]')).to_have_class(re.compile("selected"),
                                                                            timeout=EXPECT_MS)
    assert page.evaluate("location.hash") == f"#job={launched.id}"  # the link became the job's full id
    expect(page.locator('#trace .core[data-core="block 7"] .lane[data-pipe="MTE2"]')).to_be_visible()


def test_a_jobs_page_shows_its_log_warnings_and_error(tenant_pool, page, tmp_path):
    """Three jobs, each opened by its link (#job=<id>): one that prints, one whose overrun is a
    warning (bounds="warn"), and the same overrun as a fault."""
    x = (np.arange(1000) * 0.5).astype(np.float32)
    with ascrun.Client(tenant_pool.url, token=TOKEN) as client:
        printed = client.launch(report.print_kernel, 1, np.ones(16, np.float32), np.ones(16, np.float16),
                                np.ones(16, np.int32), 16, 0, 0, 1.5)
        warned = client.launch(report.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0, bounds="warn")
        faulted = client.submit(report.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0)
        with pytest.raises(ascrun.KernelError) as fault:
            faulted.result()
    page.goto(f"{tenant_pool.url}/dashboard")
    enter_token(page, TOKEN)

    page.evaluate(f"location.hash = 'job={printed.job_id}'")
    expect(page.locator("#log")).to_contain_text("[AIV Block 0/1] block 0 of 1: n=16 scale=1.500000", timeout=EXPECT_MS)
    expect(page.locator("#warnings li")).to_have_text(["none"])

    page.evaluate(f"location.hash = 'job={warned.job_id}'")
    expect(page.locator("#warnings li")).to_have_text(warned.warnings, timeout=EXPECT_MS)
    assert page.locator("#job-error").is_hidden()

    page.evaluate(f"location.hash = 'job={faulted.id}'")
    expect(page.locator("#job-error-message")).to_have_text(f"runtime_error: {fault.value}", timeout=EXPECT_MS)
    expect(page.locator("#source .tok-function", has_text="overrun_kernel").first).to_be_visible()
    expect(page.locator(f'#jobs tr[data-job="{faulted.id}"] .status')).to_have_text("failed")
    screenshot(page, tmp_path, "failed-job")

    # the list's column of errors and warnings: the error's kind and first line, the warnings' count
    summaries = {job["id"]: job for job in httpx.get(f"{tenant_pool.url}/v1/jobs", headers=AUTH).json()["jobs"]}
    error = summaries[faulted.id]["error"]
    assert error["kind"] == "runtime_error" and str(fault.value).startswith(error["headline"])
    expect(page.locator(f'#jobs tr[data-job="{faulted.id}"] .problems')).to_have_text(
        f"{error['kind']}: {error['headline']}")
    expect(page.locator(f'#jobs tr[data-job="{warned.job_id}"] .problems')).to_have_text(
        f"{len(warned.warnings)} warnings")
    expect(page.locator(f'#jobs tr[data-job="{printed.job_id}"] .problems')).to_have_text("")


def test_a_compile_error_shows_beside_the_kernels_python_with_its_line_marked(tenant_pool, page, tmp_path):
    """The error as printed (preformatted), and the kernel's function from the job's record (the
    launch spec that held it is gone), numbered as in its file, the line the error cites marked."""
    path = Path(uncompilable.__file__)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "asc.exp(" in text)
    with ascrun.Client(tenant_pool.url, token=TOKEN) as client:
        failed = client.submit(uncompilable.exp_with_wrong_arguments_kernel, 1, np.zeros(64, np.float32), 64)
        with pytest.raises(CompileError) as error:
            failed.result()
    assert f"{path}:{line}" in str(error.value)
    page.goto(f"{tenant_pool.url}/dashboard#job={failed.id}")
    enter_token(page, TOKEN)

    message = page.locator("#job-error-message")
    expect(message).to_be_visible(timeout=EXPECT_MS)
    assert message.evaluate("pre => [pre.tagName, pre.innerText]") == ["PRE", f"compile_error: {error.value}"]
    python = page.locator("#job-error-python figure.python")
    expect(python.locator("figcaption")).to_have_text(f"{path}:{line - 3} · exp_with_wrong_arguments_kernel")
    numbers = python.locator(".line").evaluate_all("lines => lines.map(l => Number(l.dataset.line))")
    assert numbers == list(range(line - 3, line + 1))  # the decorator's line to the last
    cited = python.locator(".line.cited")
    expect(cited).to_have_count(1)
    expect(cited).to_have_attribute("data-line", str(line))
    expect(cited).to_contain_text("asc.exp(x_local, x_local, 3.5, 7)")
    # beside each other in a wide window
    text, code = message.bounding_box(), python.bounding_box()
    assert text["x"] + text["width"] <= code["x"] and code["y"] < text["y"] + text["height"]
    expect(page.locator(f'#jobs tr[data-job="{failed.id}"] .problems .error')).to_contain_text(
        "compile_error: pyasc could not compile the kernel")
    screenshot(page, tmp_path, "compile-error")


def test_at_800_px_the_page_fits_and_a_clicked_job_comes_into_view(tenant_pool, browser, tmp_path):
    """An 800 px window: nothing wider than the window, a section's tables included; a job clicked in
    the list (its detail below, out of view) is scrolled to."""
    context = browser.new_context(viewport={"width": 800, "height": 600})
    page = context.new_page()
    x = (np.arange(1000) * 0.5).astype(np.float32)
    with ascrun.Client(tenant_pool.url, token=TOKEN) as client:
        warned = client.launch(report.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0, bounds="warn")
    page.goto(f"{tenant_pool.url}/dashboard")
    enter_token(page, TOKEN)
    row = page.locator(f'#jobs tr[data-job="{warned.job_id}"]')
    expect(row.locator(".problems")).to_contain_text("warnings", timeout=EXPECT_MS)
    overflow = """() => [document.documentElement, ...document.querySelectorAll("section:not([hidden])")]
        .filter(part => part.scrollWidth > part.clientWidth).map(part => part.id || part.tagName)"""
    assert page.evaluate(overflow) == []

    job_top = "() => document.getElementById('job').getBoundingClientRect().top"
    row.locator("td").first.click()
    page.wait_for_function(f"() => Math.abs(({job_top})()) < 2", timeout=EXPECT_MS)  # at the window's top
    expect(page.locator('#trace .core[data-core="block 0"]')).to_be_visible(timeout=EXPECT_MS)
    assert page.evaluate("scrollY") > 0 and page.evaluate(overflow) == []
    screenshot(page, tmp_path, "narrow")
    context.close()


BAR = re.compile(r"M([-\d.e+]+) [-\d.e+]+h([-\d.e+]+)")  # a lane's bar in its path: start cycle, width


def lane_bars(page, core: str, pipe: str) -> list[tuple[float, float]]:
    """The bars a lane draws, as (start, end) in cycles: its paths' rectangles."""
    paths = page.locator(f'#trace .core[data-core="{core}"] .lane[data-pipe="{pipe}"] path')
    return [(float(x), float(x) + float(w)) for d in paths.evaluate_all("ps => ps.map(p => p.getAttribute('d'))")
            for x, w in BAR.findall(d)]


@pytest.fixture(scope="module")
def pipelined_job(service):
    """pyasc's 01_add double-buffered with the copy-in of the next tile waiting only for its own buffer
    (tests/kernels/hazards.py, pipelined=1): its MTE2 copies overlap the V adds. Its record and trace."""
    x = np.random.default_rng(1).random(8 * 2048, dtype=np.float32)
    z = np.zeros_like(x)
    with ascrun.Client(service.url) as client:
        handle = client.submit(vadd_sync_kernel, 8, x, x.copy(), z, 2048, 2, 0, 0, 0, 1)
        handle.result()
        record = client.job(handle.id)
    np.testing.assert_array_equal(z, x + x)
    trace = httpx.get(f"{service.url}/v1/jobs/{record['id']}/trace")
    trace.raise_for_status()
    return record, trace.json()


def test_a_cpu_jobs_trace_shows_as_pipe_lanes_per_block(service, pipelined_job, page, tmp_path):
    record, trace = pipelined_job
    page.goto(f"{service.url}/dashboard#job={record['id']}")
    block0 = page.locator('#trace .core[data-core="block 0"]')
    expect(block0).to_be_visible(timeout=EXPECT_MS)
    pipes = block0.locator(".lane").evaluate_all("lanes => lanes.map(l => l.dataset.pipe)")
    assert {"MTE2", "V", "MTE3"} <= set(pipes), pipes

    pid = next(e["pid"] for e in trace["traceEvents"] if e["name"] == "process_name" and e["args"]["name"] == "block 0")
    instructions = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == pid]
    bars = {pipe: lane_bars(page, "block 0", pipe) for pipe in pipes}
    assert sum(map(len, bars.values())) == len(instructions)
    assert sorted(start for lane in bars.values() for start, _ in lane) == sorted(
        e["args"]["cycle"] for e in instructions)
    # the point of the view: with double buffering, a copy-in runs while an add does
    assert any(a < d and c < b for a, b in bars["MTE2"] for c, d in bars["V"])
    assert page.locator("#trace-cycles").get_attribute("data-cycles") == str(record["model"]["cycles"])
    expect(page.locator("#trace-cycles")).to_have_text(f"{record['model']['cycles']:,}")

    # the tooltip of the first copy-in: API name, pipe, start cycle, cycles
    first = min((e for e in instructions if e["cat"] == "MTE2"), key=lambda e: e["args"]["cycle"])
    track = block0.locator('.lane[data-pipe="MTE2"] svg')
    span = track.evaluate("t => t.viewBox.baseVal.width")
    middle = first["args"]["cycle"] + first["args"]["cycles"] / 2
    box = track.bounding_box()
    track.hover(position={"x": box["width"] * middle / span, "y": box["height"] / 2})
    tip = page.locator("#trace .trace-tip")
    expect(tip).to_be_visible()
    expect(tip.locator("b")).to_have_text(first["name"])
    expect(tip).to_contain_text(f"MTE2 · block 0 · start cycle {first['args']['cycle']:,} · "
                                f"{first['args']['cycles']:,} cycles")
    screenshot(page, tmp_path, "trace")

    with page.expect_download() as download:  # the trace as the API gave it, for Perfetto
        page.click("#trace a.download")
    assert download.value.suggested_filename == f"{record['id']}.trace.json"
    assert json.loads(Path(download.value.path()).read_text()) == trace


def test_a_job_without_a_trace_says_so(service, page):
    x = (np.arange(1000) * 0.5).astype(np.float32)
    with ascrun.Client(service.url) as client:
        faulted = client.submit(report.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0)
        with pytest.raises(ascrun.KernelError):
            faulted.result()
    missing = httpx.get(f"{service.url}/v1/jobs/{faulted.id}/trace")
    assert missing.status_code == 404 and "has no trace" in missing.json()["error"]["message"]
    page.goto(f"{service.url}/dashboard#job={faulted.id}")
    expect(page.locator("#trace")).to_have_text(missing.json()["error"]["message"], timeout=EXPECT_MS)
    assert page.locator("#trace svg").count() == 0 and page.locator("#trace a.download").count() == 0


def test_a_full_trace_draws_every_bar(service, page):
    """The most a job's trace holds (8 cores x 2048 instructions), drawn by the page's own module: a
    lane per pipe and core, a bar per instruction (its speed is not a test's business)."""
    page.goto(f"{service.url}/dashboard")
    expect(page.locator("#health")).to_contain_text("open mode", timeout=EXPECT_MS)
    drawn = page.evaluate("""async () => {
        const { drawTrace } = await import("./dashboard/trace.js");
        const pipes = ["S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"];
        const events = [];
        for (let pid = 0; pid < 8; pid++) {
            events.push({ name: "process_name", ph: "M", pid, args: { name: `block ${pid}` } });
            pipes.forEach((name, tid) => events.push({ name: "thread_name", ph: "M", pid, tid, args: { name } }));
            for (let i = 0; i < 2048; i++) {
                const tid = i % 7;
                events.push({ name: `op${i}`, cat: pipes[tid], ph: "X", pid, tid, ts: 0, dur: 0,
                              args: { cycle: i * 10, cycles: 9 + (i % 50) } });
            }
            events.push({ name: "12 more instructions not traced", ph: "i", s: "p", pid, tid: 0, ts: 0 });
        }
        const trace = { displayTimeUnit: "ns", otherData: { clock_ghz: 1.85 }, traceEvents: events };
        const text = JSON.stringify(trace);
        const container = document.getElementById("trace");
        drawTrace(container, JSON.parse(text), text, { id: "synthetic", model: { cycles: 20530 } });
        container.closest("section").hidden = false;
        await new Promise((painted) => requestAnimationFrame(() => setTimeout(painted)));
        const bars = [...container.querySelectorAll("svg.track")].map((lane) =>
            [...lane.querySelectorAll("path")].reduce((n, p) => n + p.getAttribute("d").split("M").length - 1, 0));
        return { lanes: bars.length, bars: bars.reduce((a, b) => a + b, 0) };
    }""")
    assert (drawn["lanes"], drawn["bars"]) == (8 * 7, 8 * 2048)
    expect(page.locator('#trace .core[data-core="block 7"] .core-head')).to_contain_text(
        "12 more instructions not traced")


def own_job(token: str, url: str):
    """A finished job of the token's tenant (the cached add): its id."""
    x = np.ones(8 * 512, np.float32)
    with ascrun.Client(url, token=token) as client:
        handle = client.submit(ops.binary_kernel, 8, x, x, np.zeros_like(x), 512, "add")
        handle.result()
    return handle.id


def test_a_tenant_sees_neither_another_tenants_jobs_nor_the_pool(tenant_pool, page):
    other_job, dash_job = own_job(OTHER_TOKEN, tenant_pool.url), own_job(TOKEN, tenant_pool.url)
    listed = httpx.get(f"{tenant_pool.url}/v1/jobs", params={"limit": 500}, headers=AUTH).json()["jobs"]
    assert dash_job in [job["id"] for job in listed] and {job["tenant"] for job in listed} == {"dash"}
    assert httpx.get(f"{tenant_pool.url}/v1/jobs/{other_job}", headers=AUTH).status_code == 404
    for path, params in (("/v1/pool", {}), ("/v1/jobs", {"every_tenant": "true"})):
        refused = httpx.get(f"{tenant_pool.url}{path}", params=params, headers=AUTH)
        assert refused.status_code == 403 and refused.json()["error"]["message"] == (
            "tenant 'dash' is not an operator: only a tenant marked \"operator\": true in the tenants file sees "
            "the whole pool")

    page.goto(f"{tenant_pool.url}/dashboard")
    enter_token(page, TOKEN)
    expect(page.locator(f'#jobs tr[data-job="{dash_job}"]')).to_be_visible(timeout=EXPECT_MS)
    expect(page.locator(f'#jobs tr[data-job="{other_job}"]')).to_have_count(0)
    expect(page.locator("#jobs .tenant")).to_have_count(0)
    assert page.locator("#operator-section").is_hidden()


def test_an_operator_sees_every_tenants_jobs_every_worker_and_each_tenants_figures(tenant_pool, page, tmp_path,
                                                                                   request):
    """The operator's token: every tenant's jobs with their tenants, the worker with the job it runs
    (a spinning one, until its timeout), and the tenants of the tenants file with their ended jobs by
    status and their refusals by reason; another tenant's job opens."""
    other_job, dash_job = own_job(OTHER_TOKEN, tenant_pool.url), own_job(TOKEN, tenant_pool.url)
    x = np.ones(64, np.float32)
    other = ascrun.Client(tenant_pool.url, token=OTHER_TOKEN)
    request.addfinalizer(other.close)
    with pytest.raises(ascrun.KernelError, match=r"\(max_core_num\)"):  # refused: 16 cores, over other's 8
        other.launch(ops.binary_kernel, 16, x, x, np.zeros_like(x), 4, "add")
    spinning = other.submit(ops.spin_kernel, 1, x, np.zeros_like(x), 2**31 - 1, timeout=18)
    operator_auth = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    page.goto(f"{tenant_pool.url}/dashboard")
    enter_token(page, OPERATOR_TOKEN)
    expect(page.locator("#health")).to_contain_text("tenant ops (operator)", timeout=EXPECT_MS)

    # every tenant's jobs, each with its tenant
    for job_id, who in ((other_job, "other"), (dash_job, "dash")):
        expect(page.locator(f'#jobs tr[data-job="{job_id}"] .tenant')).to_have_text(who, timeout=EXPECT_MS)
    # the worker, with the job it runs now
    targets = httpx.get(f"{tenant_pool.url}/v1/targets", headers=operator_auth).json()["targets"]
    (name,) = [worker["name"] for target in targets for worker in target["live"]]  # the pool's one worker
    row = page.locator(f'#workers tr[data-worker="{name}"]')
    expect(row.locator(f'a[href="#job={spinning.id}"]')).to_be_visible(timeout=60_000)
    overview = httpx.get(f"{tenant_pool.url}/v1/pool", headers=operator_auth).json()
    (said,) = overview["workers"]
    socs = said["serves"]["cpu"]["socs"]  # every SOC the cpu target models: counted, named in the title
    assert "Ascend910B1" in socs and len(socs) > 3
    expect(row).to_contain_text(f"cpu ({len(socs)} SOCs; build + run)")
    expect(row.locator("span[title]").first).to_have_attribute("title", f"cpu: {', '.join(socs)}")
    expect(row).to_contain_text("frontend, build, run: memory")
    expect(row).to_contain_text(re.compile(r"\d+\.\d s ago"))
    assert said["name"] == name and said["serves"]["cpu"]["jails"]["stages"] == ["frontend", "build", "run"]
    # the tenants of the tenants file, each with its figures
    expect(page.locator("#tenants tbody tr")).to_have_count(3)
    assert page.locator("#tenants tbody tr").evaluate_all("rows => rows.map(r => r.dataset.tenant)") == [
        "dash", "other", "ops"]
    figures = {tenant["name"]: tenant for tenant in overview["tenants"]}
    assert figures["other"]["refusals"] == {"max_core_num": 1} and figures["other"]["active"] == 1
    other_tenant = page.locator('#tenants tr[data-tenant="other"]')
    expect(other_tenant).to_contain_text("max_core_num: 1")
    screenshot(page, tmp_path, "operator")

    with pytest.raises(ascrun.KernelError) as spun:
        spinning.result()
    assert spun.value.kind == "timeout"
    listed = other.jobs(limit=500)
    ended = {status: sum(job["status"] == status for job in listed) for status in ("finished", "timed_out")}
    cells = [ended["finished"], 0, ended["timed_out"], 0, "max_core_num: 1"]
    expect(other_tenant.locator("td")).to_have_text(["other", *map(str, cells)], timeout=EXPECT_MS)

    # another tenant's job opens for the operator
    page.locator(f'#jobs tr[data-job="{other_job}"] td').first.click()
    expect(page.locator("#job-title")).to_contain_text(other_job, timeout=EXPECT_MS)
    expect(page.locator("#source .tok-function", has_text="binary_kernel").first).to_be_visible(timeout=EXPECT_MS)

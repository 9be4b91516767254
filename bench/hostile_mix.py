"""Hostile mix (issue 25's soak): two honest tenants' small launches, alone and beside a third
tenant running every attack of issue 25 at once with legal requests.

    python bench/hostile_mix.py [--seconds 60] [--rate 5] [--workers 2] [--redis-maxmemory 512mb]
                                [--attacks zeros,printf,...]

It starts `ascrun up` with three tenants (honest-a, honest-b, attacker; max_stored_bytes 64 MiB
each, the attacker at most one running job), warms each honest tenant's cache, then runs two
phases of --seconds each:

  quiet    honest-a and honest-b, 2 threads each, launch ops.spin_kernel (64 floats, cached) at
           --rate launches a second per tenant, every output checked against numpy
  hostile  the same, while the attacker, a separate process at nice 19 in a session of its own
           (start_attacker) connecting from 127.0.0.2, runs the --attacks (default all, see
           ATTACKS) at once

and prints them side by side: the honest launches that succeeded, their p50 and p95 latency (goal:
hostile at most 2x quiet), the CPU seconds the API server, the honest clients (this process) and the
attacker's process spent (the attacker's clients run on the same machine: under nice 19 they get a
core's spare time, and their share says how much of the machine the attack itself took), Redis'
used memory at its peak (sampled, and Redis' own peak since it
started, which counts a big write's buffer; goal: never above the sum of the tenants' quotas plus
the cache's size), the API server's and the workers' peak RSS, the workers
restarted; then what became of each attack's requests. An attack the service refuses (a 4xx, a 503, a
closed connection) just counts as refused. `--attacks` picks some, to see which costs most.
The environment passes through to `ascrun up` (e.g. the maxmemory of a cache Redis, where it runs
one: each Redis it starts is found among its children, the state's by its noeviction policy).
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import importlib.util
import itertools
import json
import os
import re
import secrets
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import httpx
import numpy as np
import redis

import ascrun
from ascrun.args import prepare
from ascrun.compiler import bundle as bundles
from ascrun.service.submission import job_arguments

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "tests" / "kernels"))
import ops  # noqa: E402
import report  # noqa: E402

MIB = 1 << 20
QUOTA = 64 * MIB  # every tenant's max_stored_bytes
HONEST = ("honest-a", "honest-b")
ATTACKER = "attacker"
ATTACKER_ADDRESS = "127.0.0.2"  # the API listens on 127.0.0.1; Linux routes all of 127/8 to lo
THREADS_PER_TENANT = 2
SAMPLE_S = 0.2
TCP_ESTABLISHED = 1  # a connection's state, the first byte of its TCP_INFO (linux/tcp.h)

# The attacks' sizes: issue 25's, scaled to what a 64 MiB quota allows where the quota is the point.
ZEROS_ELEMENTS = 8 << 20  # a 32 MiB float32 output that the kernel writes 64 elements of
HUGE_ZEROS_ELEMENTS = 1 << 28  # 1 GiB of zeros in a small request (issue 25, 5)
PRINTF_ROUNDS = 40_000  # ~4 MB of printf
JUNK_OPTIONS = 12  # MiB of unknown options per request
LONG_JOB_S = 20  # a never-ending kernel, stopped by its timeout (short: the attacker's other jobs share its slot)
UPLOADS_AT_ONCE, UPLOAD_BYTES = 8, 100 * MIB  # chunked uploads sent, then stalled (the API holds up to 64 MiB of each)
DOWNLOADS_AT_ONCE, DOWNLOAD_BYTES = 30, 32 * MIB  # downloads of one blob, never read
HOLD_S = 20  # how long a stalled upload or an unread download is held before it starts again
HALF_HEADS = 2000  # connections each holding half a request head
LISTS_AT_ONCE, HEAVY_AT_ONCE, ANONYMOUS_AT_ONCE = 8, 2, 4
ANONYMOUS_BODY = 256 * MIB  # a chunked body sent without a token


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the pool ------------------------------------------------------------------------------------

class Pool:
    """`ascrun up` with the three tenants; its processes found among its children."""

    def __init__(self, workdir: Path, workers: int, maxmemory: str):
        self.workdir = workdir
        self.tokens = {name: secrets.token_hex(16) for name in (*HONEST, ATTACKER)}
        tenants = {"limits": {"max_stored_bytes": QUOTA},
                   "tenants": [{"name": name, "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
                                "limits": {"max_running_jobs": 1} if name == ATTACKER else {}}
                               for name, token in self.tokens.items()]}
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "REDIS_URL_FILE", "ASCRUN_TENANTS_FILE")}
        env.update(ASCRUN_TENANTS=json.dumps(tenants), ASCRUN_REDIS_MAXMEMORY=maxmemory)
        with open(workdir / "up.log", "wb") as log:
            self.up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers",
                                        str(workers)], env=env, stdout=subprocess.PIPE, stderr=log,
                                       start_new_session=True, text=True)
        banner = self.up.stdout.readline()
        found = re.match(r"ascrun is up at (\S+) ", banner)
        if not found:
            self.stop()
            raise SystemExit(f"ascrun up did not start: {banner!r}; see {workdir / 'up.log'}")
        self.url = found.group(1)
        self.redis = self._redis_roles()
        self.maxmemory = {role: int(r.config_get("maxmemory")["maxmemory"]) for role, r in self.redis.items()}

    def _redis_roles(self) -> Dict[str, redis.Redis]:
        """The redis-servers `ascrun up` started, by role: the state's never evicts, a cache's does;
        one alone holds both."""
        found = {}
        for pid in _children(self.up.pid):
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes()  # redis-server sets it to "path host:port"
            except FileNotFoundError:
                continue
            port = re.search(rb"redis-server\S* \S+:(\d+)", title)
            if port:
                connection = redis.Redis(port=int(port.group(1)), socket_timeout=10)
                evicts = connection.config_get("maxmemory-policy")["maxmemory-policy"] != "noeviction"
                found["cache" if evicts else "state"] = connection
        return found if len(found) > 1 else {"state+cache": found["state"]}

    def processes(self) -> Dict[str, List[int]]:
        """The pids of the API server, of the workers (`ascrun up` replaces a worker that dies) and
        of the Redis servers."""
        found = {"server": [], "worker": [], "redis": []}
        for pid in _children(self.up.pid):
            try:
                args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except FileNotFoundError:
                continue
            role = args[3].decode() if len(args) > 3 and args[1:3] == [b"-m", b"ascrun.cli"] else ""
            role = "redis" if args[0].startswith(b"redis-server") or b"/redis-server" in args[0] else role
            if role in found:
                found[role].append(pid)
        return found

    def stop(self) -> None:
        self.up.send_signal(signal.SIGTERM)  # it stops its processes, Redis last
        try:
            self.up.wait(60)
        except subprocess.TimeoutExpired:
            self.up.kill()
            self.up.wait()


def _children(pid: int) -> List[int]:
    try:
        return [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
    except FileNotFoundError:
        return []


def _descendants(pid: int) -> List[int]:
    found = _children(pid)
    return found + [d for c in found for d in _descendants(c)]


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _pss_kib(pid: int) -> int:
    """The process' proportional set size: summed over processes, a shared page counts once."""
    try:
        found = re.search(r"^Pss:\s+(\d+)", Path(f"/proc/{pid}/smaps_rollup").read_text(), re.M)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0
    return int(found.group(1)) if found else 0


def _cpu_s(pid: int, reaped: bool = False) -> float:
    """The process' user + system CPU seconds (its threads', and if `reaped` its children's that it
    waited for)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return sum(int(f) for f in fields[11:15 if reaped else 13]) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_s(pid: int) -> float:
    """The CPU seconds of the process and of all its descendants, living or waited for."""
    return sum(_cpu_s(p, reaped=True) for p in [pid, *_descendants(pid)])


def _reset_peak_rss(pid: int) -> bool:
    """Start the process' VmHWM (peak RSS) again from its current RSS."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


# --- what a phase costs the pool -----------------------------------------------------------------

class Sampler:
    """Peaks over a phase: each Redis' used memory and OOM refusals, the API server's and a worker's
    RSS (their VmHWM, the kernel's own peak, where it can be reset; else the samples' peak), a
    worker's jails (all its descendants) at once, and the workers `ascrun up` restarted."""

    def __init__(self, pool: Pool):
        self.pool = pool
        self.stopping = threading.Event()
        start = pool.processes()
        self.workers_seen = set(start["worker"])
        self.hwm = all(_reset_peak_rss(pid) for pid in start["server"] + start["worker"])
        self.oom_before = {role: _oom_count(r) for role, r in pool.redis.items()}
        self.cpu_before = self._cpu(start)
        self.peaks = collections.Counter()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _cpu(self, processes: Dict[str, List[int]]) -> Dict[str, float]:
        return {"api cpu": sum(_cpu_s(pid) for pid in processes["server"]),
                "workers cpu": sum(_tree_cpu_s(pid) for pid in processes["worker"]),
                "redis cpu": sum(_cpu_s(pid) for pid in processes["redis"]), "clients cpu": time.process_time()}

    def _peak(self, name: str, value: int) -> None:
        self.peaks[name] = max(self.peaks[name], value)

    def _run(self) -> None:
        while not self.stopping.wait(SAMPLE_S):
            self.sample()

    def sample(self) -> None:
        for role, connection in self.pool.redis.items():
            try:
                self._peak(f"redis {role}", connection.info("memory")["used_memory"])
            except redis.RedisError:
                self.peaks[f"redis {role} unreachable"] += 1
        processes = self.pool.processes()
        rss = "VmHWM" if self.hwm else "VmRSS"
        for pid in processes["server"]:
            self._peak("api", _status_kib(pid, rss) << 10)
        for pid in processes["worker"]:
            self.workers_seen.add(pid)
            self._peak("worker", _status_kib(pid, rss) << 10)
            self._peak("jails", sum(_pss_kib(d) for d in _descendants(pid)) << 10)

    def stop(self) -> dict:
        self.stopping.set()
        self.thread.join()
        self.sample()
        for role, connection in self.pool.redis.items():  # Redis' own peak, since it started, catches what
            # the samples miss: a big write's query buffer counts while it arrives
            with contextlib.suppress(redis.RedisError):
                self._peak(f"redis {role}", connection.info("memory")["used_memory_peak"])
        figures = dict(self.peaks)
        for role, connection in self.pool.redis.items():
            figures[f"redis {role} OOM"] = _oom_count(connection) - self.oom_before[role]
        figures["restarts"] = len(self.workers_seen) - len(self.pool.processes()["worker"])
        for name, seconds in self._cpu(self.pool.processes()).items():
            figures[name] = seconds - self.cpu_before[name]
        return figures


def _oom_count(connection: redis.Redis) -> int:
    """Commands this Redis refused at maxmemory since it started."""
    try:
        return connection.info("errorstats").get("errorstat_OOM", {}).get("count", 0)
    except redis.RedisError:
        return 0


# --- the honest tenants --------------------------------------------------------------------------

def honest_load(url: str, tokens: Dict[str, str], seconds: float, rate: float) -> dict:
    """Each honest tenant's threads launch ops.spin_kernel (z = x + 1) at `rate` a second in all,
    each with its own random input, for `seconds`; the latency of every launch that succeeded and
    the kinds of those that did not."""
    latencies, stages, failures, lock = [], [], collections.Counter(), threading.Lock()
    interval = THREADS_PER_TENANT / rate
    deadline = time.monotonic() + seconds

    def one_thread(token: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        with ascrun.Client(url, token=token) as client:
            next_start = time.monotonic() + rng.random() * interval
            while next_start < deadline:
                time.sleep(max(0.0, next_start - time.monotonic()))
                x = rng.random(64, dtype=np.float32)
                z = np.zeros_like(x)
                start = time.perf_counter()
                try:
                    result = client.launch(ops.spin_kernel, 1, x, z, 1, timeout=30)
                    failure = None if np.array_equal(z, x + np.float32(1)) else "wrong output"
                except ascrun.KernelError as e:
                    failure = e.kind
                with lock:
                    if failure:
                        failures[failure] += 1
                    else:
                        latencies.append(time.perf_counter() - start)
                        stages.append((latencies[-1], dict(result.timings)))
                next_start = max(next_start + interval, time.monotonic())

    threads = [threading.Thread(target=one_thread, args=(tokens[name], 100 * t + i))
               for t, name in enumerate(HONEST) for i in range(THREADS_PER_TENANT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"latencies": sorted(latencies), "failures": failures, "stages": stages}


def warm(url: str, tokens: Dict[str, str], launches: int = 3) -> None:
    """Compile spin_kernel for each honest tenant (caches are per tenant) and start its jails: the
    phases measure cached launches."""
    for name in HONEST:
        with ascrun.Client(url, token=tokens[name]) as client:
            for _ in range(launches):
                x = np.ones(64, np.float32)
                client.launch(ops.spin_kernel, 1, x, np.zeros_like(x), 1, timeout=120)


# --- the attacker (its own process) --------------------------------------------------------------

class Attacker:
    """What every attack shares: the service, the token, the stop, and what became of each request
    (counts[attack][outcome]); connections come from ATTACKER_ADDRESS."""

    def __init__(self, url: str, token: str):
        self.url, self.token = url, token
        self.host, self.port = httpx.URL(url).host, httpx.URL(url).port
        self.stopping = threading.Event()
        self.counts: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.in_flight: collections.Counter = collections.Counter()  # attempts under way, by attack
        self.lock = threading.Lock()
        transport = dict(transport=httpx.HTTPTransport(local_address=ATTACKER_ADDRESS),
                         timeout=httpx.Timeout(90, connect=10), limits=httpx.Limits(max_connections=200))
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, **transport)
        self.anonymous = httpx.Client(base_url=url, **transport)

    def count(self, attack: str, outcome: str, n: int = 1) -> None:
        with self.lock:
            self.counts[attack][outcome] += n

    def connect(self) -> socket.socket:
        sock = socket.socket()
        sock.bind((ATTACKER_ADDRESS, 0))
        sock.settimeout(10)
        sock.connect((self.host, self.port))
        return sock

    def submit(self, body, wait: float = 60) -> str:
        """Submit a job (a dict, or its JSON already encoded) and wait for it: the outcome is the
        status code, and for an accepted job how it ended."""
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        response = self.http.post("/v1/jobs", params={"wait": wait}, content=content,
                                  headers={"Content-Type": "application/json"})
        if response.status_code >= 300:
            return answer_of(response)
        record = response.json()
        return f"{response.status_code} {record['status']}" + (f" ({record['error']['kind']})" if record.get("error")
                                                               else "")


def answer_of(response: httpx.Response) -> str:
    """The answer's status, and for a refusal the limit its message names (e.g. "429 max_stored_bytes")."""
    try:
        named = re.findall(r"\(([a-z_]+)[;)]", response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        named = []
    return " ".join([str(response.status_code), *named[-1:]])


def repeat(attacker: Attacker, name: str, attack: Callable[[Attacker], str],
           threads: int = 1) -> List[threading.Thread]:
    """`threads` threads each running `attack` again and again until the attacker stops, counting
    each outcome (an exception counts as its type)."""
    def loop() -> None:
        while not attacker.stopping.is_set():
            with attacker.lock:
                attacker.in_flight[name] += 1
            try:
                outcome = attack(attacker)
            except (httpx.HTTPError, OSError) as e:
                outcome = type(e).__name__
                attacker.stopping.wait(0.1)  # a refused connection does not spin
            with attacker.lock:
                attacker.in_flight[name] -= 1
            attacker.count(name, outcome)
    return [threading.Thread(target=loop, daemon=True) for _ in range(threads)]


def hold_sockets(attacker: Attacker, name: str, count: int, open_one: Callable[[], socket.socket],
                 hold_s: Optional[float], read: bool) -> List[threading.Thread]:
    """`count` connections opened by `open_one` and held, each let go and reopened when the server
    answers or closes it (watched if `read`; an unread one is only looked at as it is let go) or after
    `hold_s`: one thread with a selector, not a thread each."""
    def loop() -> None:
        selector, opened = selectors.DefaultSelector(), {}

        def let_go(sock: socket.socket, outcome: str) -> None:
            attacker.count(name, outcome)
            if read:
                selector.unregister(sock)
            sock.close()
            del opened[sock]

        while not attacker.stopping.is_set():
            while len(opened) < count and not attacker.stopping.is_set():
                try:
                    sock = open_one()
                except OSError as e:
                    attacker.count(name, type(e).__name__)
                    attacker.stopping.wait(0.1)
                    break
                opened[sock] = time.monotonic()
                if read:
                    selector.register(sock, selectors.EVENT_READ)
            if read:
                for key, _ in selector.select(timeout=0.5):
                    answer = _answer(key.fileobj, 0.1)
                    let_go(key.fileobj, _raw_status(answer) or ("answered" if answer else
                                                                              "closed by the server"))
            else:
                attacker.stopping.wait(0.5)
            for sock, since in list(opened.items()):
                if hold_s is not None and time.monotonic() - since > hold_s:
                    let_go(sock, "closed by the server" if _was_reset(sock) else f"held {hold_s} s")
        for sock in list(opened):
            let_go(sock, "closed by the server" if not read and _was_reset(sock) else "held to the end")
    return [threading.Thread(target=loop, daemon=True)]


def _was_reset(sock: socket.socket) -> bool:
    """Whether the server closed or reset this connection, which its client never read (a read would
    return the bytes received before the reset: the connection's TCP state tells)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] != TCP_ESTABLISHED


def _spin_body(rounds: int, z_elements: int = 64, timeout: Optional[float] = None) -> dict:
    """ops.spin_kernel on a random x; z all zeros (sent as `zeros`: nothing uploaded) of z_elements."""
    x = np.random.default_rng().random(64, dtype=np.float32)
    args, _ = job_arguments(prepare(["x", "z", "rounds"], [x, np.zeros(64, np.float32), rounds]))
    args[1]["shape"] = [z_elements]
    body = {"bundle": bundles.collect(ops.spin_kernel).to_json(), "core_num": 1, "args": args}
    return {**body, "timeout": timeout} if timeout else body


def attack_zeros(attacker: Attacker) -> List[threading.Thread]:
    """Outputs outside the quota, and trusted processes allocating what a tenant asks (issue 25, 2
    and 5): a zeros output costs no upload, then comes back whole; every third one is 1 GiB."""
    turn = itertools.count()

    def one(a: Attacker) -> str:
        elements = HUGE_ZEROS_ELEMENTS if next(turn) % 3 == 2 else ZEROS_ELEMENTS
        return f"{elements * 4 // MIB} MiB: " + a.submit(_spin_body(1, elements))
    return repeat(attacker, "zeros", one)


def attack_printf(attacker: Attacker) -> List[threading.Thread]:
    """Records outside the quota (issue 25, 3): a printf loop's log kept in the job's record."""
    values = [np.ones(64, np.float32), np.ones(64, np.float16), np.ones(64, np.int32), 8, 1, PRINTF_ROUNDS, 1.0]
    args, _ = job_arguments(prepare(["x", "h", "k", "n", "mode", "rounds", "scale"], values))
    body = {"bundle": bundles.collect(report.print_kernel).to_json(), "core_num": 1, "args": args}
    return repeat(attacker, "printf", lambda a: a.submit(body))


def attack_options(attacker: Attacker) -> List[threading.Thread]:
    """Records outside the quota (issue 25, 3): megabytes of junk `options`, failing at once."""
    body = {**_spin_body(1), "options": {f"junk_{i}": "x" * MIB for i in range(JUNK_OPTIONS)}}
    content = json.dumps(body).encode()
    return repeat(attacker, "options", lambda a: a.submit(content, wait=0), threads=2)


def attack_uploads(attacker: Attacker) -> List[threading.Thread]:
    """Uploads in progress outside the quota (issue 25, 4): chunked blob PUTs (no declared size),
    each sending UPLOAD_BYTES and then stalling."""
    def one(a: Attacker) -> str:
        sock = a.connect()
        try:
            sock.sendall(f"PUT /v1/blobs/{secrets.token_hex(32)} HTTP/1.1\r\nHost: {a.host}\r\n"
                         f"Authorization: Bearer {a.token}\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
            chunk = b"%x\r\n" % MIB + os.urandom(MIB) + b"\r\n"
            try:
                for _ in range(UPLOAD_BYTES // MIB):
                    sock.sendall(chunk)
            except OSError as e:  # the server stopped reading: its answer says why, if it sent one
                return _raw_status(_answer(sock, 1)) or type(e).__name__
            answer = _answer(sock, HOLD_S)  # stalled: an answer before HOLD_S is the server giving up on it
            if answer is None:
                return f"{UPLOAD_BYTES // MIB} MiB sent, held {HOLD_S} s"
            return _raw_status(answer) or "closed by the server"
        finally:
            sock.close()
    return repeat(attacker, "uploads", one, threads=UPLOADS_AT_ONCE)


def _answer(sock: socket.socket, timeout: float) -> Optional[bytes]:
    """What the server sent within `timeout` (b"" if it closed or reset the connection), None if nothing."""
    sock.settimeout(timeout)
    try:
        return sock.recv(4096)
    except socket.timeout:
        return None
    except OSError:
        return b""


def _raw_status(answer: Optional[bytes]) -> str:
    found = re.match(rb"HTTP/1\.[01] (\d{3})", answer or b"")
    return f"{found.group(1).decode()} answered" if found else ""


def attack_downloads(attacker: Attacker) -> List[threading.Thread]:
    """Slow readers (issue 25, 8): many downloads of one blob within the quota, never read."""
    data = os.urandom(DOWNLOAD_BYTES)
    digest = hashlib.sha256(data).hexdigest()
    uploaded = attacker.http.put(f"/v1/blobs/{digest}", content=data)
    attacker.count("downloads", f"upload of {DOWNLOAD_BYTES // MIB} MiB: {answer_of(uploaded)}")
    request = (f"GET /v1/blobs/{digest} HTTP/1.1\r\nHost: {attacker.host}\r\n"
               f"Authorization: Bearer {attacker.token}\r\n\r\n").encode()

    def open_one() -> socket.socket:
        sock = attacker.connect()
        sock.sendall(request)
        return sock
    return hold_sockets(attacker, "downloads", DOWNLOADS_AT_ONCE, open_one, HOLD_S, read=False)


def attack_bundles(attacker: Attacker) -> List[threading.Thread]:
    """A refused request is free (issue 25, 10): the costliest bundles to check, each refused last."""
    cases = _bench_module("bundle_check").cases()
    heavy = [json.dumps({**_spin_body(1), "bundle": b}).encode() for name, b in cases.items()
             if not name.startswith("reference")]
    turn = itertools.count()
    return repeat(attacker, "bundles", lambda a: a.submit(heavy[next(turn) % len(heavy)], wait=0),
                  threads=HEAVY_AT_ONCE)


def attack_long(attacker: Attacker) -> List[threading.Thread]:
    """Worker time (issue 25, 9): a kernel that never ends, stopped by its timeout."""
    return repeat(attacker, "long", lambda a: a.submit(_spin_body(2 ** 31 - 1, timeout=LONG_JOB_S)))


def attack_lists(attacker: Attacker) -> List[threading.Thread]:
    """A list costs what its records weigh (issue 25, 6): the longest job list, over and over."""
    return repeat(attacker, "lists", lambda a: answer_of(a.http.get("/v1/jobs", params={"limit": 500})),
                  threads=LISTS_AT_ONCE)


def attack_heads(attacker: Attacker) -> List[threading.Thread]:
    """Slowloris (issue 25, 8): connections holding half a request head, without a token."""
    def open_one() -> socket.socket:
        sock = attacker.connect()
        sock.sendall(f"POST /v1/jobs HTTP/1.1\r\nHost: {attacker.host}\r\n".encode())
        return sock
    return hold_sockets(attacker, "heads", HALF_HEADS, open_one, None, read=True)


def attack_anonymous(attacker: Attacker) -> List[threading.Thread]:
    """Body caps read a header, anonymous requests (issue 25, 7): chunked bodies of ANONYMOUS_BODY
    bytes without a token, beside small requests without one."""
    def body():
        chunk = bytes(MIB)
        for _ in range(ANONYMOUS_BODY // MIB):
            yield chunk

    def big(a: Attacker) -> str:
        return answer_of(a.anonymous.post("/v1/jobs", content=body(), headers={"Content-Type": "application/json"}))

    def small(a: Attacker) -> str:
        return answer_of(a.anonymous.get("/v1/jobs"))
    return (repeat(attacker, "anonymous", big, threads=ANONYMOUS_AT_ONCE // 2)
            + repeat(attacker, "anonymous", small, threads=ANONYMOUS_AT_ONCE - ANONYMOUS_AT_ONCE // 2))


ATTACKS = {"zeros": attack_zeros, "printf": attack_printf, "options": attack_options, "uploads": attack_uploads,
           "downloads": attack_downloads, "bundles": attack_bundles, "long": attack_long, "lists": attack_lists,
           "heads": attack_heads, "anonymous": attack_anonymous}


def run_attacker(url: str, attacks: List[str], seconds: float) -> None:
    """The attacker's process: every attack at once for `seconds`, then its counts as JSON on stdout."""
    attacker = Attacker(url, os.environ["ASCRUN_TOKEN"])
    threads = []
    for name in attacks:
        try:
            threads += ATTACKS[name](attacker)
        except (httpx.HTTPError, OSError) as e:  # its set-up (the downloads' blob) was refused
            attacker.count(name, f"set-up failed: {type(e).__name__}: {e}")
    for thread in threads:
        thread.start()
    print("attacking", flush=True)
    time.sleep(seconds)
    attacker.stopping.set()
    deadline = time.monotonic() + 5  # the holders count what they hold; a request in flight is not waited for
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    with attacker.lock:
        for name, n in attacker.in_flight.items():
            attacker.counts[name]["in flight at the end"] += n
        counts = {name: {k: v for k, v in c.items() if v} for name, c in attacker.counts.items()}
        times = os.times()
        print(json.dumps({"counts": counts, "cpu_s": times.user + times.system}), flush=True)
    os._exit(0)


def start_attacker(pool: Pool, attacks: List[str], seconds: float, workdir: Path) -> subprocess.Popen:
    """The attacker's process, at nice 19 in a session of its own. With the kernel's autogroups on
    (sched_autogroup_enabled, as here), a nice value weighs only against the same session's
    processes, and CPU is shared between sessions first: each of `ascrun up`'s processes and jails
    has one, and so did this benchmark and its attacker, at nice 0. The attacker's session is set
    to nice 19 as well: its clients stand for machines of its own, not for a share of the pool's."""
    env = dict(os.environ, ASCRUN_TOKEN=pool.tokens[ATTACKER])
    with open(workdir / "attacker.log", "wb") as log:
        process = subprocess.Popen(["nice", "-n", "19", sys.executable, __file__, "--attacker", pool.url, "--attacks",
                                    ",".join(attacks), "--seconds", str(seconds)], env=env, stdout=subprocess.PIPE,
                                   stderr=log, text=True, start_new_session=True)
    with contextlib.suppress(FileNotFoundError):  # a kernel without autogroups: nice 19 is enough
        Path(f"/proc/{process.pid}/autogroup").write_text("19")
    return process


# --- the report ----------------------------------------------------------------------------------

def _pct(ordered: list, q: float) -> float:
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def _mib(n: float) -> str:
    return f"{n / MIB:.0f} MiB"


def _honest_rows(quiet: dict, hostile: dict, paced: int) -> list:
    rows = [("honest launches ok", *(f"{len(p['latencies'])}/{len(p['latencies']) + sum(p['failures'].values())}"
                                     for p in (quiet, hostile)), f"goal: all ({paced} paced a phase)")]
    for name, q in (("p50", 50), ("p95", 95)):
        before, after = (_pct(p["latencies"], q) * 1e3 for p in (quiet, hostile))
        rows.append((f"honest {name} latency", f"{before:.0f} ms", f"{after:.0f} ms",
                     f"{after / before:.2f}x (goal <= 2x)"))
    rows.append(("honest failures", _kinds(quiet["failures"]), _kinds(hostile["failures"]), ""))
    return rows


def _redis_rows(pool: Pool, quiet: dict, hostile: dict) -> list:
    """Each Redis' peak, against what it may hold: the state (or a Redis of both roles) the tenants'
    quotas, a cache its maxmemory (it evicts), and both together the sum."""
    rows, cache_size = [], 0
    for role, maxmemory in pool.maxmemory.items():
        if role == "cache":
            cache_size, bound = maxmemory, "its maxmemory, evicting"
        else:
            bound = f"quotas 3 x {_mib(QUOTA)} = {_mib(3 * QUOTA)} (maxmemory {_mib(maxmemory)})"
        rows += [(f"redis {role}: used peak", _mib(quiet.get(f"redis {role}", 0)),
                  _mib(hostile.get(f"redis {role}", 0)), bound),
                 (f"redis {role}: OOM refusals", quiet[f"redis {role} OOM"], hostile[f"redis {role} OOM"], ""),
                 (f"redis {role}: no answer", quiet.get(f"redis {role} unreachable", 0),
                  hostile.get(f"redis {role} unreachable", 0), f"samples, of one every {SAMPLE_S} s")]
    if cache_size:
        rows.append(("redis both: used peaks", *(_mib(p.get("redis state", 0) + p.get("redis cache", 0))
                                                 for p in (quiet, hostile)),
                     f"quotas + cache = {_mib(3 * QUOTA + cache_size)}"))
    return rows


def print_report(phases: Dict[str, dict], pool: Pool, counts: dict, attacks: List[str], paced: int) -> None:
    quiet, hostile = phases["quiet"], phases["hostile"]
    rows = _honest_rows(quiet["load"], hostile["load"], paced) + _redis_rows(pool, quiet["cost"], hostile["cost"])
    for name, what in (("api", "API server peak RSS"), ("worker", "worker peak RSS (broker)"),
                       ("jails", "a worker's jails, PSS peak")):
        rows.append((what, _mib(quiet["cost"].get(name, 0)), _mib(hostile["cost"].get(name, 0)), ""))
    rows.append(("workers restarted", quiet["cost"]["restarts"], hostile["cost"]["restarts"], ""))
    for name, what, note in (("api cpu", "API server CPU", "its one core"),
                             ("workers cpu", "workers CPU", "with their jails"), ("redis cpu", "Redis CPU", ""),
                             ("clients cpu", "honest clients CPU", "this process"),
                             ("attacker cpu", "attacker CPU (nice 19)", "its own process, on the same 2 cores")):
        rows.append((what, *(f"{p['cost'].get(name, 0.0):.1f} s" for p in (quiet, hostile)), note))
    print(f"\n{'':32} {'quiet':>12} {'hostile':>12}")
    for name, q, h, note in rows:
        print(f"{name:32} {q!s:>12} {h!s:>12}  {note}")
    print(f"\nattacker ({', '.join(attacks)}), from {ATTACKER_ADDRESS} under nice 19: outcomes of its requests")
    if pool.up.poll() is not None:
        log = (pool.workdir / "up.log").read_text().splitlines()[-5:]
        print(f"ascrun up exited with {pool.up.returncode} before the end; its log ends:", *log, sep="\n  ")
    for name in attacks:
        outcomes = counts.get(name, {})
        print(f"  {name:10} " + (", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1]))
                                 or "nothing counted"))
    print("\nwhere the honest launches' time went, ms (median of each stage; upload = the submission's round trip "
          "less the job's own time: the API before and after it)")
    for name, phase in phases.items():
        for which, share in (("all", 0.0), ("slowest 10%", 0.9)):
            print(f"  {name:8} {which:12} {_stage_medians(phase['load']['stages'], share)}")


def _stage_medians(stages: List[tuple], share: float) -> str:
    """The median of each stage's time over the launches past the `share` quantile of their latency."""
    ranked = sorted(stages, key=lambda s: s[0])[int(len(stages) * share):]
    if not ranked:
        return "-"
    names = ("upload", "queue", "frontend", "build", "run", "download")
    medians = {k: statistics.median(t.get(k, 0.0) for _, t in ranked) * 1e3 for k in names}
    medians["total"] = statistics.median(wall for wall, _ in ranked) * 1e3
    return "  ".join(f"{k} {v:.1f}" for k, v in medians.items())


def _kinds(failures: collections.Counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in failures.most_common()) or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="each phase's length")
    parser.add_argument("--rate", type=float, default=5, help="launches a second of each honest tenant")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--redis-maxmemory", default="512mb", help="ascrun up's Redis maxmemory")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help=f"some of {','.join(ATTACKS)}")
    parser.add_argument("--attacker", metavar="URL", help=argparse.SUPPRESS)  # the attacker's own process
    opts = parser.parse_args()
    attacks = [a for a in opts.attacks.split(",") if a]
    unknown = set(attacks) - set(ATTACKS)
    if unknown:
        parser.error(f"unknown attack(s) {sorted(unknown)}; known: {', '.join(ATTACKS)}")
    if opts.attacker:
        return run_attacker(opts.attacker, attacks, opts.seconds)
    with tempfile.TemporaryDirectory(prefix="ascrun_hostile_") as workdir:
        pool = Pool(Path(workdir), opts.workers, opts.redis_maxmemory)
        attacker = None
        try:
            warm(pool.url, pool.tokens)
            phases, counts, attack = {}, {}, {}
            for phase in ("quiet", "hostile"):
                sampler = Sampler(pool)
                if phase == "hostile":  # the honest load starts once the attacks have
                    attacker = start_attacker(pool, attacks, opts.seconds, Path(workdir))
                    if attacker.stdout.readline().strip() != "attacking":
                        raise SystemExit(f"the attacker did not start: see {workdir}/attacker.log")
                load = honest_load(pool.url, pool.tokens, opts.seconds, opts.rate)
                if phase == "hostile":
                    out, _ = attacker.communicate(timeout=60)
                    attack = json.loads(out) if out.strip() else {}
                    counts = attack.get("counts", {})
                phases[phase] = {"load": load, "cost": sampler.stop()}
                phases[phase]["cost"]["attacker cpu"] = attack.get("cpu_s", 0.0) if phase == "hostile" else 0.0
                print(f"{phase}: {len(load['latencies'])} launches ok", file=sys.stderr, flush=True)
            print_report(phases, pool, counts, attacks, paced=int(opts.seconds * opts.rate * len(HONEST)))

        finally:
            if attacker is not None and attacker.poll() is None:
                attacker.kill()
                attacker.wait()
            pool.stop()


if __name__ == "__main__":
    main()

"""Faults under load: SIGKILL a worker, the API server and Redis mid-load, restart each, then count.

    python bench/faults.py [--clients 10] [--phase 8] [--workers 2] [--bound 60]

It starts its own stack: redis-server (as `ascrun up` runs it, but fsync'ing every write), `ascrun server`
and `--workers` `ascrun worker`s, each in its own session. `--clients` threads submit launches of
ops.spin_kernel (z = x + 1) with their own random inputs and verify every output against numpy.
After `--phase` s of load it SIGKILLs a worker (with its work horse), then the API server, then
Redis, restarting each (a new worker; a new server on the same port; Redis on the same port and
folder), with `--phase` s of load after each. Then the clients stop and it audits, through the API
and from Redis:

  accepted       jobs a client got an id for
  finished       ... whose outputs the client verified against numpy (or, when the client gave
                 up on it, the audit did)
  failed         ... that ended failed or timed out, by error kind (a killed run fails: that is fine)
  stuck          jobs (accepted or not) not terminal `--bound` s after the load stopped, or
                 unknown to the API
  ran twice      jobs RQ ran to a result more than once, plus submissions (one input, one
                 Idempotency-Key) that became more than one job that started
  orphans        jobs in Redis no client got an id for (its submission failed as far as it knows)
  dangling keys  Idempotency-Keys that name no job
  wrong outputs  finished jobs whose outputs differ from numpy

The run is good when nothing is stuck, nothing ran twice, no key dangles, no output is wrong, and
every accepted job is finished or failed. Exit status 1 otherwise.
"""
from __future__ import annotations

import argparse
import base64
import collections
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import redis

import ascrun
from ascrun.job_status import TERMINAL
from ascrun.server.store import keys, rq_adapter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "kernels"))
import ops  # noqa: E402

JOB_TIMEOUT_S = 20  # a launch of one round takes milliseconds; a lost one ends by the reaper well before
TENANT = "open"
# Open mode, with the request and launch rates and the active-job limit out of the way: the load is the point.
TENANTS = json.dumps({"limits": {"launches_per_minute": 10 ** 7, "requests_per_second": 10 ** 6,
                                 "max_active_jobs": 10 ** 5}})
FAULTS = ("worker", "server", "redis")
DOWN_S = 0.5  # how long a killed process stays down before its restart


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


class Pool:
    """redis-server, one `ascrun server` and some `ascrun worker`s, each in its own session so that
    a SIGKILL takes a process with its children (a worker with its work horse)."""

    def __init__(self, workdir: Path, workers: int, fsync_always: bool = True, tenants: str = TENANTS):
        """Redis as `ascrun up` runs it; with `fsync_always`, fsync'ing every write (not once a second).
        `tenants`: the ASCRUN_TENANTS of the server."""
        from ascrun.cli.stack import redis_command
        port = _free_port()
        self.workdir = workdir
        self.redis_cmd = redis_command(port, str(workdir)) + (["--appendfsync", "always"] if fsync_always else [])
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, REDIS_URL=self.redis_url, ASCRUN_TENANTS=tenants)
        self.env.pop("ASCRUN_TENANTS_FILE", None)
        self.redis = self.server = None
        self.workers: list = []
        self.start("redis")
        self.start("server")
        for _ in range(workers):
            self.start("worker")
        self.wait_ready(workers)

    def _spawn(self, cmd: list, log_name: str) -> subprocess.Popen:
        log = open(self.workdir / log_name, "ab")
        with log:
            return subprocess.Popen(cmd, env=self.env, start_new_session=True, stdout=log, stderr=log)

    def start(self, what: str) -> None:
        if what == "redis":
            self.redis = self._spawn(self.redis_cmd, "redis.log")
            connection = redis.Redis.from_url(self.redis_url)
            for _ in range(400):
                try:
                    connection.ping()
                    return
                except redis.ConnectionError:
                    time.sleep(0.025)
            raise RuntimeError("redis-server did not start")
        me = [sys.executable, "-m", "ascrun.cli"]
        if what == "server":
            self.server = self._spawn(me + ["server", "--port", str(self.port)], "server.log")
        else:
            self.workers.append(self._spawn(me + ["worker"], f"worker-{len(self.workers)}.log"))

    def kill(self, what: str) -> None:
        """SIGKILL: the worker (with its work horse) started first of those alive, the server, or Redis."""
        proc = {"redis": self.redis, "server": self.server}.get(what) or self.workers.pop(0)
        _kill_group(proc, signal.SIGKILL)
        proc.wait()

    def wait_ready(self, workers: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=2).json()["workers"]["cpu"] >= workers:
                    return
            except (httpx.HTTPError, KeyError, ValueError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the pool did not reach {workers} workers in {timeout} s")

    def stop(self) -> None:
        for proc in [self.server, *self.workers, self.redis]:
            if proc is None:
                continue
            _kill_group(proc, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                _kill_group(proc, signal.SIGKILL)
                proc.wait()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Load:
    """`clients` threads, each submitting launches one after another until stopped; every job id a
    client gets is `accepted`, with the digest of its input; outcomes as the clients saw them."""

    def __init__(self, url: str, clients: int, wait_s: float):
        self.url, self.wait_s = url, wait_s
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.accepted: dict = {}  # job id -> input digest
        self.verified = 0
        self.wrong: list = []
        self.unseen: dict = {}  # job id -> input, of accepted jobs whose result() raised (checked in audit)
        self.refused = collections.Counter()  # submissions that got no id, by error kind
        self.client_failed = collections.Counter()  # accepted jobs whose result() raised, by kind
        self.threads = [threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(clients)]
        for thread in self.threads:
            thread.start()

    def _client(self, index: int) -> None:
        rng = np.random.default_rng(1000 + index)
        with ascrun.Client(self.url, timeout=30) as client:
            while not self.stopping.is_set():
                x = rng.random(64, dtype=np.float32)
                z = np.zeros_like(x)
                try:
                    handle = client.submit(ops.spin_kernel, 1, x, z, 1, timeout=JOB_TIMEOUT_S)
                except ascrun.KernelError as e:
                    with self.lock:
                        self.refused[e.kind] += 1
                    continue
                with self.lock:
                    self.accepted[handle.id] = _digest(x.tobytes())
                try:
                    handle.result(timeout=self.wait_s)
                except ascrun.KernelError as e:
                    with self.lock:
                        self.client_failed[e.kind] += 1
                        self.unseen[handle.id] = x
                    continue
                with self.lock:
                    if np.array_equal(z, x + np.float32(1)):
                        self.verified += 1
                    else:
                        self.wrong.append(handle.id)

    def finished_launches(self) -> int:
        with self.lock:
            return self.verified

    def stop(self, timeout: float) -> None:
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _input_digest(connection: redis.Redis, job_id: str, spec: dict) -> str | None:
    """The digest of the launch's input x, whether it came as a blob or inline (kept raw, apart)."""
    arg = spec["args"][0]
    if "blob" in arg:
        return arg["blob"]
    data = connection.hget(keys.inputs_key(job_id), arg["input"]) if "input" in arg else None
    return None if data is None else _digest(data)


def _check_late(http: httpx.Client, record: dict, x: np.ndarray) -> bool:
    """The outputs of a job that finished after its client gave up (e.g. the API server was down
    while it waited), fetched now: are they right?"""
    z = record["outputs"]["z"]
    data = base64.b64decode(z["data"]) if "data" in z else http.get(f"/v1/blobs/{z['blob']}").content
    return np.array_equal(np.frombuffer(data, np.float32), x + np.float32(1))


def audit(url: str, redis_url: str, load: Load, deadline: float) -> dict:
    """Wait until `deadline` (monotonic) at most for every job to be terminal (asking the API),
    then count from Redis. A job that finished while its client had given up is verified here."""
    connection = redis.Redis.from_url(redis_url)
    every_job = {i.decode() for i in connection.zrange(keys.tenant_key(TENANT, "jobs"), 0, -1)}
    every_job |= set(load.accepted)
    records = {}
    with httpx.Client(base_url=url, timeout=40) as http:
        for job_id in sorted(every_job):
            while True:
                remaining = deadline - time.monotonic()
                response = http.get(f"/v1/jobs/{job_id}", params={"wait": f"{max(0.0, min(remaining, 20)):.1f}"})
                record = response.json() if response.status_code == 200 else {"status": f"http {response.status_code}"}
                if record["status"] in TERMINAL or remaining <= 0:
                    break
            records[job_id] = record
        for job_id, x in load.unseen.items():
            if records[job_id]["status"] == "finished":
                if _check_late(http, records[job_id], x):
                    load.verified += 1
                else:
                    load.wrong.append(job_id)
    failed = collections.Counter()
    for job_id in load.accepted:
        record = records[job_id]
        if record["status"] in ("failed", "timed_out"):
            failed[record["error"]["kind"]] += 1
    ran_twice = set()
    for job_id in every_job:  # RQ keeps a result per run (rq_adapter.runs)
        if rq_adapter.runs(connection, job_id) > 1:
            ran_twice.add(job_id)
    started_by_input = collections.defaultdict(set)
    for job_id in every_job:
        if records[job_id].get("started_at") is None:
            continue
        raw = connection.get(keys.spec_key(job_id))
        digest = _input_digest(connection, job_id, json.loads(raw)) if raw is not None else load.accepted.get(job_id)
        if digest is not None:
            started_by_input[digest].add(job_id)
    for jobs in started_by_input.values():
        if len(jobs) > 1:
            ran_twice |= jobs
    dangling = 0
    for key in connection.scan_iter(match=keys.idempotency_key(TENANT, "*"), count=1000):
        value = connection.get(key)
        job_id = value.decode().split()[0] if value else None
        if job_id and connection.get(keys.job_key(job_id)) is None and connection.get(keys.final_key(job_id)) is None:
            dangling += 1
    stuck = {i: r["status"] for i, r in records.items() if r["status"] not in TERMINAL}
    return {
        "accepted": len(load.accepted),
        "finished": sum(records[i]["status"] == "finished" for i in load.accepted),
        "verified": load.verified,
        "failed": dict(failed),
        "stuck": stuck,
        "ran_twice": sorted(ran_twice),
        "orphans": len(every_job - set(load.accepted)),
        "dangling_keys": dangling,
        "wrong_outputs": load.wrong,
        "refused": dict(load.refused),
        "client_failed": dict(load.client_failed),
        "active_left": connection.hlen(keys.tenant_key(TENANT, "active")),
    }


def run_faults(clients: int = 10, phase_s: float = 8, workers: int = 2, bound_s: float = 60,
               faults=FAULTS, log=print) -> dict:
    """Start a pool, load it, SIGKILL and restart each of `faults` in turn, stop the load, audit."""
    with tempfile.TemporaryDirectory(prefix="ascrun_faults_") as workdir:
        pool = Pool(Path(workdir), workers)
        try:
            load = Load(pool.url, clients, wait_s=bound_s)
            deadline = time.monotonic() + 120
            while load.finished_launches() == 0:  # the first launch compiles; faults come once it is cached
                if time.monotonic() > deadline:
                    raise RuntimeError("no launch finished in 120 s")
                time.sleep(0.1)
            for what in faults:
                time.sleep(phase_s)
                log(f"  SIGKILL {what} with {len(load.accepted)} jobs accepted so far")
                pool.kill(what)
                time.sleep(DOWN_S)
                pool.start(what)
            time.sleep(phase_s)
            deadline = time.monotonic() + bound_s  # every job, accepted or not, is terminal by then
            load.stop(timeout=bound_s + 10)
            counts = audit(pool.url, pool.redis_url, load, deadline)
            counts["workdir_logs"] = {p.name: p.read_text(errors="replace")[-2000:]
                                      for p in Path(workdir).glob("*.log")} if counts["stuck"] else {}
            return counts
        finally:
            pool.stop()


def broken(counts: dict) -> list:
    """What the run shows to be wrong (empty when every invariant holds)."""
    problems = []
    if counts["stuck"]:
        problems.append(f"{len(counts['stuck'])} job(s) not terminal: {dict(list(counts['stuck'].items())[:5])}")
    if counts["ran_twice"]:
        problems.append(f"{len(counts['ran_twice'])} job(s) ran twice: {counts['ran_twice'][:5]}")
    if counts["dangling_keys"]:
        problems.append(f"{counts['dangling_keys']} Idempotency-Key(s) name no job")
    if counts["wrong_outputs"]:
        problems.append(f"{len(counts['wrong_outputs'])} wrong output(s): {counts['wrong_outputs'][:5]}")
    if counts["active_left"]:
        problems.append(f"{counts['active_left']} active-job slot(s) still held with every job terminal")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--phase", type=float, default=8, help="seconds of load before and after each fault")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bound", type=float, default=60, help="seconds every job has to end once the load stops")
    parser.add_argument("--faults", default=",".join(FAULTS),
                        help=f"what to SIGKILL, in order, repeats allowed (default {','.join(FAULTS)})")
    opts = parser.parse_args()
    faults = opts.faults.split(",")
    if set(faults) - set(FAULTS):
        parser.error(f"--faults: each of {', '.join(FAULTS)}")
    print(f"{opts.clients} clients, {opts.workers} workers; SIGKILL then restart: {', '.join(faults)}")
    start = time.monotonic()
    counts = run_faults(opts.clients, opts.phase, opts.workers, opts.bound, faults)
    print(f"  accepted {counts['accepted']}: finished {counts['finished']} (outputs verified {counts['verified']}), "
          f"failed {sum(counts['failed'].values())} {counts['failed']}")
    print(f"  stuck {len(counts['stuck'])}, ran twice {len(counts['ran_twice'])}, wrong outputs "
          f"{len(counts['wrong_outputs'])}, dangling Idempotency-Keys {counts['dangling_keys']}")
    print(f"  not accepted (client got no id): {counts['refused']}; jobs in Redis no client got an id for: "
          f"{counts['orphans']}; active-job slots left held: {counts['active_left']}")
    print(f"  client-side errors of accepted jobs: {counts['client_failed']}; {time.monotonic() - start:.0f} s")
    problems = broken(counts)
    for problem in problems:
        print("  BROKEN:", problem)
    for name, tail in counts["workdir_logs"].items():
        print(f"--- {name} (tail)\n{tail}")
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

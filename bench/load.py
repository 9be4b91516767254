"""Load: many concurrent clients submitting many small launches against a stack of our own.

    python bench/load.py [--clients 20] [--launches 1000] [--workers 2] [--url URL]

`--launches` in all, shared by the clients. Each launch adds its own random 64-element input to
itself (ops.spin_kernel, one round), so every output is checked against its own numpy reference.
Prints throughput, p50/p99 latency and the counts: every job must reach a terminal state, none
lost, none run twice.

Without --url it starts redis-server (as `ascrun up` does: append-only file fsync'ed once a
second), `ascrun server` and `--workers` workers itself (as bench/faults.py does, with the
per-tenant rate limits out of the way) and then also prints where
the CPU went: CPU ms per launch of each process (workers with their jails) and the Redis
commands and connections per launch. The machine's cores are the bottleneck, so these are the
costs to cut.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import redis

import ascrun

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "kernels"))
import ops  # noqa: E402


def _bench_faults():
    spec = importlib.util.spec_from_file_location("bench_faults", Path(__file__).with_name("faults.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_load(url: str, clients: int, launches: int) -> dict:
    """Run the load; returns counts and latencies (seconds)."""
    per_client = [launches // clients + (1 if i < launches % clients else 0) for i in range(clients)]
    latencies, errors, job_ids, lock = [], [], [], threading.Lock()

    def one_client(index: int, count: int):
        rng = np.random.default_rng(index)
        with ascrun.Client(url) as client:
            for _ in range(count):
                x = rng.random(64, dtype=np.float32)
                z = np.zeros_like(x)
                start = time.perf_counter()
                try:
                    result = client.launch(ops.spin_kernel, 1, x, z, 1)
                    ok = np.array_equal(z, x + np.float32(1))
                except ascrun.KernelError as e:
                    result, ok = None, False
                    with lock:
                        errors.append(f"{e.kind}: {e}")
                with lock:
                    latencies.append(time.perf_counter() - start)
                    if result is not None:
                        job_ids.append(result.job_id)
                    if result is not None and not ok:
                        errors.append(f"job {result.job_id}: wrong output")

    start = time.perf_counter()
    threads = [threading.Thread(target=one_client, args=(i, n)) for i, n in enumerate(per_client)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return {"launches": launches, "completed": len(job_ids), "distinct_jobs": len(set(job_ids)),
            "errors": errors, "elapsed": elapsed, "latencies": sorted(latencies)}


def cpu_s(pid: int) -> float:
    """CPU seconds of a process and of all its descendants (a worker's jails), those alive and
    those it has waited for."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                    for c in (t / "children").read_text().split()]
    except FileNotFoundError:  # it ended meanwhile
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK") + sum(cpu_s(c) for c in children)


class CpuMeter:
    """CPU seconds each process of the pool (and this client process) spends between start and stop,
    and Redis' commands by name and its new connections."""

    def __init__(self, pool):
        self.pids = {"API server": pool.server.pid, "redis-server": pool.redis.pid,
                     **{f"worker {i} (+ jails)": w.pid for i, w in enumerate(pool.workers)}}
        self.redis = redis.Redis.from_url(pool.redis_url)
        self.before = self.sample()

    def sample(self) -> dict:
        cpu = {name: cpu_s(pid) for name, pid in self.pids.items()}
        cpu["clients (this process)"] = sum(os.times()[:2])
        stats = self.redis.info("commandstats")
        return {"cpu": cpu, "calls": {k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()},
                "connections": self.redis.info("stats")["total_connections_received"]}

    def report(self, launches: int) -> list:
        after = self.sample()
        lines = ["  CPU per launch, by process:"]
        cpu = {n: after["cpu"][n] - self.before["cpu"][n] for n in after["cpu"]}
        for name, seconds in sorted(cpu.items(), key=lambda kv: -kv[1]):
            lines.append(f"    {name:24s} {seconds / launches * 1e3:7.2f} ms")
        lines.append(f"    {'all':24s} {sum(cpu.values()) / launches * 1e3:7.2f} ms")
        calls = {k: v - self.before["calls"].get(k, 0) for k, v in after["calls"].items()}
        calls = {k: v for k, v in calls.items() if v > 0 and k != "info"}  # info: this meter's own
        lines.append(f"  Redis per launch: {sum(calls.values()) / launches:.1f} commands, "
                     f"{(after['connections'] - self.before['connections']) / launches:.2f} new connections; "
                     "by command:")
        ranked = sorted(calls.items(), key=lambda kv: -kv[1])
        lines.append("    " + ", ".join(f"{k} {v / launches:.2f}" for k, v in ranked))
        return lines


def _pct(ordered, q):
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--url", help="an ascrun service (default: start a stack of our own)")
    opts = parser.parse_args()
    url, cpu_lines = opts.url, []
    if url:
        report = run_load(url, opts.clients, opts.launches)
    else:
        faults = _bench_faults()
        with tempfile.TemporaryDirectory(prefix="ascrun_load_") as workdir:
            pool = faults.Pool(Path(workdir), opts.workers, fsync_always=False)  # the stack `ascrun up` runs
            try:
                run_load(pool.url, 1, 1)  # compile once: the load measures cached launches
                meter = CpuMeter(pool)
                report = run_load(pool.url, opts.clients, opts.launches)
                cpu_lines = meter.report(opts.launches)
            finally:
                pool.stop()
        url = pool.url
    lat = report["latencies"]
    print(f"{opts.launches} launches from {opts.clients} concurrent clients on {url} ({opts.workers} workers)")
    print(f"  completed and verified: {report['completed'] - sum('wrong output' in e for e in report['errors'])}"
          f", distinct jobs: {report['distinct_jobs']}, errors: {len(report['errors'])}")
    print(f"  throughput: {report['completed'] / report['elapsed']:.1f} launches/s over {report['elapsed']:.1f} s")
    print(f"  latency: p50 {_pct(lat, 50) * 1e3:.0f} ms, p99 {_pct(lat, 99) * 1e3:.0f} ms, "
          f"mean {statistics.mean(lat) * 1e3:.0f} ms")
    for line in cpu_lines:
        print(line)
    for error in report["errors"][:10]:
        print("  error:", error)
    if report["errors"] or report["completed"] != opts.launches:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

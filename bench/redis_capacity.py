"""How many launches a second one Redis carries for a pool of many hosts (issue 27): measured here
with many clients and workers, extrapolated on paper.

    python bench/redis_capacity.py [--workers 2,4,8] [--launches 600] [--idle-seconds 10]

Every host of a pool shares one Redis, and Redis runs its commands on one core: its CPU per launch,
not the workers', sets how far one pool scales. For each worker count it starts the stack load.py
starts (redis-server as `ascrun up` runs it, `ascrun server`, the workers), then measures

  idle   Redis' CPU over --idle-seconds with no launch: what the workers' and the API's own traffic
         (heartbeats, blocking pops that time out, sweeps) costs it, per worker
  load   --launches cached launches from 10 clients per worker (load.py's, each output checked):
         launches/s, Redis' CPU and its commands per launch

and then the paper: one Redis core at 100 % carries 1000 / (Redis CPU ms per launch) launches a
second, less what the idle workers take; at 70 % busy (where its queueing starts to add latency) a
pool may ask for that much. Redis CPU is /proc's user + system (its own event loop, network I/O
included), so it holds for loopback; a network adds round trips to each launch, not Redis CPU.
"""
import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
BUSY = 0.7  # the share of its core a Redis may be busy before its queueing adds to every launch


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


load, faults = _bench("load"), _bench("faults")


def measure(workers: int, launches: int, idle_s: float) -> dict:
    """One stack of `workers` workers: Redis' idle CPU a second, and the load's figures."""
    with tempfile.TemporaryDirectory(prefix="ascrun_redis_capacity_") as workdir:
        pool = faults.Pool(Path(workdir), workers, fsync_always=False)
        try:
            load.run_load(pool.url, 1, 1)  # compile once: cached launches are measured
            redis_pid = pool.redis.pid
            before = load.cpu_s(redis_pid)
            time.sleep(idle_s)
            idle_cpu_per_s = (load.cpu_s(redis_pid) - before) / idle_s
            meter = load.CpuMeter(pool)
            report = load.run_load(pool.url, 10 * workers, launches)
            after = meter.sample()
        finally:
            pool.stop()
    if report["errors"] or report["completed"] != launches:
        raise SystemExit(f"{workers} workers: {len(report['errors'])} errors, {report['completed']} of {launches} "
                         f"completed: {report['errors'][:3]}")
    calls = sum(v - meter.before["calls"].get(k, 0) for k, v in after["calls"].items() if k != "info")
    redis_s = after["cpu"]["redis-server"] - meter.before["cpu"]["redis-server"]
    return {"workers": workers, "idle_ms_per_s": idle_cpu_per_s * 1e3, "rate": launches / report["elapsed"],
            "redis_ms": redis_s / launches * 1e3, "commands": calls / launches,
            "p50_ms": statistics.median(report["latencies"]) * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="2,4,8", help="worker counts, one stack each")
    parser.add_argument("--launches", type=int, default=600)
    parser.add_argument("--idle-seconds", type=float, default=10)
    opts = parser.parse_args()
    rows = [measure(int(w), opts.launches, opts.idle_seconds) for w in opts.workers.split(",")]
    print(f"{'workers':>7} {'launches/s':>10} {'p50 ms':>7} {'Redis ms/launch':>15} {'commands':>8} "
          f"{'Redis idle ms/s':>15}")
    for r in rows:
        print(f"{r['workers']:>7} {r['rate']:>10.1f} {r['p50_ms']:>7.0f} {r['redis_ms']:>15.3f} {r['commands']:>8.1f} "
              f"{r['idle_ms_per_s']:>15.2f}")
    per_launch = max(r["redis_ms"] for r in rows)  # the dearest seen: Redis' CPU per launch grows with its load
    per_worker = max(r["idle_ms_per_s"] / r["workers"] for r in rows)  # idle ms a second, the API's included
    print(f"\nOn paper, one Redis core: {per_launch:.3f} ms per launch (the most measured) and "
          f"{per_worker:.2f} ms a second per idle worker")
    for hosts, workers_per_host in ((10, 8), (50, 8), (100, 16)):
        idle_share = hosts * workers_per_host * per_worker / 1e3
        room = max(0.0, BUSY - idle_share)
        print(f"  {hosts:>3} hosts x {workers_per_host:>2} workers: idle traffic {idle_share * 100:4.1f} % of the "
              f"core; at {BUSY:.0%} busy it carries {room / per_launch * 1e3:,.0f} launches/s "
              f"(at 100 %: {max(0.0, 1 - idle_share) / per_launch * 1e3:,.0f})")
    best = max(rows, key=lambda r: r["rate"])
    print(f"  this machine's pool ({best['workers']} workers, 2 cores) ran {best['rate']:.0f} launches/s: one Redis "
          f"at {BUSY:.0%} carries about {BUSY / per_launch * 1e3 / best['rate']:.0f} such pools")


if __name__ == "__main__":
    sys.exit(main())

"""Load: many concurrent clients submitting many small launches against the embedded stack.

    python bench/load.py [--clients 20] [--launches 1000] [--workers 2] [--url URL]

Each launch adds its own random 64-element input to itself (ops.spin_kernel, one round), so
every output is checked against its own numpy reference. Prints throughput, p50/p99 latency
and the counts: every job must reach a terminal state, none lost, none run twice.
"""
import argparse
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

import ascrun

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "kernels"))
import ops  # noqa: E402


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


def _pct(ordered, q):
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--url", help="an ascrun service (default: start the embedded stack)")
    opts = parser.parse_args()
    up = None
    url = opts.url
    if url is None:
        up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers",
                               str(opts.workers)], stdout=subprocess.PIPE, text=True)
        url = re.search(r"up at (http://\S+)", up.stdout.readline()).group(1)
    try:
        report = run_load(url, opts.clients, opts.launches)
    finally:
        if up is not None:
            up.send_signal(signal.SIGTERM)
            up.wait(60)
    lat = report["latencies"]
    print(f"{opts.launches} launches from {opts.clients} concurrent clients on {url}")
    print(f"  completed and verified: {report['completed'] - sum('wrong output' in e for e in report['errors'])}"
          f", distinct jobs: {report['distinct_jobs']}, errors: {len(report['errors'])}")
    print(f"  throughput: {report['completed'] / report['elapsed']:.1f} launches/s over {report['elapsed']:.1f} s")
    print(f"  latency: p50 {_pct(lat, 50) * 1e3:.0f} ms, p99 {_pct(lat, 99) * 1e3:.0f} ms, "
          f"mean {statistics.mean(lat) * 1e3:.0f} ms")
    for error in report["errors"][:10]:
        print("  error:", error)
    if report["errors"] or report["completed"] != opts.launches:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

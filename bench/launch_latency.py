"""Benchmark: end-to-end latency of a cached remote launch against a bare HTTP round trip.

    python bench/launch_latency.py [--launches 60] [--url URL]

Without --url it starts the embedded stack (`ascrun up --port 0 --workers 1`) and stops it at the
end. It launches the tutorial's 16K-element float32 vadd (8 cores) once to fill the caches, then
`--launches` more times with the same inputs, and in the same run times a bare HTTP round trip that
moves the same bytes to the same server: one PUT of the input tensors' bytes and one GET of the
output's. Prints p50/p95 of both, their ratio (targets: p50 <= 15 ms and <= 2.5x the bare round
trip), and the p50 of each stage of a launch.
"""
import argparse
import hashlib
import importlib.util
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

import ascrun

ROOT = Path(__file__).resolve().parents[1]


def _load_add():
    spec = importlib.util.spec_from_file_location("example_add", ROOT / "examples" / "add.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def measure(url: str, launches: int) -> None:
    add = _load_add()
    size, cores = 8 * 2048, 8
    rng = np.random.default_rng(0)
    x = rng.random(size, dtype=np.float32)
    y = rng.random(size, dtype=np.float32)
    with ascrun.Client(url) as client, httpx.Client(base_url=url) as bare:
        z = np.zeros_like(x)
        warm = client.launch(add.vadd_kernel, cores, x, y, z, size // cores)
        assert np.allclose(z, x + y)
        payload = x.tobytes() + y.tobytes() + np.zeros_like(x).tobytes()
        digest = hashlib.sha256(payload).hexdigest()
        out = warm.outputs["z"].tobytes()  # the output comes back inline: store it once for the bare GET
        out_digest = hashlib.sha256(out).hexdigest()
        bare.put(f"/v1/blobs/{out_digest}", content=out).raise_for_status()
        launch_s, bare_s, stages = [], [], {}
        for _ in range(launches):  # interleaved, so both see the same machine load
            z = np.zeros_like(x)
            start = time.perf_counter()
            result = client.launch(add.vadd_kernel, cores, x, y, z, size // cores)
            launch_s.append(time.perf_counter() - start)
            assert result.cache == {"frontend": "hit", "build": "hit"} and np.allclose(z, x + y)
            timed = dict(result.timings)
            # what no stage covers: the API's handling, the wake-up of the waiting request, the client
            timed["other"] = timed["total"] - sum(v for k, v in timed.items() if k != "total")
            for stage, seconds in timed.items():
                stages.setdefault(stage, []).append(seconds)
            start = time.perf_counter()
            bare.put(f"/v1/blobs/{digest}", content=payload).raise_for_status()
            bare.get(f"/v1/blobs/{out_digest}").raise_for_status()
            bare_s.append(time.perf_counter() - start)
    p50, p95 = _pct(launch_s, 50), _pct(launch_s, 95)
    b50, b95 = _pct(bare_s, 50), _pct(bare_s, 95)
    print(f"cached launch of vadd 16K float32 x {cores} cores, {launches} launches on {url}")
    print(f"  launch end to end:    p50 {p50 * 1e3:6.1f} ms   p95 {p95 * 1e3:6.1f} ms")
    print(f"  bare HTTP round trip: p50 {b50 * 1e3:6.1f} ms   p95 {b95 * 1e3:6.1f} ms   "
          f"({len(payload) // 1024} KiB up, {x.nbytes // 1024} KiB down)")
    print(f"  ratio launch / bare (p50): {p50 / b50:.2f}x")
    print("  where a launch's time goes (p50 per stage; upload = bundle + blob check, queue = enqueue to start,\n"
          "  other = what no stage covers: API handling, waking the waiting request, client):")
    for stage, values in stages.items():
        print(f"    {stage:9s} {statistics.median(values) * 1e3:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=60)
    parser.add_argument("--url", help="an ascrun service to measure (default: start the embedded stack)")
    opts = parser.parse_args()
    if opts.url:
        measure(opts.url, opts.launches)
        return
    up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers", "1"],
                          stdout=subprocess.PIPE, text=True)
    try:
        line = up.stdout.readline()
        match = re.search(r"up at (http://\S+)", line)
        if not match:
            raise SystemExit(f"ascrun up did not start: {line!r}")
        measure(match.group(1), opts.launches)
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(60)


if __name__ == "__main__":
    main()

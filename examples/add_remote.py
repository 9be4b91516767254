"""The Add tutorial against the service: brings up the embedded stack (`ascrun up`: redis-server,
API server, cpu workers), launches pyasc's 01_add kernel remotely twice and prints the check, the
timings and the cache hits of each run, then stops the stack.

    python examples/add_remote.py [--url URL]   # --url: use a running service instead
"""
import argparse
import importlib.util
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

import ascrun

SIZE, CORES = 8 * 2048, 8


def _tutorial():
    spec = importlib.util.spec_from_file_location("add", Path(__file__).with_name("add.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(url: str) -> bool:
    add = _tutorial()
    rng = np.random.default_rng(2025)
    x = rng.random(SIZE, dtype=np.float32)
    y = rng.random(SIZE, dtype=np.float32)
    ok = True
    with ascrun.Client(url) as client:
        for attempt in ("first run", "second run"):
            z = np.zeros_like(x)
            result = client.launch(add.vadd_kernel, CORES, x, y, z, SIZE // CORES)
            good = bool(np.allclose(z, x + y))
            ok &= good
            times = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.timings.items())
            caches = ", ".join(f"{k} {v}" for k, v in result.cache.items())
            print(f"{attempt} on {url} (job {result.job_id[:8]}): z == x + y for {SIZE} float32 on {CORES} cores: "
                  f"{'OK' if good else 'MISMATCH'}\n  timings: {times}\n  cache: {caches}", flush=True)
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    opts = parser.parse_args()
    if opts.url:
        raise SystemExit(0 if run(opts.url) else 1)
    up = subprocess.Popen([sys.executable, "-m", "ascrun.cli", "up", "--port", "0", "--workers", "2"],
                          stdout=subprocess.PIPE, text=True)
    try:
        line = up.stdout.readline()
        print(line.strip())
        match = re.search(r"up at (http://\S+)", line)
        if not match:
            raise SystemExit("the embedded stack did not start")
        ok = run(match.group(1))
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(60)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()

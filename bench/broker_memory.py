"""What one job's tensors cost the worker's own process (the broker): its peak RSS for a job with N MiB
of tensors, and the time of the job's run stage.

    python bench/broker_memory.py [--mib 256 512] [--workers 1]

It starts redis-server, `ascrun server` and a fresh worker for each size (bench/faults.py's Pool),
compiles first (a small job), then submits a job whose x is an uploaded N MiB blob and whose z is
N MiB of zeros (nothing uploaded) that the kernel overwrites whole, so z comes back as an N MiB
output blob: the broker moves 2N MiB to the run jail and N MiB back to Redis. It prints the
worker's VmHWM (/proc/<pid>/status) before and after the job, the growth against N, and the run
stage's seconds. Any checkout runs it (a worker that holds tensors whole shows a growth of several
times N, or fails the job past its memory limit), so before and after a change compare.
"""
from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from pathlib import Path

import numpy as np

import ascrun
from ascrun.args import prepare
from ascrun.compiler.bundle import collect
from ascrun.service.submission import job_arguments


def _sibling(name: str):
    """Another bench script as a module: its kernel, its Pool and its RSS reading are this one's too."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


big_tensor = _sibling("big_tensor")
tiled_copy_kernel, TILE, BLOCKS, _peak_rss = (big_tensor.tiled_copy_kernel, big_tensor.TILE, big_tensor.BLOCKS,
                                               big_tensor._peak_rss)


def _job(client: ascrun.Client, mib: int) -> dict:
    count = (mib << 20) // 4
    x = np.random.default_rng(0).random(count, dtype=np.float32)
    args, blobs = job_arguments(prepare(["x", "z", "tiles", "tile"], [x, np.zeros(count, np.float32),
                                                                     count // (BLOCKS * TILE), TILE]))
    body = {"bundle": collect(tiled_copy_kernel).to_json(), "core_num": BLOCKS, "args": args, "timeout": 600}
    record = client.submit_job(body, blobs)
    return client.wait(record["id"], timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[256, 512], help="each tensor's size in MiB")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ascrun_broker_") as workdir:
        pool = big_tensor._pool_class()(Path(workdir), 1, fsync_always=False)
        try:
            print(f"{'job tensors':>10} {'worker peak RSS before':>23} {'after':>9} {'growth':>9} {'run stage':>10}")
            for mib in opts.mib:
                pool.kill("worker")  # a fresh worker: its peak is this job's
                pool.start("worker")
                pool.wait_ready(1)
                with ascrun.Client(pool.url, timeout=600, retries=0) as client:
                    _job(client, 2)  # compiled (or the cache read) before the peak is read
                    worker = pool.workers[0].pid
                    before = _peak_rss(worker)
                    start = time.perf_counter()
                    record = _job(client, mib)
                    elapsed = time.perf_counter() - start
                after = _peak_rss(worker)
                outcome = (f"{record.get('stages', {}).get('run', {}).get('seconds', elapsed):9.2f}s"
                           if record["status"] == "finished" else f"  {record['status']}: {record.get('error')}")
                print(f"{2 * mib:>6} MiB {before >> 20:>19} MiB {after >> 20:>5} MiB {(after - before) >> 20:>5} MiB "
                      f"{outcome}   ({(after - before) / (mib << 20):.2f}x one tensor)")
        finally:
            pool.stop()


if __name__ == "__main__":
    main()

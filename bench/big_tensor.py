"""A big tensor through the service against a raw PUT + GET of the same bytes to the same server.

    python bench/big_tensor.py [--mib 1024] [--workers 1]

It starts redis-server, `ascrun server` and a worker itself (bench/faults.py's Pool), so that it
can read the API server's peak RSS (VmHWM in /proc/<pid>/status; each phase gets a fresh server
on the same port, so each peak is that phase's own, imports included). Then:

  raw      PUT /v1/blobs/<sha256> of the tensor's bytes, then GET it back
  service  client.launch of a kernel that copies x to z (tiles through the Unified Buffer), z
           verified equal to x; the client uploads x and z (z's zeros too) and downloads z

and prints each time, the ratio service / raw and the server's peak RSS against the tensor's size
(targets: <= 3x, <= 1.5x). A phase that fails prints the service's own error and the run goes on.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import importlib.util
import tempfile
import time
from pathlib import Path

import asc
import httpx
import numpy as np

import ascrun

TILE = 16384  # float32 elements a tile: 64 KiB of the Unified Buffer
BLOCKS = 8


@asc.jit
def tiled_copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: int, tile: asc.ConstExpr[int]):
    """z = x: each block copies its `tiles` tiles of `tile` elements through the Unified Buffer."""
    base = asc.get_block_idx() * tiles * tile
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + base, tiles * tile)
    z_gm.set_global_buffer(z + base, tiles * tile)
    buffer = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, tile)
    for i in range(tiles):
        asc.data_copy(buffer, x_gm[i * tile:], tile)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(z_gm[i * tile:], buffer, tile)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _pool_class():
    spec = importlib.util.spec_from_file_location("bench_faults", Path(__file__).with_name("faults.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Pool


def _peak_rss(pid: int) -> int:
    """VmHWM of `pid` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def raw_round_trip(url: str, data: bytes) -> float:
    digest = hashlib.sha256(data).hexdigest()
    with httpx.Client(base_url=url, timeout=600) as http:
        start = time.perf_counter()
        put = http.put(f"/v1/blobs/{digest}", content=data, headers={"Content-Type": "application/octet-stream"})
        if put.status_code >= 300:
            raise RuntimeError(f"PUT answered {put.status_code}: {put.text[:300]}")
        got = http.get(f"/v1/blobs/{digest}")
        elapsed = time.perf_counter() - start
    if got.status_code != 200:
        raise RuntimeError(f"GET answered {got.status_code}: {got.text[:300]}")
    if got.content != data:
        raise RuntimeError("GET returned other bytes than were PUT")
    return elapsed


def service_round_trip(url: str, x: np.ndarray) -> float:
    z = np.zeros_like(x)
    tiles = x.size // (BLOCKS * TILE)
    # retries=0: an answer such as 503 is the result to report, not something to wait out
    with ascrun.Client(url, timeout=600, retries=0) as client:
        start = time.perf_counter()
        client.launch(tiled_copy_kernel, BLOCKS, x, z, tiles, TILE, timeout=600)
        elapsed = time.perf_counter() - start
    if not np.array_equal(z, x):
        raise RuntimeError("z differs from x")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="tensor size in MiB (a multiple of 4)")
    parser.add_argument("--workers", type=int, default=1)
    opts = parser.parse_args()
    count = opts.mib * (1 << 20) // 4
    if count % (BLOCKS * TILE):
        parser.error(f"--mib must be a multiple of {BLOCKS * TILE * 4 >> 20}")
    x = np.random.default_rng(0).random(count, dtype=np.float32)
    with tempfile.TemporaryDirectory(prefix="ascrun_big_") as workdir:
        # x and z are the job's tensors: max_job_tensor_bytes (1 GiB by default) is raised for them
        tenants = json.dumps({"limits": {"max_job_tensor_bytes": 2 * x.nbytes, "max_blob_bytes": x.nbytes}})
        pool = _pool_class()(Path(workdir), opts.workers, tenants=tenants)
        try:
            small = np.arange(BLOCKS * TILE, dtype=np.float32)  # compile first: the phases time transfers
            service_round_trip(pool.url, small)
            print(f"float32 tensor of {x.nbytes / (1 << 20):.0f} MiB, API server {pool.url}")
            figures = {}
            for phase, run in (("raw", lambda: raw_round_trip(pool.url, x.tobytes())),
                               ("service", lambda: service_round_trip(pool.url, x))):
                pool.kill("server")
                pool.start("server")
                pool.wait_ready(opts.workers)
                try:
                    figures[phase] = run()
                    outcome = f"{figures[phase]:7.2f} s"
                except (RuntimeError, ascrun.KernelError, httpx.HTTPError) as e:
                    outcome = f"FAILED: {e.__class__.__name__}: {e}"
                peak = _peak_rss(pool.server.pid)
                print(f"  {phase:8s} {outcome}\n           API server peak RSS {peak / (1 << 20):7.0f} MiB "
                      f"= {peak / x.nbytes:.2f}x the tensor")
            if len(figures) == 2:
                print(f"  ratio service / raw: {figures['service'] / figures['raw']:.2f}x (target <= 3x)")
        finally:
            pool.stop()


if __name__ == "__main__":
    main()

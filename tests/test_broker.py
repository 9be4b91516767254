"""The broker (a worker's own process) holds what its tenant is charged for, not what a request asks
(issue 25, item 5): a job's tensors are bounded at admission (max_job_tensor_bytes); they stream
between Redis and the run jail piece by piece, so a tensor larger than the broker's own memory
limit (ASCRUN_BROKER_MEMORY_BYTES) goes through; an output that Redis cannot take fails its job
with `limit` and leaves none of its chunks behind. A server and one worker on a Redis of their own
(its maxmemory is set by a test)."""
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import redis

import ascrun
import ops
from ascrun.args import prepare
from ascrun.compiler.sandbox import bwrap, framing
from ascrun.server.store.keys import blob_key, tenant_key
from ascrun.compiler.errors import KernelError
from ascrun.compiler.sandbox import jail
from ascrun.compiler.settings import ServiceSettings
from ascrun.compiler.targets.cpu import jailed as cpu_jailed
from ascrun.server.store.keys import blob_chunk_key
from ascrun.server.workers import tensors
from conftest import own_service
from test_jail_attacks import LIMITS, Hijacked

pytestmark = pytest.mark.service

TOKENS = {"heavy": "heavy-secret-token", "small": "small-secret-token"}
SMALL_JOB_BYTES = 1_000_000
BROKER_MEMORY = 640 << 20  # the worker's RLIMIT_DATA
BIG = 128 << 20  # a zeros tensor the kernel writes: it comes back whole


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    config = {"tenants": [  # one cache group: the kernel is built once
        {"name": "heavy", "token_sha256": hashlib.sha256(TOKENS["heavy"].encode()).hexdigest(), "cache_group": "b"},
        {"name": "small", "token_sha256": hashlib.sha256(TOKENS["small"].encode()).hexdigest(), "cache_group": "b",
         "limits": {"max_job_tensor_bytes": SMALL_JOB_BYTES}}]}
    with own_service(tmp_path_factory.mktemp("broker-redis"), {
            "ASCRUN_TENANTS": json.dumps(config), "ASCRUN_BROKER_MEMORY_BYTES": str(BROKER_MEMORY)}, workers=1) as svc:
        yield svc


def _spin(z_bytes: int):
    """spin_kernel writes z's first 64 elements to x + 1: z (zeros, nothing uploaded) comes back whole."""
    args, blobs = ascrun.service.submission.job_arguments(prepare(["x", "z", "rounds"], [
        np.ones(64, np.float32), np.zeros(z_bytes // 4, np.float32), 1]))
    assert args[1].get("zeros") and not blobs
    return {"bundle": ascrun.compiler.bundle.collect(ops.spin_kernel).to_json(), "core_num": 1, "args": args,
            "timeout": 120}, blobs


def _run(client: ascrun.Client, z_bytes: int) -> dict:
    """The job's final record (a loaded machine may take a while to move a big tensor)."""
    return client.wait(client.submit_job(*_spin(z_bytes))["id"], timeout=180)


def _status(pid: int, field: str) -> int:
    """A /proc/<pid>/status figure in bytes (VmHWM: the peak resident set)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) << 10
    raise KeyError(field)


def _uploads(connection: redis.Redis) -> list:
    return list(connection.scan_iter(match="*upload:*"))


def test_a_job_whose_tensors_pass_max_job_tensor_bytes_is_refused(pool):
    """Two zeros tensors cost a 1 KB request but gigabytes of the worker's: their sum is capped."""
    with ascrun.Client(pool.url, token=TOKENS["small"], retries=0) as small:
        with pytest.raises(ascrun.KernelError) as refused:
            small.submit_job(*_spin(SMALL_JOB_BYTES))  # with x's 256 bytes: just over
        assert _run(small, SMALL_JOB_BYTES - 256)["status"] == "finished"
    assert refused.value.kind == "limit"
    assert str(refused.value) == (f"the job's tensors hold {SMALL_JOB_BYTES + 256} bytes (zeros included), over the "
                                  f"{SMALL_JOB_BYTES}-byte limit (max_job_tensor_bytes)")


def test_a_large_output_streams_through_the_broker(pool):
    """A 128 MiB output the kernel wrote goes from the run jail to Redis piece by piece: the worker
    (under its data limit) grows its peak resident set by far less than the tensor (about 8 MiB;
    reading the answer whole, then copying it into the argument's array, grew it by 2x the tensor)."""
    worker = pool.workers[0].pid
    limits = Path(f"/proc/{worker}/limits").read_text()
    assert f"Max data size             {BROKER_MEMORY}" in limits
    before = _status(worker, "VmHWM")
    with ascrun.Client(pool.url, token=TOKENS["heavy"], retries=0) as heavy:
        done = _run(heavy, BIG)
    assert done["status"] == "finished", done
    grown = _status(worker, "VmHWM") - before
    expected = np.zeros(BIG // 4, np.float32)
    expected[:64] = 2.0
    digest = hashlib.sha256(expected).hexdigest()
    assert {k: done["outputs"]["z"][k] for k in ("blob", "dtype", "shape")} == {
        "blob": digest, "dtype": "float32", "shape": [BIG // 4]}
    assert int(pool.redis.get(blob_key("heavy", digest))) == BIG
    assert grown < BIG // 4, f"the worker's peak RSS grew by {grown >> 20} MiB for a {BIG >> 20} MiB output"
    assert not _uploads(pool.redis)


def test_a_failed_output_put_leaves_nothing_behind(pool):
    """Redis fills up while a 64 MiB output goes in: the job fails with `limit`, the chunks it
    wrote are deleted (none charged to nobody), and the worker takes the next job."""
    stored = int(pool.redis.get(tenant_key("heavy", "stored")) or 0)
    pool.redis.config_set("maxmemory", pool.redis.info("memory")["used_memory"] + (24 << 20))
    try:
        with ascrun.Client(pool.url, token=TOKENS["heavy"], retries=0) as heavy:
            failed = _run(heavy, 64 << 20)
            assert failed["status"] == "failed" and failed["error"]["kind"] == "limit", failed
            assert "Redis is full" in failed["error"]["message"]
            assert not _uploads(pool.redis)
            # what the tenant keeps: the failed job's record (charged to it), none of the output's bytes
            assert int(pool.redis.get(tenant_key("heavy", "stored")) or 0) - stored < 64 << 10
            pool.redis.config_set("maxmemory", 0)
            assert _run(heavy, 1 << 20)["status"] == "finished"
    finally:
        pool.redis.config_set("maxmemory", 0)


@pytest.mark.unit
def test_an_answer_streams_in_pieces_and_within_its_cap():
    """read_streamed hands a jail's byte frames to sinks at most PIECE_BYTES at a time, the bytes
    the jail wrote whole; a frame past the message's cap is refused before it is read."""
    frames = [os.urandom(3 * framing.PIECE_BYTES // 2), b"", b"small"]
    read, write = os.pipe()
    try:
        writer = threading.Thread(target=framing.write_message, args=(write, {"ok": 1}, frames))
        writer.start()
        got, pieces = {}, []

        def sink_for(header, index, size):
            got[index] = bytearray()
            return lambda piece: (pieces.append(len(piece)), got[index].extend(piece))
        assert framing.read_streamed(read, sink_for) == {"ok": 1}
        writer.join()
        assert [bytes(got[i]) for i in range(3)] == frames and max(pieces) == framing.PIECE_BYTES
        def write_to_a_reader_that_stops():  # the reader refuses the frame and closes its end
            with contextlib.suppress(BrokenPipeError):
                framing.write_message(write, {"ok": 1}, [b"x" * 100])
        writer = threading.Thread(target=write_to_a_reader_that_stops)
        writer.start()
        with pytest.raises(ValueError, match="over the cap"):
            framing.read_streamed(read, lambda *_: pytest.fail("a frame over the cap was read"), cap=64)
    finally:
        os.close(read)
        writer.join()
        os.close(write)


@pytest.mark.unit
def test_a_source_that_gives_other_than_its_size_breaks_off_the_message():
    """A Streamed frame's length is on the wire before its bytes: a source short or long is an error,
    never a message out of step that the other side would read on."""
    read, write = os.pipe()
    try:
        for said, given in ((10, [b"12345"]), (4, [b"12345"])):
            with pytest.raises(ValueError, match="streamed frame gave"):
                framing.write_frames(write, [framing.Streamed(said, lambda: iter(given))])
    finally:
        os.close(read)
        os.close(write)


LIMITED = """
import resource, subprocess, sys
import numpy as np
from ascrun.compiler.settings import ServiceSettings
from ascrun.compiler.sandbox import bwrap
from ascrun.server.workers.worker import limit_broker_memory
limit_broker_memory(ServiceSettings(broker_memory_bytes=512 << 20))
print(resource.getrlimit(resource.RLIMIT_DATA)[0])
try:
    np.ones(768 << 20, np.uint8)
except MemoryError:
    print("MemoryError")
jail = bwrap.popen(["cat", "/proc/self/limits"], stdout=subprocess.PIPE)
print([line for line in jail.communicate()[0].decode().splitlines() if line.startswith("Max data size")][0])
"""


@pytest.mark.unit
def test_the_broker_memory_limit_is_the_workers_alone():
    """ASCRUN_BROKER_MEMORY_BYTES is the worker process's RLIMIT_DATA: an allocation past it is a
    MemoryError (the job's `limit`), not the worker's end; a jail it starts has its limit lifted."""
    said = subprocess.run([sys.executable, "-c", LIMITED], capture_output=True, text=True, timeout=60)
    assert said.returncode == 0, said.stderr
    limit, error, jail = said.stdout.splitlines()
    assert (int(limit), error) == (512 << 20, "MemoryError")
    soft, hard = jail.split()[3:5]
    assert soft == hard != str(512 << 20), jail


@pytest.mark.unit
def test_a_jail_starts_with_its_limits_and_no_python_between_fork_and_exec():
    """A build jail's limits (jailed.py) are prlimit's, which execs bwrap: the worker's threads make a
    Python preexec_fn unsafe in the forked child."""
    jail = bwrap.popen(["cat", "/proc/self/limits"], rlimits={"as": 3 << 30, "cpu": 7, "core": 0, "fsize": 12345},
                       stdout=subprocess.PIPE)
    lines = jail.communicate(timeout=60)[0].decode().splitlines()
    limits = {line[:26].strip(): line[26:].split()[:2] for line in lines}
    assert jail.args[:1] == [bwrap.PRLIMIT]
    assert limits["Max address space"] == [str(3 << 30)] * 2
    assert limits["Max cpu time"] == ["7", "7"]
    assert limits["Max core file size"] == ["0", "0"]
    assert limits["Max file size"] == ["12345", "12345"]


# a run jail taken over: answers a launch saying it wrote x, with 8 of x's 64 bytes
WROTE_X = json.dumps({"ok": {"written": ["x"], "seconds": 0.1, "log": "", "warnings": [], "model": None,
                             "trace": None}}).encode()
SHORT = (f"import os, time; ready = b'{{\"ready\": true}}'; ok = {WROTE_X!r}; "
         "os.write(1, (1).to_bytes(8, 'big') + len(ready).to_bytes(8, 'big') + ready); os.read(0, 1); "
         "os.write(1, (2).to_bytes(8, 'big') + len(ok).to_bytes(8, 'big') + ok + (8).to_bytes(8, 'big') + bytes(8)); "
         "time.sleep(600)")


@pytest.mark.kernel
def test_a_written_frame_is_the_tensor_sent_whole():
    """A streamed answer is checked as it arrives: a frame for x that is not x's size fails the job
    as out of protocol before a byte of it reaches x, and the jail is not reused."""
    runners = cpu_jailed.JailedRunners(LIMITS).for_tenant("mallory")
    runners.jails["mallory"] = hijacked = Hijacked(SHORT)
    runners.deadline = jail.Deadline(30)
    x = np.full(16, 7, np.float32)
    try:
        with pytest.raises(KernelError) as failed:
            runners.run(b"\x7fELF", 1, [{"name": "x", "kind": "tensor", "dtype": "float32"}], ["x"], [x])
        assert (failed.value.kind, str(failed.value)) == ("runtime_error", "the run jail answered out of protocol")
        assert (x == 7).all() and not hijacked.alive and "mallory" not in runners.jails
    finally:
        runners.close()


def test_a_tensor_goes_to_redis_and_back_in_pieces(redis_url):
    """What a runner that takes arrays (CANN's) gets and gives back, through the same sources and
    sinks: a 65 MiB output (two blob chunks) is stored as a blob under its digest, read back from
    it piece by piece, and an input whose chunk expired while it was read fails as expired."""
    connection, settings = redis.Redis.from_url(redis_url), ServiceSettings(redis_url=redis_url)
    array = np.random.default_rng(0).random((65 << 20) // 4 + 1, dtype=np.float32)
    written = tensors.JobTensor("z", "float32", array.shape, tensors.zeros(array.nbytes), connection, settings)
    assert not written.array().any()
    written.received(array)
    stored = written.commit("broker-test")
    digest = hashlib.sha256(array).hexdigest()
    assert stored == {"blob": digest, "dtype": "float32", "shape": [array.size]}
    source = tensors.blob(connection, "broker-test", digest, array.nbytes, "x")
    read = tensors.JobTensor("x", "float32", array.shape, source, connection, settings)
    assert max(len(piece) for piece in read.frame().pieces()) == framing.PIECE_BYTES
    assert np.array_equal(read.array(), array)
    connection.delete(blob_chunk_key("broker-test", digest, 1))
    with pytest.raises(KernelError, match="the input of 'x' expired"):
        read.array()

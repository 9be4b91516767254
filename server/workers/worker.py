"""An RQ worker serving the queues of the targets this host can run.

pyasc and the toolchain are imported (and the toolchain id computed) before the worker starts
forking work horses, so every horse inherits them instead of paying for them per job.
"""
from __future__ import annotations

import gc
import logging
import os
import signal
import socket
import threading
import time
from typing import Sequence

import redis
from rq import Queue
from rq.worker import RoundRobinWorker
from rq.serializers import JSONSerializer

from ...compiler import frontend, pipeline
from ...compiler.bundle import KernelBundle, KernelFunction
from ...compiler.frontend import ArgSpec
from ..settings import Settings
from ..store import WORKER_BEAT_S, JobStore, queue_name, queues_key, worker_beat, worker_gone


def _describe_exit(ret_val: int) -> str:
    if os.WIFSIGNALED(ret_val):
        number = os.WTERMSIG(ret_val)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}"
    return f"exited with status {os.WEXITSTATUS(ret_val)}"


REDIS_RETRY_MAX_S = 5.0
# Compiled once before forking: pyasc's first compile in a process sets up MLIR (about 2 s),
# and every work horse inherits that instead of paying for it on each frontend cache miss.
WARM_UP = KernelBundle(entry="ascrun_warm_up", constants=(), modules=(("asc", "asc"),), functions=(
    KernelFunction("ascrun_warm_up", "@asc.jit\ndef ascrun_warm_up(x: asc.GlobalAddress):\n"
                   "    asc.pipe_barrier(asc.PipeID.PIPE_ALL)\n", "<ascrun warm-up>", 1),))


QUEUE_REFRESH_S = 1  # a new tenant's queue is served within this


class AscrunWorker(RoundRobinWorker):
    """RQ's round-robin worker over every tenant's queue of its targets (store.queues_key, read
    anew before each dequeue, so a tenant's first job needs no restart), told apart when it stops
    on request (SIGTERM/SIGINT) from when its loop gave up on an error, such as Redis going away."""
    stop_requested = False

    def __init__(self, targets: Sequence[str], *args, **kwargs):
        self.targets = list(targets)
        super().__init__(self._queue_names(kwargs["connection"]), *args, **kwargs)

    def _queue_names(self, connection: redis.Redis) -> list:
        names = set()
        for target in self.targets:
            names.update(n.decode() for n in connection.smembers(queues_key(target)))
        return sorted(names) or [queue_name(self.targets[0], "open")]

    def request_stop(self, signum, frame):
        self.stop_requested = True
        super().request_stop(signum, frame)

    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        while True:
            known = {q.name for q in self.queues}
            for name in self._queue_names(self.connection):
                if name not in known:
                    queue = Queue(name, connection=self.connection, serializer=self.serializer)
                    self.queues.append(queue)
                    self._ordered_queues.append(queue)
            if timeout is None:  # burst: one non-blocking look
                return super().dequeue_job_and_maintain_ttl(None, max_idle_time)
            result = super().dequeue_job_and_maintain_ttl(QUEUE_REFRESH_S, QUEUE_REFRESH_S)
            if result is not None:
                return result


def _wait_for_redis(connection: redis.Redis) -> None:
    delay = 0.5
    while True:
        try:
            connection.ping()
            return
        except redis.ConnectionError:
            time.sleep(delay)
            delay = min(delay * 2, REDIS_RETRY_MAX_S)


def serve(targets: Sequence[str], settings: Settings, burst: bool = False, name: str | None = None) -> None:
    frontend.run(WARM_UP, [ArgSpec("tensor", "float32")])
    gc.freeze()  # what exists now is never collected: a work horse's GC does not touch (copy) its pages

    for target in targets:
        _ = pipeline.get_target(target).toolchain.id  # fails now, not per job, if the toolchain is missing
    connection = redis.Redis.from_url(settings.redis_url)
    store = JobStore(connection, settings)

    def horse_killed(job, retpid, ret_val, rusage):
        # The kernel crashed the process (a segfault in native code, an abort, the OOM killer):
        # the job fails, the worker goes on. A job that timed out already recorded so (first wins).
        store.fail(job.id, "runtime_error", f"the kernel crashed the worker's work horse: it {_describe_exit(ret_val)}")

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    name = name or f"ascrun-{socket.gethostname()}-{os.getpid()}"
    stop_beating = _start_heartbeat(redis.Redis.from_url(settings.redis_url), targets, name)
    try:
        while True:
            worker = AscrunWorker(targets, connection=connection, serializer=JSONSerializer, name=name,
                                  work_horse_killed_handler=horse_killed)
            try:
                worker.work(burst=burst, with_scheduler=False)
            except redis.ConnectionError:
                pass  # RQ's teardown could not deregister the worker: Redis is down, see below
            if burst or worker.stop_requested:
                return
            # RQ quit on an error (e.g. Redis restarted under a running job): start over once Redis is back.
            _wait_for_redis(connection)
    finally:
        stop_beating()


def _start_heartbeat(connection: redis.Redis, targets: Sequence[str], name: str):
    """Say every WORKER_BEAT_S that this worker serves `targets` (store.live_workers counts it);
    returns the function that stops beating and deregisters."""
    done = threading.Event()

    def beat():
        while not done.is_set():
            try:
                worker_beat(connection, targets, name)
            except redis.RedisError:
                pass  # Redis is down: nobody can count us anyway
            done.wait(WORKER_BEAT_S)

    thread = threading.Thread(target=beat, name="ascrun-worker-heartbeat", daemon=True)
    thread.start()

    def stop():
        done.set()
        thread.join()
        try:
            worker_gone(connection, targets, name)
        except redis.RedisError:
            pass
    return stop

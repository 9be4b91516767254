"""An RQ worker serving the queues of the targets this host can run.

pyasc and the toolchain are imported (and the toolchain id computed) before the worker starts
forking work horses, so every horse inherits them instead of paying for them per job.
"""
from __future__ import annotations

import logging
import os
import signal
from typing import Sequence

import redis
from rq import Queue, Worker
from rq.serializers import JSONSerializer

from ...compiler import frontend, pipeline
from ...compiler.bundle import KernelBundle, KernelFunction
from ...compiler.frontend import ArgSpec
from ..settings import Settings
from ..store import JobStore, queue_name


def _describe_exit(ret_val: int) -> str:
    if os.WIFSIGNALED(ret_val):
        number = os.WTERMSIG(ret_val)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}"
    return f"exited with status {os.WEXITSTATUS(ret_val)}"


# Compiled once before forking: pyasc's first compile in a process sets up MLIR (about 2 s),
# and every work horse inherits that instead of paying for it on each frontend cache miss.
WARM_UP = KernelBundle(entry="ascrun_warm_up", constants=(), modules=(("asc", "asc"),), functions=(
    KernelFunction("ascrun_warm_up", "@asc.jit\ndef ascrun_warm_up(x: asc.GlobalAddress):\n"
                   "    asc.pipe_barrier(asc.PipeID.PIPE_ALL)\n", "<ascrun warm-up>", 1),))


def serve(targets: Sequence[str], settings: Settings, burst: bool = False, name: str | None = None) -> None:
    frontend.run(WARM_UP, [ArgSpec("tensor", "float32")])

    for target in targets:
        _ = pipeline.get_target(target).toolchain.id  # fails now, not per job, if the toolchain is missing
    connection = redis.Redis.from_url(settings.redis_url)
    store = JobStore(connection, settings)

    def horse_killed(job, retpid, ret_val, rusage):
        # The kernel crashed the process (a segfault in native code, an abort, the OOM killer):
        # the job fails, the worker goes on. A job that timed out already recorded so (first wins).
        store.fail(job.id, "runtime_error", f"the kernel crashed the worker's work horse: it {_describe_exit(ret_val)}")

    queues = [Queue(queue_name(t), connection=connection, serializer=JSONSerializer) for t in targets]
    worker = Worker(queues, connection=connection, serializer=JSONSerializer, name=name,
                    work_horse_killed_handler=horse_killed)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    worker.work(burst=burst, with_scheduler=False)

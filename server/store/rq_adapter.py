"""Everything ascrun assumes about RQ's internals, in one place (hence rq==2.12.0 pinned in
pyproject.toml): where RQ keeps a queue and its jobs in Redis, which fields of its job hash the
reaper reads and what they hold, how a worker takes a job off its queues (the intermediate list),
what RQ keeps of each run, how a worker's queues grow and in which order it reads them, how a job
taken is put back, and how it serves its command channel.
tests/test_rq_adapter.py checks each assumption against the installed RQ: an RQ upgrade that
breaks one fails there, saying which.

The rest of the service reaches RQ only through this module; the worker (workers/worker.py)
subclasses RQ's round-robin worker besides.
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Sequence, Tuple

import redis
from rq import get_current_job
from rq.executions import Execution
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job
from rq.queue import Queue
from rq.results import Result
from rq.serializers import JSONSerializer
from rq.utils import now, utcformat, utcparse
from rq.worker import WorkerStatus

SERIALIZER = JSONSerializer  # every ascrun queue and worker speaks JSON: no pickle
WAITING = ("queued", "deferred", "scheduled")  # RQ's states of a job not started (one a worker took still says queued)


def queue_key(name: str) -> str:
    """The Redis list RQ keeps queue `name`'s job ids in, the next first (what a worker pops; its
    length is the queue's depth)."""
    return Queue.redis_queue_namespace_prefix + name


def enqueue(connection: redis.Redis, pipe: redis.client.Pipeline, queue: str, function: str, args: Sequence,
            job_id: str, timeout_s: int, ttl_s: int) -> None:
    """Create RQ job `job_id`, calling `function` (its dotted name) with `args` within `timeout_s`,
    its result and failure kept `ttl_s`, and push it on `queue`: within `pipe` (a MULTI the caller
    executes; RQ starts it, so call this first)."""
    Queue(queue, connection=connection, serializer=SERIALIZER).enqueue_call(
        function, args=args, job_id=job_id, timeout=timeout_s, result_ttl=ttl_s, failure_ttl=ttl_s, pipeline=pipe)


class JobState(NamedTuple):
    """What RQ's hash of a job says of it (all None: there is no such RQ job)."""
    status: Optional[str]  # RQ's JobStatus value: WAITING, "started", "finished", "failed", ...
    started_at: Optional[float]  # when a worker started it (epoch seconds), once one has
    origin: Optional[str]  # the name of the queue it was enqueued on


def job_state(connection: redis.Redis, rq_id: str) -> JobState:
    status, started_at, origin = connection.hmget(Job.key_for(rq_id), "status", "started_at", "origin")
    return JobState(None if status is None else status.decode(),
                    utcparse(started_at.decode()).timestamp() if started_at else None,
                    None if origin is None else origin.decode())


class Taken:
    """The list RQ moves a job to when a worker reading that one queue takes it (LMOVE), until the
    worker has started it; a worker reading several queues pops the job outright (BLPOP), into no
    list. RQ's own cleanup fails a job left there a minute after it first saw it."""

    def __init__(self, connection: redis.Redis, queue: str):
        self.connection = connection
        self._list = IntermediateQueue(queue_key(queue), connection)
        self.key = self._list.key

    def holds(self, rq_id: str) -> bool:
        return self.connection.lpos(self.key, rq_id) is not None

    def seen_since(self, rq_id: str) -> Optional[float]:
        """When the job was first seen in this list (epoch seconds), noting now if it was not yet
        (RQ's own cleanup counts from the same mark)."""
        self._list.set_first_seen(rq_id)
        first_seen = self._list.get_first_seen(rq_id)
        return None if first_seen is None else first_seen.timestamp()

    def take_out(self, rq_id: str) -> bool:
        """Take the job out of the list, so that RQ never hands it to a worker; False if it was not there."""
        return bool(self.connection.lrem(self.key, 0, rq_id))


def runs(connection: redis.Redis, rq_id: str) -> int:
    """How many times workers ran the RQ job: RQ keeps a result for each run, in a stream (the last
    10, while the job's result_ttl lasts)."""
    return connection.xlen(Result.get_key(rq_id))


def current_job() -> Tuple[redis.Redis, str]:
    """The Redis connection and worker name of the RQ job this process is running (in a job's function)."""
    job = get_current_job()
    return job.connection, job.worker_name


def add_queue(worker, name: str) -> Queue:
    """Make RQ `worker` (a running one, between two dequeues) serve queue `name` too, and return it.
    RQ 2.12 has no public way to change a worker's queues once it is made: it keeps them in `queues`
    (what it reports; perform_job takes a job out of the intermediate list itself only when there
    is one queue)."""
    queue = Queue(name, connection=worker.connection, serializer=worker.serializer)
    worker.queues.append(queue)
    return queue


def dequeue_order(worker, queues: Sequence[Queue]) -> None:
    """The queues RQ `worker`'s next dequeue reads, the first first: RQ dequeues in the order of the
    private `_ordered_queues` (which a RoundRobinWorker rotates past the queue of each job it took,
    through reorder_queues)."""
    worker._ordered_queues = list(queues)


def put_back(connection: redis.Redis, queue: str, rq_id: str) -> None:
    """Put a job a worker dequeued but did not start back at the head of its queue, as if no worker
    had taken it: RQ pops it from the queue's list (several queues) or moves it to the intermediate
    list (one queue); its hash still says queued."""
    with connection.pipeline() as pipe:
        pipe.lrem(IntermediateQueue(queue_key(queue), connection).key, 0, rq_id)
        pipe.lpush(queue_key(queue), rq_id)
        pipe.execute()


class LeanRuns:
    """A mixin for an RQ worker running jobs in its own process, writing less on every job's path.
    Its start: what RQ writes (prepare_execution, then prepare_job_execution: the run's execution
    record and the started registry's member, the worker busy with the job and beating, the job's
    hash started, the job taken out of the intermediate list), in one transaction, each hash once:
    RQ 2.12 takes two transactions, writing the worker's hash in five HSETs and the job's in two
    (16 commands, here 10). Its success: as RQ's, without what only jobs depending on others or
    repeating need (ascrun enqueues neither): the WATCH and read of the job's dependents, and the expiry of its
    dependents and dependencies keys, which do not exist."""

    def prepare_execution(self, job: Job) -> Optional[Execution]:
        return self.execution  # made with the job's start (prepare_job_execution)

    def prepare_job_execution(self, job: Job, remove_from_intermediate_queue: bool = False) -> None:
        with self.connection.pipeline() as pipe:
            ttl = self.get_heartbeat_ttl(job)
            self.execution = Execution.create(job, ttl, pipeline=pipe, worker_name=self.name)
            self._state, self.current_job_working_time, self.last_heartbeat = WorkerStatus.BUSY, 0, now()
            pipe.hset(self.key, mapping={"state": self._state, "current_job": job.id, "current_job_working_time": 0,
                                         "last_heartbeat": utcformat(self.last_heartbeat)})
            pipe.expire(self.key, ttl)
            job.prepare_for_execution(self.name, pipeline=pipe)  # its hash's heartbeat among its fields
            if remove_from_intermediate_queue:
                pipe.lrem(IntermediateQueue(queue_key(job.origin), self.connection).key, 1, job.id)
            pipe.execute()

    def handle_execution_ended(self, job: Job, queue: Queue, heartbeat_ttl: int) -> None:
        """RQ writes the job's heartbeat once more here: its hash is saved whole right after (its
        end, handle_job_success or handle_job_failure), this heartbeat among its fields."""
        job.ended_at = job.last_heartbeat = now()

    def handle_job_success(self, job: Job, queue: Queue, started_job_registry) -> None:
        with self.connection.pipeline() as pipe:
            self.increment_successful_job_count(pipeline=pipe)
            self.increment_total_working_time(job.ended_at - job.started_at, pipe)
            result_ttl = job.get_result_ttl(self.default_result_ttl)
            if result_ttl != 0:
                job._handle_success(result_ttl, pipeline=pipe, worker_name=self.name, execution_id=self.execution.id,
                                    execution_started_at=self.execution.created_at, execution_ended_at=job.ended_at)
            if result_ttl > 0:
                pipe.expire(job.key, result_ttl)
            else:
                job.cleanup(result_ttl, pipeline=pipe, remove_from_queue=False)
            self.cleanup_execution(job, pipeline=pipe)
            pipe.execute()


def subscribe_commands(worker, poll_s: float) -> None:
    """What RQ's Worker.subscribe does (its thread serving the command channel: `rq`'s shutdown,
    kill-horse and stop-job), with that thread waiting for a message at most `poll_s` instead of
    RQ's 60 s: RQ's teardown (unsubscribe) joins the thread, so a worker told to stop waited for it."""
    worker.log.info("Worker %s: subscribing to channel %s", worker.name, worker.pubsub_channel_name)
    worker.pubsub = worker.connection.pubsub()
    worker.pubsub.subscribe(**{worker.pubsub_channel_name: worker.handle_payload})
    worker.pubsub_thread = worker.pubsub.run_in_thread(sleep_time=poll_s, daemon=True,
                                                       exception_handler=worker._pubsub_exception_handler)


def stop_commands(worker) -> None:
    """Tell the thread subscribe_commands started to stop (within its poll, closing its connection),
    without a round trip to Redis, which may be away: RQ's teardown unsubscribes only once it has
    deregistered the worker, which needs Redis."""
    if worker.pubsub_thread:
        worker.pubsub_thread.stop()
        worker.pubsub_thread = None


def since_heartbeat(worker) -> Optional[float]:
    """Seconds since RQ `worker` last wrote its heartbeat (RQ keeps it as an aware UTC datetime,
    from rq.utils.now); None before the first."""
    return None if worker.last_heartbeat is None else (now() - worker.last_heartbeat).total_seconds()

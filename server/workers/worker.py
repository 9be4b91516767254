"""An RQ worker serving the queues of the targets this host can run: the trusted broker.

It runs jobs in its own process, as RQ's SimpleWorker does (no work horse): no tenant code runs
here, only in the jails job.py starts, so forking per job would only slow the cached path.
The frontend's zygote is started (pyasc warmed in its jail) before the first job.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import resource
import socket
import threading
import time
from contextlib import contextmanager
from typing import Dict, Iterator, List, Sequence

import redis
from rq.worker import RoundRobinWorker, WorkerStatus

from ...compiler.sandbox import jail
from ...compiler.settings import ServiceSettings
from ..metrics import recorder
from ..store import connect, rq_adapter
from ..store.pool import worker_beat, worker_gone
from ..store.queues import STAGES, QueuePlace, place_of, queue_name, served_queues
from ..store.share import Shares
from . import job

log = logging.getLogger("ascrun.worker")

REDIS_RETRY_MIN_S, REDIS_RETRY_MAX_S = 0.25, 5.0  # backoff while Redis is away, stalled or full
BOOKKEEPING_S = 1.0  # RQ's worker heartbeat and suspension check, at most this often
COMMANDS_POLL_S = 1.0  # RQ's command channel thread wakes this often (RQ: 60 s), so the worker stops within it


class AscrunWorker(rq_adapter.LeanRuns, RoundRobinWorker):
    """RQ's round-robin worker over every tenant's queue of its targets (queues.served_queues, read
    anew each settings.queue_refresh_s, so a tenant's first job needs no restart), one turn per
    tenant however many queues it has, skipping a tenant at its share of the workers
    (store/share.py); told apart when it stops on request (SIGTERM/SIGINT) from when its loop gave
    up on an error, such as Redis going away."""
    stop_requested = False
    _suspension_checked = float("-inf")
    _queues_read = float("-inf")

    def __init__(self, served: Dict[str, Dict], settings: ServiceSettings, *args, **kwargs):
        self.served = served  # target -> its capabilities, "socs" among them
        self._socket_timeout = kwargs["connection"].connection_pool.connection_kwargs.get("socket_timeout")
        self.queue_refresh_s = settings.queue_refresh_s
        self.shares = Shares(kwargs["connection"], settings.job_heartbeat_ttl_s, settings.job_heartbeat_s)
        self._places: Dict[str, QueuePlace] = {}
        super().__init__(self._queue_names(kwargs["connection"]), *args, **kwargs)
        self.turns: List = list(self.queues)  # every queue served, in round-robin order (reorder_queues)

    def _queue_names(self, connection: redis.Redis) -> list:
        """The queues of jobs for the targets and stages served, naming no SOC or one of the SOCs served."""
        names = served_queues(connection, self.served)
        target, capabilities = next(iter(self.served.items()))  # RQ wants a queue, even before the first job
        return sorted(names) or [queue_name(target, "open", stage=capabilities.get("stages", STAGES)[0])]

    def place(self, queue) -> QueuePlace:
        if queue.name not in self._places:
            self._places[queue.name] = place_of(queue.name, self.served) or QueuePlace("", "", "", "")
        return self._places[queue.name]

    def reorder_queues(self, reference_queue):
        """One turn per tenant: after a job from one of a tenant's queues, every queue of that tenant
        goes last, the one the job came from last of them (a tenant spreading its jobs over SOCs or
        stages gets no more turns)."""
        tenant = self.place(reference_queue).tenant
        others = [q for q in self.turns if self.place(q).tenant != tenant]
        own = [q for q in self.turns if self.place(q).tenant == tenant and q.name != reference_queue.name]
        self.turns = others + own + [q for q in self.turns if q.name == reference_queue.name]

    @property
    def connection_timeout(self) -> float:
        """RQ raises its connection's socket timeout to this, by default 415 s for its 405 s BLPOPs:
        this worker's BLPOPs wait queue_refresh_s at most, which its connection allows for
        (connect.state), so a stalled Redis fails a command within ASCRUN_REDIS_TIMEOUT of that. A
        connection made without a timeout (not by connect.state) keeps RQ's."""
        return self._socket_timeout or super().connection_timeout

    def heartbeat(self, timeout=None, pipeline=None):
        """RQ beats before and after each job, two round trips each time: on the cached path that
        is a tenth of a job's Redis traffic. Once a second is plenty for a key that lives
        worker_ttl + 60 s; beats with their own timeout or pipeline (a job starting) always go."""
        since = rq_adapter.since_heartbeat(self)
        if timeout is None and pipeline is None and since is not None and since < BOOKKEEPING_S:
            return
        super().heartbeat(timeout, pipeline)

    def set_state(self, state, pipeline=None):
        if pipeline is None and state == self.get_state():
            return  # RQ writes "idle" twice between two jobs
        super().set_state(state, pipeline)

    def check_for_suspension(self, burst: bool):
        """`rq suspend` is noticed within BOOKKEEPING_S, not at a round trip per job."""
        if time.monotonic() - self._suspension_checked >= BOOKKEEPING_S:
            self._suspension_checked = time.monotonic()
            super().check_for_suspension(burst)

    def execute_job(self, job, queue):
        """In this process, as SimpleWorker does; the job's own deadline kills its jails."""
        with self._share(self.place(queue), job.id):
            self.perform_job(job, queue)  # its start in one step (rq_adapter.LeanRuns)
        self.set_state(WorkerStatus.IDLE)

    @contextmanager
    def _share(self, place: QueuePlace, job_id: str) -> Iterator[None]:
        """The job holds the running slot dequeue claimed for it; worker time is charged ahead each
        beat while it runs and settled when it ends."""
        charged = [self.shares.ahead_s]  # by the claim
        done = threading.Event()

        def beat():
            while not done.wait(self.shares.ahead_s):
                try:
                    self.shares.beat(place.tenant, job_id)
                    charged[0] += self.shares.ahead_s
                except redis.RedisError:
                    pass  # Redis is away: the slot goes stale and frees itself

        thread = threading.Thread(target=beat, name="ascrun-share-beat", daemon=True)
        thread.start()
        start = time.monotonic()
        try:
            yield
        finally:
            done.set()
            thread.join()
            spent = time.monotonic() - start
            try:
                self.shares.release(place.tenant, place.target, job_id, charged[0], spent)
            except redis.RedisError:
                pass  # the slot goes stale and frees itself; the metric misses this job

    def subscribe(self):
        """RQ's command channel, its thread polling each COMMANDS_POLL_S: a worker told to stop
        (SIGTERM, the end of a --burst run) waited up to RQ's 60 s for it. ascrun sends none of
        RQ's commands, but an operator's `rq` may: the channel is still served."""
        rq_adapter.subscribe_commands(self, COMMANDS_POLL_S)

    def teardown(self):
        """RQ's, its command channel's thread stopped first: a worker that starts over because Redis
        is away, stalled or full (and refuses the deregistration) leaves no thread behind."""
        rq_adapter.stop_commands(self)
        super().teardown()

    def request_stop(self, signum, frame):
        self.stop_requested = True
        super().request_stop(signum, frame)

    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        """The next job of a tenant below its share, with its running slot claimed. While a tenant
        is held back, the shares are read again every job heartbeat (when a slot may have freed)."""
        while True:
            if time.monotonic() - self._queues_read >= self.queue_refresh_s:
                self._queues_read = time.monotonic()
                known = {q.name for q in self.queues}
                self.turns += [rq_adapter.add_queue(self, n) for n in self._queue_names(self.connection)
                               if n not in known]
            blocked = self.shares.blocked({self.place(q).tenant for q in self.turns})
            wait = min(self.queue_refresh_s, self.shares.ahead_s) if blocked else self.queue_refresh_s
            open_turns = [q for q in self.turns if self.place(q).tenant not in blocked]
            if not open_turns:
                if timeout is None:
                    return None  # burst: nothing may start now
                self.heartbeat()
                time.sleep(wait)
                continue
            rq_adapter.dequeue_order(self, open_turns)
            result = super().dequeue_job_and_maintain_ttl(None if timeout is None else wait,
                                                          max_idle_time if timeout is None else wait)
            if result is None:
                if timeout is None:
                    return None  # burst: one non-blocking look
                continue
            job, queue = result
            if self.shares.claim(self.place(queue).tenant, job.id):
                return result
            rq_adapter.put_back(self.connection, queue.name, job.id)  # another worker took the last slot first


def _start_over(worker: "AscrunWorker | None", connection: redis.Redis) -> None:
    """Once Redis answers again and takes writes (it may be away, stalled or full: backing off up
    to REDIS_RETRY_MAX_S), deregister the RQ worker whose loop gave up, so that the next one can
    register under the same name."""
    delay = REDIS_RETRY_MIN_S
    while True:
        try:
            connection.ping()
            if worker is not None:
                worker.register_death()
            return
        except redis.RedisError as e:
            log.warning("Redis: %s; trying again in %.2f s", e, delay)
            time.sleep(delay)
            delay = min(delay * 2, REDIS_RETRY_MAX_S)


def capabilities(target: "job.JailedTarget", socs: Sequence[str]) -> Dict:
    """What this worker says it can do for `target`: the target's own capabilities; its SOCs are
    the device's where the target knows them (CANN), else the operator's --soc labels; the stages
    (build, run) it serves, and its jails' limits."""
    said = target.target.capabilities()
    return dict(said, socs=sorted(said.get("socs") or set(socs)), stages=list(target.stages), jails=target.jails)


def limit_broker_memory(settings: ServiceSettings) -> None:
    """The broker's own memory, whatever its jobs ask: RLIMIT_DATA (heap and private mappings) at
    ASCRUN_BROKER_MEMORY_BYTES, a soft limit, which each jail lifts in its first process
    (jail.lift_broker_limits: a jail has its stage's limits). An allocation past it fails (a
    MemoryError): the job fails with `limit`, the worker goes on."""
    if settings.broker_memory_bytes > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        wanted = settings.broker_memory_bytes
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def serve(targets: Sequence[str], settings: ServiceSettings, burst: bool = False, name: str | None = None,
          socs: Sequence[str] = (), stages: Sequence[str] = STAGES) -> None:
    limit_broker_memory(settings)
    jail.failure_hook = functools.partial(recorder.jail_failed, connect.state(settings))
    jailed = job.serve_targets(targets, settings, stages, socs)
    for target in jailed:
        target.start()
    served = {target.name: capabilities(target, socs) for target in jailed}
    connection = connect.state(settings, blocking_s=settings.queue_refresh_s)  # its BLPOPs wait that long

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    name = name or f"ascrun-{socket.gethostname()}-{os.getpid()}"
    stop_beating = _start_heartbeat(connect.state(settings), served, name, settings)
    log.info("worker %s serves %s", name, json.dumps(served))
    try:
        worker = None
        while True:
            try:
                worker = AscrunWorker(served, settings, connection=connection, serializer=rq_adapter.SERIALIZER,
                                      name=name)
                # RQ's INFO is three lines a job; the API's records tell what each job did
                worker.work(burst=burst, with_scheduler=False, logging_level="WARNING")
            except redis.RedisError as e:  # outside RQ's loop (its start, its teardown): Redis away, stalled or full
                log.warning("worker %s: Redis: %s", name, e)
            if burst or (worker is not None and worker.stop_requested):
                return
            # RQ quit on an error (Redis restarted, stalled past ASCRUN_REDIS_TIMEOUT or full under a job):
            # never exit for it; start over once Redis is back. A job it held is ended by the reaper.
            _start_over(worker, connection)
    finally:
        stop_beating()
        for target in jailed:
            target.close()


def _start_heartbeat(connection: redis.Redis, served: Dict[str, Dict], name: str, settings: ServiceSettings):
    """Say every settings.worker_beat_s what this worker serves (store.pool.live_workers counts it);
    returns the function that stops beating and deregisters."""
    done = threading.Event()

    def beat():
        while not done.is_set():
            try:
                worker_beat(connection, served, name, ttl_s=settings.worker_ttl_s)
            except redis.RedisError:
                pass  # Redis is down: nobody can count us anyway
            done.wait(settings.worker_beat_s)

    thread = threading.Thread(target=beat, name="ascrun-worker-heartbeat", daemon=True)
    thread.start()

    def stop():
        done.set()
        thread.join()
        try:
            worker_gone(connection, served, name)
        except redis.RedisError:
            pass
    return stop

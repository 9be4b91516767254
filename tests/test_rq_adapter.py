"""What server/store/rq_adapter.py assumes of RQ, checked against the installed RQ on a real Redis:
the keys RQ keeps queues, jobs and taken jobs under, its job hash's fields for a queued and a
started job, how a worker takes a job off one queue or several, what RQ keeps of a run, a worker's
queues grown and read in the order we give, and a job put back. An RQ upgrade that breaks one of these fails
here, saying which assumption it broke, before the reaper or the workers misbehave."""
import time
import uuid

import pytest
import redis
import rq
from rq.executions import ExecutionRegistry
from rq.job import Job
from rq.job import JobStatus as RqJobStatus
from rq.queue import Queue
from rq.worker import RoundRobinWorker, SimpleWorker

from ascrun.job_status import JobStatus
from ascrun.server.store import rq_adapter

pytestmark = pytest.mark.service

UPGRADE = f"(rq {rq.__version__}; rq_adapter.py was written for 2.12.0)"


@pytest.fixture
def connection(redis_url):
    with redis.Redis.from_url(redis_url) as connection:
        yield connection


def _name(what: str) -> str:
    return f"rq-adapter-test-{what}-{uuid.uuid4().hex[:8]}"  # no worker of the session's pool reads it


def _enqueue(connection, queue: str, function: str, *args) -> str:
    job_id = uuid.uuid4().hex
    with connection.pipeline() as pipe:
        rq_adapter.enqueue(connection, pipe, queue, function, args, job_id, timeout_s=60, ttl_s=600)
        pipe.execute()
    return job_id


class Simple(SimpleWorker):
    """RQ's worker that runs jobs in its own process, without the command channel (nothing here
    uses it, and the wait of its thread, up to 60 s, would hold up the worker's exit)."""

    def subscribe(self):
        pass


class InProcessRoundRobin(RoundRobinWorker):
    """RQ's round-robin worker running jobs in its own process, as the ascrun worker does."""
    execute_job = SimpleWorker.execute_job
    subscribe = Simple.subscribe


def _work(worker) -> None:
    worker.work(burst=True, with_scheduler=False, logging_level="WARNING")


# Job functions, run by the workers below (by name, as the queues name run_job).

def observe() -> list:
    """What rq_adapter sees of the job running it."""
    connection, worker = rq_adapter.current_job()
    job_id = rq.get_current_job().id
    state = rq_adapter.job_state(connection, job_id)
    return [worker, state.status, state.started_at, state.origin, rq_adapter.queue_key(state.origin),
            connection.lpos(rq_adapter.queue_key(state.origin), job_id)]


def started_view() -> list:
    """What RQ says of the job running it and of its worker: the job's status, worker and heartbeat,
    the started registry, the worker's hash, the run's execution record, the intermediate list."""
    job = rq.get_current_job()
    connection, worker = rq_adapter.current_job()
    fields = connection.hmget(f"rq:worker:{worker}", "state", "current_job", "current_job_working_time")
    heartbeat = Job.fetch(job.id, connection=connection, serializer=rq_adapter.SERIALIZER).last_heartbeat
    return [job.get_status(refresh=True), job.worker_name, heartbeat is not None,
            job.id in job.started_job_registry.get_job_ids(), [f.decode() for f in fields],
            len(ExecutionRegistry(job_id=job.id, connection=connection).get_executions()),
            rq_adapter.Taken(connection, job.origin).holds(job.id)]


def note(key: str, tag: str) -> None:
    """Add `tag` to the list `key`: the jobs' order of running."""
    rq.get_current_job().connection.rpush(key, tag)


def finished() -> JobStatus:
    return JobStatus.FINISHED


def test_queue_and_job_keys(connection):
    """A queue is the list rq:queue:<name> (the tests and the reaper read it as such); a job its
    hash rq:job:<id>, whose fields status and origin say it waits in that queue."""
    queue = _name("keys")
    assert rq_adapter.queue_key(queue) == Queue(queue, connection=connection).key == f"rq:queue:{queue}", UPGRADE
    job_id = _enqueue(connection, queue, "test_rq_adapter.finished")
    assert connection.lrange(f"rq:queue:{queue}", 0, -1) == [job_id.encode()], \
        f"an enqueued job's id is not alone in its queue's list rq:queue:<name> {UPGRADE}"
    fields = connection.hgetall(f"rq:job:{job_id}")
    assert fields.get(b"status") == b"queued" and fields.get(b"origin") == queue.encode(), \
        f"RQ's job hash rq:job:<id> no longer says status=queued, origin=<queue> of a queued job {UPGRADE}: {fields}"
    assert not fields.get(b"started_at"), f"a queued job has a started_at {UPGRADE}: {fields}"


def test_enqueue_makes_the_job_as_asked_within_the_callers_transaction(connection):
    queue, job_id = _name("enqueue"), uuid.uuid4().hex
    with connection.pipeline() as pipe:
        rq_adapter.enqueue(connection, pipe, queue, "test_rq_adapter.note", ("k", "x"), job_id, timeout_s=90,
                           ttl_s=600)
        pipe.set(f"{queue}:also", 1)  # the caller's own commands follow RQ's in the MULTI RQ started
        assert not connection.exists(f"rq:job:{job_id}"), f"enqueue wrote outside the caller's pipeline {UPGRADE}"
        pipe.execute()
    assert connection.exists(f"{queue}:also")
    job = Job.fetch(job_id, connection=connection, serializer=rq_adapter.SERIALIZER)
    assert (job.func_name, job.args, job.timeout, job.result_ttl, job.failure_ttl, job.origin) == \
        ("test_rq_adapter.note", ["k", "x"], 90, 600, 600, queue), UPGRADE


def test_job_state_of_a_queued_job_and_of_none(connection):
    queue = _name("queued")
    job_id = _enqueue(connection, queue, "test_rq_adapter.finished")
    assert rq_adapter.job_state(connection, job_id) == ("queued", None, queue), UPGRADE
    assert rq_adapter.job_state(connection, uuid.uuid4().hex) == (None, None, None)
    assert set(rq_adapter.WAITING) | {"queued", "started"} <= {status.value for status in RqJobStatus}, \
        f"RQ's job statuses no longer include {rq_adapter.WAITING} and started {UPGRADE}"


def test_job_state_of_a_started_job_and_the_current_job(connection):
    """While a worker runs the job, RQ's hash says started, since when (utcparse reads it as UTC)
    and from which queue; the job is in no list of that queue any more."""
    queue, worker = _name("started"), _name("worker")
    job_id = _enqueue(connection, queue, "test_rq_adapter.observe")
    before = time.time()
    _work(Simple([queue], connection=connection, serializer=rq_adapter.SERIALIZER, name=worker))
    after = time.time()
    job = Job.fetch(job_id, connection=connection, serializer=rq_adapter.SERIALIZER)
    assert job.is_finished, f"the job did not run: {job.get_status()}, {job.latest_result()}"
    name, status, started_at, origin, key, position = job.return_value()
    assert (name, status, origin, key, position) == (worker, "started", queue, f"rq:queue:{queue}", None), UPGRADE
    assert before - 1 <= started_at <= after + 1, \
        f"RQ's started_at, read as UTC, is {started_at - before:+.1f} s off the run {UPGRADE}"


def test_a_job_taken_from_one_queue_waits_in_the_intermediate_list(connection):
    """A worker reading one queue moves the job to <queue key>:intermediate (LMOVE, or BLMOVE when
    it blocks); the reaper finds it there, marks it first seen where RQ's own cleanup does, and can
    take it out."""
    for timeout in (None, 1):  # a burst worker's look, a serving worker's blocking wait
        queue = _name("taken")
        job_id = _enqueue(connection, queue, "test_rq_adapter.finished")
        taken = rq_adapter.Taken(connection, queue)
        assert taken.key == f"rq:queue:{queue}:intermediate", UPGRADE
        rq_queue = Queue(queue, connection=connection, serializer=rq_adapter.SERIALIZER)
        job, _ = Queue.dequeue_any([rq_queue], timeout, connection=connection, serializer=rq_adapter.SERIALIZER)
        assert job.id == job_id
        assert taken.holds(job_id) and connection.llen(rq_adapter.queue_key(queue)) == 0, \
            f"a job taken from a single queue (timeout {timeout}) is not in the intermediate list {UPGRADE}"
        assert rq_adapter.job_state(connection, job_id).status == "queued", \
            f"RQ's hash says other than queued of a job taken but not started {UPGRADE}"
        seen = taken.seen_since(job_id)
        assert seen is not None and abs(seen - time.time()) < 5
        assert taken.seen_since(job_id) == seen == rq_queue.intermediate_queue.get_first_seen(job_id).timestamp(), \
            f"RQ's cleanup of the intermediate list no longer counts from the mark the reaper sets {UPGRADE}"
        assert taken.take_out(job_id) and not taken.holds(job_id) and not taken.take_out(job_id)


def test_a_job_taken_from_several_queues_is_popped_outright(connection):
    for timeout in (None, 1):
        queues = [_name("popped"), _name("popped")]
        job_id = _enqueue(connection, queues[1], "test_rq_adapter.finished")
        rq_queues = [Queue(q, connection=connection, serializer=rq_adapter.SERIALIZER) for q in queues]
        job, queue = Queue.dequeue_any(rq_queues, timeout, connection=connection, serializer=rq_adapter.SERIALIZER)
        assert (job.id, queue.name) == (job_id, queues[1])
        lists = [key for q in queues for key in (rq_adapter.queue_key(q), rq_adapter.Taken(connection, q).key)]
        assert all(connection.lpos(key, job_id) is None for key in lists), \
            f"a job taken from several queues (timeout {timeout}) is still in a list {UPGRADE}"
        assert rq_adapter.job_state(connection, job_id).status == "queued", UPGRADE


def test_a_worker_of_one_queue_empties_the_intermediate_list_when_it_starts_the_job(connection):
    queue = _name("started-one")
    job_id = _enqueue(connection, queue, "test_rq_adapter.finished")
    _work(Simple([queue], connection=connection, serializer=rq_adapter.SERIALIZER, name=_name("worker")))
    assert not rq_adapter.Taken(connection, queue).holds(job_id), \
        f"a job its worker started stays in the intermediate list {UPGRADE}"


class Lean(rq_adapter.LeanRuns, Simple):
    pass


def test_a_lean_run_is_started_and_ended_as_rq_does_it(connection):
    """The ascrun worker writes a job's start in one transaction, and its end without what
    dependent jobs need (rq_adapter.LeanRuns): RQ sees it started by that worker, in its started
    registry with an execution record, the worker busy with it, as RQ's own steps leave it; once
    it ends, none of that is left, and its hash, result and finished registry are RQ's."""
    views = []
    for worker_class in (Simple, Lean):
        queue = _name("one-step")
        job_id = _enqueue(connection, queue, "test_rq_adapter.started_view")
        worker = _name("worker")
        _work(worker_class([queue], connection=connection, serializer=rq_adapter.SERIALIZER, name=worker))
        job = Job.fetch(job_id, connection=connection, serializer=rq_adapter.SERIALIZER)
        assert job.is_finished, f"the job did not run: {job.get_status()}, {job.latest_result()}"
        assert job.return_value() == ["started", worker, True, True, ["busy", job_id, "0"], 1, False], UPGRADE
        assert job.last_heartbeat >= job.started_at and rq_adapter.runs(connection, job_id) == 1, UPGRADE
        assert not job.started_job_registry.get_job_ids(), UPGRADE
        assert not ExecutionRegistry(job_id=job_id, connection=connection).get_executions(), UPGRADE
        assert 0 < connection.ttl(job.key) <= 600 and job_id in job.finished_job_registry.get_job_ids(), UPGRADE
        assert connection.hget(f"rq:worker:{worker}", "successful_job_count") == b"1", UPGRADE
        views.append(connection.hgetall(job.key).keys())
    assert views[0] == views[1], "the job's hash has other fields than RQ's own run leaves"


def test_a_run_leaves_one_json_result(connection):
    """run_job's JobStatus is kept as the RQ job's result (JSON: its value); one result per run."""
    queue = _name("result")
    job_id = _enqueue(connection, queue, "test_rq_adapter.finished")
    _work(Simple([queue], connection=connection, serializer=rq_adapter.SERIALIZER, name=_name("worker")))
    assert rq_adapter.runs(connection, job_id) == 1, f"RQ keeps no result stream per run {UPGRADE}"
    job = Job.fetch(job_id, connection=connection, serializer=rq_adapter.SERIALIZER)
    assert job.return_value() == "finished", UPGRADE
    assert rq_adapter.runs(connection, uuid.uuid4().hex) == 0


def test_an_added_queue_is_served_and_the_dequeue_order_is_ours(connection):
    """A worker serving queues a and b is given c between two dequeues (as the ascrun worker is
    given a tenant's new queue), and each dequeue reads the queues rq_adapter.dequeue_order named,
    in that order: c before b (a's job waits), then a alone; the worker reports c."""
    a, b, c = (_name(q) for q in "abc")
    orders = {1: [b], 3: [a]}

    class Ordered(InProcessRoundRobin):
        dequeues = 0

        def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
            self.dequeues += 1
            if self.dequeues == 1:
                orders[1].insert(0, rq_adapter.add_queue(self, c).name)
            names = orders.get(self.dequeues, orders[1] if self.dequeues < 3 else orders[3])
            rq_adapter.dequeue_order(self, [q for n in names for q in self.queues if q.name == n])
            return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)

    ran = _name("ran")
    for queue, tag in ((a, "a"), (b, "b"), (c, "c")):
        _enqueue(connection, queue, "test_rq_adapter.note", ran, tag)
    worker = Ordered([a, b], connection=connection, serializer=rq_adapter.SERIALIZER, name=_name("worker"))
    _work(worker)
    order = [tag.decode() for tag in connection.lrange(ran, 0, -1)]
    assert order == ["c", "b", "a"], f"with rq_adapter.dequeue_order the worker ran {order} {UPGRADE}"
    assert worker.queue_names() == [a, b, c], f"the worker does not report the added queue {UPGRADE}"


@pytest.mark.parametrize("queues", [1, 2])
def test_a_job_put_back_is_the_next_one_taken_and_runs_once(connection, queues):
    """A worker that dequeued a job and did not start it (its tenant's share was taken meanwhile)
    puts it back at the head of its queue: the job still reads queued, sits in no intermediate
    list, and the next worker takes it before the jobs queued after it, and runs it once."""
    names = [_name(f"put-back-{i}") for i in range(queues)]
    ran = _name("ran")
    first = _enqueue(connection, names[0], "test_rq_adapter.note", ran, "first")
    _enqueue(connection, names[0], "test_rq_adapter.note", ran, "second")
    taker = InProcessRoundRobin(names, connection=connection, serializer=rq_adapter.SERIALIZER, name=_name("taker"))
    job, queue = taker.dequeue_job_and_maintain_ttl(None)
    assert job.id == first and queue.name == names[0], UPGRADE
    rq_adapter.put_back(connection, queue.name, job.id)
    assert rq_adapter.job_state(connection, first).status in rq_adapter.WAITING, UPGRADE
    assert not rq_adapter.Taken(connection, names[0]).holds(first), UPGRADE
    assert connection.lindex(rq_adapter.queue_key(names[0]), 0).decode() == first, UPGRADE
    _work(InProcessRoundRobin(names, connection=connection, serializer=rq_adapter.SERIALIZER, name=_name("worker")))
    assert [t.decode() for t in connection.lrange(ran, 0, -1)] == ["first", "second"], UPGRADE
    assert rq_adapter.runs(connection, first) == 1, UPGRADE


def test_since_heartbeat(connection):
    worker = Simple([_name("beat")], connection=connection, serializer=rq_adapter.SERIALIZER)
    assert rq_adapter.since_heartbeat(worker) is None
    worker.heartbeat()
    assert 0 <= rq_adapter.since_heartbeat(worker) < 5, UPGRADE

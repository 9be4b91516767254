"""Job lists (GET /v1/jobs, `ascrun jobs --json`) read each job's summary, never its record: a list
costs what its rows are, not what its jobs printed, output or raised (issue 25 item 6, issue 28)."""
import json
import os
import time
import uuid

import httpx
import numpy as np
import pytest
import redis

import ascrun
import report
from ascrun.job_status import JobStatus
from ascrun.server.models import JobSummary
from ascrun.server.store import rq_adapter
from ascrun.server.store.jobs import JobStore
from ascrun.server.store.keys import final_key, job_key, summary_key
from ascrun.server.store.queues import queue_name
from ascrun.server.store.summary import SUMMARY_MAX_BYTES, summarize
from ascrun.server.tenants import Limits
from ascrun_cli import ascrun as ascrun_cmd
from conftest import LIVENESS, tenant_entry, tenants_service

pytestmark = pytest.mark.service

TENANT, TOKEN = "lister", "lister-secret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
UNSERVED_SOC = "ListTestSoc"  # the seeded jobs' queue: no worker takes them
LOG = "printed\n" * (32 << 10)  # 256 KiB per job
HOSTILE = "\x00\"é😀\n" * 20_000  # what escapes worst in JSON, over several lines


@pytest.fixture(scope="module")
def pool(redis_url, service):
    """A server with one tenant of its own (its list holds only this module's jobs), served by the
    session's workers."""
    with tenants_service(redis_url, [tenant_entry(TENANT, TOKEN)]) as svc:
        yield svc


@pytest.fixture(scope="module")
def seeded(redis_url):
    """Jobs moved through the store as a worker moves them, weighing megabytes between them: 40
    finished with a 256 KiB log, 64 KiB of inline output and 200 warnings each, one failed with a
    hostile 600 KB message, one failed after its record was lost (no list shows it: it has no
    tenant, kernel...), and one still queued (for a SOC no worker serves)."""
    connection = redis.Redis.from_url(redis_url)
    jobs = JobStore(connection, LIVENESS)

    def admitted() -> dict:
        record = {"id": uuid.uuid4().hex, "status": JobStatus.QUEUED.value, "tenant": TENANT, "target": "cpu",
                  "soc": UNSERVED_SOC, "core_num": 8, "kernel": "printing_kernel", "bounds": "fault",
                  "hazards": "warn", "created_at": time.time()}
        assert jobs.admit(record, {"timeout": 60}, {}, 0, Limits())[0] == "admitted"
        return record

    def finished() -> dict:
        record = admitted()
        started, _ = jobs.start(record["id"], "ascrun-test-worker")
        assert jobs.finish(record["id"], JobStatus.FINISHED, {
            "outputs": {"z": {"data": "A" * (64 << 10), "dtype": "uint8", "shape": [48 << 10]}}, "log": LOG,
            "warnings": ["a warning"] * 200, "timings": {"run": 0.5, "total": 1.25},
            "cache": {"frontend": "hit", "build": "miss"}}, started)
        return record

    finished = [finished() for _ in range(40)]
    failed = admitted()
    jobs.fail(failed["id"], "runtime_error", "the first line\n" + HOSTILE, log=LOG)
    lost = admitted()  # its record lost (a Redis restart), then failed by the reaper
    connection.delete(job_key(lost["id"]))
    jobs.fail(lost["id"], "unavailable", "the job was lost before a worker started it")
    queued = admitted()
    yield {"finished": finished, "failed": failed, "queued": queued}
    jobs.fail(queued["id"], "unavailable", "the test is over")  # out of the queued set and the tenant's active jobs
    ids = [r["id"] for r in (*finished, failed, lost, queued)]
    connection.delete(*[k(i) for i in ids for k in (job_key, final_key, summary_key)],
                      rq_adapter.queue_key(queue_name("cpu", TENANT, UNSERVED_SOC)))


def listed(pool, limit: int = 500) -> list:
    response = httpx.get(f"{pool.url}/v1/jobs", params={"limit": limit}, headers=AUTH)
    response.raise_for_status()
    return response.json()["jobs"]


def redis_sent(connection) -> int:
    return connection.info("stats")["total_net_output_bytes"]


def test_a_list_of_heavy_jobs_reads_their_summaries_only(pool, seeded, redis_url):
    """The attack: 42 jobs whose records weigh 13 MiB. Listing them reads at most a summary's bound
    per row from Redis (main read every record whole: 13 MiB and seconds of parsing)."""
    connection = redis.Redis.from_url(redis_url)
    before = redis_sent(connection)
    jobs = listed(pool)
    sent = redis_sent(connection) - before
    # + the ids and what the session's workers' heartbeats read meanwhile
    assert sent < len(jobs) * SUMMARY_MAX_BYTES + (64 << 10), f"the list read {sent} bytes from Redis"

    by_id = {job["id"]: job for job in jobs}
    ids = [r["id"] for r in (*seeded["finished"], seeded["failed"], seeded["queued"])]
    assert [job["id"] for job in jobs] == ids[::-1]  # newest first
    for job in jobs:
        assert set(job) <= set(JobSummary.model_fields), "a row carries what a summary does not"
        assert len(json.dumps(job).encode()) <= SUMMARY_MAX_BYTES
    row = by_id[seeded["finished"][0]["id"]]
    assert (row["status"], row["kernel"], row["worker"], row["core_num"]) == (
        "finished", "printing_kernel", "ascrun-test-worker", 8)
    assert (row["warning_count"], row["timings"], row["cache"], row["error"]) == (
        200, {"run": 0.5, "total": 1.25}, {"frontend": "hit", "build": "miss"}, None)
    assert by_id[seeded["failed"]["id"]]["error"] == {"kind": "runtime_error", "headline": "the first line"}
    # the whole record is still the job's own endpoint's; a queued job's place in its queue is too
    record = httpx.get(f"{pool.url}/v1/jobs/{row['id']}", headers=AUTH).json()
    assert record["log"] == LOG and len(record["warnings"]) == 200 and record["outputs"]["z"]["data"]
    queued = httpx.get(f"{pool.url}/v1/jobs/{seeded['queued']['id']}", headers=AUTH).json()
    row = by_id[queued["id"]]
    assert (row["status"], row["queue_position"], row["queue_depth"]) == (
        "queued", queued["queue_position"], queued["queue_depth"])


def test_a_summary_stays_within_its_bound_whatever_the_record_holds():
    worst = {"id": "f" * 32, "status": "failed", "tenant": HOSTILE, "target": "cpu", "soc": "S" * 64,
             "core_num": 65535, "kernel": HOSTILE, "bounds": "warn", "hazards": "fault", "stage": "build",
             "rq_job": "f" * 32 + "-build", "worker": HOSTILE, "created_at": 1e9, "queued_at": 1e9,
             "started_at": 1e9, "ended_at": 1e9, "timings": {HOSTILE + str(i): 1e300 for i in range(50)},
             "cache": {HOSTILE + str(i): HOSTILE for i in range(50)}, "warnings": [HOSTILE] * 5,
             "error": {"kind": HOSTILE, "message": HOSTILE * 3}, "log": HOSTILE}
    summary = summarize(worst)
    assert len(summary.encode()) <= SUMMARY_MAX_BYTES
    parsed = json.loads(summary)
    assert parsed["kernel"].startswith(HOSTILE[:5]) and parsed["kernel"].endswith("…")
    assert parsed["error"]["headline"] == "\x00\"é😀"  # the first line, short enough to be whole
    JobSummary.model_validate(parsed)


def test_real_jobs_list_as_summaries_in_the_api_and_the_cli(pool):
    """Jobs a worker ran: one whose overrun is a warning and one that faulted; `ascrun jobs --json`
    shows the API's summaries."""
    x = (np.arange(1000) * 0.5).astype(np.float32)
    with ascrun.Client(pool.url, token=TOKEN) as client:
        warned = client.launch(report.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0, bounds="warn")
        faulted = client.submit(report.overrun_kernel, 16, x, np.zeros_like(x), 64, 32, 0, 0)
        with pytest.raises(ascrun.KernelError):
            faulted.result()
        records = {handle: client.job(handle) for handle in (warned.job_id, faulted.id)}

    out = ascrun_cmd("jobs", "--json", "--limit", 2, "--url", pool.url, env={**os.environ, "ASCRUN_TOKEN": TOKEN})
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["jobs"]
    assert rows == listed(pool, 2)
    assert [row["id"] for row in rows] == [faulted.id, warned.job_id]
    for row in rows:
        record = records[row["id"]]
        assert "log" not in row and "outputs" not in row and "warnings" not in row
        assert row["warning_count"] == len(record["warnings"])
        assert (row["status"], row["timings"], row["cache"], row["worker"]) == (
            record["status"], record["timings"], record["cache"], record["worker"])
    assert rows[1]["warning_count"] > 0
    error = records[faulted.id]["error"]
    assert rows[0]["error"] == {"kind": error["kind"], "headline": error["message"].splitlines()[0]}

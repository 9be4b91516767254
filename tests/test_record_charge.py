"""An ended job's record, log and trace are charged to its tenant (issue 25, 3): 20 jobs of a printf
loop stored 80 MiB for a day against no quota. Now what an ended job keeps (terminal record,
summary, trace, frontend key) is a member job:<id> of its tenant's stored-bytes account, with the
record's expiry, so its finished jobs fill its max_stored_bytes, not the pool; a trace over
max_trace_bytes is not kept; the live record goes when the job ends. A server with its tenants on
the session's Redis and workers."""
import time

import numpy as np
import pytest

import ascrun
import report
from ascrun.server.store.keys import (files_key, final_key, job_key, spec_key, summary_key, tenant_key,
                                      trace_key)
from conftest import tenant_entry, tenants_service

pytestmark = pytest.mark.service

TOKENS = {"printer": "chatty-records-token", "bystander": "quiet-records-token"}
LOG_CAP = 40_000
# one chatty job keeps its LOG_CAP bytes of log and a few KB more: its first job fits, the second is
# admitted (the first's record is under the cap) and takes it over, the third is refused
CAP = 70_000
ROUNDS = 500  # printf lines of ~100 bytes: past LOG_CAP


@pytest.fixture(scope="module")
def pool(redis_url, service):
    with tenants_service(redis_url, [
            tenant_entry("printer", TOKENS["printer"], cache_group="records",
                         limits={"max_stored_bytes": CAP, "max_log_bytes": LOG_CAP}),
            tenant_entry("bystander", TOKENS["bystander"], cache_group="records",
                         limits={"max_trace_bytes": 64})]) as svc:
        yield svc


def _print(client):
    x, h, k = np.ones(64, np.float32), np.ones(64, np.float16), np.ones(64, np.int32)
    return client.launch(report.print_kernel, 1, x, h, k, 8, 1, ROUNDS, 1.0).job_id


def _stored(pool, tenant):
    return int(pool.redis.get(tenant_key(tenant, "stored")) or 0)


def _kept(pool, job_id):
    """The bytes the ended job keeps: its terminal record, summary, trace and frontend key."""
    return sum(pool.redis.strlen(key(job_id)) for key in (final_key, summary_key, trace_key, files_key))


def _charged(pool, tenant, job_id):
    """The job's member in its tenant's account: (size, expiry)."""
    size = pool.redis.hget(tenant_key(tenant, "blob-bytes"), f"job:{job_id}")
    expiry = pool.redis.zscore(tenant_key(tenant, "blobs"), f"job:{job_id}")
    return None if size is None else int(size), expiry


def test_ended_jobs_records_fill_their_tenants_quota_until_they_expire(pool):
    with ascrun.Client(pool.url, token=TOKENS["printer"], retries=0) as chatty, \
            ascrun.Client(pool.url, token=TOKENS["bystander"], retries=0) as quiet:
        first = _print(chatty)
        kept = _kept(pool, first)
        assert pool.redis.exists(trace_key(first)), "a chatty job's trace is kept (and charged)"
        assert LOG_CAP < kept < CAP - LOG_CAP // 2, kept
        size, expiry = _charged(pool, "printer", first)
        assert size == kept == _stored(pool, "printer")
        # released when the record expires
        assert abs(expiry - (time.time() + pool.redis.ttl(final_key(first)))) < 5
        # nothing kept twice: the live record and spec went when the job ended
        assert pool.redis.exists(job_key(first), spec_key(first)) == 0
        assert chatty.job(first)["status"] == "finished"

        second = _print(chatty)
        assert _stored(pool, "printer") == kept + _kept(pool, second) > CAP
        with pytest.raises(ascrun.KernelError) as refused:
            _print(chatty)
        assert refused.value.kind == "limit"
        assert str(refused.value).startswith(
            f"your stored blobs, your ended jobs' records and the tensors of your queued and running jobs (each may "
            f"come back as an output) hold {_stored(pool, 'printer')} bytes; with this job's they would exceed "
            f"{CAP} (max_stored_bytes)")

        assert quiet.job(_print(quiet))["status"] == "finished"  # another tenant is unaffected

        # a day later (the records' expiry brought forward): they expire and their bytes are released
        # by the tenant's next admission
        for job_id in (first, second):
            for key in (final_key, summary_key, trace_key, files_key):
                pool.redis.delete(key(job_id))
            pool.redis.zadd(tenant_key("printer", "blobs"), {f"job:{job_id}": time.time() - 1}, xx=True)
        third = _print(chatty)
        assert _charged(pool, "printer", first) == (None, None)
        assert _stored(pool, "printer") == _kept(pool, third) == _charged(pool, "printer", third)[0]


def test_a_trace_over_max_trace_bytes_is_not_kept(pool):
    """bystander's max_trace_bytes is 64: its job's trace is dropped, the record says so and the job is
    charged what it keeps without it."""
    with ascrun.Client(pool.url, token=TOKENS["bystander"], retries=0) as quiet:
        job_id = _print(quiet)
        record = quiet.job(job_id)
        with pytest.raises(ascrun.KernelError) as missing:
            quiet.trace(job_id)
    assert missing.value.kind == "not_found"
    assert not pool.redis.exists(trace_key(job_id))
    dropped = [w for w in record["warnings"] if "max_trace_bytes" in w]
    assert len(dropped) == 1 and dropped[0].startswith("ascrun: the trace was not kept: ") \
        and dropped[0].endswith(" bytes compressed, over 64 (max_trace_bytes)"), record["warnings"]
    assert _charged(pool, "bystander", job_id)[0] == _kept(pool, job_id) > 0

"""What a tenant makes the service keep is charged to it (issue 25, 2 and 3): the tensors of its
queued and running jobs, each of which may come back as an output blob, are reserved against its
max_stored_bytes at admission; a job's spec and inline inputs go when it ends; its record keeps
max_log_bytes of its log. A server with its tenants on the session's Redis and workers."""

import numpy as np
import pytest

import ascrun
import ops
import report
from ascrun.args import prepare
from ascrun.server.store.keys import inputs_key, spec_key, tenant_key
from conftest import tenant_entry, tenants_service

pytestmark = pytest.mark.service

TOKENS = {"stash": "stash-secret-token", "chatty": "chatty-secret-token"}
CAP = 1_000_000


@pytest.fixture(scope="module")
def pool(redis_url, service):
    with tenants_service(redis_url, [
            tenant_entry("stash", TOKENS["stash"],
                         limits={"max_stored_bytes": CAP, "max_blob_bytes": CAP, "max_bytes_in_flight": 4 * CAP}),
            tenant_entry("chatty", TOKENS["chatty"], limits={"max_log_bytes": 1000})]) as svc:
        yield svc


def _spin(z_elements):
    """spin_kernel writes z's first 64 elements: z (zeros, nothing uploaded) comes back whole."""
    x = np.ones(64, np.float32)
    args, blobs = ascrun.service.submission.job_arguments(prepare(["x", "z", "rounds"], [x, np.zeros(
        z_elements, np.float32), 1]))
    assert args[1].get("zeros") and not blobs
    return {"bundle": ascrun.compiler.bundle.collect(ops.spin_kernel).to_json(), "core_num": 1, "args": args,
            "timeout": 30}, blobs


def test_outputs_are_reserved_at_admission(pool):
    """A zeros tensor costs no upload, but once the kernel writes it it is a full-size blob kept for
    an hour: three such jobs kept 3x the quota. The second is refused now, naming the figures."""
    with ascrun.Client(pool.url, token=TOKENS["stash"], retries=0) as stash:
        first = stash.submit_job(*_spin(150_000), wait=30)  # a 600 000-byte z
        assert first["status"] == "finished" and "blob" in first["outputs"]["z"], first
        stored = int(pool.redis.get(tenant_key("stash", "stored")))
        # the output blob, and what the ended job keeps (tests/test_record_charge.py)
        record = int(pool.redis.hget(tenant_key("stash", "blob-bytes"), f"job:{first['id']}"))
        assert stored == 600_000 + record
        with pytest.raises(ascrun.KernelError) as refused:
            stash.submit_job(*_spin(150_000), wait=30)
    assert refused.value.kind == "limit"
    assert str(refused.value) == (
        "your stored blobs, your ended jobs' records and the tensors of your queued and running jobs (each may come "
        f"back as an output) hold {stored} bytes; with this job's they would exceed 1000000 (max_stored_bytes)")
    assert int(pool.redis.get(tenant_key("stash", "stored"))) == stored <= CAP


def test_a_job_keeps_no_spec_or_inputs_once_it_ends_and_its_log_is_capped(pool):
    """A job's launch spec and inline inputs stayed a day after it ended; its log up to 4 MiB."""
    with ascrun.Client(pool.url, token=TOKENS["chatty"], retries=0) as chatty:
        x = np.ones(64, np.float32)
        h, k = np.ones(64, np.float16), np.ones(64, np.int32)
        result = chatty.launch(report.print_kernel, 1, x, h, k, 8, 1, 50, 1.0)
        record = chatty.job(result.job_id)
    assert pool.redis.exists(spec_key(result.job_id), inputs_key(result.job_id)) == 0
    log = record["log"].encode()
    lines = [f"[AIV Block 0/1] round {i}: 0123456789012345678901234567890123456789012345678901234567890123456789\n"
             for i in range(50)]
    whole = "".join(lines).encode()
    assert log.startswith(whole[:1000])
    assert log[1000:] == f"\n[ascrun: {len(whole) - 1000} more bytes of log dropped: the record keeps 1000 " \
                         "(max_log_bytes)]\n".encode()

"""Short job ids: the first 12 characters of a job's id (what the dashboard and a launch's progress
print) name it in the API, `ascrun show` and `ascrun trace` (their main, run in this process); a
prefix that starts several of the caller's jobs is refused naming how many, and only the caller's
own jobs are candidates."""
import json
import time
import uuid

import httpx
import numpy as np
import pytest
import redis

import ascrun
import ops
from ascrun.server.store.keys import final_key, tenant_key
from ascrun.cli.main import main
from conftest import LIVENESS, tenant_entry, tenants_service

pytestmark = pytest.mark.service

TOKENS = {"shortids-mine": "shortids-mine-token", "shortids-other": "shortids-other-token"}
MINE, OTHER = TOKENS


@pytest.fixture(scope="module")
def pool(redis_url, service):
    """A server with two tenants, served by the session's workers."""
    with tenants_service(redis_url, [tenant_entry(name, token) for name, token in TOKENS.items()]) as svc:
        yield svc


@pytest.fixture(scope="module")
def api(pool):
    """An HTTP client per tenant."""
    clients = {name: httpx.Client(base_url=pool.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
               for name, token in TOKENS.items()}
    yield clients
    for client in clients.values():
        client.close()


def _launch(pool) -> str:
    """A finished cpu job of MINE's (it has source, IR and a trace); its id."""
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    with ascrun.Client(pool.url, token=TOKENS[MINE]) as client:
        return client.launch(ops.binary_kernel, 1, x, x, z, 64, "add").job_id


@pytest.fixture(scope="module")
def job(pool):
    return _launch(pool)


def _cli(capsys, pool, tenant, *args):
    """The `ascrun` command (its main, in this process): its exit code, stdout and stderr."""
    code = main([*args, "--url", pool.url, "--token", TOKENS[tenant]])
    out, err = capsys.readouterr()
    return code, out, err


def _forge(pool, tenant: str, job_id: str, record: dict) -> None:
    """A job of `tenant`'s as admission indexes it (by time and by id), its terminal record `record`."""
    connection = redis.Redis.from_url(pool.env["REDIS_URL"])
    connection.zadd(tenant_key(tenant, "jobs"), {job_id: time.time()})
    connection.zadd(tenant_key(tenant, "job-ids"), {job_id: 0})
    connection.set(final_key(job_id), json.dumps(dict(record, id=job_id, tenant=tenant)), ex=600)


def test_the_12_characters_name_the_job_in_the_api_and_the_cli(pool, api, job, capsys):
    short = job[:12]
    for path in ("", "/source", "/ir", "/trace"):
        by_short, by_full = api[MINE].get(f"/v1/jobs/{short}{path}"), api[MINE].get(f"/v1/jobs/{job}{path}")
        assert by_short.status_code == 200, (path, by_short.text)
        assert by_short.content == by_full.content, path
    assert api[MINE].get(f"/v1/jobs/{short}").json()["id"] == job

    code, out, err = _cli(capsys, pool, MINE, "show", short)
    assert (code, err) == (0, "")
    assert out.startswith(f"job       {job}\nkernel    binary_kernel x1 on cpu\nstatus    finished")
    code, out, err = _cli(capsys, pool, MINE, "trace", short)
    assert (code, err) == (0, "")
    assert json.loads(out) == api[MINE].get(f"/v1/jobs/{job}/trace").json()


def test_another_tenants_short_id_is_unknown(pool, api, job, capsys):
    for path in ("", "/source", "/trace"):
        refused = api[OTHER].get(f"/v1/jobs/{job[:12]}{path}")
        assert refused.status_code == 404, (path, refused.text)
        assert refused.json()["error"] == {"kind": "not_found",
                                           "message": f"no job {job[:12]} (unknown, or its result expired)"}
    assert _cli(capsys, pool, OTHER, "show", job[:12]) == (
        2, "", f"ascrun: not_found: no job {job[:12]} (unknown, or its result expired)\n")


def test_an_ambiguous_prefix_says_how_many_of_your_jobs_it_starts(pool, api, job, capsys):
    record = api[MINE].get(f"/v1/jobs/{job}").json()
    prefix = uuid.uuid4().hex[:10]
    first, second, others = (prefix + uuid.uuid4().hex[10:] for _ in range(3))
    _forge(pool, MINE, first, record)
    _forge(pool, MINE, second, record)
    _forge(pool, OTHER, others, record)  # another tenant's: neither a candidate nor counted

    refused = api[MINE].get(f"/v1/jobs/{prefix}/source")
    assert refused.status_code == 409, refused.text
    message = (f"job id '{prefix}' is ambiguous: 2 of your jobs start with it; give more of its characters, "
               "or all 32")
    assert refused.json()["error"] == {"kind": "bad_request", "message": message, "candidates": 2}
    assert _cli(capsys, pool, MINE, "show", prefix) == (2, "", f"ascrun: bad_request: {message}\n")

    # a longer prefix tells them apart; the other tenant's prefix names its own job alone
    longer = first[:16] if first[:16] != second[:16] else first
    assert api[MINE].get(f"/v1/jobs/{longer}").json()["id"] == first
    assert api[OTHER].get(f"/v1/jobs/{prefix}").json()["id"] == others


def test_a_prefix_too_short_or_of_no_job_is_an_unknown_job(pool, api, job):
    for given in (job[:7], "0123abcd0123"):
        unknown = api[MINE].get(f"/v1/jobs/{given}")
        assert unknown.status_code == 404, unknown.text
        assert unknown.json()["error"]["message"] == f"no job {given} (unknown, or its result expired)"


def test_expired_jobs_leave_the_index_of_ids_at_the_next_admission(pool, api, job):
    """The id index is trimmed with the by-time one: an expired job's prefix makes no ambiguity."""
    connection = redis.Redis.from_url(pool.env["REDIS_URL"])
    expired = job[:12] + uuid.uuid4().hex[12:]  # shares the real job's 12 characters
    connection.zadd(tenant_key(MINE, "jobs"), {expired: time.time() - LIVENESS.result_ttl_s - 60})
    connection.zadd(tenant_key(MINE, "job-ids"), {expired: 0})
    assert api[MINE].get(f"/v1/jobs/{job[:12]}").status_code == 409
    _launch(pool)
    assert connection.zscore(tenant_key(MINE, "job-ids"), expired) is None
    assert api[MINE].get(f"/v1/jobs/{job[:12]}").json()["id"] == job

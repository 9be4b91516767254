"""The service's Redis key layout: every key ascrun writes, and the function that names it.

Keys (all under "ascrun:"):
  blob:<tenant>:<sha256>   a blob's size in bytes, TTL blob_ttl_s; each tenant sees only its own
  chunk:<tenant>:<sha256>:<i>  its bytes, blobs.BLOB_CHUNK_BYTES a key (Redis strings stop at 512 MB)
  upload:<id>:<i>          the chunks of an upload under way (renamed to chunk:... once complete)
  tenant:<t>:blobs         sorted set blob digest (or job:<id>, what an ended job keeps) -> expiry
                           time, and tenant:<t>:blob-bytes (hash member -> size) and
                           tenant:<t>:stored (their sum): what max_stored_bytes caps (account.py)
  job:<id>                 JSON record of a job that is queued or started (deleted when it ends)
  spec:<id>                JSON launch spec (tenant, bundle, args, core_num, target, bounds, hazards,
                           model, timeout)
  inputs:<id>              hash: the bytes of the job's inline tensors (an arg's "input" names its
                           field), sent as base64 but kept raw; TTL blob_ttl_s, as an uploaded blob's
  final:<id>               JSON terminal record; written once (SET NX), so the first outcome wins
  summary:<id>             JSON of the job's few list fields (summary.py, at most SUMMARY_MAX_BYTES),
                           rewritten with job:<id> or final:<id>, as long-lived: what lists read
  files:<id>               the frontend-<key> holding the job's generated Ascend C and ASC-IR
  trace:<id>               a finished cpu job's modeled timeline as a Perfetto trace (JSON text, up to
                           a few MiB, zlib-compressed about tenfold: apart from the record; not kept
                           past the tenant's max_trace_bytes); written with final:<id>, as long-lived
  alive:<id>               the running job's heartbeat (short TTL, refreshed by its work horse)
  queued                   sorted set job id -> creation time, until a worker starts the job
  started                  set of job ids that are started and not yet ended (for the reaper)
  tenant:<t>:jobs          sorted set of the tenant's job ids by creation time
  tenant:<t>:job-ids       the same ids, all of score 0: in lexical order, where a short id's job is found
  tenant:<t>:active        hash job id -> tensor bytes of the tenant's queued + running jobs
  tenant:<t>:uploads, tenant:<t>:downloads  sorted sets lease id -> expiry: the tenant's blob
                           transfers through the API (transfers.py); an upload's declared size is
                           the member upload:<lease id> of its account until it commits or ends
  tenant:<t>:rate:<minute> job submissions in that minute, accepted or refused (edge.py)
  idem:<t>:<key>           "<job id> <request digest>" of a submission's Idempotency-Key
  queues:<stage>:<target>:<soc>  set of the queue names of the stage (build, run), target and SOC
                           ("any": jobs naming none), one per tenant that ever had a job there;
                           queue-socs:<target> their SOCs
  workers:<stage>:<target>[:<soc>]  sorted set worker name -> time of its last heartbeat (live:
                           within settings.worker_ttl_s), of the workers serving that stage
  worker:<name>            what a live worker serves: target -> capabilities (socs, cores, versions)
  frontend-<key>, artifact-<key>   the pipeline caches, shared by every worker: in the cache Redis (connect.py)
  metrics                  hash: the pool's counters and histograms (metrics/recorder.py), kept until
                           Redis is emptied
Channel done:<id> carries a job's terminal record when it reaches it.

The queues themselves, and RQ's jobs in them, are RQ's keys (rq:...): rq_adapter.py names them.
"""
from __future__ import annotations

from typing import Optional

PREFIX = "ascrun:"
ANY_SOC = "any"  # the queues of jobs that name no SOC: every worker of the target serves them
STARTED = f"{PREFIX}started"
QUEUED = f"{PREFIX}queued"
METRICS = f"{PREFIX}metrics"


def blob_key(tenant: str, digest: str) -> str:
    return f"{PREFIX}blob:{tenant}:{digest}"


def blob_chunk_key(tenant: str, digest: str, index: int) -> str:
    return f"{PREFIX}chunk:{tenant}:{digest}:{index}"


def upload_key(upload_id: str, index: int) -> str:
    return f"{PREFIX}upload:{upload_id}:{index}"


def job_key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


def spec_key(job_id: str) -> str:
    return f"{PREFIX}spec:{job_id}"


def inputs_key(job_id: str) -> str:
    return f"{PREFIX}inputs:{job_id}"


def final_key(job_id: str) -> str:
    return f"{PREFIX}final:{job_id}"


def summary_key(job_id: str) -> str:
    return f"{PREFIX}summary:{job_id}"


def files_key(job_id: str) -> str:
    return f"{PREFIX}files:{job_id}"


def trace_key(job_id: str) -> str:
    return f"{PREFIX}trace:{job_id}"


def alive_key(job_id: str) -> str:
    return f"{PREFIX}alive:{job_id}"


def done_channel(job_id: str) -> str:
    return f"{PREFIX}done:{job_id}"


def tenant_key(tenant: str, what: str) -> str:
    return f"{PREFIX}tenant:{tenant}:{what}"


def idempotency_key(tenant: str, key: str) -> str:
    return f"{PREFIX}idem:{tenant}:{key}"


def queues_key(target: str, soc: Optional[str] = None, stage: str = "run") -> str:
    """The set of the queue names of `stage`, `target` and `soc`: the API (and a worker handing a
    job on) adds a tenant's on its first job there, workers read it every settings.queue_refresh_s."""
    return f"{PREFIX}queues:{stage}:{target}:{soc or ANY_SOC}"


def queue_socs_key(target: str) -> str:
    """The SOCs (ANY_SOC included) that `target` has queues for."""
    return f"{PREFIX}queue-socs:{target}"


def workers_key(target: str, soc: Optional[str] = None, stage: str = "run") -> str:
    return f"{PREFIX}workers:{stage}:{target}" + (f":{soc}" if soc else "")


def capabilities_key(name: str) -> str:
    return f"{PREFIX}worker:{name}"


def cache_key(name: str) -> str:
    """A pipeline cache entry's key: `name` is frontend-<key> or artifact-<key>."""
    return PREFIX + name

"""Jobs: submitted (admission.py decides), listed, long-polled until they end, the Ascend C
and IR pyasc generated for them, and a cpu job's modeled timeline as a trace. A job is named by its
id or by the first characters of it (store/job_ids.py)."""
from __future__ import annotations

import asyncio
import math
import uuid
from typing import Awaitable, Callable, Optional

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import PlainTextResponse, Response

from ...compiler.errors import Kind
from ...job_status import TERMINAL, JobStatus
from ..deps import Service, service, tenant
from ..edge import LIST_ROWS_PER_REQUEST, list_requests, over_requests
from ..store.ended import Waiter
from ..store.job_ids import resolve
from ..errors import ApiError
from ..models import JobList, JobRequest, JobResult
from ...compiler.settings import ServiceSettings
from ..tenants import Tenant
from .operator import operator


def own_job(record: Optional[dict], job_id: str, who: Tenant) -> dict:
    """The record if it is the tenant's (an operator's: any tenant's); another tenant's job is as
    unknown as a missing one."""
    if record is None or (record.get("tenant") != who.name and not who.operator):
        raise ApiError(Kind.NOT_FOUND, f"no job {job_id} (unknown, or its result expired)")
    return record


async def job_named(job_id: str, who: Tenant = Depends(tenant), svc: Service = Depends(service)) -> str:
    """The full id of the caller's job that the path's {job_id} names, in full or by its first characters."""
    return await resolve(svc.job_reader.connection, who.name, job_id)


def charge_list(svc: Service, who: Tenant, rows: int) -> None:
    """A list of `rows` summaries takes what it costs beyond the one request the edge charged
    (edge.list_requests), or is refused (429)."""
    cost = list_requests(rows)
    if cost > 1:
        wait_s = svc.requests.short(who.name, who.limits.requests_per_second, cost - 1, least=cost)
        if wait_s:
            raise ApiError(Kind.LIMIT, f"a list of {rows} jobs counts as {cost} requests (one per "
                                       f"{LIST_ROWS_PER_REQUEST} jobs): {over_requests(who)}", status=429,
                           headers={"Retry-After": str(max(1, math.ceil(wait_s)))})


def job_response(record: dict, status: int = 200) -> Response:
    """The record as JobResult, serialized by pydantic in one step: a finished job's inline
    outputs make it tens of KiB, which FastAPI's validate-then-json.dumps path costs twice."""
    return Response(JobResult.model_validate(record).model_dump_json(), status, media_type="application/json")


async def follow(waiter: Waiter, record: dict, wait: float, read: Callable[[], Awaitable[dict]]) -> dict:
    """`record` as it is once terminal, or after `wait` seconds (no polling: a job's terminal
    record is published when it ends, and the waiter hands it over); `read()` reads it anew."""
    deadline = asyncio.get_running_loop().time() + wait
    while record["status"] not in TERMINAL:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0 or not await waiter.wait(remaining):
            break
        record = waiter.take() or await read()
    return record


async def read_job(svc: Service, job_id: str, who: Tenant) -> dict:
    return own_job(await svc.job_reader.get(job_id), job_id, who)


async def wait_for_end(svc: Service, job_id: str, wait: float, who: Tenant) -> dict:
    """The job's record once it is terminal, or as it is after `wait` seconds."""
    if wait <= 0:
        return await read_job(svc, job_id, who)
    with svc.ended.watch(job_id) as waiter:  # before reading: an end in between is not missed
        return await follow(waiter, await read_job(svc, job_id, who), wait, lambda: read_job(svc, job_id, who))


def job_file(svc: Service, job_id: str, field: str, who: Tenant) -> str:
    own_job(svc.jobs.get(job_id), job_id, who)
    entry = svc.jobs.frontend_entry(job_id)
    if entry is None:
        raise ApiError(Kind.NOT_FOUND, f"job {job_id} has no generated {field} (it failed before codegen, "
                                         "or has not run yet)")
    return entry[field]


def job_trace(svc: Service, job_id: str, who: Tenant) -> bytes:
    """The job's trace as stored; 404 saying why there is none."""
    record = own_job(svc.jobs.get(job_id), job_id, who)
    trace = svc.jobs.trace(job_id)
    if trace is not None:
        return trace
    status, target = record.get("status"), record.get("target")
    if status not in TERMINAL:
        why = f"it has not finished yet (status {status})"
    elif status != JobStatus.FINISHED:
        error = record.get("error") or {}
        why = f"it did not finish ({status}: {error.get('kind', Kind.RUNTIME_ERROR)}); only a finished run has one"
    elif target != "cpu":
        why = f"it ran on target '{target}': only the cpu target models a timeline"
    elif record.get("model") is None:  # a finished cpu run has its model, unless it was asked for none
        why = "it was launched with model=false (no modeled timeline)"
    else:
        why = "it expired, or was over your max_trace_bytes (then the job's warnings say so)"
    raise ApiError(Kind.NOT_FOUND, f"job {job_id} has no trace: {why}")


def router(settings: ServiceSettings) -> APIRouter:
    """The routes; a function of the settings, as the cap on `wait` is part of the OpenAPI schema."""
    routes = APIRouter(tags=["jobs"])
    wait_query = dict(ge=0, le=settings.max_wait_s)

    @routes.get("/v1/jobs", response_model=JobList)
    async def list_jobs(limit: int = Query(20, ge=1, le=500), every_tenant: bool = Query(False, description=(
            "an operator's: the most recent jobs of every tenant of the tenants file (403 for another token)")),
                        who: Tenant = Depends(tenant), svc: Service = Depends(service)):
        """Your most recent jobs, newest first, each as its summary (JobSummary, a few hundred bytes at
        most): no log, outputs, warnings or model; GET /v1/jobs/{id} and its sub-resources have them."""
        if every_tenant:
            await operator(who)
            charge_list(svc, who, limit * len(svc.tenants.names()))
            # each tenant's newest `limit`, then the newest `limit` of those
            jobs = [job for name in svc.tenants.names() for job in await svc.job_reader.summaries(name, limit)]
            jobs = sorted(jobs, key=lambda job: job.get("created_at", 0), reverse=True)[:limit]
        else:
            charge_list(svc, who, limit)
            jobs = await svc.job_reader.summaries(who.name, limit)
        return Response(JobList.model_validate({"jobs": jobs}).model_dump_json(), media_type="application/json")

    @routes.post("/v1/jobs", status_code=202, response_model=JobResult)
    async def submit_job(body: JobRequest, request: Request, wait: float = Query(0, **wait_query, description=(
            "seconds to wait for the job to end before answering (the answer is 202 either way)")),
                         idempotency_key: Optional[str] = Header(None, max_length=128, description=(
                             "a retried submission with the same key returns the first one's job")),
                         who: Tenant = Depends(tenant), svc: Service = Depends(service)):
        """Queue a launch. Tensors up to INLINE_BYTES may travel inline (`data`); bigger ones must be
        uploaded first; if some are not, the answer is 409 with their digests in error.missing."""
        job_id = uuid.uuid4().hex
        with svc.ended.watch(job_id) as waiter:  # before the job exists: its end cannot be missed
            length = request.headers.get("content-length", "")
            record = await svc.admission.admit(body, who, idempotency_key, job_id,
                                               int(length) if length.isdigit() else None)
            if wait > 0 and record["id"] == job_id:
                return job_response(await follow(waiter, record, wait, lambda: read_job(svc, job_id, who)), 202)
        # an earlier job, by its Idempotency-Key
        return job_response(await wait_for_end(svc, record["id"], wait, who) if wait > 0 else record, 202)

    @routes.get("/v1/jobs/{job_id}", response_model=JobResult)
    async def get_job(job_id: str = Depends(job_named), wait: float = Query(0, **wait_query,
                                                       description="seconds to wait for a terminal state"),
                      who: Tenant = Depends(tenant), svc: Service = Depends(service)):
        return job_response(await wait_for_end(svc, job_id, wait, who))

    @routes.get("/v1/jobs/{job_id}/source", response_class=PlainTextResponse)
    def job_source(job_id: str = Depends(job_named), who: Tenant = Depends(tenant), svc: Service = Depends(service)):
        """The Ascend C that pyasc generated for this job."""
        return job_file(svc, job_id, "source", who)

    @routes.get("/v1/jobs/{job_id}/ir", response_class=PlainTextResponse)
    def job_ir(job_id: str = Depends(job_named), who: Tenant = Depends(tenant), svc: Service = Depends(service)):
        """The ASC-IR after pyasc's pass pipeline."""
        return job_file(svc, job_id, "ir", who)

    @routes.get("/v1/jobs/{job_id}/trace", response_class=Response, responses={200: {
        "content": {"application/json": {}},
        "description": "a Chrome/Perfetto trace event JSON document (ui.perfetto.dev, chrome://tracing)"}})
    def get_trace(job_id: str = Depends(job_named), who: Tenant = Depends(tenant), svc: Service = Depends(service)):
        """A finished cpu job's modeled per-pipe timeline (its record's `model` in detail): a process per
        core, a thread per pipe, an "X" event per instruction (ts/dur in µs). 404 when the job has
        none: not finished, failed, not on cpu, or expired with its record."""
        return Response(job_trace(svc, job_id, who), media_type="application/json")

    return routes

"""Short job ids: the first characters of a job's id (the 12 that `ascrun jobs`, the dashboard and
the demo print) name it wherever its full id does, when they start one job of the caller's alone.

Candidates are the caller's own jobs only, found in its lexical index tenant:<t>:job-ids (keys.py;
admission adds each job, and the expired leave it with the by-time index): one O(log n) range
query, never a scan, so another tenant's ids are neither candidates nor counted.
"""
from __future__ import annotations

import re

import redis.asyncio as aioredis

from ...compiler.errors import Kind
from ..errors import ApiError
from .keys import tenant_key

FULL_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex, as the API makes them
HEX = re.compile(r"[0-9a-fA-F]+")
MIN_PREFIX = 8  # shorter prefixes would name several of a busy tenant's jobs more often than one


async def resolve(connection: aioredis.Redis, tenant: str, given: str) -> str:
    """The full id of the caller's job that `given` names: itself if it is a full id (or no hex
    prefix of MIN_PREFIX to 31 characters: then an unknown id, as any other), else the one job whose
    id starts with it: 409 for a prefix that starts several of its jobs, 404 for one that starts none."""
    if FULL_ID.fullmatch(given) or not HEX.fullmatch(given) or not MIN_PREFIX <= len(given) <= 32:
        return given
    prefix = given.lower()
    low, high = f"[{prefix}", f"({prefix}g"  # ids are lowercase hex: all that start with it sort in between
    async with connection.pipeline(transaction=False) as pipe:
        count, first = await pipe.zlexcount(tenant_key(tenant, "job-ids"), low, high).zrangebylex(
            tenant_key(tenant, "job-ids"), low, high, 0, 1).execute()
    if count > 1:
        raise ApiError(Kind.BAD_REQUEST, f"job id {given!r} is ambiguous: {count} of your jobs start with it; "
                                         "give more of its characters, or all 32", 409, candidates=count)
    if count == 0:
        raise ApiError(Kind.NOT_FOUND, f"no job {given} (unknown, or its result expired)")
    return first[0].decode()

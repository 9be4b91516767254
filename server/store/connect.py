"""The service's two Redis roles, and the one place their connections are made.

- state: records, queues, blobs, accounts, liveness (REDIS_URL). Run with `noeviction`: a full
  state Redis refuses writes (OutOfMemoryError) and never drops a job.
- cache: the pipeline's compile caches, the frontend memo and the artifacts (ASCRUN_CACHE_REDIS_URL;
  unset: the state Redis). Run with an LRU policy: a full cache evicts and never refuses a job,
  and its bytes, which count against no tenant, never crowd the state out.

Every connection has a socket timeout (ASCRUN_REDIS_TIMEOUT): a stalled Redis makes a command
fail with TimeoutError, which its caller retries, instead of hanging it forever.
"""
from __future__ import annotations

import redis
import redis.asyncio as aioredis

from ...compiler.settings import ServiceSettings


def _options(settings: ServiceSettings, blocking_s: float) -> dict:
    # a blocking command (BLPOP) may wait blocking_s for its answer before the timeout counts
    return {"socket_timeout": settings.redis_timeout_s + blocking_s, "socket_connect_timeout": settings.redis_timeout_s}


def state(settings: ServiceSettings, blocking_s: float = 0.0) -> redis.Redis:
    """The state Redis; `blocking_s`: the longest wait of a blocking command sent on it."""
    return redis.Redis.from_url(settings.redis_url, **_options(settings, blocking_s))


def state_async(settings: ServiceSettings, listening: bool = False) -> aioredis.Redis:
    """The state Redis for the API's event loop. `listening`: for a subscription, which waits for
    messages as long as there are none (no read timeout; connecting still times out)."""
    options = _options(settings, 0.0)
    if listening:
        options["socket_timeout"] = None
    return aioredis.Redis.from_url(settings.redis_url, **options)


def cache(settings: ServiceSettings) -> redis.Redis:
    """The caches' Redis: ASCRUN_CACHE_REDIS_URL's, else the state Redis."""
    return redis.Redis.from_url(settings.cache_redis_url or settings.redis_url, **_options(settings, 0.0))


def out_of_memory(error: BaseException) -> bool:
    """Whether Redis refused a write for its maxmemory: an OutOfMemoryError, or a script's write
    refused (redis-py raises that one as a ResponseError that quotes Redis's -OOM)."""
    return isinstance(error, redis.exceptions.OutOfMemoryError) or (
        isinstance(error, redis.ResponseError) and "-OOM " in str(error))

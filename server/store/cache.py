"""The pipeline's compile caches (frontend-<key>, artifact-<key>) in the cache Redis (connect.py),
shared by every worker."""
from __future__ import annotations

import logging
from typing import Optional

import redis

from .keys import cache_key

log = logging.getLogger("ascrun.cache")


class RedisCache:
    """The pipeline's Cache protocol over Redis; SET is atomic, so racing writers never corrupt an
    entry. A cache is never a job's reason to fail: an entry it cannot give is a miss (the job
    compiles), one it cannot keep (larger than the cache's maxmemory, or the cache unreachable)
    is not kept."""

    def __init__(self, connection: redis.Redis, ttl_s: int):
        self.connection = connection
        self.ttl_s = ttl_s

    def get(self, key: str) -> Optional[bytes]:
        try:
            return self.connection.get(cache_key(key))
        except redis.RedisError as e:
            log.warning("compile cache: %s not read (a miss): %s", key[:40], e)
            return None

    def put(self, key: str, value: bytes) -> None:
        try:
            self.connection.set(cache_key(key), value, ex=self.ttl_s)
        except redis.RedisError as e:
            log.warning("compile cache: %s (%d bytes) not kept: %s", key[:40], len(value), e)

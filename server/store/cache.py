"""The pipeline's compile caches (frontend-<key>, artifact-<key>) in Redis, shared by every worker."""
from __future__ import annotations

from typing import Optional

import redis

from .keys import cache_key


class RedisCache:
    """The pipeline's Cache protocol over Redis; SET is atomic, so racing writers never corrupt an entry."""

    def __init__(self, connection: redis.Redis, ttl_s: int):
        self.connection = connection
        self.ttl_s = ttl_s

    def get(self, key: str) -> Optional[bytes]:
        return self.connection.get(cache_key(key))

    def put(self, key: str, value: bytes) -> None:
        self.connection.set(cache_key(key), value, ex=self.ttl_s)

"""Redis layout of the service: blobs, job records and results, the shared compile caches.

Keys (all under "ascrun:"):
  blob:<sha256>            raw tensor bytes, TTL blob_ttl_s
  job:<id>                 JSON record of a job that is queued or started
  spec:<id>                JSON launch spec (bundle, args, core_num, target)
  final:<id>               JSON terminal record; written once (SET NX), so the first outcome wins
  files:<id>               the frontend-<key> holding the job's generated Ascend C and ASC-IR
  frontend-<key>, artifact-<key>   the pipeline caches, shared by every worker
Channel done:<id> is published when a job reaches its terminal state.
"""
from __future__ import annotations

import json
import time
from typing import Any, Dict, Optional

import redis

from .settings import Settings

PREFIX = "ascrun:"
TERMINAL = ("finished", "failed", "timed_out")


def blob_key(digest: str) -> str:
    return f"{PREFIX}blob:{digest}"


def job_key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


def spec_key(job_id: str) -> str:
    return f"{PREFIX}spec:{job_id}"


def final_key(job_id: str) -> str:
    return f"{PREFIX}final:{job_id}"


def files_key(job_id: str) -> str:
    return f"{PREFIX}files:{job_id}"


def done_channel(job_id: str) -> str:
    return f"{PREFIX}done:{job_id}"


def queue_name(target: str) -> str:
    return f"ascrun-{target}"


def merge_record(record: Optional[bytes], final: Optional[bytes]) -> Optional[Dict[str, Any]]:
    """A job's current state: its terminal record once there is one, else its live record."""
    if final is not None:
        return json.loads(final)
    if record is not None:
        return json.loads(record)
    return None


class RedisCache:
    """The pipeline's Cache protocol over Redis; SET is atomic, so racing writers never corrupt an entry."""

    def __init__(self, connection: redis.Redis, ttl_s: int):
        self.connection = connection
        self.ttl_s = ttl_s

    def get(self, key: str) -> Optional[bytes]:
        return self.connection.get(PREFIX + key)

    def put(self, key: str, value: bytes) -> None:
        self.connection.set(PREFIX + key, value, ex=self.ttl_s)


class JobStore:
    """Synchronous access for workers and the server's blocking routes."""

    def __init__(self, connection: redis.Redis, settings: Settings):
        self.connection = connection
        self.settings = settings

    def create(self, job_id: str, record: Dict[str, Any], spec: Dict[str, Any]) -> None:
        ttl = self.settings.result_ttl_s
        with self.connection.pipeline() as pipe:
            pipe.set(spec_key(job_id), json.dumps(spec), ex=ttl)
            pipe.set(job_key(job_id), json.dumps(record), ex=ttl)
            pipe.execute()

    def spec(self, job_id: str) -> Optional[Dict[str, Any]]:
        raw = self.connection.get(spec_key(job_id))
        return None if raw is None else json.loads(raw)

    def get(self, job_id: str) -> Optional[Dict[str, Any]]:
        record, final = self.connection.mget(job_key(job_id), final_key(job_id))
        return merge_record(record, final)

    def mark_started(self, job_id: str, worker: Optional[str]) -> Dict[str, Any]:
        record = self.get(job_id) or {"id": job_id}
        if record.get("status") in TERMINAL:
            return record
        record.update(status="started", started_at=time.time(), worker=worker)
        self.connection.set(job_key(job_id), json.dumps(record), ex=self.settings.result_ttl_s)
        return record

    def finish(self, job_id: str, changes: Dict[str, Any]) -> bool:
        """Record the job's outcome unless it already has one; tell waiters. True if this call won."""
        record = self.get(job_id) or {"id": job_id}
        if record.get("status") in TERMINAL:
            return False
        record.update(changes, ended_at=time.time())
        won = self.connection.set(final_key(job_id), json.dumps(record), nx=True, ex=self.settings.result_ttl_s)
        if won:
            self.connection.publish(done_channel(job_id), record["status"])
        return bool(won)

    def fail(self, job_id: str, kind: str, message: str) -> bool:
        status = "timed_out" if kind == "timeout" else "failed"
        return self.finish(job_id, {"status": status, "error": {"kind": kind, "message": message}})

    def put_frontend_key(self, job_id: str, frontend_key: str) -> None:
        """Which frontend cache entry holds the job's Ascend C and IR (a reference, not a copy)."""
        self.connection.set(files_key(job_id), frontend_key, ex=self.settings.result_ttl_s)

    def frontend_entry(self, job_id: str) -> Optional[Dict[str, Any]]:
        key = self.connection.get(files_key(job_id))
        entry = None if key is None else RedisCache(self.connection, 0).get(key.decode())
        return None if entry is None else json.loads(entry)

    def get_blob(self, digest: str) -> Optional[bytes]:
        return self.connection.get(blob_key(digest))

    def put_blob(self, digest: str, data: bytes) -> None:
        self.connection.set(blob_key(digest), data, ex=self.settings.blob_ttl_s)

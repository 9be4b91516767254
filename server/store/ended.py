"""Who is waiting for which job to end: one Redis subscription per API server process.

Every job's terminal record is published on its done channel (jobs.FINISH_LUA). Subscribing per
waiter cost a new Redis connection per long poll (redis-py closes a pubsub's connection when it is
done), with its HELLO and CLIENT SETINFO, and a read of the record after the message. Here one
connection listens to all the done channels and hands the record to the waiters of that job.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Dict, Iterator, Optional, Set

import redis.asyncio as aioredis

from .keys import done_channel

RETRY_S = 0.5  # after Redis went away, subscribe again this often


class Waiter:
    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._record: Optional[Dict[str, Any]] = None

    async def wait(self, timeout: float) -> bool:
        """Whether the job may have ended within `timeout` s (then `take`)."""
        try:
            async with asyncio.timeout(timeout):
                await self._event.wait()
            return True
        except TimeoutError:
            return False

    def take(self) -> Optional[Dict[str, Any]]:
        """The terminal record that was published, or None: read the job anew (Redis came back,
        and an end may have gone unheard)."""
        self._event.clear()
        record, self._record = self._record, None
        return record

    def _wake(self, record: Optional[Dict[str, Any]]) -> None:
        self._record = record
        self._event.set()


class EndedJobs:
    def __init__(self, connection: aioredis.Redis):
        self.connection = connection
        self.waiters: Dict[str, Set[Waiter]] = {}
        self.prefix = done_channel("")

    @contextlib.contextmanager
    def watch(self, job_id: str) -> Iterator[Waiter]:
        """Enter before reading the job's record (or before creating the job), so that an end in
        between is not missed."""
        waiter = Waiter()
        self.waiters.setdefault(job_id, set()).add(waiter)
        try:
            yield waiter
        finally:
            waiters = self.waiters.get(job_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self.waiters[job_id]

    async def listen(self) -> None:
        """Run for the server's life (a task). While Redis is away no end is heard: on subscribing
        again every waiter is woken to read its job anew."""
        while True:
            try:
                async with self.connection.pubsub() as pubsub:
                    await pubsub.psubscribe(self.prefix + "*")
                    for waiters in self.waiters.values():
                        for waiter in waiters:
                            waiter._wake(None)
                    async for message in pubsub.listen():
                        if message["type"] == "pmessage":
                            self._ended(message["channel"].decode()[len(self.prefix):], message["data"])
            except aioredis.RedisError:
                await asyncio.sleep(RETRY_S)

    def _ended(self, job_id: str, data: bytes) -> None:
        waiters = self.waiters.get(job_id)
        if waiters:
            record = json.loads(data)  # parsed only when someone waits
            for waiter in waiters:
                waiter._wake(record)

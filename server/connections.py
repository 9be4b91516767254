"""The API server's connections, bounded before the app sees a request. uvicorn times out neither a
request head that never ends nor a body that stops coming, and holds any number of connections, so
a client without a token could hold them all (issue 25, item 8). build_server runs the app on uvicorn
with GuardedProtocol, its httptools protocol with these bounds (README "A shared pool"):

- a request head not complete within head_timeout_s of its first byte (of the connection's start,
  for its first request) resets the connection, however the head trickles in; so does a head past
  MAX_HEAD_BYTES, however fast it comes (the parser keeps every header it reads);
- a connection that waits on its client for stall_timeout_s with no byte moved is reset: a body it
  stopped sending, or an answer it does not read (more than the transport's high-water mark left
  unsent). A long-poll waits on the service, not on its client: no stall;
- one client address holds at most max_connections_per_client connections and the server
  max_connections in all (below its open-file limit); a connection beyond either is answered 503
  as it opens, before any of its bytes is read, and closed.

A reset (SO_LINGER 0) drops at once whatever was buffered for the connection, in this process and in
the kernel; a polite close would wait for a client that does not read.
"""
from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import resource
import socket
import struct
from dataclasses import dataclass
from typing import Dict, Optional

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..compiler.errors import Kind
from ..compiler.settings import ServiceSettings

FD_RESERVE = 256  # open files the API server keeps beyond its clients' connections: Redis, the check pool, files
MAX_HEAD_BYTES = 64 << 10  # a request's line and headers (nginx takes 32 KiB)


@functools.lru_cache(maxsize=4096)  # a flood comes from few addresses: each parsed once
def client_key(host: Optional[str]) -> str:
    """Whose a connection or request is: its IPv4 address, or its IPv6 /64 (one host's usual share)."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return host or "local"  # a Unix socket's peer
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


class ConnectionLimits:
    """The connections open, by client: at most `per_client` from one, `total` in all."""

    def __init__(self, per_client: int, total: int):
        self.per_client, self.total = per_client, total
        self.open = 0
        self.by_client: Dict[str, int] = {}

    def admit(self, client: str) -> Optional[str]:
        """None, and the connection counted until `release`, if `client` may open one more; else why not."""
        if self.open >= self.total:
            return f"the service holds the most connections it takes ({self.total}, ASCRUN_MAX_CONNECTIONS)"
        held = self.by_client.get(client, 0)
        if held >= self.per_client:
            return (f"your address holds {held} connections, the most one client may "
                    "(ASCRUN_MAX_CONNECTIONS_PER_CLIENT)")
        self.by_client[client] = held + 1
        self.open += 1
        return None

    def release(self, client: str) -> None:
        self.open -= 1
        held = self.by_client.pop(client) - 1
        if held:
            self.by_client[client] = held


def connection_cap(settings: ServiceSettings) -> int:
    """ASCRUN_MAX_CONNECTIONS, else this process's open-file limit less FD_RESERVE; refused above that."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = (1 << 20) if soft == resource.RLIM_INFINITY else soft - FD_RESERVE
    if room < 1:
        raise SystemExit(f"the open-file limit ({soft}, ulimit -n) leaves no room for connections beside the "
                         f"{FD_RESERVE} the API server keeps: raise it")
    if settings.max_connections < 0 or settings.max_connections > room:
        raise SystemExit(f"ASCRUN_MAX_CONNECTIONS must be 0 (the open-file limit less {FD_RESERVE}) or 1 to {room} "
                         f"(ulimit -n is {soft}), got {settings.max_connections}")
    return settings.max_connections or room


@dataclass(frozen=True)
class Guard:
    """What every connection of one server shares."""
    limits: ConnectionLimits
    head_timeout_s: float
    stall_timeout_s: float


@functools.lru_cache(maxsize=8)  # a refusal's few messages: a flood of them costs no formatting
def _unavailable(message: str) -> bytes:
    body = json.dumps({"error": {"kind": str(Kind.UNAVAILABLE), "message": message}}).encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))


class Gate(asyncio.Protocol):
    """What a connection is until it is admitted: a refused one is answered and closed without
    uvicorn's protocol ever being made (a flood of them is a client's loop against the API's one
    core); an admitted one is handed to a GuardedProtocol, counted under its client."""

    def __init__(self, guard: Guard, **uvicorn_kwargs):
        self.guard, self.uvicorn_kwargs = guard, uvicorn_kwargs

    def connection_made(self, transport) -> None:
        # the peer's address as asyncio took it at accept: no system call
        peer = transport.get_extra_info("peername")
        client = client_key(peer[0] if isinstance(peer, (tuple, list)) and peer else None)
        refusal = self.guard.limits.admit(client)
        if refusal is not None:  # closing stops reading: nothing of the request is parsed
            transport.write(_unavailable(refusal))
            transport.close()
            return
        protocol = GuardedProtocol(guard=self.guard, counted_as=client, **self.uvicorn_kwargs)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)

    def connection_lost(self, exc) -> None:  # refused: nothing was counted
        pass


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, its connection counted (by the Gate that admitted it) and timed
    (the module's docstring)."""

    def __init__(self, *args, guard: Guard, counted_as: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.guard = guard
        self.counted_as: Optional[str] = counted_as  # the client this connection is counted under while open
        self.head_timer = None  # armed from a head's first byte to its end
        self.stall_timer = None  # armed while the connection waits on its client
        self.head_bytes = 0  # received of the head in progress (up to one read more)
        self.body_due = False  # a request's head is in, its body not yet whole
        self.body_received = 0
        self.stall_mark = (0, 0)  # (body bytes received, answer bytes unsent) when the stall timer was armed

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.head_timer = self.loop.call_later(self.guard.head_timeout_s, self._reset)

    def connection_lost(self, exc) -> None:
        if self.counted_as is not None:
            self.guard.limits.release(self.counted_as)
            self.counted_as = None
        for timer in (self.head_timer, self.stall_timer):
            if timer is not None:
                timer.cancel()
        self.head_timer = self.stall_timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.head_timer is not None:  # a head is in progress
            self.head_bytes += len(data)
        super().data_received(data)
        if self.head_timer is not None and self.head_bytes > MAX_HEAD_BYTES:
            self._reset()
        else:
            self._watch_stall()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.head_timer is None:
            self.head_timer = self.loop.call_later(self.guard.head_timeout_s, self._reset)

    def on_headers_complete(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None
        self.head_bytes = 0
        self.body_due = True
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self.body_received += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.body_due = False
        super().on_message_complete()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._watch_stall()

    def _waits_on_client(self) -> bool:
        return self.body_due or self.flow.write_paused

    def _watch_stall(self) -> None:
        if self.stall_timer is None and self._waits_on_client() and self.counted_as is not None:
            self.stall_mark = (self.body_received, self.transport.get_write_buffer_size())
            self.stall_timer = self.loop.call_later(self.guard.stall_timeout_s, self._check_stall)

    def _check_stall(self) -> None:
        self.stall_timer = None
        if not self._waits_on_client():
            return
        received, unsent = self.stall_mark
        moved = self.body_received > received or self.transport.get_write_buffer_size() < unsent
        # the body waits on the server: reading paused as the app has not taken what came so far, or
        # the client expects a "100 Continue" the app's first read sends
        ours = self.body_due and not self.flow.write_paused and (
            self.flow.read_paused or (self.cycle is not None and self.cycle.waiting_for_100_continue))
        if moved or ours:
            self._watch_stall()
        else:
            self._reset()

    def _reset(self) -> None:
        """Drop the connection and everything buffered for it, at once (module docstring)."""
        sock = self.transport.get_extra_info("socket")
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (AttributeError, OSError):  # no socket, or already closed
            pass
        self.transport.abort()


def build_server(app, host: str, port: int, settings: Optional[ServiceSettings] = None) -> uvicorn.Server:
    """The API server as `ascrun server` (so `ascrun up`, the images and the tests) runs it. No
    WebSocket upgrades: the API has none, and an upgraded connection would leave the count."""
    settings = settings or ServiceSettings.from_env()
    guard = Guard(ConnectionLimits(settings.max_connections_per_client, connection_cap(settings)),
                  settings.head_timeout_s, settings.stall_timeout_s)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", ws="none",
                            http=functools.partial(Gate, guard))
    return uvicorn.Server(config)

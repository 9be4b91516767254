"""The HTTP edge, before any route: who is asking (401 at once without a valid token, before a body
byte is read), how often (429 past the tenant's requests_per_second, or past ASCRUN_ANONYMOUS_RATE
for one address's requests without a valid token), what the body may weigh (counted on the bytes as
they arrive, chunked or not: 413 the moment the count passes the cap), how many body bytes a second
the tenant makes the API read and parse (429 past its request_bytes_per_second: a declared length
on the headers alone, a chunked body as it arrives), and a job submission charged
to its tenant's launches_per_minute as it arrives, whatever then becomes of it (429 over it). A
plain ASGI middleware: @app.middleware's BaseHTTPMiddleware cost about a third of the API server's
CPU per launch. The connections under it are bounded by connections.py."""
from __future__ import annotations

import math
import re
import time
from collections import OrderedDict
from typing import Dict, Optional, Tuple

import redis
import redis.asyncio as aioredis
from starlette.responses import Response

from ..compiler.errors import Kind
from ..compiler.settings import ServiceSettings
from .connections import client_key
from .errors import error_response, redis_error_response
from .store.keys import tenant_key
from .tenants import Tenant, Tenants

# What answers without a token: the service's health, the dashboard's page (its scripts then call
# the API with the caller's token) and the API's own docs. Anything else needs one, unknown paths too.
PUBLIC_PATHS = re.compile(r"^/(v1/health|dashboard(/.*)?|docs(/oauth2-redirect)?|redoc|openapi\.json)$")
BLOB_UPLOAD = re.compile(r"^/v1/blobs/[0-9a-f]{64}$")  # counted by its route, against max_blob_bytes
SUBMISSION = ("POST", "/v1/jobs")
RATE_WINDOW_S = 60
BURST_S = 5  # a request rate's bucket holds this many seconds of it: a burst that long passes at once
# A job list is charged a request per this many of the summaries it reads (the default limit): its
# cost on the API's one core is its rows', and a list of 500 took the core 25 lists of 20 would.
LIST_ROWS_PER_REQUEST = 20
ANONYMOUS_CLIENTS = 1 << 16  # the anonymous buckets kept (the least recently used go, and come back full)


def rate_key(tenant: str, now: float) -> str:
    """The counter of the tenant's submissions in the minute of `now`."""
    return tenant_key(tenant, f"rate:{int(now // RATE_WINDOW_S)}")


def over_requests(who: Tenant) -> str:
    return f"more than {who.limits.requests_per_second} requests a second (requests_per_second)"


def unauthorized(authorization: str) -> str:
    """Why a request without a valid token is refused: none sent, or one that no tenant has, with
    where the token comes from."""
    if not authorization.startswith("Bearer ") or not authorization[len("Bearer "):].strip():
        return ("no token: this service needs a bearer token (Authorization: Bearer <token>; ascrun takes it "
                "from --token or $ASCRUN_TOKEN)")
    return ("token not recognised: no tenant of this service has it (check --token or $ASCRUN_TOKEN, or ask "
            "the operator for one)")


class TokenBuckets:
    """A token bucket per key, in this process (each API server counts its own): `rate` tokens a
    second, holding at most BURST_S seconds of them (or `least`, if more); a request takes `cost` or
    is refused. At most `max_keys` buckets, the least recently used forgotten first."""

    def __init__(self, max_keys: int):
        self.max_keys = max_keys
        self._buckets: "OrderedDict[str, Tuple[float, float]]" = OrderedDict()  # key -> (tokens, when)

    def take(self, key: str, rate: float, cost: float = 1, least: float = 0) -> bool:
        return self.short(key, rate, cost, least) == 0

    def short(self, key: str, rate: float, cost: float, least: float = 0) -> float:
        """0 if `cost` was taken; else the seconds until the bucket holds it."""
        now, full = time.monotonic(), max(rate * BURST_S, least)
        tokens, then = self._buckets.pop(key, (full, now))
        tokens = min(full, tokens + (now - then) * rate)
        taken = tokens >= cost
        self._buckets[key] = (tokens - cost if taken else tokens, now)
        if len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return 0 if taken else (cost - tokens) / rate


def list_requests(rows: int) -> int:
    """What a list reading `rows` summaries is charged against requests_per_second."""
    return max(1, math.ceil(rows / LIST_ROWS_PER_REQUEST))


class Refused(Exception):
    def __init__(self, kind: Kind, message: str, status: int, headers: Optional[Dict[str, str]] = None):
        super().__init__(message)
        self.kind, self.message, self.status, self.headers = kind, message, status, headers or {}


class Edge:
    def __init__(self, app, tenants: Tenants, settings: ServiceSettings, connection: aioredis.Redis,
                 tenant_requests: TokenBuckets):
        self.app, self.tenants, self.settings, self.connection = app, tenants, settings, connection
        self.tenant_requests = tenant_requests  # shared with the routes that charge more than one (list_requests)
        self.tenant_bytes = TokenBuckets(max_keys=max(1, tenants.count))
        self.anonymous_requests = TokenBuckets(max_keys=ANONYMOUS_CLIENTS)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            who = self._caller(scope)
            cap = self._body_cap(scope, who)
            declared = _declared_length(scope)
            if who is not None and cap is not None and declared:
                self._charge_bytes(who, declared, f"request body of {declared} bytes")
            if who is not None and (scope["method"], scope["path"]) == SUBMISSION:
                await self._meter(who)
        except Refused as refused:
            response = error_response(refused.kind, refused.message, refused.status)
            response.headers.update(refused.headers)
            return await _refuse(response, scope, receive, send)
        except redis.RedisError as e:  # outside the app's handlers: answered in their shape here
            return await _refuse(redis_error_response(e), scope, receive, send)
        if who is not None:
            scope.setdefault("state", {})["tenant"] = who  # deps.tenant reads it: request.state.tenant
        receive, send = _closing_when_unread(scope, declared, receive, send)
        if cap is None:
            return await self.app(scope, receive, send)
        await self._capped(scope, receive, send, *cap, None if declared else who)

    def _caller(self, scope) -> Optional[Tenant]:
        """The tenant of the Authorization header, its request counted; None on a public path without
        a valid one, counted against the client's address."""
        authorization = next((v for k, v in scope["headers"] if k == b"authorization"), b"").decode("latin-1")
        who = self.tenants.authenticate(authorization or None)
        if who is not None:
            if not self.tenant_requests.take(who.name, who.limits.requests_per_second):
                raise Refused(Kind.LIMIT, over_requests(who), 429, {"Retry-After": "1"})
            return who
        rate = self.settings.anonymous_rate
        if not self.anonymous_requests.take(client_key((scope.get("client") or ("",))[0]), rate):
            raise Refused(Kind.LIMIT, f"more than {rate} requests a second without a valid token from your address "
                                      "(ASCRUN_ANONYMOUS_RATE)", 429, {"Retry-After": "1"})
        if not PUBLIC_PATHS.match(scope["path"]):
            raise Refused(Kind.UNAUTHORIZED, unauthorized(authorization), 401)
        return None

    def _body_cap(self, scope, who: Optional[Tenant]) -> Optional[Tuple[int, str]]:
        """The cap on the body's bytes and whose it is (None: the route counts them itself), checked
        against a declared Content-Length at once."""
        if who is not None and scope["method"] == "PUT" and BLOB_UPLOAD.match(scope["path"]):
            return None
        cap, whose = self.settings.max_request_bytes, "the service's"
        if who is not None and who.limits.max_request_bytes < cap:
            cap, whose = who.limits.max_request_bytes, "your"
        length = _declared_length(scope)
        if length is not None and length > cap:
            raise Refused(Kind.LIMIT, f"request body of {length} bytes exceeds {whose} {cap}-byte limit "
                                      "(max_request_bytes)", 413)
        return cap, whose

    def _charge_bytes(self, who: Tenant, count: int, what: str) -> None:
        """Take `count` body bytes from the tenant's request_bytes_per_second, or refuse `what` (429)."""
        rate = who.limits.request_bytes_per_second
        wait_s = self.tenant_bytes.short(who.name, rate, count, least=who.limits.max_request_bytes)
        if wait_s:
            raise Refused(Kind.LIMIT, f"{what} is more than your request_bytes_per_second ({rate} bytes a second, "
                                      f"in bursts of {BURST_S} s) leaves now", 429,
                          {"Retry-After": str(max(1, math.ceil(wait_s)))})

    async def _meter(self, who: Tenant) -> None:
        """Charge the submission to the tenant's minute before anything reads or checks it."""
        key = rate_key(who.name, time.time())
        count = await self.connection.incr(key)
        if count == 1:  # the minute's first: its key is new (it outlives its minute by one)
            await self.connection.expire(key, 2 * RATE_WINDOW_S)
        if count > who.limits.launches_per_minute:
            raise Refused(Kind.LIMIT, f"more than {who.limits.launches_per_minute} launches this minute "
                                      "(launches_per_minute; refused ones count too)", 429)

    async def _capped(self, scope, receive, send, cap: int, whose: str, charged: Optional[Tenant]) -> None:
        """The app, with the body's bytes counted as they arrive (and charged to `charged`'s
        request_bytes_per_second): past `cap` or the rate, the refusal goes out at once, the app
        reads a disconnect and whatever it answers then is dropped."""
        received, refused = 0, False

        async def counted_receive():
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                size = len(message.get("body", b""))
                received += size
                refusal = None
                if received > cap:
                    refusal = error_response(Kind.LIMIT, f"request body exceeds {whose} {cap}-byte limit "
                                                         "(max_request_bytes)", 413)
                elif charged is not None and size:
                    try:
                        self._charge_bytes(charged, size, "request body")
                    except Refused as e:
                        refusal = error_response(e.kind, e.message, e.status)
                        refusal.headers.update(e.headers)
                if refusal is not None:
                    refused = True
                    await _refuse(refusal, scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            if not refused:
                await send(message)

        await self.app(scope, counted_receive, guarded_send)


async def _refuse(response: Response, scope, receive, send) -> None:
    """The refusal, on a connection closed after it: the body left unread is not drained."""
    response.headers["Connection"] = "close"
    await response(scope, receive, send)


def _closing_when_unread(scope, declared: Optional[int], receive, send):
    """`receive` and `send` such that an answer begun before the request's body (`declared` bytes, or
    chunked) was all read closes the connection: kept alive, uvicorn would read and parse the rest of
    the body (up to a refused upload's gigabytes, on the API's one core) only to find the next request."""
    unread = declared != 0 and (declared is not None or any(k == b"transfer-encoding" for k, _ in scope["headers"]))

    async def tracked_receive():
        nonlocal unread
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            unread = False
        return message

    async def closing_send(message):
        if message["type"] == "http.response.start" and unread:
            message = {**message, "headers": [*message.get("headers", ()), (b"connection", b"close")]}
        await send(message)

    return tracked_receive, closing_send


def _declared_length(scope) -> Optional[int]:
    """The body's Content-Length, if the request declares one."""
    length = next((v for k, v in scope["headers"] if k == b"content-length"), b"")
    return int(length) if length.isdigit() else None

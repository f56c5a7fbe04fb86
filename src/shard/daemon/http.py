"""The daemon's HTTP/1.1 front on 127.0.0.1:<port>: one request per connection, parsed with h11.

Every connection gets the same gate before any route runs: the request head must arrive within
``head_timeout`` and fit in ``max_head`` bytes (a slow or endless head cannot pin a connection),
parse as HTTP/1.1 with h11, carry an origin-form target (``/path``; an absolute-form
``GET http://evil.example/ws`` is refused), then pass the web gate (``gate.admit``: the peer, one
``Host`` exactly equal to the expected host, forwarded headers only from a trusted upstream — PROTOCOL
§4.1), which also fixes the request's effective scheme. Then the route table picks a handler by
path; an unknown path is 404. Every answer but a 101 carries the security headers of
``gate.SECURITY_HEADERS`` (a CSP with ``frame-ancestors 'none'``, no caching, no referrer).

A malformed request is answered 400 (431 for an oversized head, 408 for a late one) when the socket
still takes it, and closed; it costs at most one line on stderr, never a traceback, and
:class:`LogLimiter` bounds those lines so a flood cannot grow the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shard.daemon.web.config import LOOPBACK, WebPolicy
from shard.daemon.web.gate import SECURITY_HEADERS, Refusal, Scheme, admit

if TYPE_CHECKING:
    import h11

HEAD_TIMEOUT = 10.0
MAX_HEAD = 16 * 1024
_READ = 64 * 1024
_LINGER = 1.0
_REASONS = {
    101: "Switching Protocols",
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    413: "Content Too Large",
    426: "Upgrade Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    505: "HTTP Version Not Supported",
}


@dataclass(frozen=True, slots=True)
class Request:
    """A parsed request head. Header names are lower case; values are bytes exactly as sent
    (minus surrounding whitespace): nothing here decodes them, so any byte is safe to carry."""

    method: bytes
    target: bytes
    path: bytes
    http_version: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    peer: str  # the peer's address, without the port
    scheme: Scheme = "http"  # the effective scheme, once the web gate has admitted the request

    def get_all(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers if key == name]


class HttpError(Exception):
    """Refuse the request with ``status``; ``message`` is the plain-text body."""

    def __init__(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


class _Malformed(Exception):
    """The bytes are not a request this server can read: answer ``status`` and log one line."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


# A handler gets the request, the connection's streams and the bytes already read past the head.
# It returns once it is done with the connection; it refuses by raising HttpError.
Handler = Callable[[Request, asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Route:
    handler: Handler
    methods: frozenset[bytes] = field(default=frozenset({b"GET"}))


def response(
    status: int,
    body: str | bytes = "",
    headers: tuple[tuple[str, str], ...] = (),
    *,
    content_type: str = "text/plain; charset=utf-8",
) -> bytes:
    """A complete response that ends the connection. Every one but a 101 carries the security
    headers; a page that names its own Content-Security-Policy replaces the default one (two would
    both apply, and the default allows no script at all)."""
    payload = body.encode("utf-8") if isinstance(body, str) else body
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if status != 101:
        named = {name.lower() for name, _ in headers}
        lines += [f"{name}: {value}" for name, value in SECURITY_HEADERS if name.lower() not in named]
        lines += [
            f"Content-Type: {content_type}",
            f"Content-Length: {len(payload)}",
            "Connection: close",
        ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


def printable(raw: object, limit: int = 160) -> str:
    """Text safe for a one-line log: printable ASCII only, cut to ``limit`` characters."""
    text = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
    clean = "".join(c if " " <= c <= "~" else "?" for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


class LogLimiter:
    """At most ``burst`` lines per ``window`` seconds. Past that, lines are counted, and when the
    window ends one line says how many were left out."""

    def __init__(
        self,
        burst: int = 10,
        window: float = 60.0,
        *,
        write: Callable[[str], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.window = window
        self._write = write or _stderr
        self._clock = clock
        self._start = -window
        self._count = 0
        self._suppressed = 0
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, line: str) -> None:
        now = self._clock()
        if now - self._start >= self.window:
            self.flush()
            self._start, self._count = now, 0
        if self._count < self.burst:
            self._count += 1
            self._write(f"shard daemon: {line}\n")
            return
        self._suppressed += 1
        if self._timer is None:
            with contextlib.suppress(RuntimeError):  # no loop: the next line after the window says it
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(self._start + self.window - now, self.flush)

    def flush(self) -> None:
        """Report what was left out, if anything."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._suppressed:
            noun = "request" if self._suppressed == 1 else "requests"
            self._write(f"shard daemon: {self._suppressed} more malformed HTTP {noun} not logged\n")
            self._suppressed = 0


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


class HttpFront:
    """The ``client_connected_cb`` of an ``asyncio.start_server``: gate, parse, route."""

    def __init__(
        self,
        routes: Mapping[bytes, Route],
        *,
        head_timeout: float = HEAD_TIMEOUT,
        max_head: int = MAX_HEAD,
        log: Callable[[str], None] | None = None,
        policy: WebPolicy = LOOPBACK,
    ) -> None:
        self.routes = dict(routes)
        self.head_timeout = head_timeout
        self.max_head = max_head
        self.policy = policy
        self.port = 0  # set once the port is bound
        self.log = log or LogLimiter()
        self.tasks: set[asyncio.Task[None]] = set()

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        peer, label = _peer(writer)
        try:
            await self._serve(reader, writer, peer, label)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception as exc:  # the boundary: no input may end in a traceback
            self.log(f"connection from {label} failed: {type(exc).__name__}: {printable(exc)}")
        finally:
            if task is not None:
                self.tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()

    async def aclose(self, grace: float) -> None:
        """Give open connections ``grace`` seconds to finish their goodbyes, then cut them."""
        if self.tasks:
            _, pending = await asyncio.wait(set(self.tasks), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: str, label: str
    ) -> None:
        try:
            request, rest = await self._read_head(reader, peer)
        except _Malformed as exc:
            self.log(f"refused a malformed HTTP request from {label}: {printable(exc)}")
            await _refuse(reader, writer, response(exc.status, f"{exc}\n"))
            return
        if request is None:
            return
        try:
            await self._route(request, reader, writer, rest)
        except HttpError as exc:
            await _refuse(reader, writer, response(exc.status, exc.message + "\n", exc.headers))

    async def _read_head(self, reader: asyncio.StreamReader, peer: str) -> tuple[Request | None, bytes]:
        import h11  # at the first HTTP request: a daemon only a unix client talks to never loads the parser

        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.max_head)
        received = 0
        try:
            async with asyncio.timeout(self.head_timeout):
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        if received > self.max_head:
                            raise _Malformed(431, f"the request head is over {self.max_head} bytes")
                        data = await reader.read(_READ)
                        received += len(data)
                        conn.receive_data(data)
                        continue
                    if isinstance(event, h11.Request):
                        break
                    return None, b""  # the peer left before sending a request
        except TimeoutError:
            if not received:
                return None, b""  # a connection that never spoke is not a malformed request
            raise _Malformed(408, f"no complete request head within {self.head_timeout:g} s") from None
        except h11.RemoteProtocolError as exc:
            raise _Malformed(431 if exc.error_status_hint == 431 else 400, _reason(exc)) from None
        rest = conn.trailing_data[0]
        if received - len(rest) > self.max_head:  # h11 bounds only a head still incomplete
            raise _Malformed(431, f"the request head is over {self.max_head} bytes")
        if event.http_version not in (b"1.0", b"1.1"):
            raise _Malformed(505, "only HTTP/1.1 is served")
        target = bytes(event.target)
        if not target.startswith(b"/"):  # absolute-form, authority-form, asterisk-form
            raise _Malformed(400, "the request target must be a path (origin-form)")
        request = Request(
            method=bytes(event.method),
            target=target,
            path=target.split(b"?", 1)[0],
            http_version=bytes(event.http_version),
            headers=tuple((bytes(name), bytes(value)) for name, value in event.headers),
            peer=peer,
        )
        return request, rest

    async def _route(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rest: bytes
    ) -> None:
        # h11 already refuses a second Host; admit checks again so no parser change can let one in
        try:
            admitted = admit(self.policy, self.port, request.peer, request.get_all)
        except Refusal as exc:
            raise HttpError(exc.status, exc.message) from None
        request = replace(request, scheme=admitted.scheme)
        route = self.routes.get(request.path)
        if route is None:
            raise HttpError(404, "not found")
        if request.method not in route.methods:
            allow = ", ".join(sorted(m.decode() for m in route.methods))
            raise HttpError(405, "method not allowed", (("Allow", allow),))
        await route.handler(request, reader, writer, rest)


def _reason(exc: h11.RemoteProtocolError) -> str:
    """h11's message without the bytes it quotes: the client's bytes do not go into logs."""
    return str(exc).split(": bytearray(", 1)[0]


def _peer(writer: asyncio.StreamWriter) -> tuple[str, str]:
    """The peer's address, and address:port for a log line."""
    info = writer.get_extra_info("peername")
    if isinstance(info, tuple) and len(info) >= 2:
        host = str(info[0])
        return host, f"[{host}]:{info[1]}" if ":" in host else f"{host}:{info[1]}"
    return "", "?"


async def _refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> None:
    """Send the answer, then read (and drop) what the client still sends until it closes, for a
    moment: closing a socket with unread input resets it, and the reset can overtake the answer."""
    if writer.transport.is_closing():
        return
    writer.write(data)
    with contextlib.suppress(ConnectionError, TimeoutError):
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        async with asyncio.timeout(_LINGER):
            while await reader.read(_READ):
                pass

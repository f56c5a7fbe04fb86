"""The WebSocket transport (PROTOCOL §2.2): one JSON message per text frame on 127.0.0.1:<port>/ws.

:class:`WsEndpoint` is the ``/ws`` route of the HTTP front (``http.py``, whose web gate has already
checked the peer, ``Host`` and forwarded headers). The upgrade is checked in this order: an
allowed ``Origin`` (absent or foreign: 400, PROTOCOL §4.1), a well-formed RFC 6455 §4.2.1 request
(HTTP/1.1 GET, no body, ``Upgrade: websocket``, ``Connection: upgrade``, ``Sec-WebSocket-Version:
13`` — else 426 naming it — and a 16-byte base64 ``Sec-WebSocket-Key``), then the single-use
ticket offered in ``Sec-WebSocket-Protocol`` (``auth.WebAuth.redeem``: 401 for missing, expired,
mismatched or replayed). A malformed request never burns a ticket; a well-formed one consumes it
whatever follows. The socket is tied to its browser session, so revoking the session closes it.

:class:`WsConnection` pumps the client's bytes through ``shard.protocol.wsframe.ServerCodec`` into the daemon:
text messages (and over-cap ones, as the same ``Oversized`` record the unix socket gives) are
handled one at a time, in order, like the unix socket's lines; binary messages are refused with
INVALID_REQUEST; a protocol violation closes with its code (1002, 1007). The server pings every
``ping_interval`` and drops a client whose pong is not back within half of it. Outbound messages are
pre-encoded once per event and written per client, so a slow client never holds up another (P2).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
from collections.abc import Callable

from shard.daemon.connection import DEFAULT_OUTBOUND_CAP, Connection
from shard.daemon.core import Daemon
from shard.daemon.http import HttpError, Request, response
from shard.daemon.web.auth import SUBPROTOCOL, WebAuth
from shard.daemon.web.browsers import browser_name
from shard.daemon.web.gate import Refusal, check_origin
from shard.protocol.codec import error_response
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES, Oversized
from shard.protocol.wsframe import (
    GOING_AWAY,
    NORMAL,
    Binary,
    Close,
    Event,
    Ping,
    Pong,
    ServerCodec,
    Text,
    Violation,
)

PING_INTERVAL = 30.0
CLOSE_TIMEOUT = 5.0  # how long a closing connection waits for the client's side of the goodbye
_READ = 256 * 1024
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key: bytes) -> str:
    """``Sec-WebSocket-Accept`` for a client's key (RFC 6455 §4.2.2)."""
    return base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()


def check_upgrade(request: Request) -> bytes:
    """Check that ``request`` is a well-formed WebSocket upgrade; return its key, or raise HttpError."""
    if request.http_version != b"1.1":
        raise HttpError(400, "a WebSocket upgrade needs HTTP/1.1")
    if request.get_all(b"transfer-encoding") or request.get_all(b"content-length") not in ([], [b"0"]):
        raise HttpError(400, "a WebSocket upgrade has no body")
    upgrade = (("Upgrade", "websocket"), ("Connection", "Upgrade"))
    if b"websocket" not in _tokens(request.get_all(b"upgrade")):
        raise HttpError(426, "this endpoint speaks WebSocket only: send Upgrade: websocket", upgrade)
    if b"upgrade" not in _tokens(request.get_all(b"connection")):
        raise HttpError(426, "a WebSocket upgrade needs Connection: Upgrade", upgrade)
    if request.get_all(b"sec-websocket-version") != [b"13"]:
        raise HttpError(426, "unsupported WebSocket version", (("Sec-WebSocket-Version", "13"),))
    keys = request.get_all(b"sec-websocket-key")
    if len(keys) != 1 or not _valid_key(keys[0]):
        raise HttpError(400, "Sec-WebSocket-Key must be one base64-encoded 16-byte value")
    return keys[0]


def accepted(key: bytes, protocol: str | None = None) -> bytes:
    """The 101 response for a checked upgrade, selecting ``protocol`` if given (never the ticket)."""
    headers = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept_key(key))]
    if protocol is not None:
        headers.append(("Sec-WebSocket-Protocol", protocol))
    return response(101, headers=tuple(headers))


def _tokens(values: list[bytes]) -> set[bytes]:
    return {token.strip().lower() for value in values for token in value.split(b",")}


def _valid_key(key: bytes) -> bool:
    try:
        return len(base64.b64decode(key, validate=True)) == 16
    except (binascii.Error, ValueError):
        return False


class WsEndpoint:
    """The ``/ws`` route: upgrade, then serve one :class:`WsConnection` until it closes."""

    def __init__(
        self,
        daemon: Daemon,
        auth: WebAuth,
        *,
        max_message: int = DEFAULT_MAX_LINE_BYTES,
        ping_interval: float = PING_INTERVAL,
        cap: int = DEFAULT_OUTBOUND_CAP,
    ) -> None:
        self.daemon = daemon
        self.auth = auth
        self.max_message = max_message
        self.ping_interval = ping_interval
        self.cap = cap

    async def __call__(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rest: bytes
    ) -> None:
        try:
            origin = check_origin(self.auth.policy, self.auth.port, request.get_all)
        except Refusal as exc:
            raise HttpError(exc.status, exc.message) from None
        key = check_upgrade(request)
        grant, offered = self.auth.redeem(request, origin)
        writer.write(accepted(key, SUBPROTOCOL if offered else None))
        conn = WsConnection(
            writer, cap=self.cap, ping_interval=self.ping_interval, max_message=self.max_message
        )
        conn.label = browser_name(grant.label)
        self.auth.opened(grant, conn)
        try:
            await conn.serve(self.daemon, reader, rest)
        finally:
            self.auth.closed(grant, conn)


class WsConnection(Connection):
    """Frames are written straight to the transport, whole: a tick's messages to one client cost
    one ``write``, and pings, pongs and the close frame can never land inside another frame."""

    transport = "websocket"

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        *,
        cap: int = DEFAULT_OUTBOUND_CAP,
        ping_interval: float,
        max_message: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        super().__init__(cap)
        self._codec = ServerCodec(max_message)
        self._transport = writer.transport
        self._ping_interval = ping_interval
        self._timer: asyncio.TimerHandle | None = None
        self._awaiting_pong = False
        self._busy = False  # a message is being handled, so nothing is being read
        self._close_code = GOING_AWAY
        self._abort = False  # the client is presumed dead: no goodbye
        self._peer_gone = False  # the client closed its side without a close frame
        self._eof_sent = False

    # --- Connection ---------------------------------------------------------------------------------

    def _frame(self, data: bytes) -> bytes:
        return self._codec.text(data)

    def _write(self, data: bytes) -> None:
        if not self._eof_sent and not self._transport.is_closing():
            self._transport.write(data)

    def _buffered(self) -> int:
        return self._transport.get_write_buffer_size()

    def _close(self, reason: str, slow: bool) -> None:
        self._cancel_timer()
        if slow or self._abort:  # a client that does not read would never take a close frame either
            self._transport.abort()
            return
        if self._peer_gone:
            self._transport.close()
            return
        self._write(self._codec.close(self._close_code, reason))
        if not self._transport.can_write_eof():
            return
        try:
            self._transport.write_eof()
        except OSError:  # the client is already gone (ENOTCONN): nothing left to say goodbye to
            self._transport.abort()
        self._eof_sent = True

    # --- the session --------------------------------------------------------------------------------

    async def serve(self, daemon: Daemon, reader: asyncio.StreamReader, data: bytes) -> None:
        """Read frames until either side closes; ``data``: bytes that came with the request head."""
        daemon.connected(self)
        if self._ping_interval > 0:
            self._arm(self._ping_interval, self._ping)
        try:
            while not self.closed:
                for event in self._codec.feed(data):
                    await self._on(daemon, event)
                    if self.closed:
                        break
                if self.closed:
                    break
                data = await reader.read(_READ)
                if not data:
                    self._peer_gone = True
                    break
        except ConnectionError:
            self._peer_gone = True
        finally:
            daemon.disconnected(self)
            self.close("connection closed")
        await self._linger(reader)

    async def _on(self, daemon: Daemon, event: Event) -> None:
        if isinstance(event, Text | Oversized):
            self._busy = True
            try:
                await daemon.handle(self, event.data if isinstance(event, Text) else event)
            finally:
                self._busy = False
        elif isinstance(event, Binary):
            error = ShardError(ErrorCode.INVALID_REQUEST, "binary frames are not used: send text frames")
            self.send(error_response(error).to_json())
        elif isinstance(event, Ping):
            self._write(self._codec.pong(event.payload))
        elif isinstance(event, Pong):
            self._pong()
        elif isinstance(event, Close):
            self._close_code = NORMAL if event.code is None else event.code  # echoed (§5.5.1)
            self.close("")
        elif isinstance(event, Violation):
            self._close_code = event.code
            self.close(event.reason)

    async def _linger(self, reader: asyncio.StreamReader) -> None:
        """After our close frame, read until the client closes too (RFC 6455 §7.1.1: the server
        closes the TCP connection last), so the socket is not reset under the frame."""
        if self._transport.is_closing():
            return
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                while await reader.read(_READ):
                    pass
        except (ConnectionError, TimeoutError):
            self._transport.abort()

    # --- keepalive (PROTOCOL §2.2) ------------------------------------------------------------------

    def _arm(self, delay: float, callback: Callable[[], None]) -> None:
        self._cancel_timer()
        self._timer = asyncio.get_running_loop().call_later(delay, callback)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _ping(self) -> None:
        if self.closed:
            return
        self._awaiting_pong = True
        self._write(self._codec.ping())
        self._arm(self._ping_interval / 2, self._pong_overdue)

    def _pong_overdue(self) -> None:
        if self.closed:
            return
        if self._busy:  # we are not reading while a message is handled: its pong may be waiting
            self._arm(self._ping_interval / 2, self._pong_overdue)
            return
        self._abort = True
        self.close(f"no pong within {self._ping_interval / 2:g} s")

    def _pong(self) -> None:
        if self._awaiting_pong:  # an unsolicited pong is a heartbeat nobody asked for: ignored
            self._awaiting_pong = False
            self._arm(self._ping_interval, self._ping)

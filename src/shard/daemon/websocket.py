"""The WebSocket transport (PROTOCOL §2.2): one JSON message per text frame on 127.0.0.1:<port>/ws.

Until the web-security issue brings enrollment and tickets, the handshake admits loopback peers only,
with the exact ``Host`` 127.0.0.1:<port> and the exact loopback ``Origin`` (§4.1.1): a missing or
foreign Origin is 400, a foreign Host 400. The server pings every 30 s and drops a client that does
not answer; binary frames are refused. Outbound frames are pre-encoded once per event and written
per client, so a slow client never holds up another (P2: past the cap it is closed with a reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct

from aiohttp import WSMsgType, web

from shard.daemon.connection import DEFAULT_OUTBOUND_CAP, Connection
from shard.daemon.core import Daemon
from shard.protocol.codec import error_response
from shard.protocol.errors import ErrorCode, ShardError

PING_INTERVAL = 30.0
LOOPBACK_PEERS = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
_LEN16 = struct.Struct("!BBH")
_LEN64 = struct.Struct("!BBQ")


class WsConnection(Connection):
    """Frames are written straight to the transport: a server frame is a 2-10 byte header and the
    unmasked payload (RFC 6455 §5.2), so a tick's messages to one client cost one ``write``.
    aiohttp's own writer (pings, close) also writes whole frames synchronously, so frames never
    interleave."""

    transport = "websocket"

    def __init__(
        self,
        ws: web.WebSocketResponse,
        transport: asyncio.Transport,
        cap: int = DEFAULT_OUTBOUND_CAP,
    ) -> None:
        super().__init__(cap)
        self.ws = ws
        self._transport = transport

    def _frame(self, data: bytes) -> bytes:
        size = len(data)
        if size < 126:
            return bytes((0x81, size)) + data
        if size < 65536:
            return _LEN16.pack(0x81, 126, size) + data
        return _LEN64.pack(0x81, 127, size) + data

    def _write(self, data: bytes) -> None:
        if not self._transport.is_closing():
            self._transport.write(data)

    def _buffered(self) -> int:
        return self._transport.get_write_buffer_size()

    def _close(self, reason: str, slow: bool) -> None:
        if slow:  # a client that does not read would never take a close frame either
            self._transport.abort()
            return
        self._closing = asyncio.ensure_future(self.ws.close(code=1008, message=reason[:120].encode()))


def build_app(
    daemon: Daemon,
    port_ref: list[int],
    max_message: int,
    *,
    ping_interval: float = PING_INTERVAL,
    cap: int = DEFAULT_OUTBOUND_CAP,
) -> web.Application:
    async def ws_handler(request: web.Request) -> web.StreamResponse:
        port = port_ref[0]
        peer = request.remote or ""
        if peer not in LOOPBACK_PEERS:
            raise web.HTTPForbidden(text="only loopback clients may connect")
        # getall: a second Host or Origin header must not slip past an exact match on the first.
        if request.headers.getall("Host", []) != [f"127.0.0.1:{port}"]:
            raise web.HTTPBadRequest(text="Host must be exactly 127.0.0.1:<port>")
        if request.headers.getall("Origin", []) != [f"http://127.0.0.1:{port}"]:
            raise web.HTTPBadRequest(text="Origin missing or not allowed")
        ws = web.WebSocketResponse(heartbeat=ping_interval, max_msg_size=max_message, compress=False)
        await ws.prepare(request)
        transport = request.transport
        assert isinstance(transport, asyncio.Transport)
        conn = WsConnection(ws, transport, cap)
        daemon.connected(conn)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    await daemon.handle(conn, msg.data.encode("utf-8"))
                elif msg.type == WSMsgType.BINARY:
                    error = ShardError(
                        ErrorCode.INVALID_REQUEST, "binary frames are not used: send text frames"
                    )
                    conn.send(error_response(error).to_json())
                elif msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
        finally:
            daemon.disconnected(conn)
            with contextlib.suppress(Exception):
                conn.close("connection closed")
        return ws

    app = web.Application(client_max_size=max_message)
    app.router.add_get("/ws", ws_handler)
    return app

"""The WebSocket transport (PROTOCOL §2.2, §4.1): an HTTP/1.1 upgrade over asyncio streams that
offers ``shard.v1`` and ``ticket.<ticket>`` in ``Sec-WebSocket-Protocol``, then one JSON message per
text frame. Every server ping is answered with a pong (R2.2.4). No third-party WebSocket library:
the frames are the client side of :mod:`shard.protocol.wsframe`, the codec the daemon serves with."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
from collections.abc import Callable

from shard.client.errors import AuthError, ConnectError
from shard.client.transports import NotSent, Transport
from shard.protocol.wsframe import NORMAL, Binary, ClientCodec, Close, Ping, Text, Violation

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_HANDSHAKE_TIMEOUT = 10.0
_READ = 1 << 16


class WebSocketTransport(Transport):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.frames = ClientCodec()
        self.binary_dropped = 0  # binary messages are unused (R2.2.2): counted and dropped
        self.pings_answered = 0
        self.on_ping: Callable[[int], None] | None = None  # told the count after each pong sent
        self._ready: list[bytes] = []
        self._gone = False

    @classmethod
    async def open(
        cls, host: str, port: int, *, ticket: str, origin: str | None = None, path: str = "/ws"
    ) -> WebSocketTransport:
        """Upgrade ``ws://host:port/path`` with ``ticket``; ``origin`` defaults to ``http://host:port``
        (the loopback origin a ticket from ``/bootstrap`` is bound to)."""
        try:
            reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
        except OSError as exc:
            raise ConnectError(f"cannot reach {host}:{port}: {exc}") from exc
        key = base64.b64encode(os.urandom(16))
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key.decode()}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: {origin or f'http://{host}:{port}'}\r\n"
            f"Sec-WebSocket-Protocol: shard.v1, ticket.{ticket}\r\n\r\n"
        )
        try:
            writer.write(request.encode("latin-1"))
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HANDSHAKE_TIMEOUT)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError) as exc:
            writer.close()
            raise ConnectError(f"the WebSocket upgrade failed: {exc!r}") from exc
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1]) if len(lines[0].split(" ")) > 1 else 0
        headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
        if status != 101:
            body = b""
            with contextlib.suppress(Exception):
                body = await asyncio.wait_for(reader.read(4096), 2)
            writer.close()
            reason = body.decode("utf-8", "replace").strip() or lines[0]
            if status in (400, 401, 403):
                raise AuthError(status, reason)
            raise ConnectError(f"the WebSocket upgrade was refused: HTTP {status}: {reason}")
        expected = base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()
        if headers.get("sec-websocket-accept") != expected:
            writer.close()
            raise ConnectError("the server's Sec-WebSocket-Accept does not match the key")
        return cls(reader, writer)

    async def recv(self) -> bytes | None:
        while not self._ready:
            if self._gone:
                return None
            try:
                chunk = await self.reader.read(_READ)
            except (ConnectionError, OSError):
                chunk = b""
            if not chunk:
                self._gone = True
                return None
            for event in self.frames.feed(chunk):
                if isinstance(event, Text):
                    self._ready.append(event.data)
                elif isinstance(event, Ping):
                    await self._write(self.frames.pong(event.payload))
                    self.pings_answered += 1
                    if self.on_ping is not None:
                        self.on_ping(self.pings_answered)
                elif isinstance(event, Binary):
                    self.binary_dropped += 1
                elif isinstance(event, Close | Violation):
                    # the server closes: echo its code (§5.5.1); it broke the protocol: say how
                    # (§7.1.7); either way the connection is over
                    with contextlib.suppress(ConnectionError):
                        await self._write(self.frames.close(event.code or NORMAL, _reason(event)))
                    self._gone = True
                    self.writer.close()
                    break
        return self._ready.pop(0)

    async def _write(self, data: bytes) -> None:
        if self.writer.is_closing():
            raise NotSent("the WebSocket is closed")
        self.writer.write(data)
        await self.writer.drain()

    async def send(self, data: bytes) -> None:
        await self._write(self.frames.text(data))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._write(self.frames.close(NORMAL))
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()

    def abort(self) -> None:
        transport = self.writer.transport
        if isinstance(transport, asyncio.WriteTransport):
            transport.abort()


def _reason(event: Close | Violation) -> str:
    return event.reason if isinstance(event, Violation) else ""

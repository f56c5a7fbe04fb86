"""Transports: one message in, one message out (PROTOCOL §2), nothing else decided here.

A :class:`Transport` carries whole JSON records as bytes. :class:`LineTransport` frames them as
JSONL over a pair of asyncio streams (the unix socket, or a spawned ``shard agent --stdio``'s pipes),
splitting on LF only through the protocol's :class:`~shard.protocol.framing.LineBuffer` (R2.1.2 to
R2.1.4). The WebSocket transport is in :mod:`shard.client.websocket`.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod

from shard.protocol.framing import LineBuffer, Oversized

_READ = 1 << 16


class NotSent(ConnectionError):
    """The transport was already closed: nothing of the record was written (safe to send again)."""


class Transport(ABC):
    @abstractmethod
    async def recv(self) -> bytes | None:
        """The next record, or None once the peer is gone."""

    @abstractmethod
    async def send(self, data: bytes) -> None:
        """One record (without framing). Raises NotSent when the transport was already closed,
        ConnectionError when the peer went away during the write."""

    @abstractmethod
    async def close(self) -> None:
        """Close politely and release everything."""

    @abstractmethod
    def abort(self) -> None:
        """Cut the connection at once, as a network failure would (tests, "reconnect now")."""


class LineTransport(Transport):
    """JSONL over asyncio streams. ``process`` is the spawned agent, if any (closed with it)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        process: asyncio.subprocess.Process | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.process = process
        self._lines = LineBuffer()
        self._ready: list[bytes] = []

    async def recv(self) -> bytes | None:
        while not self._ready:
            try:
                chunk = await self.reader.read(_READ)
            except (ConnectionError, OSError):
                return None
            if not chunk:
                return None
            for record in self._lines.feed(chunk):
                if not isinstance(record, Oversized):  # beyond 64 MB: not a message we can read
                    self._ready.append(record)
        return self._ready.pop(0)

    async def send(self, data: bytes) -> None:
        if self.writer.is_closing():
            raise NotSent("the connection is closed")
        self.writer.write(data + b"\n")
        await self.writer.drain()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()

    def abort(self) -> None:
        transport = self.writer.transport
        if isinstance(transport, asyncio.WriteTransport):
            transport.abort()
        else:  # pragma: no cover - every stream writer has one
            self.writer.close()


class ProcessTransport(LineTransport):
    """JSONL over a spawned agent's stdin/stdout; closing ends its input, then waits for it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        assert process.stdin is not None
        super().__init__(process.stdout, process.stdin, process)
        self.proc = process

    async def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()

    def abort(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()

"""A fake daemon on a unix socket, for the client side of what a real daemon never sends (a sync
without capabilities, a catalog from a superseded runtime): it says ``hello`` on connect, records
every command, and answers each with the lines ``answer(command)`` returns; ``send`` pushes an event
unasked. Used by the SDK's and the terminal client's tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

HELLO = {"type": "hello", "protocol_version": "0.1.0", "server_version": "fake", "capabilities": []}
AGENT = "agent-1"
INFO = {"agent_id": AGENT, "cwd": "/fake", "status": "idle", "runtime_state": "running", "created_at": 0}
Answer = Callable[[dict[str, Any]], list[dict[str, Any]]]


def sync(**extra: Any) -> dict[str, Any]:
    """The fake agent's ``sync`` (no capabilities unless ``extra`` gives them)."""
    return {
        "type": "sync",
        "agent_id": AGENT,
        "status": "idle",
        "mode": "build",
        "live_window": {"messages": []},
        "pending_requests": [],
        **extra,
    }


def ok(command: dict[str, Any], data: Any = None) -> dict[str, Any]:
    """A successful response to ``command``."""
    return {
        "type": "response",
        "id": command["id"],
        "command": command["type"],
        "success": True,
        "data": data,
    }


class FakeDaemon:
    """``async with FakeDaemon(path, answer) as daemon``: serves ``path`` until the block ends."""

    def __init__(self, path: Path, answer: Answer | None = None) -> None:
        self.path = path
        self.answer: Answer = answer or (lambda command: [])
        self.received: list[dict[str, Any]] = []
        self.writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> FakeDaemon:
        self.server = await asyncio.start_unix_server(self._handle, str(self.path))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    async def send(self, message: dict[str, Any]) -> None:
        """One line to the client connected last."""
        assert self.writer is not None
        self.writer.write(orjson.dumps(message) + b"\n")
        await self.writer.drain()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        await self.send(HELLO)
        while line := await reader.readline():
            command = orjson.loads(line)
            self.received.append(command)
            for reply in self.answer(command):
                await self.send(reply)
        writer.close()

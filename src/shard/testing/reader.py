"""The reading half every test client shares: messages in order, waits that end on a message (never
on the clock), request/response by id."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import orjson

# A safety cap, never a timing: ample for a loaded machine (./test runs four workers on two cores).
DEFAULT_TIMEOUT = 90.0


class MessageReader(ABC):
    # Called with every message any reader receives (``shard.testing.wire`` checks them all).
    observers: ClassVar[list[Callable[[dict[str, Any]], None]]] = []

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self._buffer: list[dict[str, Any]] = []

    @abstractmethod
    async def _receive(self, timeout: float) -> dict[str, Any]:
        """The next message from the peer; EOFError when it is gone."""

    @abstractmethod
    async def send_raw(self, data: bytes) -> None:
        """Bytes exactly as given (a line transport adds no newline: tests split and join lines)."""

    async def send(self, message: dict[str, Any]) -> None:
        """One whole message, framed for the transport."""
        await self.send_raw(orjson.dumps(message) + self.terminator)

    terminator = b"\n"

    async def next(self, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        if self._buffer:
            return self._buffer.pop(0)
        msg = await self._receive(timeout)
        self.seen.append(msg)
        for observe in MessageReader.observers:
            observe(msg)
        return msg

    async def until(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = DEFAULT_TIMEOUT
    ) -> list[dict[str, Any]]:
        """Read until a message satisfies ``predicate``; everything read, that one last."""
        out: list[dict[str, Any]] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no matching message; read: {[m.get('type') for m in out]}")
            msg = await self.next(left)
            out.append(msg)
            if predicate(msg):
                return out

    async def until_type(self, type_: str, timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
        return await self.until(lambda m: m.get("type") == type_, timeout)

    async def request(
        self, message: dict[str, Any], timeout: float = DEFAULT_TIMEOUT
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send a command with an ``id``; return (its response, the messages read before it)."""
        assert "id" in message
        await self.send(message)
        read = await self.until(
            lambda m: m.get("type") == "response" and m.get("id") == message["id"], timeout
        )
        return read[-1], read[:-1]

    async def idle(
        self, timeout: float = DEFAULT_TIMEOUT, agent_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Read until ``status idle`` (of ``agent_id`` when given)."""
        return await self.until(
            lambda m: (
                m.get("type") == "status"
                and m.get("status") == "idle"
                and (agent_id is None or m.get("agent_id") == agent_id)
            ),
            timeout,
        )

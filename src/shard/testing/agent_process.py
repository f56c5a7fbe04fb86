"""Drive a real ``shard agent --stdio`` process over its pipes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

DEFAULT_TIMEOUT = 30.0


def shard_command(*args: str) -> list[str]:
    """The argv that runs ``shard`` with this interpreter (no PATH lookup)."""
    return [sys.executable, "-m", "shard", *args]


class AgentProcess:
    """A running agent. Events are read in order; nothing is skipped unless a method says so."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.seen: list[dict[str, Any]] = []
        self._buffer: list[dict[str, Any]] = []

    @classmethod
    async def start(
        cls,
        home: Path,
        cwd: Path,
        *args: str,
        env: dict[str, str] | None = None,
    ) -> AgentProcess:
        full_env = {**os.environ, "SHARD_HOME": str(home), **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            *shard_command("agent", "--stdio", *args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=full_env,
            limit=256 * 1024 * 1024,
        )
        return cls(proc)

    # --- writing ---------------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_raw(orjson.dumps(message) + b"\n")

    async def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    # --- reading ---------------------------------------------------------------------------

    async def next(self, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The next message, whatever it is."""
        if self._buffer:
            return self._buffer.pop(0)
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            stderr = b""
            if self.proc.stderr is not None:
                stderr = await asyncio.wait_for(self.proc.stderr.read(), timeout)
            raise EOFError(f"agent closed stdout; stderr: {stderr.decode(errors='replace')}")
        assert line.endswith(b"\n"), "every message ends with LF"
        msg = orjson.loads(line)
        self.seen.append(msg)
        return msg

    async def until(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = DEFAULT_TIMEOUT
    ) -> list[dict[str, Any]]:
        """Read until a message satisfies ``predicate``; return everything read, that one last."""
        out: list[dict[str, Any]] = []
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError(f"no matching message; read: {[m.get('type') for m in out]}")
            msg = await self.next(left)
            out.append(msg)
            if predicate(msg):
                return out

    async def until_type(self, type_: str, timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
        return await self.until(lambda m: m.get("type") == type_, timeout)

    async def handshake(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Read ``hello`` and ``sync`` (asserting they come first, in that order)."""
        hello = await self.next()
        assert hello["type"] == "hello", hello
        sync = await self.next()
        assert sync["type"] == "sync", sync
        return hello, sync

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

    def push_back(self, messages: Sequence[dict[str, Any]]) -> None:
        """Return messages to the front of the queue (read by a helper, wanted by the test)."""
        self._buffer[:0] = list(messages)

    async def idle(self, timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
        """Read until ``status idle``."""
        return await self.until(lambda m: m.get("type") == "status" and m.get("status") == "idle", timeout)

    # --- ending ----------------------------------------------------------------------------

    async def finish(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Close stdin and wait for the exit code (the agent finishes its work first)."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        await asyncio.wait_for(self.proc.wait(), timeout)
        return self.proc.returncode if self.proc.returncode is not None else -1

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    async def stderr_text(self) -> str:
        assert self.proc.stderr is not None
        return (await self.proc.stderr.read()).decode(errors="replace")

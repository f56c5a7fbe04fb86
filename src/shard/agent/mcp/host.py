"""The runtime's MCP servers: started once, concurrently, before the first model call of the first
turn (never before hello/sync: a runtime that is never prompted starts none), their tools added to
the runtime's tool set as ``server__tool``, and all stopped when the runtime ends.

Failures never reach past a tool result or the status line:

* a server that does not start (within its ``start_timeout``) is reported once — a ``status``
  detail and a non-fatal ``error`` event — and offers no tools; it is not retried in this runtime;
* a call the server does not answer within ``call_timeout`` is a tool error (the server stays up);
* a server that dies during a call is a tool error and a ``status`` detail, and is started again at
  its next call — at most :data:`MAX_RESTARTS` times in a runtime's life; a restart that fails marks
  it failed for the rest of the runtime, and each later call says so at once.

Only :meth:`McpHost.prepare` imports :mod:`.connection` (and with it the ``mcp`` SDK).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shard.agent.config.settings import Config
from shard.agent.mcp.config import McpServerConfig
from shard.agent.mcp.names import SEPARATOR, assign
from shard.agent.mcp.tool import make_tool, output
from shard.agent.sink import EventSink
from shard.agent.tools.base import Tool, ToolFailure, ToolOutput
from shard.protocol.agent_events import ErrorEvent
from shard.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from shard.agent.mcp.connection import Connection, ServerTool

MAX_RESTARTS = 3


@dataclass(slots=True)
class _Server:
    config: McpServerConfig
    connection: Connection
    failed: str | None = None  # why it is not used any more in this runtime
    restarts: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class McpHost:
    def __init__(
        self,
        servers: tuple[McpServerConfig, ...],
        cwd: Path,
        allow: Sequence[str] | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self._configs = servers
        self._cwd = cwd
        self._allow = allow
        self._environ = environ
        self._servers: dict[str, _Server] = {}
        self._starting: asyncio.Task[list[str]] | None = None
        self._events: EventSink | None = None

    @classmethod
    def for_config(cls, config: Config, cwd: Path, allow: Sequence[str] | None = None) -> McpHost | None:
        """The host for ``[[mcp_servers]]``, or None when there are none (or ``allow``, the agent's
        tool allow-list, names none of their tools: then no server is started)."""
        servers = tuple(s for s in config.mcp_servers if allow is None or _named(s.name, allow))
        return cls(servers, cwd, allow) if servers else None

    def may_name(self, tool: str) -> bool:
        """Whether ``tool`` could be one of these servers' tools (they are known only once started)."""
        return any(tool.startswith(s.name + SEPARATOR) for s in self._configs)

    async def prepare(self, tools: dict[str, Tool[Any]], events: EventSink) -> None:
        """Start the servers and add their tools to ``tools`` — the first time; later calls return
        at once. An abort while they start leaves the start running for the next turn."""
        self._events = events
        if self._starting is None:
            names = ", ".join(s.name for s in self._configs)
            events.set_status("streaming", f"starting MCP servers: {names}")
            self._starting = asyncio.get_running_loop().create_task(self._start_all(tools))
        problems = await asyncio.shield(self._starting)
        if problems:
            events.set_status("streaming", "; ".join(problems))
        else:
            events.set_status("streaming")

    async def close(self) -> None:
        """Stop every server this runtime started (and any start still under way)."""
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            await asyncio.wait({self._starting})
        await asyncio.gather(*(s.connection.close() for s in self._servers.values()))

    async def _start_all(self, tools: dict[str, Tool[Any]]) -> list[str]:
        from shard.agent.mcp.connection import Connection

        for config in self._configs:
            self._servers[config.name] = _Server(config, Connection(config, self._cwd, self._environ))
        started = await asyncio.gather(*(self._start(s) for s in self._servers.values()))
        problems: list[str] = []
        for server, listed in zip(self._servers.values(), started, strict=True):
            if server.failed is not None:
                problems.append(f"MCP server {server.config.name!r} {server.failed}")
            else:
                problems += self._register(server, listed, tools)
        for line in problems:  # reported once, whichever turn is waiting (an abort may have left)
            if self._events is not None:
                self._events.emit(ErrorEvent(code=ErrorCode.TOOL_ERROR.value, message=line, fatal=False))
        return problems

    async def _start(self, server: _Server) -> list[ServerTool]:
        from shard.agent.mcp.connection import McpFailure

        try:
            return await server.connection.start()
        except McpFailure as exc:
            server.failed = str(exc)
        except Exception as exc:  # whatever it was, a server must not take the runtime down
            server.failed = f"could not start: {type(exc).__name__}: {exc}"
        return []

    def _register(self, server: _Server, listed: list[ServerTool], tools: dict[str, Tool[Any]]) -> list[str]:
        by_remote = {t.name: t for t in listed}
        named, refused = assign(server.config.name, list(by_remote), set(tools))
        for name, remote in named.items():
            if self._allow is not None and name not in self._allow:
                continue
            spec = by_remote[remote]
            read_only = spec.read_only and server.config.trust_read_only

            async def invoke(remote: str, args: dict[str, Any], server: _Server = server) -> ToolOutput:
                return await self._invoke(server, remote, args)

            tools[name] = make_tool(
                name, server.config.name, remote, spec.description, spec.input_schema, read_only, invoke
            )
        return refused

    async def _invoke(self, server: _Server, remote: str, args: dict[str, Any]) -> ToolOutput:
        from shard.agent.mcp.connection import McpFailure

        name = server.config.name
        async with server.lock:
            if server.failed is None and not server.connection.alive:
                if server.restarts >= MAX_RESTARTS:
                    server.failed = f"died {server.restarts + 1} times and is not started again"
                else:
                    server.restarts += 1
                    try:
                        await server.connection.start()
                    except McpFailure as exc:
                        server.failed = f"died, and when started again {exc}"
            if server.failed is not None:
                why = f"The MCP server {name!r} is not available: it {server.failed}."
                raise ToolFailure(self._report(why))
        try:
            result = await server.connection.call(remote, args)
        except McpFailure as exc:
            again = "" if server.connection.alive else " It is started again at its next call."
            raise ToolFailure(self._report(f"The MCP server {name!r} {exc}.{again}")) from None
        return output(result)

    def _report(self, line: str) -> str:
        """Put ``line`` on the status line (the turn is streaming while servers start and tools run)."""
        if self._events is not None and self._events.status == "streaming":
            self._events.set_status("streaming", line)
        return line


def _named(server: str, allow: Sequence[str]) -> bool:
    return any(name.startswith(server + SEPARATOR) for name in allow)

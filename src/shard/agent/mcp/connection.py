"""One MCP server's connection, on the ``mcp`` SDK (the only module that imports it).

The SDK's client is an anyio context: it must be entered and left by the same task. So each
connection has a holder task that opens the client, lists the tools, hands both over, and keeps the
client open until told to stop; calls are made from the turn's task meanwhile. Leaving the client
stops a stdio server (stdin closed, then SIGTERM, then SIGKILL: the SDK bounds each wait); one
that did not start (or whose start the runtime's end cut short) is killed at once, with its process
group, before that.

Every failure is a :class:`McpFailure` with one line for the model and the status line: a server
that does not start within ``start_timeout``, a call not answered within ``call_timeout``, a server
that died (its connection closed) — after which :attr:`Connection.alive` is False until
:meth:`Connection.start` is called again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult

from shard.agent.mcp.config import McpServerConfig

_MAX_PAGES = 50  # of tools/list: a server that pages forever is cut off
_STDERR_TAIL = 300  # characters of a server's last stderr line quoted in a failure
_STOP_WAIT = 10.0  # the SDK stops a server within ~5 s; past this the holder is cancelled


class McpFailure(Exception):
    """What went wrong, in one line (without the server's name: the caller adds it)."""


@dataclass(frozen=True, slots=True)
class ServerTool:
    name: str  # as the server names it
    description: str
    input_schema: dict[str, Any]
    read_only: bool  # the server's readOnlyHint


_Started = tuple[Client, list[ServerTool]]


class Connection:
    def __init__(self, config: McpServerConfig, cwd: Path, environ: Mapping[str, str]) -> None:
        self.config = config
        self._cwd = cwd
        self._environ = environ
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._holders: set[asyncio.Task[None]] = set()
        self._stderr: TextIO | None = None

    @property
    def alive(self) -> bool:
        return self._client is not None

    async def start(self) -> list[ServerTool]:
        """Connect and list the server's tools, within ``start_timeout``."""
        self._retire()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[_Started] = loop.create_future()
        stop = asyncio.Event()
        holder = loop.create_task(self._hold(ready, stop))
        self._holders.add(holder)
        holder.add_done_callback(self._holders.discard)
        try:
            done, _ = await asyncio.wait({ready}, timeout=self.config.start_timeout)
        except asyncio.CancelledError:  # the runtime is ending while the server starts
            self._kill_unstarted()
            holder.cancel()
            raise
        if not done:
            self._kill_unstarted()
            holder.cancel()
            raise McpFailure(f"did not start within {self.config.start_timeout:g} s (start_timeout)")
        if (exc := ready.exception()) is not None:
            raise McpFailure(f"could not start: {self._explain(exc)}")
        self._client, tools = ready.result()
        self._stop = stop
        return tools

    async def call(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        """One ``tools/call``; the caller (re)starts the connection first when it is not alive."""
        client = self._client
        if client is None:
            raise McpFailure("is not running")
        try:
            return await client.call_tool(tool, args, read_timeout_seconds=self.config.call_timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise McpFailure(
                    f"did not answer {tool!r} within {self.config.call_timeout:g} s (call_timeout)"
                ) from None
            if exc.code == CONNECTION_CLOSED:
                self._retire()
                raise McpFailure(f"died during the call{self._last_words()}") from None
            raise McpFailure(f"answered {tool!r} with an error: {exc.message}") from None
        except Exception as exc:  # the transport broke under the call: the server is gone
            self._retire()
            raise McpFailure(f"was lost during the call: {self._explain(exc)}") from None

    async def close(self) -> None:
        """Stop the server (if running) and wait until every holder task has wound down."""
        self._retire()
        holders = set(self._holders)
        if holders:
            _, late = await asyncio.wait(holders, timeout=_STOP_WAIT)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _retire(self) -> None:
        """Let the current holder leave its client (stopping the server); nothing is awaited."""
        if self._stop is not None:
            self._stop.set()
        self._client = None
        self._stop = None

    async def _hold(self, ready: asyncio.Future[_Started], stop: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._new_client(stack))
                tools = await _list_tools(client)
                ready.set_result((client, tools))
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except Exception as exc:  # reported through ``ready``, or (once running) by the next call
            if not ready.done():
                ready.set_exception(exc)

    def _new_client(self, stack: contextlib.AsyncExitStack) -> Client:
        """The client, not yet entered; what else it needs closed afterwards goes on ``stack``."""
        config = self.config
        if config.command is not None:
            if self._stderr is None:  # the server's stderr, kept for the line a failure quotes
                file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
                self._stderr = cast(TextIO, file)
            self._stderr.seek(0)
            self._stderr.truncate()
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=config.environment(self._environ),
                cwd=self._cwd,
            )
            return Client(stdio_client(params, errlog=self._stderr), cache=None)
        try:
            headers = config.headers(self._environ)
        except LookupError as exc:
            raise McpFailure(str(exc)) from None
        # the transport leaves a client it was given open: it is closed with the stack
        http = stack.push_async_exit(create_mcp_http_client(headers=headers))
        return Client(streamable_http_client(str(config.url), http_client=http), cache=None)

    def _kill_unstarted(self) -> None:
        """Kill a stdio server that did not start, with its whole process group, now.

        The SDK would stop it gently (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL) from the holder's
        cleanup; a server that never answered the handshake is owed no grace, and the runtime may
        itself be killed within those seconds — and the server, which the SDK starts as the leader of
        a session of its own, would then outlive it, an orphan."""
        if self.config.command is None or self._stderr is None:
            return
        pid = _server_pid(self._stderr)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def _last_words(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return f" (its last stderr line: {lines[-1][:_STDERR_TAIL]})" if lines else ""

    def _explain(self, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if isinstance(exc, McpFailure):
            return str(exc)
        if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
            return f"it closed the connection{self._last_words()}"
        if isinstance(exc, FileNotFoundError):
            return f"no such program: {self.config.command}"
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _server_pid(log: TextIO) -> int | None:
    """The stdio server a connection started, as the SDK leaves no handle on it: this process's
    child that leads its own session (the SDK starts it with ``start_new_session``) and whose stderr
    is the connection's own log file ``log``. None when there is none (it exited, or no ``/proc``)."""
    try:
        mine = os.fstat(log.fileno())
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except (OSError, ValueError):
        return None
    parent = os.getpid()
    for name in entries:
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            fields = stat[stat.rindex(b")") + 2 :].split()  # state, ppid, pgrp, session, …
            if int(fields[1]) != parent or int(fields[3]) != int(name):
                continue
            err = os.stat(f"/proc/{name}/fd/2")
        except (OSError, ValueError, IndexError):
            continue
        if (err.st_dev, err.st_ino) == (mine.st_dev, mine.st_ino):
            return int(name)
    return None


async def _list_tools(client: Client) -> list[ServerTool]:
    tools: list[ServerTool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            hints = tool.annotations
            tools.append(
                ServerTool(
                    name=tool.name,
                    description=tool.description or tool.title or "",
                    input_schema=dict(tool.input_schema),
                    read_only=bool(hints is not None and hints.read_only_hint),
                )
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools

"""Where a connection goes: a connector is a zero-argument coroutine that opens a fresh
:class:`~shard.client.transports.Transport`. A reconnecting client calls it again on each attempt,
so a connector that reads ``daemon.json`` follows a daemon that restarted on a new port.

* :func:`unix` — the daemon's unix socket (local trust, PROTOCOL §4.2), by path or found in
  ``$SHARD_HOME/daemon.json``;
* :func:`websocket` — the daemon's WebSocket with a ticket (§4.1);
* :func:`stdio` — a spawned ``shard agent --stdio`` (a direct connection, no daemon).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from shard._python import module_argv
from shard.client.auth import WebSession
from shard.client.errors import ConnectError
from shard.client.transports import LineTransport, ProcessTransport, Transport
from shard.client.websocket import WebSocketTransport

Connector = Callable[[], Awaitable[Transport]]
TicketSource = Callable[[], Awaitable[str]]
_LIMIT = 1 << 20


def shard_home(home: str | os.PathLike[str] | None = None) -> Path:
    """``home``, else ``$SHARD_HOME``, else ``~/.shard``."""
    if home is not None:
        return Path(home)
    env = os.environ.get("SHARD_HOME")
    return Path(env) if env else Path.home() / ".shard"


def daemon_info(home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The running daemon's ``daemon.json`` (pid, port, socket), or ConnectError."""
    path = shard_home(home) / "daemon.json"
    try:
        info: dict[str, Any] = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConnectError(f"no running daemon found ({path}: {exc}); start one with `shard daemon`") from exc
    return info


def unix(
    path: str | os.PathLike[str] | None = None, *, home: str | os.PathLike[str] | None = None
) -> Connector:
    """The daemon's unix socket: ``path``, else the one ``daemon.json`` names (read on every attempt)."""

    async def connect() -> Transport:
        target = Path(path) if path is not None else Path(daemon_info(home)["socket"])
        try:
            reader, writer = await asyncio.open_unix_connection(str(target), limit=_LIMIT)
        except OSError as exc:
            raise ConnectError(f"cannot connect to {target}: {exc}") from exc
        return LineTransport(reader, writer)

    return connect


def websocket(
    credentials: WebSession | TicketSource,
    *,
    host: str | None = None,
    port: int | None = None,
    home: str | os.PathLike[str] | None = None,
    origin: str | None = None,
) -> Connector:
    """The daemon's WebSocket. ``credentials`` is an enrolled :class:`WebSession` (a fresh ticket from
    ``/bootstrap`` per attempt) or any ticket source. The port: ``port``; else, with ``home`` or
    ``$SHARD_HOME`` set (or no session to say), the one ``daemon.json`` names, read on every attempt
    so a restarted daemon is followed; else the session's own."""
    session_port = credentials.port if isinstance(credentials, WebSession) else None
    follow = home is not None or "SHARD_HOME" in os.environ or session_port is None

    async def connect() -> Transport:
        where_host = host or (credentials.host if isinstance(credentials, WebSession) else "127.0.0.1")
        if port is not None:
            where_port = port
        elif follow or session_port is None:
            where_port = int(daemon_info(home)["port"])
        else:
            where_port = session_port
        if isinstance(credentials, WebSession):
            session = credentials
            if (session.host, session.port) != (where_host, where_port):
                session = session.moved(where_host, where_port)
            ticket, bound = await session.ticket(), session.origin
        else:
            ticket, bound = await credentials(), f"http://{where_host}:{where_port}"
        return await WebSocketTransport.open(where_host, where_port, ticket=ticket, origin=origin or bound)

    return connect


def stdio(
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    command: Sequence[str] | None = None,
) -> Connector:
    """Spawn ``shard agent --stdio ARGS…`` (``command`` replaces ``python -m shard``); its stderr is
    inherited (logs only), its stdin/stdout carry the protocol."""

    async def connect() -> Transport:
        argv = [*(command or module_argv("shard")), "agent", "--stdio", *args]
        full_env = {**os.environ, **(env or {})}
        if home is not None:
            full_env["SHARD_HOME"] = str(home)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=full_env,
                limit=_LIMIT,
            )
        except OSError as exc:
            raise ConnectError(f"cannot start {argv[0]}: {exc}") from exc
        return ProcessTransport(proc)

    return connect

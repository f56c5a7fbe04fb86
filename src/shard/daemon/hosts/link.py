"""A runtime on another host gets its subagent tools through a socket of its own, not the daemon's.

The daemon's socket is its owner's full-trust channel; forwarding it to a machine whose root (and
whose agent's own commands) are not this user's would hand them every agent here. So each remote
runtime that may launch children gets a *link*: a unix socket the daemon listens on for that agent
alone, forwarded to the host by the runtime's own ``ssh -R`` (sshd makes the far end 0600). Over it,
only ``subagent.*`` commands pass, and only as that agent's (``parent_agent_id`` is set to it,
whatever the line said); anything else is answered INVALID_REQUEST and never reaches the broker. It
closes when the runtime's process ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from shard._home import private_dirs
from shard.daemon import wire
from shard.daemon.connection import Connection
from shard.daemon.unix import UnixConnection, serve_lines
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import Oversized, Record

if TYPE_CHECKING:
    from shard.daemon.core import Daemon

_READ = 64 * 1024  # the listener's buffer
REMOTE_FOLDER = "/tmp"  # where the host's end goes: a short absolute path every host has


class Link:
    def __init__(self, server: asyncio.Server, local: Path, remote: str) -> None:
        self.server = server
        self.local = local
        self.remote = remote

    def close(self) -> None:
        self.server.close()
        with contextlib.suppress(FileNotFoundError):
            self.local.unlink()


def scoped(record: Record, agent_id: str) -> bytes | ShardError:
    """The line as the broker gets it (``parent_agent_id`` set to ``agent_id``), or why it may not
    pass: only ``subagent.*`` commands cross a link."""
    if isinstance(record, Oversized):
        return ShardError(ErrorCode.INVALID_REQUEST, "a line over the link's cap")
    try:
        message = orjson.loads(record)
    except orjson.JSONDecodeError:
        return ShardError(ErrorCode.INVALID_REQUEST, "not JSON")
    kind = message.get("type") if isinstance(message, dict) else None
    if not isinstance(kind, str) or not kind.startswith("subagent."):
        return ShardError(ErrorCode.INVALID_REQUEST, "only subagent commands cross a host's link")
    message["parent_agent_id"] = agent_id
    return orjson.dumps(message)


async def open_link(daemon: Daemon, folder: Path, agent_id: str, max_line: int) -> Link:
    """A link for ``agent_id``: its local socket in ``folder`` (0600), and the path its host end gets."""
    private_dirs(folder)
    name = f"link-{secrets.token_hex(8)}.sock"
    local = folder / name

    def screen(conn: Connection, record: Record) -> Record | None:
        line = scoped(record, agent_id)
        if isinstance(line, ShardError):
            conn.send(wire.failure(line, id=_id_of(record), command=None))
            return None
        return line

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_lines(daemon, UnixConnection(writer), reader, max_line, screen)

    old = os.umask(0o177)
    try:
        server = await asyncio.start_unix_server(client, path=str(local), limit=_READ)
    finally:
        os.umask(old)
    return Link(server, local, f"{REMOTE_FOLDER}/shard-{name}")


def _id_of(record: Record) -> str | None:
    if isinstance(record, Oversized):
        return None
    with contextlib.suppress(orjson.JSONDecodeError):
        message = orjson.loads(record)
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            return str(message["id"])
    return None

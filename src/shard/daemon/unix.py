"""The unix-socket transport (PROTOCOL §2.1, §4.2): JSONL over ``$SHARD_HOME/daemon.sock`` (0600).

It is the owner's trusted local channel, so the web administration commands (``web.enroll``,
``web.sessions``, ``web.revoke``: ``shard web …``) are answered here, by ``admin``, and only here —
on the WebSocket they are unknown commands like any other."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from shard.daemon.connection import DEFAULT_OUTBOUND_CAP, Connection
from shard.daemon.core import Daemon
from shard.daemon.web.auth import admin_command
from shard.protocol.framing import LineBuffer, Record

Admin = Callable[[dict[str, Any]], dict[str, Any]]

_READ = 256 * 1024


class UnixConnection(Connection):
    transport = "unix"

    def __init__(self, writer: asyncio.StreamWriter, cap: int = DEFAULT_OUTBOUND_CAP) -> None:
        super().__init__(cap)
        self.writer = writer
        self.label = peer_label(writer.get_extra_info("socket"))

    def _frame(self, data: bytes) -> bytes:
        return data + b"\n"

    def _write(self, data: bytes) -> None:
        self.writer.write(data)

    def _buffered(self) -> int:
        return self.writer.transport.get_write_buffer_size()

    def _close(self, reason: str, slow: bool) -> None:
        with contextlib.suppress(Exception):
            (self.writer.transport.abort() if slow else self.writer.close())


async def serve_unix(
    daemon: Daemon, path: Path, max_line: int, cap: int = DEFAULT_OUTBOUND_CAP, admin: Admin | None = None
) -> asyncio.Server:
    if path.exists() or path.is_symlink():
        if stat.S_ISSOCK(path.lstat().st_mode) and not await _in_use(path):
            path.unlink()  # a stale socket left by a daemon that died
        elif stat.S_ISSOCK(path.lstat().st_mode):
            raise OSError(f"another shard daemon is already serving this SHARD_HOME ({path})")
        else:
            raise OSError(f"{path} exists and is not a socket")

    def screen(conn: Connection, record: Record) -> Record | None:
        command = admin_command(record) if admin is not None else None
        if command is not None and admin is not None:
            conn.send(orjson.dumps(admin(command)))
            return None
        return record

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_lines(daemon, UnixConnection(writer, cap), reader, max_line, screen)

    old = os.umask(0o177)  # the socket is created 0600: only its owner may connect (§4.2)
    try:
        server = await asyncio.start_unix_server(client, path=str(path), limit=_READ)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return server


# What a line is before the broker sees it: the line (maybe rewritten), or None once answered here.
Screen = Callable[[Connection, Record], Record | None]


async def serve_lines(
    daemon: Daemon, conn: Connection, reader: asyncio.StreamReader, max_line: int, screen: Screen
) -> None:
    """One connection's lines, through ``screen``, to the daemon until it closes."""
    daemon.connected(conn)
    framer = LineBuffer(max_line)
    try:
        while not conn.closed:
            chunk = await reader.read(_READ)
            for record in framer.feed(chunk) if chunk else framer.close():
                if isinstance(record, bytes) and not record.strip():
                    continue
                line = screen(conn, record)
                if line is not None:
                    await daemon.handle(conn, line)
            if not chunk:
                break
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        daemon.disconnected(conn)
        conn.close("connection closed")


def peer_label(sock: Any) -> str:
    """The connecting process as a person knows it, ``"python3 (pid 4242)"``, from the socket's
    peer credentials; empty where the system does not tell (only Linux has ``SO_PEERCRED``). A
    client that names itself (``client.identify``) replaces it."""
    try:
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
    except (AttributeError, OSError, struct.error):
        return ""
    try:
        name = Path(f"/proc/{pid}/comm").read_text(errors="replace").strip()
    except OSError:
        name = ""
    return f"{name or 'process'} (pid {pid})"


async def _in_use(path: Path) -> bool:
    try:
        _, writer = await asyncio.open_unix_connection(str(path))
    except OSError:
        return False
    writer.close()
    return True

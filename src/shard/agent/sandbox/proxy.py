"""The sandbox's way out to allowed hosts (``[sandbox] network = ["host", "*.example.org"]``).

A sandbox with an allow-list still has no network of its own (only loopback): commands inside reach
``127.0.0.1:3128``, where :mod:`shard.agent.sandbox.bridge` (started inside, before the command)
passes each connection over a unix socket bound into the sandbox to this proxy, in the runtime. The
proxy reads the first request line — ``CONNECT host:port`` (HTTPS and any TCP) or an absolute-form
``GET http://host/…`` (plain HTTP) — and connects only when the host is allowed; otherwise it
answers ``403`` with a one-line reason, and the host is remembered so that the bash tool can tell
the model which connection was blocked. Names are checked, not addresses: ``*.example.org`` allows
``example.org``'s subdomains, an exact name only itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from shard._leaving import on_leaving
from shard._sockets import socket_temp_dir

PORT = 3128  # where commands inside find the proxy (HTTP_PROXY / HTTPS_PROXY)
_MAX_HEAD = 16 * 1024


def allowed(host: str, patterns: Sequence[str]) -> bool:
    host = host.lower().rstrip(".")
    for pattern in patterns:
        p = pattern.lower().rstrip(".")
        if p.startswith("*."):
            if host.endswith(p[1:]) or host == p[2:]:
                return True
        elif host == p:
            return True
    return False


def target_of(head: bytes) -> tuple[str, str, int] | None:
    """(method, host, port) of a proxy request's first line, or None when it is not one."""
    try:
        method, target, _ = head.split(b"\r\n", 1)[0].decode("ascii").split(" ", 2)
    except ValueError:
        return None
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        host = host.strip("[]")
        return (method, host, int(port)) if host and port.isdigit() else None
    if target.startswith("http://"):
        authority = target[len("http://") :].split("/", 1)[0]
        host, sep, port = authority.rpartition(":")
        if not sep or not port.isdigit():
            host, port = authority, "80"
        return (method, host.strip("[]"), int(port)) if host else None
    return None


def origin_form(head: bytes) -> bytes:
    """An absolute-form request (``GET http://host/path HTTP/1.1``) as the origin server wants it
    (``GET /path HTTP/1.1``); the headers as they were."""
    line, sep, rest = head.partition(b"\r\n")
    method, target, version = line.split(b" ", 2)
    path = target[len(b"http://") :].partition(b"/")
    return b"%s /%s %s%s%s" % (method, path[2], version, sep, rest)


class HostProxy:
    """One per runtime and allow-list, started on first use; its socket is private to the runtime."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self.denied: list[str] = []  # hosts refused, oldest first (the bash tool reads and clears)
        self._dir = Path(tempfile.mkdtemp(prefix="shard-proxy-", dir=socket_temp_dir(_SOCKET_TAIL)))  # 0700
        self.socket_path = self._dir / "proxy.sock"
        self._server: asyncio.AbstractServer | None = None
        on_leaving(self._remove)

    def _remove(self) -> None:
        with contextlib.suppress(OSError):
            self.socket_path.unlink()
        with contextlib.suppress(OSError):
            self._dir.rmdir()

    async def ensure_started(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket_path))
            os.chmod(self.socket_path, 0o600)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        found = target_of(head[:_MAX_HEAD])
        if found is None:
            await _refuse(
                writer, 400, "Shard's sandbox proxy takes CONNECT or absolute http:// requests only"
            )
            return
        method, host, port = found
        if not allowed(host, self.patterns):
            self.denied.append(host)
            await _refuse(writer, 403, f"Shard's sandbox allows no connection to {host}")
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), 15)
        except (OSError, TimeoutError) as exc:
            await _refuse(writer, 502, f"cannot reach {host}:{port}: {exc}")
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(origin_form(head))
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        self._remove()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def _refuse(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = (reason + "\n").encode()
    phrase = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    writer.write(
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()


_SOCKET_TAIL = len("/shard-proxy-XXXXXXXX/proxy.sock")


_proxies: dict[tuple[str, ...], HostProxy] = {}


async def proxy_for(patterns: Sequence[str]) -> HostProxy:
    """This runtime's proxy for ``patterns``, started."""
    key = tuple(patterns)
    proxy = _proxies.get(key)
    if proxy is None:
        proxy = _proxies[key] = HostProxy(key)
    await proxy.ensure_started()
    return proxy

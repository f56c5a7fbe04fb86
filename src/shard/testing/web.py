"""The browser's side of web authentication, for tests and tools (PROTOCOL §4.1): enroll over the
daemon's unix socket + ``POST /enroll``, then ``POST /bootstrap`` for a ticket, then offer it on the
upgrade. Raw HTTP over asyncio streams, so tests see every header, and the same flow a browser runs.

    browser = await Browser.enroll(port, socket_path)  # a fresh principal + session (cookie + proof)
    ticket = await browser.ticket()                      # single use, 30 s
    protocols = ws_protocols(ticket)                     # for ws_connect(protocols=...)

A real browser keeps the origin proof in ``localStorage``; :class:`Browser` keeps it in ``proof``
and sends it at ``/bootstrap`` in the ``Shard-Browser-Proof`` header, as the web client does.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

_TIMEOUT = 10.0
PROOF_HEADER = "Shard-Browser-Proof"


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self) -> Any:
        return orjson.loads(self.body)


async def http(
    port: int,
    method: str,
    path: str,
    headers: list[str] | None = None,
    body: bytes = b"",
    *,
    host: str = "127.0.0.1",
) -> Reply:
    """One request (header lines exactly as given; a default Host unless one is given), one reply."""
    lines = list(headers or [])
    if not any(line.lower().startswith("host:") for line in lines):
        lines.insert(0, f"Host: 127.0.0.1:{port}")
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{line}\r\n" for line in lines) + "\r\n"
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(head.encode("latin-1") + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), _TIMEOUT)
    finally:
        writer.close()
    top, _, rest = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = top.decode("latin-1").split("\r\n")
    pairs = [tuple(x.strip() for x in line.split(":", 1)) for line in header_lines if ":" in line]
    return Reply(int(status_line.split(" ", 2)[1]), [(k, v) for k, v in pairs], rest)


async def enrollment_code(socket_path: Path) -> str:
    """A fresh enrollment code, minted by ``web.enroll`` on the unix socket (as ``shard web enroll``)."""
    data = await admin(socket_path, {"type": "web.enroll"})
    return code_of(data["link"])


def code_of(link: str) -> str:
    match = re.search(r"#code=([A-Za-z0-9_-]+)$", link)
    assert match is not None, link
    return match.group(1)


async def admin(socket_path: Path, command: dict[str, Any]) -> dict[str, Any]:
    """Send one ``web.*`` command over the unix socket; the data of its successful response.
    Read raw (not through a MessageReader): these answers are daemon-local, not protocol events."""
    reply = await admin_reply(socket_path, command)
    assert reply.get("success"), reply
    data: dict[str, Any] = reply["data"]
    return data


async def admin_reply(socket_path: Path, command: dict[str, Any]) -> dict[str, Any]:
    reader, writer = await asyncio.open_unix_connection(str(socket_path))
    try:
        await asyncio.wait_for(reader.readline(), _TIMEOUT)  # hello
        writer.write(orjson.dumps({**command, "id": "web-test"}) + b"\n")
        await writer.drain()
        while True:
            line = await asyncio.wait_for(reader.readline(), _TIMEOUT)
            assert line, "the daemon closed the unix socket"
            message: dict[str, Any] = orjson.loads(line)
            if message.get("type") == "response" and message.get("id") == "web-test":
                return message
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


def ws_protocols(ticket: str) -> tuple[str, str]:
    """What a browser offers in Sec-WebSocket-Protocol: the protocol, and the ticket beside it."""
    return ("shard.v1", f"ticket.{ticket}")


@dataclass
class Browser:
    """One enrolled browser: its session cookie (name=value), its origin proof and its origin."""

    port: int
    cookie: str
    origin: str
    session_id: str = ""
    set_cookie: str = ""
    extra: list[str] = field(default_factory=list)  # header lines sent with every request
    proof: str = ""  # what the enrollment page would keep in localStorage

    @classmethod
    def enrolled(cls, port: int, reply: Reply, origin: str, *, extra: list[str] | None = None) -> Browser:
        """The browser a successful ``POST /enroll`` answer (``reply``) made."""
        assert reply.status == 200, (reply.status, reply.body)
        (set_cookie,) = reply.header("Set-Cookie")
        body = reply.json()
        return cls(
            port,
            set_cookie.split(";", 1)[0],
            origin,
            body["session"],
            set_cookie,
            list(extra or []),
            body["proof"],
        )

    @classmethod
    async def enroll(
        cls, port: int, socket_path: Path, *, origin: str | None = None, extra: list[str] | None = None
    ) -> Browser:
        """A newly enrolled browser (a new principal and session), through the real flow."""
        origin = origin or f"http://127.0.0.1:{port}"
        code = await enrollment_code(socket_path)
        reply = await post_enroll(port, code, origin, extra=extra)
        return cls.enrolled(port, reply, origin, extra=extra)

    async def bootstrap(
        self,
        *,
        origin: str | None = "default",
        cookie: str | None = "default",
        proof: str | None = "default",
    ) -> Reply:
        """``POST /bootstrap`` as this browser; each of ``origin``, ``cookie`` and ``proof`` may be
        replaced, or left out with None (an empty proof is left out too)."""
        headers = list(self.extra)
        if origin is not None:
            headers.append(f"Origin: {self.origin if origin == 'default' else origin}")
        if cookie is not None:
            headers.append(f"Cookie: {self.cookie if cookie == 'default' else cookie}")
        value = self.proof if proof == "default" else proof
        if value:
            headers.append(f"{PROOF_HEADER}: {value}")
        return await http(self.port, "POST", "/bootstrap", headers)

    async def ticket(self) -> str:
        reply = await self.bootstrap()
        assert reply.status == 200, (reply.status, reply.body)
        ticket: str = reply.json()["ticket"]
        return ticket


async def post_enroll(port: int, code: str, origin: str | None, *, extra: list[str] | None = None) -> Reply:
    headers = [*(extra or []), "Content-Type: application/x-www-form-urlencoded"]
    if origin is not None:
        headers.append(f"Origin: {origin}")
    return await http(port, "POST", "/enroll", headers, f"code={code}".encode())

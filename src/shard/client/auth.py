"""WebSocket credentials for scripts (PROTOCOL §4.1): an enrolled browser session (its cookie and
its origin proof) buys short-lived, single-use tickets at ``POST /bootstrap``.

A script gets a session once, the way a browser does::

    $ shard web enroll            # prints http://127.0.0.1:PORT/enroll#code=…  (single use, 10 min)

    session = await WebSession.enroll(link)       # POST /enroll with the code → cookie + proof
    session.save(path)                            # owner-only file; WebSession.load(path) later

and then every (re)connect takes a fresh ticket with ``await session.ticket()``. Any zero-argument
coroutine that returns a ticket string is a ticket source too. The cookie and the proof are
credentials: they are never logged or shown in ``repr``, and :meth:`WebSession.save` writes them
0600. A browser keeps the proof in its origin's ``localStorage``, out of reach of pages on other
ports that receive the cookie; a script keeps both in its session file. A session saved by an older
SDK has no proof: the daemon refuses it (401), and the script enrolls again.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from shard.client.errors import AuthError, ConnectError

_TIMEOUT = 10.0
PROOF_HEADER = "Shard-Browser-Proof"  # the daemon's web/auth.py reads the same header


async def http_post(
    host: str, port: int, path: str, headers: list[str], body: bytes = b""
) -> tuple[int, list[str], bytes]:
    """One HTTP/1.1 POST: its status, header lines and body (the daemon closes after each answer)."""
    lines = [f"Host: {host}:{port}", *headers, f"Content-Length: {len(body)}", "Connection: close"]
    head = f"POST {path} HTTP/1.1\r\n" + "".join(f"{line}\r\n" for line in lines) + "\r\n"
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError as exc:
        raise ConnectError(f"cannot reach {host}:{port}: {exc}") from exc
    try:
        writer.write(head.encode("latin-1") + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), _TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ConnectError(f"POST {path} failed: {exc!r}") from exc
    finally:
        writer.close()
    top, _, rest = raw.partition(b"\r\n\r\n")
    status_line = top.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ConnectError(f"POST {path}: not an HTTP answer: {status_line!r}")
    return int(parts[1]), top.decode("latin-1").split("\r\n")[1:], rest


@dataclass(frozen=True)
class WebSession:
    """An enrolled browser session: where the daemon is, the ``name=value`` cookie, the origin, and
    the origin proof the enrollment answered with (``""``: none, so no ticket)."""

    host: str
    port: int
    cookie: str
    origin: str
    proof: str = ""

    @classmethod
    async def enroll(cls, link: str, *, origin: str | None = None) -> WebSession:
        """Redeem an enrollment link (``shard web enroll``) for a new session."""
        parts = urlsplit(link)
        match = re.search(r"code=([A-Za-z0-9_-]+)", parts.fragment or parts.query)
        if not parts.hostname or not parts.port or match is None:
            raise ValueError("an enrollment link looks like http://127.0.0.1:PORT/enroll#code=…")
        origin = origin or f"{parts.scheme}://{parts.hostname}:{parts.port}"
        status, headers, body = await http_post(
            parts.hostname,
            parts.port,
            "/enroll",
            ["Content-Type: application/x-www-form-urlencoded", f"Origin: {origin}"],
            f"code={match.group(1)}".encode(),
        )
        if status != 200:
            raise AuthError(status, body.decode("utf-8", "replace").strip())
        cookies = [h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("set-cookie:")]
        if not cookies:
            raise AuthError(status, "the enrollment answer set no session cookie")
        try:
            proof = orjson.loads(body).get("proof")
        except (orjson.JSONDecodeError, AttributeError):
            proof = None
        if not isinstance(proof, str) or not proof:
            raise AuthError(status, "the enrollment answer holds no origin proof (is the daemon older?)")
        return cls(parts.hostname, parts.port, cookies[0].split(";", 1)[0], origin, proof)

    async def ticket(self) -> str:
        """A fresh single-use WebSocket ticket (valid 30 s) from ``POST /bootstrap``."""
        headers = [f"Origin: {self.origin}", f"Cookie: {self.cookie}"]
        if self.proof:
            headers.append(f"{PROOF_HEADER}: {self.proof}")
        status, _, body = await http_post(self.host, self.port, "/bootstrap", headers)
        if status != 200:
            raise AuthError(status, body.decode("utf-8", "replace").strip())
        ticket = orjson.loads(body).get("ticket")
        if not isinstance(ticket, str):
            raise AuthError(status, "the /bootstrap answer holds no ticket")
        return ticket

    def moved(self, host: str, port: int) -> WebSession:
        """The same session for a daemon now listening elsewhere (a restart on a new port)."""
        return WebSession(host, port, self.cookie, f"http://{host}:{port}", self.proof)

    def save(self, path: Path) -> None:
        """Write the session to ``path``, readable by its owner only."""
        data = orjson.dumps(
            {
                "host": self.host,
                "port": self.port,
                "cookie": self.cookie,
                "origin": self.origin,
                "proof": self.proof,
            }
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # a file that was already there keeps its mode otherwise
            os.write(fd, data)
        finally:
            os.close(fd)

    @classmethod
    def load(cls, path: Path) -> WebSession:
        obj = orjson.loads(path.read_bytes())
        return cls(obj["host"], int(obj["port"]), obj["cookie"], obj["origin"], obj.get("proof", ""))

    def __repr__(self) -> str:  # the cookie and the proof are credentials: never printed
        return f"WebSession(host={self.host!r}, port={self.port}, origin={self.origin!r})"

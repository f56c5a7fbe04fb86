"""Origin is matched byte for byte on every route that checks it (issue 25 item 9: a second test,
independent of ``tests/daemon/web/test_http_auth.py``'s and ``test_policy.py``'s).

Against a real daemon, each spelling that is *like* an allowed origin — a real suffix
(``https://evil-shard.example.net`` against ``https://shard.example.net``), a longer host that
starts with the allowed one (``http://127.0.0.1:<port>.evil.com``), another scheme, case, port,
a trailing dot or slash, userinfo — is 400 on ``POST /enroll``, ``POST /bootstrap`` and the
WebSocket upgrade, in remote (trusted proxy) mode and in loopback mode. Each refusal comes before
the credential is looked at: the same code, cookie and ticket then work from the allowed origin.

Covers: R4.1.0.14, R4.1.0.15, R4.1.2.27
"""

from __future__ import annotations

import asyncio
import base64
import os

import pytest

from shard.testing import DaemonProcess
from shard.testing.web import Browser, enrollment_code, http, post_enroll

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime

PUBLIC = "shard.example.net:443"
ALLOWED = "https://shard.example.net"
PROXY = ("--trust-proxy", "loopback", "--public-host", PUBLIC, "--allowed-origin", ALLOWED)
VIA_PROXY = [f"Host: {PUBLIC}", "X-Forwarded-Proto: https", f"X-Forwarded-Host: {PUBLIC}"]

REMOTE_LOOKALIKES = [
    "https://evil-shard.example.net",  # a real suffix of the allowed host
    "https://xshard.example.net",
    "https://sub.shard.example.net",
    "https://shard.example.net.evil.com",  # the allowed origin as a prefix
    "https://shard.example.net.",
    "https://shard.example.net:443",  # the same origin, spelled as no browser sends it
    "https://shard.example.net:4433",
    "https://shard.example.net/",
    "https://shard.example.net/app",
    "http://shard.example.net",  # the scheme downgraded
    "wss://shard.example.net",
    "HTTPS://SHARD.EXAMPLE.NET",
    "https://Shard.example.net",
    "https://user@shard.example.net",
    "https://shard.example.ne",
    "https://example.net",
    " https://shard.example.net x",
    "https://shard.example.net, https://evil.example",
    "null",
    "*",
]


def loopback_lookalikes(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}.evil.com",
        f"http://127.0.0.1:{port}0",
        f"http://127.0.0.1:{str(port)[:-1]}",
        f"http://127.0.0.1:{port}/",
        f"http://127.0.0.1:{port}@evil.com",
        f"http://evil.com#127.0.0.1:{port}",
        f"https://127.0.0.1:{port}",
        f"http://localhost:{port}",
        f"HTTP://127.0.0.1:{port}",
        f"http://127.0.0.1.evil.com:{port}",
        "http://127.0.0.1",
        "null",
    ]


async def upgrade_status(port: int, lines: list[str]) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    head = (
        "GET /ws HTTP/1.1\r\n"
        + "".join(f"{line}\r\n" for line in lines)
        + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        + f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    writer.write(head.encode())
    await writer.drain()
    try:
        first = await asyncio.wait_for(reader.readuntil(b"\r\n"), 10)
        return int(first.split(b" ", 2)[1])
    finally:
        writer.close()


async def each_route_refuses(
    daemon: DaemonProcess, good: str, lookalikes: list[str], extra: list[str]
) -> None:
    """Every lookalike is 400 on /enroll, /bootstrap and the upgrade, with a live code, a valid
    cookie and proof, and a live ticket; then the allowed origin uses that same code and ticket."""
    host = extra or [f"Host: 127.0.0.1:{daemon.port}"]
    browser = await Browser.enroll(daemon.port, daemon.socket, origin=good, extra=extra)
    code = await enrollment_code(daemon.socket)
    ticket = (await browser.bootstrap()).json()["ticket"]
    protocols = f"Sec-WebSocket-Protocol: shard.v1, ticket.{ticket}"
    for origin in lookalikes:
        enroll = await post_enroll(daemon.port, code, origin, extra=extra)
        assert (enroll.status, enroll.header("Set-Cookie")) == (400, []), origin
        boot = await browser.bootstrap(origin=origin)
        assert boot.status == 400, origin
        assert b"ticket" not in boot.body, origin
        assert await upgrade_status(daemon.port, [*host, f"Origin: {origin}", protocols]) == 400, origin
    # a second Origin header beside the right one is refused too
    twice = [*host, f"Origin: {good}", f"Origin: {lookalikes[0]}", f"Cookie: {browser.cookie}"]
    assert (await http(daemon.port, "POST", "/bootstrap", twice)).status == 400
    # nothing was consumed by the refusals
    assert (await post_enroll(daemon.port, code, good, extra=extra)).status == 200
    assert await upgrade_status(daemon.port, [*host, f"Origin: {good}", protocols]) == 101


async def test_remote_lookalike_origins_are_400_on_every_route(start_daemon):
    """Behind a TLS proxy allowing only https://shard.example.net: each lookalike, including the
    real suffix https://evil-shard.example.net, is 400 on enroll, bootstrap and the upgrade.

    Covers: R4.1.0.14, R4.1.0.15, R4.1.2.27
    """
    daemon = await start_daemon(*PROXY)
    await each_route_refuses(daemon, ALLOWED, REMOTE_LOOKALIKES, VIA_PROXY)


async def test_loopback_lookalike_origins_are_400_on_every_route(start_daemon):
    """On loopback, http://127.0.0.1:<port>.evil.com and its kin are 400 on every route.

    Covers: R4.1.0.15, R4.1.1.3, R4.1.2.27
    """
    daemon = await start_daemon()
    good = f"http://127.0.0.1:{daemon.port}"
    await each_route_refuses(daemon, good, loopback_lookalikes(daemon.port), [])

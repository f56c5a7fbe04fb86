"""A session cookie captured on another port of 127.0.0.1 buys nothing (issue 25 item 3).

Cookies are not isolated by port (RFC 6265 §8.5) and ``SameSite`` does not help: every port of
127.0.0.1 is the same site. So any page served on ``127.0.0.1:<other port>`` — another local user's
server — receives the daemon's session cookie from the owner's browser. Here a real Chromium is
enrolled through the real daemon, then visits such a server run by the test, which records the
``Cookie`` header it was sent: everything the browser gives another port. A plain client replays
that header at ``/bootstrap`` with a forged ``Origin`` of the daemon's own: 401, no ticket, because
the daemon also wants the proof the enrollment page stored in the origin's own ``localStorage``,
which a page on another port cannot read. The owner's browser, meanwhile, reloads into a working
WebSocket, and does so again after the daemon restarts, without enrolling again.

Covers: R4.1.0.6, R4.1.0.7, R4.1.1.5
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import expect

from shard.testing.chromium import MISSING, chromium_path, launched
from shard.testing.web import http

pytestmark = [pytest.mark.slow, pytest.mark.no_local_runtimes]
TIMEOUT_MS = 20_000


@asynccontextmanager
async def other_port_server(received: list[str]) -> AsyncIterator[int]:
    """Another local user's web server on 127.0.0.1: it serves a page and keeps every Cookie header
    the browser sends it. Its port."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "cookie":
                received.append(value.strip())
        page = b"<!doctype html><title>elsewhere</title><p id=here>another port</p>"
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
            + f"Content-Length: {len(page)}\r\n\r\n".encode()
            + page
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def connected(page) -> None:
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await expect(page.locator("#connection")).to_contain_text("protocol 0.1.0")


async def test_a_cookie_captured_on_another_port_gets_no_ticket(start_daemon):
    """Enroll Chromium, let it visit another port of 127.0.0.1, replay every cookie that port got
    with a forged Origin: 401 and no ticket. The enrolled browser still connects after a reload
    and after a daemon restart on the same port, with no new enrollment."""
    if chromium_path() is None:
        pytest.fail(MISSING, pytrace=False)
    daemon = await start_daemon()
    port = daemon.port
    origin = f"http://127.0.0.1:{port}"
    assert daemon.enrollment_link is not None
    received: list[str] = []
    async with launched() as chromium, other_port_server(received) as other:
        context = await chromium.new_context()
        context.set_default_timeout(TIMEOUT_MS)
        app = await context.new_page()
        await app.goto(daemon.enrollment_link)
        await connected(app)

        elsewhere = await context.new_page()
        await elsewhere.goto(f"http://127.0.0.1:{other}/")
        await expect(elsewhere.locator("#here")).to_have_text("another port")
        # the page on the other port has the same site but its own, empty storage
        assert await elsewhere.evaluate("() => localStorage.length") == 0
        assert received, "the browser sent no cookie to the other port"
        captured = received[-1]
        assert "shard_session=" in captured  # what RFC 6265 §8.5 lets through

        replay = await http(port, "POST", "/bootstrap", [f"Origin: {origin}", f"Cookie: {captured}"])
        assert replay.status == 401, replay.body
        assert b"ticket" not in replay.body.replace(b"no ticket", b"")
        assert "enroll" in replay.body.decode()
        # the cookie jar's own copy of every 127.0.0.1 cookie, replayed the same way
        jar = "; ".join(f"{c['name']}={c['value']}" for c in await context.cookies(origin))
        assert (await http(port, "POST", "/bootstrap", [f"Origin: {origin}", f"Cookie: {jar}"])).status == 401

        await app.reload()
        await connected(app)

        await daemon.stop()
        restarted = await start_daemon("--port", str(port))
        assert restarted.port == port
        assert restarted.enrollment_link is None  # a browser is enrolled: no link printed
        await app.reload()
        await connected(app)
        replay = await http(port, "POST", "/bootstrap", [f"Origin: {origin}", f"Cookie: {captured}"])
        assert replay.status == 401, replay.body
        await context.close()

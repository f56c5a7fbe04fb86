"""The daemon's HTTP front (``shard.daemon.http``) and the WebSocket upgrade check, in-process: the
log rate limit, the request-head timeout and size cap, routing, each upgrade refusal, and a close on
a socket whose client already left."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import errno
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from shard.daemon.http import HttpError, HttpFront, LogLimiter, Request, Route
from shard.daemon.web.config import LOOPBACK
from shard.daemon.web.gate import Refusal, check_origin
from shard.daemon.websocket import WsConnection, accept_key, accepted, check_upgrade

ORIGIN = b"http://127.0.0.1:7433"
KEY = base64.b64encode(b"0123456789abcdef")


# --- the log limit ---------------------------------------------------------------------------------


def test_log_limiter_writes_a_burst_then_counts_then_says_how_many():
    now = [0.0]
    lines: list[str] = []
    log = LogLimiter(burst=3, window=60.0, write=lines.append, clock=lambda: now[0])
    for i in range(50):
        log(f"bad {i}")
    assert lines == ["shard daemon: bad 0\n", "shard daemon: bad 1\n", "shard daemon: bad 2\n"]
    now[0] = 59.9
    log("still the same minute")
    assert len(lines) == 3
    now[0] = 60.0
    log("a new minute")
    assert lines[3:] == [
        "shard daemon: 48 more malformed HTTP requests not logged\n",
        "shard daemon: a new minute\n",
    ]


async def test_log_limiter_reports_the_count_when_the_flood_stops():
    """Without a later line to trigger it, the count is written when the window ends."""
    lines: list[str] = []
    counted = asyncio.Event()

    def write(line: str) -> None:
        lines.append(line)
        if "not logged" in line:
            counted.set()

    log = LogLimiter(burst=1, window=0.05, write=write)
    for i in range(5):
        log(f"bad {i}")
    await asyncio.wait_for(counted.wait(), 10)
    assert lines == ["shard daemon: bad 0\n", "shard daemon: 4 more malformed HTTP requests not logged\n"]


# --- the front, on a real loopback socket ------------------------------------------------------------


@pytest.fixture
async def front() -> AsyncIterator[Any]:
    lines: list[str] = []

    async def hello(request: Request, reader: Any, writer: asyncio.StreamWriter, rest: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    app = HttpFront({b"/hello": Route(hello)}, head_timeout=0.3, max_head=1024, log=lines.append)
    server = await asyncio.start_server(app, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    app.port = port
    yield SimpleNamespace(port=port, lines=lines, host=f"Host: 127.0.0.1:{port}")
    server.close()
    await app.aclose(1.0)


async def exchange(port: int, *chunks: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for chunk in chunks:
            writer.write(chunk)
            await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


async def test_a_request_head_that_never_ends_gets_408_and_one_line(front):
    """Slowloris: a head still incomplete when the head timeout passes is answered 408 and the
    connection closed, with one log line."""
    reply = await exchange(front.port, b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    assert reply.startswith(b"HTTP/1.1 408 "), reply
    assert len(front.lines) == 1
    assert "no complete request head" in front.lines[0]


async def test_a_connection_that_never_speaks_is_closed_without_a_log_line(front):
    assert await exchange(front.port) == b""
    assert front.lines == []


async def test_a_request_head_over_the_cap_gets_431_however_it_arrives(front):
    """The head cap holds whether the head comes in one piece (h11 alone bounds only an
    incomplete head) or a few bytes at a time."""
    head = f"GET /hello HTTP/1.1\r\n{front.host}\r\nX-Pad: {'a' * 2000}\r\n\r\n".encode()
    whole = await exchange(front.port, head)
    pieces = await exchange(front.port, *[head[i : i + 100] for i in range(0, len(head), 100)])
    assert whole.startswith(b"HTTP/1.1 431 "), whole
    assert pieces.startswith(b"HTTP/1.1 431 "), pieces


async def test_routing_and_the_host_gate(front):
    """A route answers; an unknown path is 404, a wrong method 405 with Allow; a wrong or missing
    Host is 400 before any route runs; none of these policy refusals is logged."""
    ok = await exchange(front.port, f"GET /hello?x=1 HTTP/1.1\r\n{front.host}\r\n\r\n".encode())
    assert ok.startswith(b"HTTP/1.1 200 "), ok
    assert ok.endswith(b"ok"), ok
    missing = await exchange(front.port, f"GET /nothing HTTP/1.1\r\n{front.host}\r\n\r\n".encode())
    assert missing.startswith(b"HTTP/1.1 404 "), missing
    post = f"POST /hello HTTP/1.1\r\n{front.host}\r\nContent-Length: 0\r\n\r\n".encode()
    wrong_method = await exchange(front.port, post)
    assert wrong_method.startswith(b"HTTP/1.1 405 "), wrong_method
    assert b"\r\nAllow: GET\r\n" in wrong_method
    wrong_host = await exchange(front.port, b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert wrong_host.startswith(b"HTTP/1.1 400 "), wrong_host
    assert front.lines == []


# --- the upgrade check ----------------------------------------------------------------------------


def upgrade(*drop: bytes, version: bytes = b"1.1", **replace: bytes) -> Request:
    headers = {
        b"host": b"127.0.0.1:7433",
        b"origin": ORIGIN,
        b"upgrade": b"websocket",
        b"connection": b"keep-alive, Upgrade",
        b"sec-websocket-key": KEY,
        b"sec-websocket-version": b"13",
    }
    headers.update({name.replace("_", "-").encode(): value for name, value in replace.items()})
    items = tuple((name, value) for name, value in headers.items() if name not in drop)
    return Request(b"GET", b"/ws", b"/ws", version, items, "127.0.0.1")


def handshake(request: Request) -> bytes:
    """The endpoint's checks before the ticket: a well-formed upgrade, then the loopback Origin."""
    key = check_upgrade(request)
    try:
        check_origin(LOOPBACK, 7433, request.get_all)
    except Refusal as exc:
        raise HttpError(exc.status, exc.message) from None
    return accepted(key)


def refusal(request: Request) -> HttpError:
    with pytest.raises(HttpError) as refused:
        handshake(request)
    return refused.value


def test_a_valid_upgrade_gets_101_with_the_accept_key():
    """RFC 6455 §4.2.2: the accept value is base64(SHA-1(key + GUID)); the RFC's own example."""
    assert accept_key(b"dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    reply = handshake(upgrade(upgrade=b"WebSocket"))
    assert reply.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    assert f"Sec-WebSocket-Accept: {accept_key(KEY)}\r\n".encode() in reply
    assert reply.endswith(b"\r\n\r\n")


def test_upgrade_refusals():
    """Each broken part of an upgrade is refused with its status: no or a foreign Origin 400,
    HTTP/1.0 400, a body 400, no websocket Upgrade or no upgrade Connection 426, another version
    426 naming 13, a key that is not 16 base64 bytes (or two keys) 400.

    Covers: R4.1.0.14
    """
    cases = {
        "no origin": (upgrade(b"origin"), 400),
        "two origins": (upgrade(origin=ORIGIN + b", " + ORIGIN), 400),
        "http/1.0": (upgrade(version=b"1.0"), 400),
        "body": (upgrade(content_length=b"5"), 400),
        "chunked": (upgrade(transfer_encoding=b"chunked"), 400),
        "no upgrade": (upgrade(b"upgrade"), 426),
        "upgrade h2c": (upgrade(upgrade=b"h2c"), 426),
        "no connection": (upgrade(b"connection"), 426),
        "connection close": (upgrade(connection=b"close"), 426),
        "version 8": (upgrade(sec_websocket_version=b"8"), 426),
        "no version": (upgrade(b"sec-websocket-version"), 426),
        "no key": (upgrade(b"sec-websocket-key"), 400),
        "short key": (upgrade(sec_websocket_key=base64.b64encode(b"short")), 400),
        "not base64": (upgrade(sec_websocket_key=b"!!!!notbase64!!!!!!!!!=="), 400),
        "binary key": (upgrade(sec_websocket_key=b"\xff\xfe" * 12), 400),
    }
    statuses = {label: refusal(request).status for label, (request, _) in cases.items()}
    assert statuses == {label: status for label, (_, status) in cases.items()}
    version = refusal(upgrade(sec_websocket_version=b"8"))
    assert ("Sec-WebSocket-Version", "13") in version.headers
    plain = upgrade()
    second_key = (b"sec-websocket-key", base64.b64encode(os.urandom(16)))
    assert refusal(dataclasses.replace(plain, headers=(*plain.headers, second_key))).status == 400


# --- closing ----------------------------------------------------------------------------------------


class _GoneTransport:
    """A transport whose peer already left: half-closing it fails as the kernel does (ENOTCONN)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.aborted = False

    def is_closing(self) -> bool:
        return self.aborted

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def get_write_buffer_size(self) -> int:
        return 0

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN))

    def abort(self) -> None:
        self.aborted = True


async def test_closing_a_websocket_whose_client_left_does_not_raise():
    """The daemon's shutdown closes every connection; one whose client has just gone must not
    raise (it would stop the shutdown half-way) but be cut off."""
    transport = _GoneTransport()
    conn = WsConnection(SimpleNamespace(transport=transport), ping_interval=0)  # type: ignore[arg-type]
    conn.close("the daemon is shutting down")
    assert conn.closed
    assert transport.aborted
    assert transport.written[0][0] == 0x88  # the close frame was still offered


# --- what the daemon loads ------------------------------------------------------------------------


def test_the_daemon_loads_the_http_parser_at_its_first_http_request_not_at_start():
    """h11 costs a fresh daemon ~15 ms before it listens (issue 31); a daemon that only unix clients
    use never loads it. The first request does (the tests above parse requests with it)."""
    code = "import sys, shard.cli.daemon, shard.daemon.server; print('h11' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr

"""Browser authentication against a real ``shard daemon`` over raw HTTP (PROTOCOL §4.1): the happy
path of each of the three configurations of §4.1.2, and one test per rejection, each getting exactly
the status the protocol names (400 for Host/Origin/forwarded-host problems, 401 for tickets and
cookies)."""

from __future__ import annotations

import asyncio
import base64
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio

from shard.daemon.web.tickets import digest
from shard.testing import DaemonProcess
from shard.testing.web import Browser, admin, admin_reply, code_of, enrollment_code, http, post_enroll

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime

WAIT = 10.0
PUBLIC = "shard.example:443"
HTTPS_ORIGIN = "https://shard.example"
PROXY_FLAGS = ("--trust-proxy", "loopback", "--public-host", PUBLIC, "--allowed-origin", HTTPS_ORIGIN)
VIA_PROXY = [f"Host: {PUBLIC}", "X-Forwarded-Proto: https", f"X-Forwarded-Host: {PUBLIC}"]
DIRECT_HOST = "192.0.2.10:7433"
DIRECT_ORIGIN = "http://192.0.2.10:7433"
OTHER_ORIGIN = "http://shard.lan:7433"
DIRECT_FLAGS = (
    "--web-host", "0.0.0.0", "--public-host", DIRECT_HOST, "--allowed-origin", DIRECT_ORIGIN,
    "--allowed-origin", OTHER_ORIGIN, "--allow-insecure-remote",
)  # fmt: skip


# The tests marked SHARED send requests to one loopback daemon of the module (``daemon``), each
# taking its own tickets and codes: none of them needs a store nobody has touched, none leaves behind
# what another looks at (a revoked session, the enrollment rate limit, a listing of sessions — the
# tests that do get a daemon of their own from ``start_daemon``).
SHARED = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    started = await DaemonProcess.start(tmp_path_factory.mktemp("loopback") / "home")
    yield started
    await started.kill()


def origin_of(daemon: DaemonProcess) -> str:
    return f"http://127.0.0.1:{daemon.port}"


async def upgrade(port: int, lines: list[str]) -> tuple[int, bytes]:
    """A WebSocket upgrade by hand (the test controls every header): (status, what followed)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    if not any(line.lower().startswith("host:") for line in lines):
        lines = [f"Host: 127.0.0.1:{port}", *lines]
    request = (
        "GET /ws HTTP/1.1\r\n"
        + "".join(f"{line}\r\n" for line in lines)
        + f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        + "Sec-WebSocket-Version: 13\r\n\r\n"
    )
    writer.write(request.encode())
    await writer.drain()
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        status = int(head.split(b" ", 2)[1])
        rest = await asyncio.wait_for(reader.read(1 << 16), WAIT) if status == 101 else b""
        return status, head + rest
    finally:
        writer.close()


def ticket_line(ticket: str) -> str:
    return f"Sec-WebSocket-Protocol: shard.v1, ticket.{ticket}"


def attributes(set_cookie: str) -> set[str]:
    return {part.strip() for part in set_cookie.split(";")[1:]}


# --- happy paths: the three configurations --------------------------------------------------------------


async def test_loopback_happy_path(start_daemon, tmp_path):
    """Loopback: the daemon prints an enrollment link while no browser is enrolled; the link's code
    enrolls this browser (a principal and a session in the store, by hash), setting an HttpOnly,
    SameSite=Strict, non-Secure cookie; /bootstrap gives a 30 s ticket; the upgrade that offers it
    in Sec-WebSocket-Protocol gets 101, selects shard.v1 (never echoing the ticket) and hello.

    Covers: R4.1.0.1, R4.1.0.6, R4.1.0.7, R4.1.1.5, R4.1.2.22, R4.1.2.24, R4.1.2.26
    """
    daemon = await start_daemon()
    link = daemon.enrollment_link
    assert link is not None
    assert link.startswith(f"http://127.0.0.1:{daemon.port}/enroll#code=")
    origin = origin_of(daemon)
    reply = await post_enroll(daemon.port, code_of(link), origin)
    assert reply.status == 200, reply.body
    (cookie,) = reply.header("Set-Cookie")
    assert cookie.startswith("shard_session=")
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= attributes(cookie)
    assert not any(a.lower() == "secure" for a in attributes(cookie))
    token = cookie.split(";")[0].split("=", 1)[1]
    rows = sqlite3.connect(tmp_path / "home" / "security" / "security.db").execute(
        "SELECT s.id, s.principal, s.token_sha256, p.id FROM browser_sessions s JOIN principals p "
        "ON p.id = s.principal"
    )
    ((session_id, principal, stored, _),) = rows.fetchall()
    assert stored == digest(token)
    assert reply.json() == {"session": session_id, "proof": reply.json()["proof"]}
    assert principal.startswith("prn-")
    proof = reply.json().pop("proof")
    boot = await http(
        daemon.port,
        "POST",
        "/bootstrap",
        [f"Origin: {origin}", f"Cookie: shard_session={token}", f"Shard-Browser-Proof: {proof}"],
    )
    assert boot.status == 200, boot.body
    body = boot.json()
    assert body["expires_in"] == 30
    assert body["protocol"] == "shard.v1"
    status, data = await upgrade(daemon.port, [f"Origin: {origin}", ticket_line(body["ticket"])])
    assert status == 101, data
    assert b"Sec-WebSocket-Protocol: shard.v1\r\n" in data
    assert body["ticket"].encode() not in data
    assert b'"type":"hello"' in data


async def test_trusted_proxy_happy_path(start_daemon):
    """Behind a TLS proxy on loopback: requests via the upstream with X-Forwarded-Proto: https get
    the __Host- Secure cookie, a ticket, and the upgrade; the daemon listens on 127.0.0.1 only.

    Covers: R4.1.2.3, R4.1.2.5, R4.1.2.8, R4.1.2.15, R4.1.2.21, R4.1.0.6
    """
    daemon = await start_daemon(*PROXY_FLAGS)
    assert daemon.enrollment_link is not None
    assert daemon.enrollment_link.startswith(f"{HTTPS_ORIGIN}/enroll#")
    browser = await Browser.enroll(daemon.port, daemon.socket, origin=HTTPS_ORIGIN, extra=VIA_PROXY)
    assert browser.cookie.startswith("__Host-shard_session=")
    assert {"Secure", "HttpOnly", "SameSite=Strict", "Path=/"} <= attributes(browser.set_cookie)
    ticket = await browser.ticket()
    status, data = await upgrade(daemon.port, [*VIA_PROXY, f"Origin: {HTTPS_ORIGIN}", ticket_line(ticket)])
    assert status == 101, data
    assert listeners(daemon.port) == [("/proc/net/tcp", "0100007F")]


async def test_direct_non_loopback_happy_path(start_daemon):
    """Direct plaintext remote (--web-host 0.0.0.0 + the three flags): binds that address, logs the
    plaintext warning exactly once, takes the pinned public Host from any peer, honors no forwarded
    header (X-Forwarded-Proto: https still gets the non-Secure cookie) and serves each allowed origin.

    Covers: R4.1.2.2, R4.1.2.4, R4.1.2.20, R4.1.2.22, R4.1.2.15, R4.1.2.27, R4.1.0.6
    """
    daemon = await start_daemon(*DIRECT_FLAGS)
    assert listeners(daemon.port) == [("/proc/net/tcp", "00000000")]
    extra = [f"Host: {DIRECT_HOST}", "X-Forwarded-Proto: https", f"X-Forwarded-Host: {DIRECT_HOST}"]
    browser = await Browser.enroll(daemon.port, daemon.socket, origin=DIRECT_ORIGIN, extra=extra)
    assert browser.cookie.startswith("shard_session=")
    assert {"HttpOnly", "SameSite=Strict"} <= attributes(browser.set_cookie)
    assert "Secure" not in attributes(browser.set_cookie)
    for origin in (DIRECT_ORIGIN, OTHER_ORIGIN):
        browser.origin = origin
        ticket = await browser.ticket()
        status, data = await upgrade(
            daemon.port, [f"Host: {DIRECT_HOST}", f"Origin: {origin}", ticket_line(ticket)]
        )
        assert status == 101, data
    await daemon.stop()
    warnings = [line for line in daemon.output if "--allow-insecure-remote" in line]
    assert len(warnings) == 1, daemon.output
    assert "WARNING" in warnings[0]


def listeners(port: int) -> list[tuple[str, str]]:
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for row in f.read().splitlines()[1:]:
                fields = row.split()
                address, port_hex = fields[1].rsplit(":", 1)
                if fields[3] == "0A" and int(port_hex, 16) == port:
                    found.append((table, address))
    return found


# --- tickets ------------------------------------------------------------------------------------------


@SHARED
async def test_a_replayed_ticket_is_401(daemon: DaemonProcess):
    """The upgrade consumes its ticket: the same ticket again is 401.

    Covers: R4.1.0.9, R4.1.0.13
    """
    ticket = await daemon.ticket()
    lines = [f"Origin: {origin_of(daemon)}", ticket_line(ticket)]
    assert (await upgrade(daemon.port, lines))[0] == 101
    assert (await upgrade(daemon.port, lines))[0] == 401


@SHARED
async def test_a_missing_ticket_is_401(daemon: DaemonProcess):
    """An upgrade with the right Host and Origin but no ticket (none offered, only shard.v1, an
    empty ticket, or two tickets) is 401.

    Covers: R4.1.0.10, R4.1.2.26
    """
    origin = f"Origin: {origin_of(daemon)}"
    ticket = await daemon.ticket()
    for extra in ([], ["Sec-WebSocket-Protocol: shard.v1"], ["Sec-WebSocket-Protocol: ticket."]):
        assert (await upgrade(daemon.port, [origin, *extra]))[0] == 401, extra
    two = f"Sec-WebSocket-Protocol: ticket.{ticket}, ticket.{await daemon.ticket()}"
    assert (await upgrade(daemon.port, [origin, two]))[0] == 401
    # the ticket itself in another header is not a ticket either
    assert (await upgrade(daemon.port, [origin, f"Authorization: Bearer {ticket}"]))[0] == 401


async def test_a_ticket_from_another_origin_is_401(start_daemon):
    """A ticket bootstrapped from one allowed origin, presented on an upgrade from another allowed
    origin, is 401 — and burnt.

    Covers: R4.1.0.8, R4.1.0.12, R4.1.2.27
    """
    daemon = await start_daemon(*DIRECT_FLAGS)
    host = f"Host: {DIRECT_HOST}"
    browser = await Browser.enroll(daemon.port, daemon.socket, origin=DIRECT_ORIGIN, extra=[host])
    ticket = await browser.ticket()
    assert (await upgrade(daemon.port, [host, f"Origin: {OTHER_ORIGIN}", ticket_line(ticket)]))[0] == 401
    assert (await upgrade(daemon.port, [host, f"Origin: {DIRECT_ORIGIN}", ticket_line(ticket)]))[0] == 401


async def test_an_expired_ticket_is_401(start_daemon):
    """With the tests-only --ws-ticket-ttl 0 every ticket is born expired: 401.

    Covers: R4.1.0.11
    """
    daemon = await start_daemon("--ws-ticket-ttl", "0")
    ticket = await daemon.ticket()
    assert (await upgrade(daemon.port, [f"Origin: {origin_of(daemon)}", ticket_line(ticket)]))[0] == 401


@SHARED
async def test_missing_or_foreign_origin_is_400_on_bootstrap_enroll_and_upgrade(daemon: DaemonProcess):
    """No Origin, or one not allowed, is 400 on POST /bootstrap, POST /enroll and the upgrade,
    even with a valid cookie and ticket (which the refused upgrade does not consume).

    Covers: R4.1.0.14, R4.1.0.15, R4.1.2.27
    """
    browser = await daemon.browser()
    for origin in (None, "http://evil.example", f"http://localhost:{daemon.port}", origin_of(daemon) + "/"):
        assert (await browser.bootstrap(origin=origin)).status == 400, origin
        code = await enrollment_code(daemon.socket)
        assert (await post_enroll(daemon.port, code, origin)).status == 400, origin
        ticket = await browser.ticket()
        lines = [ticket_line(ticket)] + ([f"Origin: {origin}"] if origin else [])
        assert (await upgrade(daemon.port, lines))[0] == 400, origin
        assert (await upgrade(daemon.port, [f"Origin: {origin_of(daemon)}", ticket_line(ticket)]))[0] == 101


# --- Host on every route ------------------------------------------------------------------------------

HOST_ALIASES = ["localhost:{p}", "127.1:{p}", "[::1]:{p}", "0x7f.1:{p}", "127.0.0.1:{p}.evil.example",
                "evil.example:{p}", "127.0.0.1.nip.io:{p}", "127.0.0.1", "LOCALHOST:{p}"]  # fmt: skip


@SHARED
async def test_each_host_alias_is_400_on_every_route(daemon: DaemonProcess):
    """Every alias of 127.0.0.1:<port> is 400 on /, /enroll (GET and POST), /bootstrap and the
    upgrade, before any of them runs: a valid ticket survives the refused upgrade.

    Covers: R4.1.0.16, R4.1.0.17, R4.1.0.18, R4.1.0.19, R4.1.1.2
    """
    browser = await daemon.browser()
    origin = f"Origin: {origin_of(daemon)}"
    cookie = f"Cookie: {browser.cookie}"
    ticket = await browser.ticket()
    for alias in (a.format(p=daemon.port) for a in HOST_ALIASES):
        host = f"Host: {alias}"
        for method, path in (("GET", "/"), ("GET", "/enroll"), ("POST", "/enroll"), ("POST", "/bootstrap")):
            assert (await http(daemon.port, method, path, [host, origin, cookie])).status == 400, (
                alias,
                path,
            )
        assert (await upgrade(daemon.port, [host, origin, ticket_line(ticket)]))[0] == 400, alias
    assert (await upgrade(daemon.port, [origin, ticket_line(ticket)]))[0] == 101


# --- forwarded headers --------------------------------------------------------------------------------


async def test_forwarded_headers_from_a_non_upstream_peer_are_ignored(start_daemon):
    """With --trust-proxy naming another peer, our X-Forwarded-Proto: https is ignored: the request
    is direct plain http, which this TLS-only remote daemon refuses with 400 on every route —
    X-Forwarded-For naming the upstream changes nothing.

    Covers: R4.1.2.5, R4.1.2.7, R4.1.2.11, R4.1.2.17
    """
    flags = ("--trust-proxy", "127.0.0.2", "--public-host", PUBLIC, "--allowed-origin", HTTPS_ORIGIN)
    daemon = await start_daemon(*flags)  # the test connects from 127.0.0.1, not the upstream
    lines = [*VIA_PROXY, f"Origin: {HTTPS_ORIGIN}", "X-Forwarded-For: 127.0.0.2"]
    for method, path in (("GET", "/"), ("GET", "/enroll"), ("POST", "/bootstrap")):
        assert (await http(daemon.port, method, path, lines)).status == 400, path
    code = await enrollment_code(daemon.socket)
    assert (await post_enroll(daemon.port, code, HTTPS_ORIGIN, extra=VIA_PROXY)).status == 400
    assert (await upgrade(daemon.port, lines))[0] == 400


async def test_an_x_forwarded_host_mismatch_is_400(start_daemon):
    """From the trusted upstream, an X-Forwarded-Host other than the pinned --public-host is 400 on
    every route, and a right one does not make a wrong Host acceptable.

    Covers: R4.1.2.9, R4.1.2.10
    """
    daemon = await start_daemon(*PROXY_FLAGS)
    browser = await Browser.enroll(daemon.port, daemon.socket, origin=HTTPS_ORIGIN, extra=VIA_PROXY)
    ticket = await browser.ticket()
    wrong = [f"Host: {PUBLIC}", "X-Forwarded-Proto: https", "X-Forwarded-Host: evil.example:443"]
    rescue = ["Host: evil.example:443", "X-Forwarded-Proto: https", f"X-Forwarded-Host: {PUBLIC}"]
    for lines in (wrong, rescue):
        for method, path in (("GET", "/"), ("POST", "/bootstrap")):
            reply = await http(
                daemon.port, method, path, [*lines, f"Origin: {HTTPS_ORIGIN}", f"Cookie: {browser.cookie}"]
            )
            assert reply.status == 400, (lines, path)
        assert (await upgrade(daemon.port, [*lines, f"Origin: {HTTPS_ORIGIN}", ticket_line(ticket)]))[
            0
        ] == 400
    assert (await upgrade(daemon.port, [*VIA_PROXY, f"Origin: {HTTPS_ORIGIN}", ticket_line(ticket)]))[
        0
    ] == 101


# --- cookies and sessions -----------------------------------------------------------------------------


async def test_a_secure_cookie_over_http_gets_no_ticket(start_daemon):
    """A Secure (__Host-) session cookie arriving on a plain-http request is refused at /bootstrap
    with 401: both a cookie issued over https and then sent over http (a proxy with
    --allow-insecure-remote), and a __Host- name sent over loopback http.

    Covers: R4.1.2.23
    """
    daemon = await start_daemon(*PROXY_FLAGS, "--allow-insecure-remote")
    browser = await Browser.enroll(daemon.port, daemon.socket, origin=HTTPS_ORIGIN, extra=VIA_PROXY)
    assert browser.cookie.startswith("__Host-")
    assert (await browser.bootstrap()).status == 200
    browser.extra = [f"Host: {PUBLIC}"]  # the same browser, now over plain http
    reply = await browser.bootstrap()
    assert reply.status == 401, reply.body
    assert b"ticket" not in reply.body.lower().replace(b"no ticket", b"")
    token = browser.cookie.split("=", 1)[1]
    # the Secure session's token under the plain name, over http: still the Secure session
    assert (await browser.bootstrap(cookie=f"shard_session={token}")).status == 401
    browser.extra = [f"Host: {PUBLIC}", "X-Forwarded-Proto: https"]
    assert (await browser.bootstrap(cookie=f"shard_session={token}")).status == 200  # https: fine

    loop = await start_daemon()
    plain = await loop.browser()
    renamed = "__Host-" + plain.cookie
    assert (await plain.bootstrap(cookie=renamed)).status == 401
    assert (await plain.bootstrap()).status == 200


@SHARED
async def test_missing_unknown_or_ambiguous_cookie_is_401(daemon: DaemonProcess):
    """/bootstrap without a cookie, with an unknown token, or with two different tokens is 401.

    Covers: R4.1.0.7
    """
    browser = await daemon.browser()
    assert (await browser.bootstrap(cookie=None)).status == 401
    assert (await browser.bootstrap(cookie="shard_session=" + "A" * 43)).status == 401
    assert (await browser.bootstrap(cookie=f"{browser.cookie}; shard_session=other")).status == 401
    assert (await browser.bootstrap()).status == 200


async def test_a_revoked_session_gets_nothing_and_its_sockets_close(start_daemon):
    """shard web revoke (web.revoke on the unix socket): the session's open WebSocket is closed, its
    outstanding ticket is 401, /bootstrap with its cookie is 401; another browser is untouched.

    Covers: R4.1.0.12, R4.1.2.25
    """
    daemon = await start_daemon()
    one = await daemon.browser()
    two = await Browser.enroll(daemon.port, daemon.socket)
    assert one.session_id != two.session_id
    ws = await daemon.ws()
    other = await aiohttp_ws(daemon, two)
    pending = await one.ticket()
    listed = await admin(daemon.socket, {"type": "web.sessions"})
    assert {s["id"] for s in listed["sessions"]} == {one.session_id, two.session_id}
    assert len({s["principal"] for s in listed["sessions"]}) == 2  # per browser
    assert await admin(daemon.socket, {"type": "web.revoke", "session_id": one.session_id}) == {
        "revoked": one.session_id
    }
    msg = await asyncio.wait_for(ws.ws.receive(), WAIT)
    assert msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING), msg
    assert (await upgrade(daemon.port, [f"Origin: {origin_of(daemon)}", ticket_line(pending)]))[0] == 401
    assert (await one.bootstrap()).status == 401
    assert (await two.bootstrap()).status == 200
    await other.send_str('{"type":"agent.list","id":"still"}')
    assert "still" in (await asyncio.wait_for(other.receive(), WAIT)).data
    again = await admin_reply(daemon.socket, {"type": "web.revoke", "session_id": one.session_id})
    assert again["success"] is False
    assert again["error"]["code"] == "NOT_FOUND"
    revoked = await admin(daemon.socket, {"type": "web.sessions"})
    assert [s["revoked"] is not None for s in revoked["sessions"] if s["id"] == one.session_id] == [True]
    await other.close()


async def aiohttp_ws(daemon: DaemonProcess, browser: Browser):
    session = aiohttp.ClientSession()
    ticket = await browser.ticket()
    ws = await session.ws_connect(
        f"http://127.0.0.1:{daemon.port}/ws",
        headers={"Origin": browser.origin},
        protocols=("shard.v1", f"ticket.{ticket}"),
    )
    daemon_close = ws.close

    async def close() -> None:
        await daemon_close()
        await session.close()

    ws.close = close
    hello = await asyncio.wait_for(ws.receive(), WAIT)
    assert '"hello"' in hello.data
    return ws


# --- enrollment ---------------------------------------------------------------------------------------


async def test_wrong_or_reused_enrollment_codes_are_401_then_rate_limited(start_daemon):
    """A wrong, empty or already used code is 401 and sets no cookie; one code enrolls one browser
    only; after five failures in a minute every wrong code is 429 with Retry-After — but a live code
    still enrolls (the limit slows guessers; it never keeps the owner out).

    Covers: R4.1.2.25
    """
    daemon = await start_daemon()
    origin = origin_of(daemon)
    good = await enrollment_code(daemon.socket)
    assert (await post_enroll(daemon.port, good, origin)).status == 200
    reused = await post_enroll(daemon.port, good, origin)
    assert reused.status == 401
    assert not reused.header("Set-Cookie")
    for wrong in ("A" * 43, "", good[:-1]):
        reply = await post_enroll(daemon.port, wrong, origin)
        assert (reply.status, reply.header("Set-Cookie")) == (401, []), wrong
    assert (await post_enroll(daemon.port, "nope", origin)).status == 401  # the fifth failure
    limited = await post_enroll(daemon.port, "A" * 43, origin)
    assert limited.status == 429
    assert limited.header("Retry-After")
    fresh = await enrollment_code(daemon.socket)
    assert (await post_enroll(daemon.port, fresh, origin)).status == 200


@SHARED
async def test_pages_carry_a_strict_csp(daemon: DaemonProcess):
    """/, /enroll and refusals send a CSP with default-src 'none' and frame-ancestors 'none', plus
    X-Frame-Options: DENY, nosniff, no-referrer and no-store.

    Covers: R4.1.2.28
    """
    origin = f"Origin: {origin_of(daemon)}"
    replies = [
        await http(daemon.port, "GET", "/"),
        await http(daemon.port, "GET", "/enroll"),
        await http(daemon.port, "POST", "/bootstrap", [origin]),  # 401
        await http(daemon.port, "GET", "/nothing"),  # 404
    ]
    assert [r.status for r in replies] == [200, 200, 401, 404]
    for reply in replies:
        (csp,) = reply.header("Content-Security-Policy")
        assert "frame-ancestors 'none'" in csp
        assert "default-src 'none'" in csp
        assert reply.header("X-Frame-Options") == ["DENY"]
        assert reply.header("Referrer-Policy") == ["no-referrer"]
        assert reply.header("Cache-Control") == ["no-store"]
    assert b"<script>" in replies[1].body
    assert "'sha256-" in replies[1].header("Content-Security-Policy")[0]


async def test_security_store_is_owner_only_and_versioned(tmp_path):
    """The store is created 0700 / 0600 under SHARD_HOME/security with its schema version set; a
    folder or file open to group or others is refused at startup with a line naming the path and the
    fix (exit 1, nothing served), and so is a store from a newer schema.

    Covers: R4.1.0.2, R4.1.0.3
    """
    home = tmp_path / "home"
    daemon = await DaemonProcess.start(home)
    await daemon.stop()
    folder = home / "security"
    assert (folder.stat().st_mode & 0o777, (folder / "security.db").stat().st_mode & 0o777) == (0o700, 0o600)
    assert sqlite3.connect(folder / "security.db").execute("PRAGMA user_version").fetchone()[0] == 2
    for path, mode, fix in ((folder, 0o750, "chmod 700"), (folder / "security.db", 0o640, "chmod 600")):
        path.chmod(mode)
        code, output = await failed_start(home)
        assert code == 1, output
        assert str(path) in output
        assert fix in output
        assert "Traceback" not in output
        path.chmod(0o700 if path == folder else 0o600)
    db = sqlite3.connect(folder / "security.db")
    db.execute("PRAGMA user_version = 99")
    db.close()
    code, output = await failed_start(home)
    assert code == 1, output
    assert "newer" in output


async def failed_start(home: Path, *args: str) -> tuple[int, str]:
    from shard.testing import shard_command

    proc = await asyncio.create_subprocess_exec(
        *shard_command("daemon", "--home", str(home), "--port", "0", *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:  # it started after all: the test fails, without leaving a daemon
            proc.kill()
            await proc.wait()
    return proc.returncode, out.decode()


@SHARED
async def test_web_commands_are_served_on_the_unix_socket_only(daemon: DaemonProcess):
    """web.enroll on an (authenticated) WebSocket is an unknown command like any other — an
    enrolled browser cannot mint enrollment links; on the unix socket an unknown web command or a
    revoke without a session id is a clear error and the connection stays.

    Covers: R4.2.1
    """
    ws = await daemon.ws()
    await ws.send({"type": "web.enroll", "id": "mint"})
    answer = await ws.next()
    assert answer["success"] is False
    assert "/enroll#code=" not in str(answer)
    bogus = await admin_reply(daemon.socket, {"type": "web.bogus"})
    assert (bogus["success"], bogus["error"]["code"]) == (False, "INVALID_REQUEST")
    empty = await admin_reply(daemon.socket, {"type": "web.revoke"})
    assert (empty["success"], empty["error"]["code"]) == (False, "NOT_FOUND")
    assert "link" in await admin(daemon.socket, {"type": "web.enroll"})


async def test_once_a_browser_is_enrolled_the_daemon_prints_the_web_client_link(tmp_path):
    """The first start prints the enrollment link; a start with a browser enrolled prints where the
    web client is instead (and no enrollment link: a new one is `shard web enroll`'s)."""
    home = tmp_path / "home"
    first = await DaemonProcess.start(home)
    try:
        assert first.enrollment_link is not None
        assert not [line for line in first.output if "the web client:" in line]
        await Browser.enroll(first.port, home / "daemon.sock")
    finally:
        await first.stop()
    again = await DaemonProcess.start(home)
    try:
        assert again.enrollment_link is None
        assert f"shard daemon: the web client: http://127.0.0.1:{again.port}/" in again.output
    finally:
        await again.stop()

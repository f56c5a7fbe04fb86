"""The web client's files: served by the daemon from the package, same-origin, under a CSP that
allows no inline script and no other origin; nothing outside ``static/`` is reachable."""

from __future__ import annotations

import re

import pytest

from shard.daemon.web.static_files import STATIC, static_routes
from shard.testing.web import http

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime


async def test_the_app_is_served_with_a_strict_csp(start_daemon):
    """``/`` is the app page; its scripts and stylesheet are same-origin files; the CSP keeps
    ``default-src 'none'``, allows scripts only from 'self' (no inline, no eval) and no framing.

    Covers: R4.1.2.28
    """
    daemon = await start_daemon()
    page = await http(daemon.port, "GET", "/")
    assert page.status == 200
    assert page.header("Content-Type") == ["text/html; charset=utf-8"]
    (csp,) = page.header("Content-Security-Policy")
    assert "default-src 'none'" in csp
    assert "script-src 'self';" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe" not in csp
    assert page.header("X-Frame-Options") == ["DENY"]
    html = page.body.decode()
    assert "<script>" not in html  # no inline script: only <script type="module" src=…>
    for src in re.findall(r'(?:src|href)="(/app/[^"]+)"', html):
        asset = await http(daemon.port, "GET", src)
        assert asset.status == 200, src
    module = await http(daemon.port, "GET", "/app/js/main.js")
    assert module.header("Content-Type") == ["text/javascript; charset=utf-8"]
    for path in ("/app/../pages.py", "/app/js/../../static_files.py", "/app/", "/app/js/missing.js"):
        assert (await http(daemon.port, "GET", path)).status == 404, path


def test_every_file_of_the_client_has_a_route():
    """Every JS module the client imports is routed (a file with a type this does not know would
    be silently missing)."""
    routes = static_routes()
    files = {p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file()}
    files.remove("bundle.json")  # the build's manifest (test_bundle.py reads it), not served
    assert b"/app/bundle.json" not in routes
    assert {f"/app/{f}".encode() for f in files} <= set(routes)
    for js in STATIC.rglob("*.js"):
        for imported in re.findall(r'from ?"(\./[^"]+|\.\./[^"]+)"', js.read_text()):
            target = (js.parent / imported).resolve().relative_to(STATIC.resolve()).as_posix()
            assert f"/app/{target}".encode() in routes, (js.name, imported)


async def test_a_file_is_served_byte_for_byte_as_it_was_when_the_daemon_started(tmp_path):
    """Read once, at start (a client that matches the daemon that serves it, whatever is installed
    later), as bytes: the text is not decoded and encoded again on its way."""
    root = tmp_path / "static"
    root.mkdir()
    page = "<!doctype html><title>Ünïcode — ✓</title>\n".encode()
    (root / "index.html").write_bytes(page)
    (root / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    routes = static_routes(root)
    (root / "index.html").write_text("changed after the start")

    class Writer:
        sent = b""

        def write(self, data: bytes) -> None:
            self.sent += data

    for path, body in (
        (b"/", page),
        (b"/app/index.html", page),
        (b"/app/icon.png", b"\x89PNG\r\n\x1a\n\x00\xff"),
    ):
        writer = Writer()
        await routes[path].handler(None, None, writer, b"")  # type: ignore[arg-type]
        head, _, sent = writer.sent.partition(b"\r\n\r\n")
        assert sent == body, path
        assert f"Content-Length: {len(body)}".encode() in head

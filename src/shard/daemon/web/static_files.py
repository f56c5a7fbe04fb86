"""The web client (issue 13): plain ES modules, a stylesheet and one HTML page in ``static/``,
shipped inside the package and served as same-origin files. No build step, no inline script: the
page's CSP allows scripts and styles from ``'self'`` only, and everything else stays ``'none'``
(R4.1.2.28).

The route table is fixed when the daemon starts: one exact route per file found under ``static/``
(``/app/<relative path>``), so a request can never name a path outside it; ``/`` is ``index.html``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from shard.daemon.http import Request, Route, response
from shard.daemon.web.gate import app_content_security_policy

STATIC = Path(__file__).parent / "static"
PREFIX = "/app/"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",  # the web-app icons (192 and 512 px, which installers want besides the SVG)
    ".webmanifest": "application/manifest+json",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}


def _handler(path: Path, content_type: str) -> Route:
    body = path.read_bytes()  # served as it is: UTF-8 text is not decoded and encoded again
    headers = (("Content-Security-Policy", app_content_security_policy()),)

    async def serve(
        request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rest: bytes
    ) -> None:
        writer.write(response(200, body, headers, content_type=content_type))

    return Route(serve)


def static_routes(root: Path = STATIC) -> dict[bytes, Route]:
    """``/`` and one ``/app/…`` route per file of the web client, read once at startup."""
    routes: dict[bytes, Route] = {}
    for path in sorted(root.rglob("*")):
        content_type = _TYPES.get(path.suffix)
        if not path.is_file() or content_type is None:
            continue
        relative = path.relative_to(root).as_posix()
        routes[(PREFIX + relative).encode()] = _handler(path, content_type)
    routes[b"/"] = _handler(root / "index.html", _TYPES[".html"])
    return routes

"""The first request of a one-shot ``shard run``, sent while the runtime still imports (issue 31).

A direct ``shard run`` spends ~200 ms importing pydantic, asyncio and the runtime before its first
provider request, and that request rarely changes from one run to the next in the same place: the
same system prompt, tools and settings around a new prompt. So a run keeps the body of its first
request (``$SHARD_HOME/cache/first-request.json``, 0600, no key in it), and the next run — once phase
A has chosen the model and made the session — sends that body with its own prompt at once, on a plain
socket, before the runtime's imports. When the runtime's own first request is ready,
:func:`take` compares the two byte for byte (request line, headers, body): equal, the runtime reads
the reply from that connection as if it had just sent it; different (a new day in the system
prompt, another branch, an AGENTS.md edited, a compaction), the early connection is closed unread
and the runtime sends its own. A reply is never read unless the runtime would have sent exactly that.

Only where nothing can differ in where a request goes, or whether one is sent at all: a plain-http
Chat Completions server reached without the SDK (``chat_http.goes_direct``: the URL and the key come
from the same config and the same key store the runtime uses) at an address or ``localhost`` (a
name would be looked up twice), a new session (no history), and a run without
``--allow``/``--yes-to-all`` (whose mistakes stop a run before its first request). The
cache decides nothing but the body: a body someone else wrote could at worst cost one request that
is then closed unread (and the file is read only when it is this user's and private, 0600).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
from pathlib import Path
from typing import Any, Protocol

from shard._home import private_dirs, write_private
from shard._trace import mark

CACHE_VERSION = 1
CONNECT_TIMEOUT = 1.0  # the early request is a head start, never a wait: a slow connect gives up
MAX_BODY = 1 << 20  # a larger prompt (a piped file) is sent by the runtime: sending it is no head start
PATH = "/chat/completions"


def cache_file(home: Path) -> Path:
    return home / "cache" / "first-request.json"


def fingerprint(**parts: str | None) -> str:
    """What must be equal for a kept body to be worth sending (the comparison decides the rest)."""
    from shard._version import __version__

    return json.dumps({"shard": __version__, **parts}, sort_keys=True)


def with_prompt(body: dict[str, Any], old: str, new: str) -> dict[str, Any] | None:
    """``body`` with its one user message's ``old`` prompt replaced by ``new``; None when the body
    holds more than one user message, or another message after it, or that message is not ``old``
    exactly (its one text part, when it has parts)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    last = messages[-1]
    if len(users) != 1 or users[0] is not last:
        return None
    content = last.get("content")
    if content == old:
        replaced: Any = new
    elif isinstance(content, list):
        texts = [i for i, part in enumerate(content) if isinstance(part, dict) and part.get("type") == "text"]
        if len(texts) != 1 or content[texts[0]].get("text") != old:
            return None
        replaced = [*content]
        replaced[texts[0]] = {**content[texts[0]], "text": new}
    else:
        return None
    return {**body, "messages": [*messages[:-1], {**last, "content": replaced}]}


def encode(body: object) -> bytes:
    """A body as ``ChatHttp`` writes it (the comparison is byte for byte)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class _Early:
    def __init__(self, host: str, port: int, request: bytes, sock: socket.socket) -> None:
        self.host = host
        self.port = port
        self.request = request
        self.sock = sock


class _Keep:
    def __init__(self, home: Path, print_: str, prompt: str) -> None:
        self.home = home
        self.fingerprint = print_
        self.prompt = prompt
        self.body: bytes | None = None


_pending: _Early | None = None
_keep: _Keep | None = None


class Client(Protocol):
    """What is used of ``chat_http.ChatHttp``: where it sends, and a request as it writes one."""

    host: str
    port: int

    def request_bytes(self, path: str, data: bytes) -> bytes: ...


def start(home: Path, client: Client, print_: str, prompt: str) -> bool:
    """Send the kept body with ``prompt`` through ``client``'s request now, if one is kept for
    ``print_``; and keep this run's own first body for the next run either way. Whether a request
    went out."""
    global _pending, _keep
    _keep = _Keep(home, print_, prompt)
    kept = _load(cache_file(home))
    if kept is None or kept.get("fingerprint") != print_ or kept.get("path") != PATH:
        return False
    try:
        old_body = json.loads(kept["body"])
        old_prompt = kept["prompt"]
    except (KeyError, TypeError, ValueError):
        return False
    if not isinstance(old_body, dict) or not isinstance(old_prompt, str):
        return False
    body = with_prompt(old_body, old_prompt, prompt)
    if body is None or not _literal(client.host):
        return False
    try:  # a NaN in the kept text, a key latin-1 cannot carry: the runtime's own request says so
        data = encode(body)
        if len(data) > MAX_BODY:
            return False
        request = client.request_bytes(PATH, data)
    except ValueError:
        return False
    try:
        sock = socket.create_connection((client.host, client.port), CONNECT_TIMEOUT)
    except OSError:
        return False
    try:
        sock.sendall(request)
    except OSError:
        sock.close()
        return False
    mark("provider: early request")
    _pending = _Early(client.host, client.port, request, sock)
    return True


def _literal(host: str) -> bool:
    """An address, or ``localhost``: a name to look up could keep the run waiting on DNS here (no
    timeout bounds ``getaddrinfo``) and then again in the runtime."""
    if host == "localhost":
        return True
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        return True
    return False


def take(host: str, port: int, request: bytes) -> socket.socket | None:
    """The early connection, when it sent exactly ``request`` to ``host:port`` (its reply unread);
    else None, and an early request to the same server (a body that differs) is closed unread."""
    global _pending
    early = _pending
    if early is None or (early.host, early.port) != (host, port):
        return None
    _pending = None
    if early.request == request:
        return early.sock
    early.sock.close()
    return None


def sent(path: str, body: bytes) -> None:
    """A runtime's request went out: the first one of a run is what the next run may send early."""
    keep = _keep
    if keep is not None and keep.body is None and path == PATH:
        keep.body = body


def finish() -> None:
    """At the end of the run: close an early request nothing took, and keep this run's first body
    (when it differs from what is kept)."""
    global _pending, _keep
    if _pending is not None:
        _pending.sock.close()
        _pending = None
    keep, _keep = _keep, None
    if keep is None or keep.body is None:
        return
    entry = {
        "version": CACHE_VERSION,
        "fingerprint": keep.fingerprint,
        "path": PATH,
        "prompt": keep.prompt,
        "body": keep.body.decode(),
    }
    path = cache_file(keep.home)
    if _load(path) == entry:
        return
    with contextlib.suppress(OSError):  # a cache: a run never fails for it
        private_dirs(path.parent)
        write_private(path, json.dumps(entry, ensure_ascii=False).encode())


def _load(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(f.fileno())
            if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
                return None
            entry = json.loads(f.read())
        except (OSError, ValueError):
            return None
    if not isinstance(entry, dict) or entry.get("version") != CACHE_VERSION:
        return None
    return entry

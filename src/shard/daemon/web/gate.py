"""Per-request web decisions (PROTOCOL §4.1): who may talk to the HTTP front, the request's
effective scheme, its Origin, and the session cookie's form. Pure functions of a :class:`WebPolicy`
and the request's peer and headers, raising :class:`Refusal` with the status the protocol names.

Order of :func:`admit`, every route and the upgrade alike:

1. peer: in loopback mode only a loopback peer (403); remote modes take any peer, the Host and Origin
   checks and the ticket are what protect them;
2. Host: exactly one, byte-equal to the expected host (400) — no alias, suffix or other spelling;
3. forwarded headers: read only from the configured upstream (R4.1.2.5); the honored
   X-Forwarded-Host must equal the pinned public host (400), X-Forwarded-Proto decides the scheme;
   X-Forwarded-For is never read at all;
4. a remote request whose effective scheme is http without ``--allow-insecure-remote`` is refused
   (400): a TLS proxy that suddenly forwards plaintext, or a peer going around the proxy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from shard.daemon.web.config import LOOPBACK_PEERS, WebPolicy

Scheme = Literal["http", "https"]
GetAll = Callable[[bytes], list[bytes]]

COOKIE = "shard_session"
SECURE_COOKIE = "__Host-shard_session"  # __Host-: Secure, Path=/, no Domain — the browser enforces it
COOKIE_MAX_AGE = 400 * 24 * 3600  # the longest browsers keep a cookie; revocation ends it sooner


class Refusal(Exception):
    """Refuse the request with ``status``; ``message`` is the plain-text body (no secret in it)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Admitted:
    scheme: Scheme
    host: str


def admit(policy: WebPolicy, port: int, peer: str, get_all: GetAll) -> Admitted:
    """Gate one request before any route runs (see the module docstring for the order)."""
    if policy.mode == "loopback" and peer not in LOOPBACK_PEERS:
        raise Refusal(403, "only loopback clients may connect")
    expected = policy.expected_host(port)
    if get_all(b"host") != [expected.encode()]:
        raise Refusal(400, f"Host must be exactly {expected}")
    scheme: Scheme = "http"
    if policy.upstream is not None and policy.upstream.matches(peer):
        forwarded_host = get_all(policy.host_header)
        if forwarded_host and forwarded_host != [expected.encode()]:
            raise Refusal(400, f"the forwarded host does not match the pinned public host {expected}")
        protos = get_all(policy.proto_header)
        if len(protos) > 1:
            raise Refusal(400, "more than one forwarded scheme")
        if protos and protos[0].strip().lower() == b"https":
            scheme = "https"
    if policy.mode != "loopback" and scheme == "http" and not policy.insecure:
        raise Refusal(400, "this daemon serves remote browsers over https only")
    return Admitted(scheme, expected)


def check_origin(policy: WebPolicy, port: int, get_all: GetAll) -> str:
    """The request's one Origin, if it is exactly an allowed one; else 400 (R4.1.0.14, R4.1.0.15)."""
    origins = get_all(b"origin")
    if not origins or not origins[0]:
        raise Refusal(400, "Origin missing")
    if len(origins) != 1:
        raise Refusal(400, "more than one Origin")
    try:
        origin = origins[0].decode("ascii")
    except UnicodeDecodeError:
        raise Refusal(400, "Origin not allowed") from None
    if origin not in policy.allowed_origins(port):
        raise Refusal(400, "Origin not allowed")
    return origin


def set_cookie(token: str, scheme: Scheme) -> str:
    """The Set-Cookie value: HttpOnly and SameSite=Strict always (R4.1.0.6); ``Secure`` with the
    ``__Host-`` name iff the effective scheme is https (R4.1.2.21, R4.1.2.22) — so plaintext never
    gets a Secure cookie (R4.1.2.24)."""
    attributes = f"Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Strict"
    if scheme == "https":
        return f"{SECURE_COOKIE}={token}; {attributes}; Secure"
    return f"{COOKIE}={token}; {attributes}"


@dataclass(frozen=True, slots=True)
class SessionCookie:
    token: str
    secure_form: bool


def read_cookie(get_all: GetAll) -> SessionCookie | None:
    """The session cookie the request carries, or None. Two different values (under one name or
    both names) are ambiguous, and an ambiguous credential is no credential: None."""
    found: set[tuple[str, bool]] = set()
    for header in get_all(b"cookie"):
        for pair in header.decode("latin-1").split(";"):
            name, sep, value = pair.strip().partition("=")
            if sep and value and name in (COOKIE, SECURE_COOKIE):
                found.add((value.strip(), name == SECURE_COOKIE))
    if len({token for token, _ in found}) != 1:
        return None
    token = next(iter(found))[0]
    return SessionCookie(token, any(secure for _, secure in found))


def script_hash(script: str) -> str:
    """The CSP source allowing exactly one inline script (and no other)."""
    import base64

    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def content_security_policy(scripts: tuple[str, ...] = ()) -> str:
    """Nothing loads but what the page names; no framing anywhere (R4.1.2.28)."""
    allowed = " ".join(script_hash(s) for s in scripts) or "'none'"
    return (
        f"default-src 'none'; script-src {allowed}; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


def app_content_security_policy() -> str:
    """The web client's CSP: its scripts and styles are same-origin files (no inline code), its one
    connection is the same-origin WebSocket, pasted images preview from blob: URLs, and its web-app
    manifest (installable, issue 29) is a same-origin file too (R4.1.2.28)."""
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' blob:; manifest-src 'self'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", content_security_policy()),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
)

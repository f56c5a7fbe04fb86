"""Browser authentication (PROTOCOL §4.1, DESIGN §6): enrollment, the session cookie, WS tickets, and
the ``web.*`` admin commands of the unix socket. The decisions are in ``gate.py`` (Host, Origin,
cookie form), ``tickets.py`` (single use, expiry, the guess limit) and ``store.py`` (who is
enrolled); this module wires them to the HTTP routes and owns the daemon's in-memory credentials.

The flow: the owner gets a link ``<base>/enroll#code=…`` (printed at startup while no browser is
enrolled, or from ``shard web enroll``); the fragment never leaves the browser except as the body of
the page's same-origin ``POST /enroll``, which creates a principal and a browser session and sets the
session cookie, and answers with the browser's *origin proof*, which the page keeps in
``localStorage``. The web client then ``POST /bootstrap`` s (cookie + proof + allowed Origin) for a
30 s single-use ticket bound to principal, session and exact Origin, and offers it on the upgrade as
the ``Sec-WebSocket-Protocol`` entry ``ticket.<ticket>`` beside ``shard.v1`` (the one the daemon
selects, so the ticket is never echoed back).

Why the proof: a browser sends a host's cookies to every port of it (RFC 6265 §8.5), and every port
of 127.0.0.1 is the same site, so ``SameSite`` stops nothing there either: a page another local user
serves on ``127.0.0.1:<other port>`` receives the session cookie. Storage is isolated by origin, port
included, so that page cannot read the proof; and the proof reached the browser only in the body of
a same-origin ``POST /enroll`` answer, which no other origin can read. The cookie stays (PROTOCOL
§4.1 asks for it); the proof is required beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import orjson

from shard.daemon.http import HttpError, Request, response
from shard.daemon.web.config import WebPolicy
from shard.daemon.web.gate import Refusal, check_origin, read_cookie, set_cookie
from shard.daemon.web.pages import ENROLL_PAGE, ENROLL_SCRIPT, page_headers
from shard.daemon.web.store import BrowserSession, SecurityStore
from shard.daemon.web.tickets import ENROLLMENT_TTL, TICKET_TTL, FailureLimit, SingleUse, digest, new_secret
from shard.protocol.framing import Record

SUBPROTOCOL = "shard.v1"
TICKET_PREFIX = "ticket."
PROOF_HEADER = "Shard-Browser-Proof"  # the origin proof at /bootstrap (never a cookie: see above)
MAX_BODY = 4096
_BODY_TIMEOUT = 10.0


ENROLLED_BEFORE_PROOFS = (
    "this browser was enrolled by an older Shard, whose sessions ended when this one started asking "
    "for the proof the page keeps beside the cookie: enroll this browser again (shard web enroll)"
)
NO_PROOF = (
    "the session cookie came without this browser's enrollment proof (the page keeps it in this "
    "origin's storage; a cookie alone reaches every port of the host): enroll this browser again "
    "(shard web enroll)"
)


@dataclass(frozen=True, slots=True)
class Grant:
    """What a ticket was issued for (R4.1.0.8)."""

    principal: str
    session: str
    origin: str
    label: str = ""  # the browser, as its enrollment recorded it (a User-Agent): who answers from it


class WebAuth:
    def __init__(
        self,
        policy: WebPolicy,
        store: SecurityStore,
        *,
        ticket_ttl: float = TICKET_TTL,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.store = store
        self.port = 0  # set once the port is bound
        self.tickets: SingleUse[Grant] = SingleUse(ticket_ttl, clock)
        self.codes: SingleUse[bool] = SingleUse(ENROLLMENT_TTL, clock)
        self.limit = FailureLimit(clock)
        self._wall = wall
        self._live: dict[str, set[Any]] = {}  # session id -> its open WebSocket connections

    # --- enrollment links -------------------------------------------------------------------------

    def enrollment_link(self) -> tuple[str, float]:
        code, ttl = self.codes.issue(True)
        return f"{self.policy.base_url(self.port)}/enroll#code={code}", ttl

    # --- routes -----------------------------------------------------------------------------------

    async def enroll(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rest: bytes
    ) -> None:
        """GET: the page that posts the fragment's code. POST: redeem the code (same origin only)."""
        if request.method == b"GET":
            writer.write(_html(ENROLL_PAGE, ENROLL_SCRIPT))
            return
        _guard(check_origin, self.policy, self.port, request.get_all)
        body = await read_body(request, reader, rest)
        code = (parse_qs(body.decode("latin-1")).get("code") or [""])[0]
        # A live code always redeems, whatever the failure count: 256 bits cannot be guessed, so
        # the limit only slows guessers — it must not let another local user's flood of wrong
        # codes keep the owner's fresh one out (on loopback every source is 127.0.0.1).
        if not code or self.codes.take(code) is None:
            if self.limit.blocked():
                retry = (("Retry-After", str(self.limit.retry_after())),)
                raise HttpError(429, "too many wrong enrollment codes: wait a minute", retry)
            self.limit.failed()
            raise HttpError(401, "this enrollment code is wrong, used or expired: ask for a new link")
        token, proof = new_secret(), new_secret()
        label = _label(request.get_all(b"user-agent"))
        with _store_errors():
            session = self.store.enroll(
                digest(token), digest(proof), secure=request.scheme == "https", label=label, now=self._wall()
            )
        cookie = (("Set-Cookie", set_cookie(token, request.scheme)),)
        # the proof leaves the daemon here, once, in a body only this origin's page can read
        body_out = orjson.dumps({"session": session.id, "proof": proof}).decode()
        writer.write(response(200, body_out, cookie, content_type="application/json"))

    async def bootstrap(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rest: bytes
    ) -> None:
        """POST: a single-use WS ticket for an enrolled browser (its cookie and its origin proof) on
        an allowed origin (R4.1.0.7)."""
        origin = _guard(check_origin, self.policy, self.port, request.get_all)
        await read_body(request, reader, rest)
        with _store_errors():
            session = self.session_of(request)
            self.store.touch(session.id, self._wall())
        secret, ttl = self.tickets.issue(Grant(session.principal, session.id, origin, session.label))
        body = {"ticket": secret, "expires_in": ttl, "protocol": SUBPROTOCOL}
        writer.write(response(200, orjson.dumps(body).decode(), content_type="application/json"))

    def session_of(self, request: Request) -> BrowserSession:
        """The live browser session the request's cookie names, if the request also carries that
        session's origin proof; else 401 with a line the web client shows."""
        cookie = read_cookie(request.get_all)
        if cookie is None:
            raise HttpError(401, "not enrolled: open an enrollment link (shard web enroll)")
        if cookie.secure_form and request.scheme != "https":  # R4.1.2.23
            raise HttpError(401, "a Secure session cookie arrived over plain http: no ticket")
        session = self.store.by_token(digest(cookie.token))
        if session is None:
            raise HttpError(
                401, "this browser session is unknown: enroll this browser again (shard web enroll)"
            )
        if session.revoked is not None:
            if session.proof_sha256 is None:  # revoked by migration 2 of the store
                raise HttpError(401, ENROLLED_BEFORE_PROOFS)
            raise HttpError(
                401, "this browser session was revoked: enroll this browser again (shard web enroll)"
            )
        if session.secure and request.scheme != "https":
            raise HttpError(401, "a Secure session cookie arrived over plain http: no ticket")
        if not _proof_matches(request.get_all(PROOF_HEADER.lower().encode()), session.proof_sha256):
            raise HttpError(401, NO_PROOF)
        return session

    # --- the upgrade ------------------------------------------------------------------------------

    def redeem(self, request: Request, origin: str) -> tuple[Grant, bool]:
        """Consume the ticket the upgrade offers (R4.1.0.9): its grant, and whether the client
        offered ``shard.v1`` (then the 101 selects it). 401 for missing, unknown, used, expired or
        mismatched tickets and for a session revoked meanwhile."""
        offered = [
            token.strip()
            for value in request.get_all(b"sec-websocket-protocol")
            for token in value.decode("latin-1").split(",")
        ]
        tickets = [t[len(TICKET_PREFIX) :] for t in offered if t.startswith(TICKET_PREFIX)]
        if len(tickets) != 1 or not tickets[0]:
            raise HttpError(401, "the upgrade needs one ticket (POST /bootstrap)")
        grant = self.tickets.take(tickets[0])
        if grant is None:
            raise HttpError(401, "the ticket is unknown, expired or already used")
        if grant.origin != origin:
            raise HttpError(401, "the ticket was issued to another origin")
        with _store_errors():
            session = self.store.get(grant.session)
        if session is None or session.revoked is not None or session.principal != grant.principal:
            raise HttpError(401, "the ticket's browser session was revoked")
        return grant, SUBPROTOCOL in offered

    def opened(self, grant: Grant, conn: Any) -> None:
        self._live.setdefault(grant.session, set()).add(conn)

    def closed(self, grant: Grant, conn: Any) -> None:
        conns = self._live.get(grant.session)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self._live[grant.session]

    # --- web.* on the unix socket (the trusted local channel, §4.2) --------------------------------

    def admin(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer one ``web.*`` command with a §9.3-shaped response (never raising: a store that
        fails is an INTERNAL_ERROR answer, and the connection stays)."""
        out: dict[str, Any] = {"type": "response", "command": message.get("type")}
        if isinstance(message.get("id"), str):
            out["id"] = message["id"]
        try:
            return self._admin(message, out)
        except sqlite3.Error as exc:
            error = {"code": "INTERNAL_ERROR", "message": f"the security store failed: {exc}"}
            return {**out, "success": False, "error": error}

    def _admin(self, message: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        kind = message.get("type")
        if kind == "web.enroll":
            link, ttl = self.enrollment_link()
            return {**out, "success": True, "data": {"link": link, "expires_in": ttl}}
        if kind == "web.sessions":
            rows = [_session_row(s) for s in self.store.sessions()]
            return {**out, "success": True, "data": {"sessions": rows}}
        if kind == "web.revoke":
            session_id = message.get("session_id")
            if not isinstance(session_id, str) or not self.store.revoke(session_id, self._wall()):
                error = {"code": "NOT_FOUND", "message": f"no live browser session {session_id!r}"}
                return {**out, "success": False, "error": error}
            self.tickets.discard(lambda grant: grant.session != session_id)
            for conn in list(self._live.pop(session_id, ())):
                conn.close("this browser session was revoked")
            return {**out, "success": True, "data": {"revoked": session_id}}
        error = {"code": "INVALID_REQUEST", "message": f"unknown web command {kind!r}"}
        return {**out, "success": False, "error": error}


def admin_command(record: Record) -> dict[str, Any] | None:
    """The ``web.*`` command a unix-socket line carries, or None (then the broker handles it)."""
    if not isinstance(record, bytes) or b'"web.' not in record:
        return None
    try:
        message = orjson.loads(record)
    except orjson.JSONDecodeError:
        return None
    if isinstance(message, dict) and str(message.get("type", "")).startswith("web."):
        return message
    return None


async def read_body(request: Request, reader: asyncio.StreamReader, rest: bytes) -> bytes:
    """The request's small body (Content-Length only, at most MAX_BODY bytes), or 400/413."""
    if request.get_all(b"transfer-encoding"):
        raise HttpError(400, "send the body with Content-Length")
    lengths = request.get_all(b"content-length")
    if not lengths:
        return b""
    try:
        length = int(lengths[0])
    except ValueError:
        raise HttpError(400, "bad Content-Length") from None
    if length > MAX_BODY:
        raise HttpError(413, f"the body is over {MAX_BODY} bytes")
    body = rest
    try:
        async with asyncio.timeout(_BODY_TIMEOUT):
            while len(body) < length:
                chunk = await reader.read(length - len(body))
                if not chunk:
                    raise HttpError(400, "the body ended early")
                body += chunk
    except TimeoutError:
        raise HttpError(408, "the body did not arrive in time") from None
    return body[:length]


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    """A failing store (disk full, a locked or damaged file) is a 500 with one line, not a trace."""
    try:
        yield
    except sqlite3.Error as exc:
        raise HttpError(500, f"the security store failed: {exc}") from None


def _proof_matches(presented: list[bytes], stored: str | None) -> bool:
    """Exactly one proof header whose hash is the session's (compared in constant time)."""
    if stored is None or len(presented) != 1:
        return False
    return hmac.compare_digest(digest(presented[0].decode("latin-1")), stored)


def _guard(check: Callable[..., str], *args: Any) -> str:
    try:
        return check(*args)
    except Refusal as exc:
        raise HttpError(exc.status, exc.message) from None


def _html(page: str, *scripts: str) -> bytes:
    return response(200, page, page_headers(*scripts), content_type="text/html; charset=utf-8")


def _label(agents: list[bytes]) -> str:
    """The User-Agent as a printable label for ``shard web sessions`` (metadata, not a secret)."""
    text = agents[0].decode("latin-1") if agents else "unknown browser"
    return "".join(c if " " <= c <= "~" else "?" for c in text)[:120]


def _session_row(s: BrowserSession) -> dict[str, Any]:
    return {
        "id": s.id,
        "principal": s.principal,
        "label": s.label,
        "created": s.created,
        "last_seen": s.last_seen,
        "revoked": s.revoked,
        "secure": s.secure,
    }

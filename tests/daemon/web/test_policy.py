"""Web authentication's pure policy, in-process: the remote-mode table (``config.plan``), the
per-request gate (``web.gate``), single-use secrets and the guess limit on a fake clock
(``tickets``), and the ticket checks of ``WebAuth.redeem`` against a real store in a temp home."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from shard.daemon.http import HttpError, Request
from shard.daemon.web.auth import Grant, WebAuth
from shard.daemon.web.config import INSECURE_WARNING, LOOPBACK, Upstream, WebConfigError, WebFlags, plan
from shard.daemon.web.gate import (
    COOKIE_MAX_AGE,
    Refusal,
    admit,
    check_origin,
    content_security_policy,
    read_cookie,
    set_cookie,
)
from shard.daemon.web.store import SecurityStore
from shard.daemon.web.tickets import FailureLimit, SingleUse, digest, new_secret

PORT = 7433
PUBLIC = "shard.example:443"
HTTPS_ORIGIN = "https://shard.example"


def headers(*pairs: tuple[str, str]):
    """A get_all over header pairs given as (name, value) text."""
    items = [(name.lower().encode(), value.encode()) for name, value in pairs]
    return lambda name: [v for k, v in items if k == name]


def refused(fn, *args) -> int:
    with pytest.raises(Refusal) as exc:
        fn(*args)
    return exc.value.status


def proxy(**extra) -> object:
    flags = {"trust_proxy": "loopback", "public_host": PUBLIC, "allowed_origins": (HTTPS_ORIGIN,), **extra}
    return plan(WebFlags(**flags))


def direct(**extra) -> object:
    flags = {
        "web_host": "192.0.2.10",
        "public_host": "192.0.2.10:7433",
        "allowed_origins": ("http://192.0.2.10:7433",),
        "allow_insecure_remote": True,
        **extra,
    }
    return plan(WebFlags(**flags))


# --- web.config.plan: the §4.1.2 table -----------------------------------------------------------------


def test_the_three_configurations_of_the_table():
    """No flag is loopback (bind 127.0.0.1, Host 127.0.0.1:<port>, only the implicit origin, no
    upstream); direct binds the given IP and trusts no proxy; the proxy config binds 127.0.0.1 and
    trusts the upstream; remote modes expect the pinned public host and only the given origins.

    Covers: R4.1.1.1, R4.1.1.2, R4.1.1.3, R4.1.2.2, R4.1.2.3, R4.1.2.4, R4.1.2.15, R4.1.2.16
    """
    loop = plan(WebFlags())
    assert loop == LOOPBACK
    assert (loop.mode, loop.bind, loop.upstream) == ("loopback", "127.0.0.1", None)
    assert loop.expected_host(PORT) == "127.0.0.1:7433"
    assert loop.allowed_origins(PORT) == {"http://127.0.0.1:7433"}
    d = direct()
    assert (d.mode, d.bind, d.upstream, d.insecure) == ("direct", "192.0.2.10", None, True)
    assert d.expected_host(PORT) == "192.0.2.10:7433"
    assert d.allowed_origins(PORT) == {"http://192.0.2.10:7433"}
    p = proxy()
    assert (p.mode, p.bind, p.upstream) == ("proxy", "127.0.0.1", Upstream("loopback"))
    assert p.expected_host(PORT) == PUBLIC
    assert p.allowed_origins(PORT) == {HTTPS_ORIGIN}  # no implicit http://127.0.0.1:<port>
    assert proxy(web_host="192.0.2.10", allow_insecure_remote=True).bind == "192.0.2.10"


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (WebFlags(web_host="192.0.2.10"), "--public-host"),
        (WebFlags(web_host="192.0.2.10", public_host="a.example:80"), "--allowed-origin"),
        (
            WebFlags(
                web_host="192.0.2.10", public_host="a.example:80", allowed_origins=("http://a.example",)
            ),
            "--allow-insecure-remote",
        ),
        (
            WebFlags(web_host="0.0.0.0", public_host="a.example:443", allowed_origins=("https://a.example",)),
            "serves browsers over plain http: add --allow-insecure-remote",
        ),
        (WebFlags(trust_proxy="loopback"), "--public-host"),
        (WebFlags(trust_proxy="loopback", public_host=PUBLIC), "--allowed-origin"),
        (WebFlags(trust_proxy="loopback", allowed_origins=(HTTPS_ORIGIN,)), "--public-host"),
        (
            WebFlags(trust_proxy="loopback", public_host=PUBLIC, allowed_origins=("http://shard.example",)),
            "--allow-insecure-remote",
        ),
        (
            WebFlags(
                trust_proxy="192.0.2.1",
                web_host="192.0.2.10",
                public_host=PUBLIC,
                allowed_origins=(HTTPS_ORIGIN,),
            ),
            "--allow-insecure-remote",
        ),
        (WebFlags(allowed_origins=("http://evil.example",)), "--allowed-origin"),
        (WebFlags(public_host=PUBLIC), "--public-host"),
        (WebFlags(allow_insecure_remote=True), "--allow-insecure-remote"),
        (WebFlags(proto_header="X-Proto"), "--trust-proxy"),
        (WebFlags(web_host="localhost"), "--web-host"),
        (WebFlags(web_host="::1"), "--web-host"),
        (
            WebFlags(trust_proxy="proxy.example", public_host=PUBLIC, allowed_origins=(HTTPS_ORIGIN,)),
            "--trust-proxy",
        ),
        (
            WebFlags(trust_proxy="loopback", public_host="shard.example", allowed_origins=(HTTPS_ORIGIN,)),
            "--public-host",
        ),
        (
            WebFlags(
                trust_proxy="loopback", public_host="Shard.Example:443", allowed_origins=(HTTPS_ORIGIN,)
            ),
            "--public-host",
        ),
        (
            WebFlags(trust_proxy="loopback", public_host=PUBLIC, allowed_origins=("https://shard.example/",)),
            "--allowed-origin",
        ),
        (WebFlags(trust_proxy="loopback", public_host=PUBLIC, allowed_origins=("*",)), "--allowed-origin"),
        (WebFlags(trust_proxy="loopback", public_host=PUBLIC, allowed_origins=("null",)), "--allowed-origin"),
        (
            WebFlags(
                trust_proxy="loopback",
                public_host=PUBLIC,
                allowed_origins=(HTTPS_ORIGIN,),
                host_header="X Host",
            ),
            "--forwarded-host-header",
        ),
    ],
)
def test_unsafe_or_incomplete_flags_are_refused_naming_the_flag(flags, named):
    """Every unsafe combination is refused with one line naming the flag to add or fix: remote
    without --public-host or --allowed-origin, a non-loopback bind (or a plaintext proxy) without
    --allow-insecure-remote, remote-only flags without remote mode, names where an IP is needed,
    origins and hosts that are not exact serializations.

    Covers: R4.1.2.1, R4.1.2.13, R4.1.2.14, R4.1.2.18, R4.1.2.19
    """
    with pytest.raises(WebConfigError) as exc:
        plan(flags)
    assert named in exc.value.message
    assert "\n" not in exc.value.message


def test_a_tls_proxy_needs_no_insecure_flag_and_plaintext_remote_warns():
    """A proxy fronting https only (https origins, loopback leg) starts without
    --allow-insecure-remote and without a warning; with the flag the one warning line is there.

    Covers: R4.1.2.18, R4.1.2.20
    """
    assert proxy().warning is None
    assert direct().warning == INSECURE_WARNING
    assert "\n" not in INSECURE_WARNING
    assert "plain http" in INSECURE_WARNING


# --- web.gate.admit: Host, forwarded headers, scheme ---------------------------------------------------

ALIASES = {
    "localhost": "localhost:7433",
    "short": "127.1:7433",
    "ipv6": "[::1]:7433",
    "hex": "0x7f.1:7433",
    "no port": "127.0.0.1",
    "other port": "127.0.0.1:7434",
    "suffix": "127.0.0.1:7433.evil.example",
    "rebinding": "evil.example:7433",
    "upper": "LOCALHOST:7433",
}


def test_loopback_host_is_exact():
    """Only 127.0.0.1:<port> passes; every alias, suffix or rebinding name is 400, a missing or
    doubled Host too, and a non-loopback peer is 403.

    Covers: R4.1.0.16, R4.1.0.17, R4.1.0.18, R4.1.0.19, R4.1.1.2
    """
    ok = admit(LOOPBACK, PORT, "127.0.0.1", headers(("Host", "127.0.0.1:7433")))
    assert (ok.scheme, ok.host) == ("http", "127.0.0.1:7433")
    for alias in ALIASES.values():
        assert refused(admit, LOOPBACK, PORT, "127.0.0.1", headers(("Host", alias))) == 400, alias
    assert refused(admit, LOOPBACK, PORT, "127.0.0.1", headers()) == 400
    two = headers(("Host", "127.0.0.1:7433"), ("Host", "127.0.0.1:7433"))
    assert refused(admit, LOOPBACK, PORT, "127.0.0.1", two) == 400
    assert refused(admit, LOOPBACK, PORT, "192.0.2.7", headers(("Host", "127.0.0.1:7433"))) == 403


def test_loopback_and_direct_modes_honor_no_forwarded_header():
    """Without --trust-proxy, X-Forwarded-Proto: https does not make the scheme https, and a
    forwarded host does not rescue a wrong Host.

    Covers: R4.1.1.4, R4.1.2.4
    """
    for policy, host in ((LOOPBACK, "127.0.0.1:7433"), (direct(), "192.0.2.10:7433")):
        got = admit(policy, PORT, "127.0.0.1", headers(("Host", host), ("X-Forwarded-Proto", "https")))
        assert got.scheme == "http"
        wrong = headers(("Host", "evil.example"), ("X-Forwarded-Host", host))
        assert refused(admit, policy, PORT, "127.0.0.1", wrong) == 400


def test_forwarded_headers_only_from_the_upstream():
    """From the upstream, X-Forwarded-Proto decides the scheme (https, any case); from any other
    peer the headers are ignored and the request is direct — here plain http, which a TLS-only
    remote daemon refuses (400) rather than falling back to loopback trust.

    Covers: R4.1.2.5, R4.1.2.7, R4.1.2.8, R4.1.2.17
    """
    p = proxy()
    for value in ("https", "HTTPS", "Https", " https "):
        got = admit(p, PORT, "127.0.0.1", headers(("Host", PUBLIC), ("X-Forwarded-Proto", value)))
        assert got.scheme == "https", value
    for value in ("http", "wss", ""):
        req = headers(("Host", PUBLIC), ("X-Forwarded-Proto", value))
        assert refused(admit, p, PORT, "127.0.0.1", req) == 400, value
    outsider = headers(("Host", PUBLIC), ("X-Forwarded-Proto", "https"))
    assert refused(admit, proxy(trust_proxy="127.0.0.2"), PORT, "127.0.0.1", outsider) == 400
    assert refused(admit, p, PORT, "127.0.0.1", headers(("Host", PUBLIC))) == 400  # nothing forwarded
    insecure = proxy(trust_proxy="192.0.2.1", web_host="0.0.0.0", allow_insecure_remote=True)
    assert admit(insecure, PORT, "127.0.0.1", outsider).scheme == "http"  # direct, and http
    assert admit(insecure, PORT, "192.0.2.1", outsider).scheme == "https"


def test_the_upstream_matches_exactly():
    """'loopback' is 127.0.0.1 and ::1 (and the v4-mapped form); an IP upstream is that IP only.

    Covers: R4.1.2.6
    """
    assert all(Upstream("loopback").matches(p) for p in ("127.0.0.1", "::1", "::ffff:127.0.0.1"))
    assert not any(Upstream("loopback").matches(p) for p in ("127.0.0.2", "192.0.2.1", "", "x"))
    assert Upstream("192.0.2.1").matches("192.0.2.1")
    assert not any(Upstream("192.0.2.1").matches(p) for p in ("192.0.2.10", "127.0.0.1", "192.0.2.1x"))
    assert Upstream("2001:db8::1").matches("2001:db8:0::1")


@pytest.mark.parametrize(
    ("bind", "upstream"),
    [
        (None, "10.0.0.5"),  # another machine never reaches 127.0.0.1
        (None, "192.0.2.1"),
        (None, "::1"),  # IPv6, and the loopback bind is IPv4
        (None, "2001:db8::1"),
        ("0.0.0.0", "2001:db8::1"),  # an IPv4 socket never accepts an IPv6 peer
        ("192.0.2.10", "::1"),
        ("::", "10.0.0.5"),  # IPv6 sockets are v6-only
        ("2001:db8::10", "192.0.2.1"),
        ("0.0.0.0", "0.0.0.0"),  # no peer has these
        (None, "0.0.0.0"),
        ("::", "::"),
        ("0.0.0.0", "224.0.0.1"),
        ("0.0.0.0", "255.255.255.255"),
        ("::", "::ffff:10.0.0.5"),  # never reported in the mapped form
        (None, "::ffff:127.0.0.1"),
    ],
)
def test_an_upstream_that_can_never_connect_is_refused_naming_the_flag(bind, upstream):
    """--trust-proxy naming a peer that no connection to the bind address can come from is refused
    at startup, one line naming the flag and the upstream: a non-loopback upstream of the loopback
    bind, the other address family than the bind's, and addresses no TCP peer has.

    Covers: R4.1.2.1, R4.1.2.5
    """
    extra = {"allow_insecure_remote": True} if bind is not None else {}
    with pytest.raises(WebConfigError) as exc:
        plan(
            WebFlags(
                web_host=bind,
                trust_proxy=upstream,
                public_host=PUBLIC,
                allowed_origins=(HTTPS_ORIGIN,),
                **extra,
            )
        )
    assert f"--trust-proxy {ipaddress.ip_address(upstream)}" in exc.value.message
    assert "\n" not in exc.value.message


@pytest.mark.parametrize(
    ("bind", "upstream"),
    [
        (None, "loopback"),
        (None, "127.0.0.1"),
        (None, "127.0.0.2"),  # a local proxy may take any source in 127/8
        ("0.0.0.0", "loopback"),  # 0.0.0.0 takes 127.0.0.1 connections too
        ("0.0.0.0", "192.0.2.1"),
        ("192.0.2.10", "loopback"),  # a local proxy can bind its source to 127.0.0.1
        ("192.0.2.10", "10.0.0.5"),
        ("::", "loopback"),  # ::1
        ("::", "2001:db8::1"),
        ("2001:db8::10", "2001:db8::1"),
    ],
)
def test_an_upstream_that_can_connect_is_accepted(bind, upstream):
    """The combinations a proxy can really come from start, with that upstream.

    Covers: R4.1.2.3, R4.1.2.6
    """
    extra = {"allow_insecure_remote": True} if bind is not None else {}
    policy = plan(
        WebFlags(
            web_host=bind, trust_proxy=upstream, public_host=PUBLIC, allowed_origins=(HTTPS_ORIGIN,), **extra
        )
    )
    assert policy.upstream is not None
    assert policy.upstream.spec == (
        upstream if upstream == "loopback" else str(ipaddress.ip_address(upstream))
    )


def test_forwarded_host_is_cross_checked_never_used():
    """An honored X-Forwarded-Host other than the pinned public host is 400 (also a second one);
    the right one does not rescue a wrong Host: the pinned host is always the effective host.

    Covers: R4.1.2.9, R4.1.2.10, R4.1.2.15
    """
    p = proxy()
    base = (("Host", PUBLIC), ("X-Forwarded-Proto", "https"))
    assert admit(p, PORT, "127.0.0.1", headers(*base, ("X-Forwarded-Host", PUBLIC))).host == PUBLIC
    for bad in ("evil.example:443", "shard.example", "shard.example:443.evil", ""):
        req = headers(*base, ("X-Forwarded-Host", bad))
        assert refused(admit, p, PORT, "127.0.0.1", req) == 400, bad
    two = headers(*base, ("X-Forwarded-Host", PUBLIC), ("X-Forwarded-Host", "evil.example:443"))
    assert refused(admit, p, PORT, "127.0.0.1", two) == 400
    rescue = headers(
        ("Host", "evil.example:443"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", PUBLIC)
    )
    assert refused(admit, p, PORT, "127.0.0.1", rescue) == 400


def test_x_forwarded_for_decides_nothing():
    """X-Forwarded-For naming the upstream does not make an outsider trusted, and naming an
    outsider does not make the upstream untrusted: the direct peer is the trust anchor.

    Covers: R4.1.2.11
    """
    p = proxy(trust_proxy="192.0.2.1", web_host="0.0.0.0", allow_insecure_remote=True)
    spoof = headers(("Host", PUBLIC), ("X-Forwarded-Proto", "https"), ("X-Forwarded-For", "192.0.2.1"))
    assert admit(p, PORT, "203.0.113.9", spoof).scheme == "http"  # direct: the https claim ignored
    real = headers(("Host", PUBLIC), ("X-Forwarded-Proto", "https"), ("X-Forwarded-For", "203.0.113.9"))
    assert admit(p, PORT, "192.0.2.1", real).scheme == "https"


def test_forwarded_header_names_are_configurable():
    """The defaults are X-Forwarded-Proto / X-Forwarded-Host; renamed, the new names are read and
    the default ones ignored.

    Covers: R4.1.2.12
    """
    assert (proxy().proto_header, proxy().host_header) == (b"x-forwarded-proto", b"x-forwarded-host")
    p = proxy(proto_header="X-Real-Proto", host_header="X-Real-Host")
    assert admit(p, PORT, "127.0.0.1", headers(("Host", PUBLIC), ("X-Real-Proto", "https"))).scheme == "https"
    old = headers(("Host", PUBLIC), ("X-Forwarded-Proto", "https"))
    assert refused(admit, p, PORT, "127.0.0.1", old) == 400  # the default name is no longer read
    mismatch = headers(("Host", PUBLIC), ("X-Real-Proto", "https"), ("X-Real-Host", "evil.example:443"))
    assert refused(admit, p, PORT, "127.0.0.1", mismatch) == 400


# --- Origin -------------------------------------------------------------------------------------------


def test_origin_is_exact_in_every_mode():
    """Absent or empty: 400; only a byte-exact allowed origin passes — no trailing slash, other
    case, other scheme or port, suffix, or a second Origin; in remote modes the loopback origin is
    not allowed.

    Covers: R4.1.0.14, R4.1.0.15, R4.1.2.16, R4.1.2.27
    """
    cases = [
        (LOOPBACK, "http://127.0.0.1:7433"),
        (direct(), "http://192.0.2.10:7433"),
        (proxy(), HTTPS_ORIGIN),
    ]
    for policy, good in cases:
        assert check_origin(policy, PORT, headers(("Origin", good))) == good
        assert refused(check_origin, policy, PORT, headers()) == 400
        assert refused(check_origin, policy, PORT, headers(("Origin", ""))) == 400
        for bad in (good + "/", good.upper(), good + ".evil.example", good.replace("http", "ws"), "null"):
            assert refused(check_origin, policy, PORT, headers(("Origin", bad))) == 400, bad
        assert refused(check_origin, policy, PORT, headers(("Origin", good), ("Origin", good))) == 400
        if policy is not LOOPBACK:
            loop = headers(("Origin", "http://127.0.0.1:7433"))
            assert refused(check_origin, policy, PORT, loop) == 400


# --- the cookie and the CSP ---------------------------------------------------------------------------


def test_the_session_cookie_follows_the_effective_scheme():
    """http: ``shard_session=…; Path=/; HttpOnly; SameSite=Strict`` without Secure; https: the
    ``__Host-`` name with Secure; both HttpOnly and SameSite=Strict.

    Covers: R4.1.0.6, R4.1.1.5, R4.1.2.21, R4.1.2.22, R4.1.2.24
    """
    plain = set_cookie("tok", "http")
    assert plain == f"shard_session=tok; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Strict"
    assert "secure" not in plain.lower()
    secure = set_cookie("tok", "https")
    assert secure.startswith("__Host-shard_session=tok; Path=/;")
    assert {"HttpOnly", "SameSite=Strict", "Secure"} <= {a.strip() for a in secure.split(";")}
    assert "Domain" not in secure


def test_reading_the_cookie():
    """Either name is read; the __Host- one is flagged; two different tokens are no cookie."""
    assert read_cookie(headers(("Cookie", "a=b; shard_session=t1"))).token == "t1"
    assert read_cookie(headers(("Cookie", "__Host-shard_session=t1"))).secure_form
    assert not read_cookie(headers(("Cookie", "shard_session=t1"))).secure_form
    assert read_cookie(headers(("Cookie", "shard_session=t1; shard_session=t2"))) is None
    assert read_cookie(headers(("Cookie", "shard_session=t1"), ("Cookie", "__Host-shard_session=t2"))) is None
    assert read_cookie(headers(("Cookie", "shard_sessionx=t1; xshard_session=t2"))) is None
    assert read_cookie(headers()) is None


def test_the_csp_is_strict_and_forbids_framing():
    """default-src 'none', frame-ancestors 'none'; a page's inline script is allowed by its hash
    only.

    Covers: R4.1.2.28
    """
    csp = content_security_policy()
    assert "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "script-src 'none'" in csp
    with_script = content_security_policy(("alert(1)",))
    assert "'sha256-" in with_script
    assert "unsafe-inline" not in with_script


# --- single-use secrets on a fake clock ---------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_secret_redeems_once_before_it_expires():
    """Taken once it is gone (a replay is None); at its TTL it is expired; only its hash is kept.

    Covers: R4.1.0.9, R4.1.0.11, R4.1.0.13
    """
    clock = Clock()
    book: SingleUse[str] = SingleUse(30.0, clock)
    secret, ttl = book.issue("grant")
    assert ttl == 30.0
    assert secret not in repr(book._live)  # stored by hash
    assert digest(secret) in book._live
    assert book.take(secret) == "grant"
    assert book.take(secret) is None  # replay
    late, _ = book.issue("late")
    clock.now += 29.999
    early, _ = book.issue("early")
    clock.now += 0.001
    assert book.take(late) is None  # exactly at its TTL
    assert book.take(early) == "early"
    assert book.take("not-issued") is None
    assert book.take("") is None


def test_secrets_are_256_bits():
    secrets_seen = {new_secret() for _ in range(100)}
    assert len(secrets_seen) == 100
    assert all(len(s) == 43 for s in secrets_seen)  # 32 bytes, base64url without padding


def test_the_failure_limit():
    """Five failures in a minute block; the block ends when the window passes."""
    clock = Clock()
    limit = FailureLimit(clock, limit=5, window=60.0)
    for _ in range(4):
        limit.failed()
    assert not limit.blocked()
    limit.failed()
    assert limit.blocked()
    assert 1 <= limit.retry_after() <= 61
    clock.now += 60.0
    assert not limit.blocked()


# --- WebAuth.redeem: what a ticket is bound to ---------------------------------------------------------


def upgrade_request(ticket: str | None, origin: str = "http://127.0.0.1:7433") -> Request:
    items = [(b"origin", origin.encode())]
    if ticket is not None:
        items.append((b"sec-websocket-protocol", f"shard.v1, ticket.{ticket}".encode()))
    return Request(b"GET", b"/ws", b"/ws", b"1.1", tuple(items), "127.0.0.1")


def status_of(auth: WebAuth, request: Request, origin: str) -> int:
    with pytest.raises(HttpError) as exc:
        auth.redeem(request, origin)
    return exc.value.status


def test_a_ticket_is_bound_to_principal_session_and_origin(tmp_path: Path):
    """A ticket redeems only from the origin it was issued to, only while its session is live, and
    only for the principal that session belongs to; each wrong one is 401 and burns the ticket; a
    missing ticket is 401 too.

    Covers: R4.1.0.8, R4.1.0.10, R4.1.0.12, R4.1.0.13, R4.1.2.26
    """
    clock = Clock()
    store = SecurityStore(tmp_path / "home")
    auth = WebAuth(LOOPBACK, store, clock=clock)
    auth.port = PORT
    origin = "http://127.0.0.1:7433"
    one = store.enroll(digest("a"), digest("pa"), secure=False, label="one", now=1.0)
    two = store.enroll(digest("b"), digest("pb"), secure=False, label="two", now=1.0)
    good, _ = auth.tickets.issue(Grant(one.principal, one.id, origin))
    grant, offered = auth.redeem(upgrade_request(good), origin)
    assert (grant.principal, grant.session, grant.origin, offered) == (one.principal, one.id, origin, True)
    assert status_of(auth, upgrade_request(good), origin) == 401  # replayed
    other_origin, _ = auth.tickets.issue(Grant(one.principal, one.id, "http://other.example"))
    assert status_of(auth, upgrade_request(other_origin), origin) == 401
    crossed, _ = auth.tickets.issue(Grant(two.principal, one.id, origin))  # principal of another session
    assert status_of(auth, upgrade_request(crossed), origin) == 401
    revoked, _ = auth.tickets.issue(Grant(one.principal, one.id, origin))
    store.revoke(one.id, 2.0)
    assert status_of(auth, upgrade_request(revoked), origin) == 401
    assert status_of(auth, upgrade_request(None), origin) == 401
    expired, _ = auth.tickets.issue(Grant(two.principal, two.id, origin))
    clock.now += 30.0
    assert status_of(auth, upgrade_request(expired), origin) == 401
    assert len(auth.tickets) == 0
    store.close()

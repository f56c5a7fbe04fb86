"""Which web configuration the daemon runs in (PROTOCOL §4.1.1, §4.1.2): the command line's remote
flags in, a :class:`WebPolicy` out, or a :class:`WebConfigError` whose one line names the flag that
is missing or wrong. Pure: no socket, no clock, so every combination is tested in-process.

The three configurations of the §4.1.2 table:

* loopback (no remote flag): bind 127.0.0.1, expected Host ``127.0.0.1:<port>``, the implicit
  ``http://127.0.0.1:<port>`` origin as the only allowed one, no forwarded header honored;
* direct non-loopback (``--web-host <ip>``): bind ``<ip>``, plaintext, no proxy trusted; needs
  ``--public-host``, ``--allowed-origin`` and the explicit ``--allow-insecure-remote``;
* trusted reverse proxy (``--trust-proxy <upstream>``): bind 127.0.0.1 (or ``--web-host``); needs
  ``--public-host`` and ``--allowed-origin``, plus ``--allow-insecure-remote`` iff browsers reach the
  proxy over plain http (an ``http://`` allowed origin, or a non-loopback bind: the leg from the
  proxy to the daemon then crosses a network in clear).

A flag that would have no effect in the chosen configuration is refused too (``--allowed-origin``
without a remote flag, a forwarded-header name without ``--trust-proxy``): a demanding operator
wants to hear that their flag did nothing, not find out later. So is a ``--trust-proxy`` upstream
that can never be the peer of a connection to the bind address (:func:`_reachable`): its forwarded
headers would never be honored, and every request through that proxy would be refused.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

LOOPBACK_HOST = "127.0.0.1"
LOOPBACK_PEERS = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
DEFAULT_PROTO_HEADER = "X-Forwarded-Proto"
DEFAULT_HOST_HEADER = "X-Forwarded-Host"

Mode = Literal["loopback", "direct", "proxy"]

# host:port as browsers send it in Host and Origin: a lower-case DNS name or IPv4 literal, or a
# bracketed IPv6 literal, then an explicit port. Exactness is the point, so no other spelling.
_HOST_PORT = re.compile(r"^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\]):([0-9]{1,5})$")
_ORIGIN = re.compile(r"^(https?)://((?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?)$")
_TOKEN = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")

INSECURE_WARNING = (
    "WARNING: --allow-insecure-remote is set: browsers reach this daemon over plain http, so the "
    "session cookie crosses the network in clear and anyone on the path can steal it; use this only "
    "on a trusted network, a VPN or an SSH-forwarded port"
)


class WebConfigError(Exception):
    """The web flags are unsafe or incomplete; ``message`` is one line naming the flag."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class WebFlags:
    """The web flags as given on the command line (``None``/empty: not given)."""

    web_host: str | None = None
    public_host: str | None = None
    allowed_origins: tuple[str, ...] = ()
    allow_insecure_remote: bool = False
    trust_proxy: str | None = None
    proto_header: str | None = None
    host_header: str | None = None


@dataclass(frozen=True, slots=True)
class Upstream:
    """The one peer whose forwarded headers are honored: ``loopback`` (127.0.0.1 or ::1) or one IP."""

    spec: str

    def matches(self, peer: str) -> bool:
        if self.spec == "loopback":
            return peer in LOOPBACK_PEERS
        try:
            return ipaddress.ip_address(peer) == ipaddress.ip_address(self.spec)
        except ValueError:  # an unparsable peer (a unix path, nothing) is nobody's upstream
            return False


@dataclass(frozen=True, slots=True)
class WebPolicy:
    mode: Mode
    bind: str
    public_host: str | None = None
    origins: tuple[str, ...] = ()
    insecure: bool = False
    upstream: Upstream | None = None
    proto_header: bytes = DEFAULT_PROTO_HEADER.lower().encode()
    host_header: bytes = DEFAULT_HOST_HEADER.lower().encode()

    def expected_host(self, port: int) -> str:
        """The one Host accepted (R4.1.1.2, R4.1.2.15): never derived from a request."""
        if self.public_host is not None:
            return self.public_host
        return f"{LOOPBACK_HOST}:{port}"

    def allowed_origins(self, port: int) -> frozenset[str]:
        """The exact serialized origins allowed; the implicit loopback one only in loopback mode."""
        if self.mode == "loopback":
            return frozenset({f"http://{LOOPBACK_HOST}:{port}"})
        return frozenset(self.origins)

    def base_url(self, port: int) -> str:
        """Where the owner's browser reaches the daemon (the enrollment link's origin)."""
        if self.mode == "loopback":
            return f"http://{LOOPBACK_HOST}:{port}"
        return self.origins[0]

    @property
    def warning(self) -> str | None:
        """The one startup line logged when plaintext remote is on (R4.1.2.20)."""
        return INSECURE_WARNING if self.insecure else None


LOOPBACK = WebPolicy(mode="loopback", bind=LOOPBACK_HOST)


def plan(flags: WebFlags) -> WebPolicy:
    """The policy for ``flags``, or WebConfigError naming what is missing or wrong (R4.1.2.1)."""
    bind = LOOPBACK_HOST if flags.web_host is None else _bind_address(flags.web_host)
    network_bind = bind != LOOPBACK_HOST
    remote = network_bind or flags.trust_proxy is not None
    if not remote:
        for given, flag in (
            (flags.public_host, "--public-host"),
            (flags.allowed_origins, "--allowed-origin"),
            (flags.allow_insecure_remote, "--allow-insecure-remote"),
        ):
            if given:
                raise WebConfigError(
                    f"{flag} applies only to remote mode (--web-host <non-loopback ip> or --trust-proxy); "
                    "the loopback daemon allows http://127.0.0.1:<port> only"
                )
    if flags.trust_proxy is None and (flags.proto_header or flags.host_header):
        raise WebConfigError("--forwarded-proto-header/--forwarded-host-header need --trust-proxy")
    if not remote:
        return LOOPBACK
    why = "--web-host is not loopback" if network_bind else "--trust-proxy is set"
    if not flags.public_host:
        raise WebConfigError(f"{why}: --public-host <host:port> is required (the one Host accepted)")
    if not flags.allowed_origins:
        raise WebConfigError(f"{why}: --allowed-origin <origin> is required (repeatable)")
    public_host = _public_host(flags.public_host)
    origins = tuple(dict.fromkeys(_origin(o) for o in flags.allowed_origins))
    upstream = None if flags.trust_proxy is None else _upstream(flags.trust_proxy)
    if upstream is not None:
        _reachable(bind, upstream)
    if not flags.allow_insecure_remote:
        if upstream is None:
            raise WebConfigError(
                f"--web-host {bind} serves browsers over plain http: add --allow-insecure-remote to "
                "accept that the session cookie crosses the network in clear (or put a TLS proxy in "
                "front: --trust-proxy)"
            )
        plain = [o for o in origins if o.startswith("http://")]
        if plain:
            raise WebConfigError(
                f"--allowed-origin {plain[0]} is plain http: add --allow-insecure-remote to accept "
                "that the session cookie crosses the network in clear"
            )
        if network_bind:
            raise WebConfigError(
                f"--web-host {bind} with --trust-proxy: the proxy reaches the daemon over plain http "
                "across a network; add --allow-insecure-remote to accept that"
            )
    return WebPolicy(
        mode="direct" if upstream is None else "proxy",
        bind=bind,
        public_host=public_host,
        origins=origins,
        insecure=flags.allow_insecure_remote,
        upstream=upstream,
        proto_header=_header(flags.proto_header or DEFAULT_PROTO_HEADER, "--forwarded-proto-header"),
        host_header=_header(flags.host_header or DEFAULT_HOST_HEADER, "--forwarded-host-header"),
    )


def _bind_address(text: str) -> str:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise WebConfigError(f"--web-host {text!r} must be an IP address (a name could rebind)") from None
    if address.is_loopback and str(address) != LOOPBACK_HOST:
        raise WebConfigError(f"--web-host {text}: the loopback daemon binds {LOOPBACK_HOST} only")
    return str(address)


def _public_host(text: str) -> str:
    match = _HOST_PORT.match(text)
    if match is None or not 0 < int(match.group(1)) < 65536:
        raise WebConfigError(
            f"--public-host {text!r} must be host:port exactly as browsers send it in Host "
            "(lower case, with the port), e.g. shard.example.net:443"
        )
    return text


def _origin(text: str) -> str:
    match = _ORIGIN.match(text)
    port = match.group(2).rsplit(":", 1)[1] if match and ":" in match.group(2).lstrip("[") else None
    if match is None or (port is not None and not 0 < int(port) < 65536):
        raise WebConfigError(
            f"--allowed-origin {text!r} must be a serialized origin: http(s)://host[:port], lower "
            "case, no path and no trailing slash"
        )
    return text


def _upstream(text: str) -> Upstream:
    if text != "loopback":
        try:
            text = str(ipaddress.ip_address(text))
        except ValueError:
            raise WebConfigError(
                f"--trust-proxy {text!r} must be 'loopback' or the proxy's exact IP address"
            ) from None
    return Upstream(text)


def _reachable(bind: str, upstream: Upstream) -> None:
    """Refuse (naming ``--trust-proxy``) an upstream that no connection to ``bind`` can come from:

    * an address no TCP peer has (unspecified, multicast, broadcast; ``0.0.0.0`` is not "any");
    * an IPv4-mapped IPv6 address: an IPv4 socket reports the plain IPv4 peer, and the daemon's IPv6
      sockets are v6-only (asyncio binds them so), so the mapped form is never seen;
    * the other address family than the bind (an IPv4 socket never accepts an IPv6 peer, nor an
      IPv6 socket an IPv4 one);
    * a non-loopback upstream of the loopback bind: another machine's packets never reach
      127.0.0.1 (the kernel drops them), and a proxy on this machine connects from 127.0.0.1 —
      ``--trust-proxy loopback``. (Only a local proxy forced to another local source address could;
      such a set-up is refused too, since the flag it needs is ``loopback`` all the same.)

    A loopback upstream of a non-loopback bind is possible (0.0.0.0 takes 127.0.0.1 connections; a
    specific address takes them from a proxy that binds its source to 127.0.0.1), so it stays.
    """
    wanted = f"--trust-proxy {upstream.spec}"
    if upstream.spec == "loopback":
        return
    address = ipaddress.ip_address(upstream.spec)
    local = ipaddress.ip_address(bind)
    if address.is_unspecified or address.is_multicast or address == ipaddress.IPv4Address("255.255.255.255"):
        raise WebConfigError(
            f"{wanted}: no connection ever comes from that address; name the proxy's own IP (or 'loopback')"
        )
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise WebConfigError(
            f"{wanted}: connections from that proxy show its plain IPv4 address; write "
            f"--trust-proxy {address.ipv4_mapped}"
        )
    if address.version != local.version:
        where = "--web-host " + bind if bind != LOOPBACK_HOST else f"the loopback bind ({LOOPBACK_HOST})"
        raise WebConfigError(
            f"{wanted} is an IPv{address.version} address, but {where} takes IPv{local.version} "
            "connections only: that proxy can never connect"
        )
    if local.is_loopback and not address.is_loopback:
        raise WebConfigError(
            f"{wanted} can never reach the daemon, which listens on {LOOPBACK_HOST} only: another "
            "machine cannot connect to it; a proxy on this machine connects from loopback "
            "(--trust-proxy loopback), or bind an address it can reach (--web-host)"
        )


def _header(name: str, flag: str) -> bytes:
    if not _TOKEN.match(name):
        raise WebConfigError(f"{flag} {name!r} is not an HTTP header name")
    return name.lower().encode()

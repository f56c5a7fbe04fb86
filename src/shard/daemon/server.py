"""``shard daemon``: one asyncio process serving the unix socket and the WebSocket (DESIGN §2).

It writes ``$SHARD_HOME/daemon.json`` (pid, port, socket) once both listen, so clients and tests find
it, and removes it (and the socket) when it stops. SIGINT/SIGTERM stop it within about 2 s: it says
what it waits for, its runtimes stop their work (each aborts its turn and saves its session) and are
killed if they have not after a grace; a second signal stops at once.

The web side follows the :class:`WebPolicy` the command line chose (``config.plan``): its bind
address, the one Host and the origins it accepts. The security store is opened (and refused when
not owner-only) before anything listens. While no browser is enrolled, the banner is followed by a
single-use enrollment link on stdout — the one place a raw code is ever written, for the owner who
started the daemon; stderr (the log) never carries one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path

from shard._home import write_private
from shard._trace import mark
from shard.daemon.connection import DEFAULT_OUTBOUND_CAP
from shard.daemon.core import DEFAULT_IDLE_TIMEOUT, Daemon
from shard.daemon.early_template import EarlyTemplate
from shard.daemon.hosts.link import open_link
from shard.daemon.http import HttpFront, Route
from shard.daemon.jobs.settings import JobSettings
from shard.daemon.limits import DEFAULT_MAX_RUNTIMES
from shard.daemon.unix import serve_unix
from shard.daemon.web.auth import WebAuth
from shard.daemon.web.config import LOOPBACK, WebPolicy
from shard.daemon.web.static_files import static_routes
from shard.daemon.web.store import SecurityStore, StoreError
from shard.daemon.web.tickets import TICKET_TTL
from shard.daemon.websocket import PING_INTERVAL, WsEndpoint
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES

DEFAULT_PORT = 7433


class StartError(Exception):
    """The daemon cannot start (another one serves this SHARD_HOME, the port is taken): a message
    for the user, not a traceback."""


async def run(
    home: Path,
    *,
    port: int = DEFAULT_PORT,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    ping_interval: float = PING_INTERVAL,
    outbound_cap: int = DEFAULT_OUTBOUND_CAP,
    max_input: int = DEFAULT_MAX_LINE_BYTES,
    max_runtimes: int = DEFAULT_MAX_RUNTIMES,
    web: WebPolicy = LOOPBACK,
    ticket_ttl: float = TICKET_TTL,
    fallback_model: str | None = None,
    jobs: JobSettings | None = None,
    warm_pool: bool = True,
    early_template: EarlyTemplate | None = None,
) -> int:
    sock = home / "daemon.sock"
    try:
        store = SecurityStore(home)
    except StoreError as exc:
        raise StartError(exc.message) from None
    daemon = Daemon(
        home,
        idle_timeout=idle_timeout,
        socket_path=sock,
        max_runtimes=max_runtimes,
        fallback_model=fallback_model,
        jobs=jobs,
        warm_pool=warm_pool,
        early_template=early_template,
    )
    daemon.open_link = lambda folder, agent_id: open_link(daemon, folder, agent_id, max_input)
    unix_server: asyncio.Server | None = None
    http_server: asyncio.Server | None = None
    auth = WebAuth(web, store, ticket_ttl=ticket_ttl)
    ws = WsEndpoint(daemon, auth, max_message=max_input, ping_interval=ping_interval, cap=outbound_cap)
    both = frozenset({b"GET", b"POST"})
    routes = {
        **static_routes(),  # "/" and /app/…: the web client
        b"/enroll": Route(auth.enroll, both),
        b"/bootstrap": Route(auth.bootstrap, frozenset({b"POST"})),
        b"/ws": Route(ws),
    }
    front = HttpFront(routes, policy=web)
    info = home / "daemon.json"
    try:
        try:
            unix_server = await serve_unix(daemon, sock, max_input, outbound_cap, auth.admin)
        except OSError as exc:
            raise StartError(str(exc)) from None
        try:
            http_server = await asyncio.start_server(front, web.bind, port)
        except OSError as exc:
            raise StartError(f"cannot listen on {web.bind}:{port}: {exc.strerror or exc}") from None
        bound = http_server.sockets[0].getsockname()[1]
        front.port = auth.port = bound
        mark("daemon: listening")
        write_private(info, json.dumps({"pid": os.getpid(), "port": bound, "socket": str(sock)}).encode())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, daemon.interrupt)
        if web.warning is not None:
            print(f"shard daemon: {web.warning}", file=sys.stderr, flush=True)
        where = f"{web.bind}:{bound}" if ":" not in web.bind else f"[{web.bind}]:{bound}"
        if not store.any_live():  # before the banner, so whoever waits for the banner has it
            link, ttl = auth.enrollment_link()
            print(
                f"shard daemon: no browser is enrolled; open within {ttl / 60:g} minutes: {link}", flush=True
            )
        else:
            print(f"shard daemon: the web client: {web.base_url(bound)}/", flush=True)
        print(f"shard daemon: ws://{where}/ws and {sock}", flush=True)
        daemon.started()
        await daemon.stopped.wait()
    finally:
        if http_server is not None:
            http_server.close()
            await front.aclose(daemon.close_grace)
        if unix_server is not None:  # only what this daemon created is removed
            unix_server.close()
            with contextlib.suppress(FileNotFoundError):
                info.unlink()
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()
        with contextlib.suppress(Exception):
            await daemon.masters.close()  # every host's connection, and the runtimes still on it
        with contextlib.suppress(Exception):
            daemon.registry.close()
        with contextlib.suppress(Exception):
            store.close()
    print("shard daemon: stopped", file=sys.stderr, flush=True)
    return 0

"""``shard daemon``: one asyncio process serving the unix socket and the WebSocket (DESIGN §2).

It writes ``$SHARD_HOME/daemon.json`` (pid, port, socket) once both listen, so clients and tests find
it, and removes it (and the socket) when it stops. SIGTERM/SIGINT shut it down gracefully.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path

from shard._home import write_private
from shard.daemon.connection import DEFAULT_OUTBOUND_CAP
from shard.daemon.core import DEFAULT_IDLE_TIMEOUT, Daemon
from shard.daemon.http import HttpFront, Route
from shard.daemon.limits import DEFAULT_MAX_RUNTIMES
from shard.daemon.unix import serve_unix
from shard.daemon.websocket import PING_INTERVAL, WsEndpoint
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES

DEFAULT_PORT = 7433
_SHUTDOWN_GRACE = 2.0  # for WebSocket clients to answer the close frame the shutdown sent them


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
) -> int:
    sock = home / "daemon.sock"
    daemon = Daemon(home, idle_timeout=idle_timeout, socket_path=sock, max_runtimes=max_runtimes)
    unix_server: asyncio.Server | None = None
    http_server: asyncio.Server | None = None
    ws = WsEndpoint(daemon, max_message=max_input, ping_interval=ping_interval, cap=outbound_cap)
    front = HttpFront({b"/ws": Route(ws)})
    info = home / "daemon.json"
    try:
        try:
            unix_server = await serve_unix(daemon, sock, max_input, outbound_cap)
        except OSError as exc:
            raise StartError(str(exc)) from None
        try:
            http_server = await asyncio.start_server(front, "127.0.0.1", port)
        except OSError as exc:
            raise StartError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        bound = http_server.sockets[0].getsockname()[1]
        front.expected_host = f"127.0.0.1:{bound}".encode()
        ws.origin = f"http://127.0.0.1:{bound}".encode()
        write_private(info, json.dumps({"pid": os.getpid(), "port": bound, "socket": str(sock)}).encode())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, lambda: asyncio.ensure_future(daemon.shutdown(force=False)))
        print(f"shard daemon: ws://127.0.0.1:{bound}/ws and {sock}", flush=True)
        await daemon.stopped.wait()
    finally:
        if http_server is not None:
            http_server.close()
            await front.aclose(_SHUTDOWN_GRACE)
        if unix_server is not None:  # only what this daemon created is removed
            unix_server.close()
            with contextlib.suppress(FileNotFoundError):
                info.unlink()
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()
        with contextlib.suppress(Exception):
            daemon.registry.close()
    return 0

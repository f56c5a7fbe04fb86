"""A runtime on another host: ``shard agent --stdio --handoff`` started through the host's master
connection, with the handoff (keys, the daemon's config.toml, a child's instructions) written on its
stdin before anything else. The key crosses the encrypted channel only: it is never on a command
line, in an environment or on the host's disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from shard import _secrets
from shard._hosts import HostConfig
from shard.daemon.children import Child, spawn
from shard.daemon.hosts import ssh
from shard.daemon.hosts.connections import Masters
from shard.daemon.runtime_proc import Launcher

_keep: set[asyncio.Future[int | None]] = set()  # the waits that give a runtime's place back


class LinkEnd(Protocol):
    """A runtime's own socket to the daemon (``hosts/link.py``): the local end and the host's."""

    local: Path
    remote: str

    def close(self) -> None: ...


def remote_launcher(
    masters: Masters,
    host: HostConfig,
    env: Mapping[str, str],
    handoff: Mapping[str, object],
    link: LinkEnd | None = None,
) -> Launcher:
    """A :data:`Launcher` whose ``argv`` is the runtime's arguments after ``--home`` (on the host).
    ``link`` is forwarded to the host with the runtime and closed when the runtime's process ends."""

    def done(socket: Path | None) -> None:
        if socket is not None:
            masters.release(socket)
        if link is not None:
            link.close()

    async def launch(argv: list[str], _env: dict[str, str], _keys: int | None) -> Child:
        socket = None
        try:
            socket = await masters.take(host)
            remote = ssh.runtime_command(host, argv, link.remote if link is not None else None)
            forward = (link.remote, link.local) if link is not None else None
            child = await spawn(ssh.command_argv(host, socket, remote, forward), dict(env), None)
        except BaseException:
            done(socket)
            raise
        released = asyncio.ensure_future(child.wait())
        released.add_done_callback(lambda _: done(socket))
        _keep.add(released)
        released.add_done_callback(_keep.discard)
        assert child.stdin is not None
        child.stdin.write(_secrets.handoff_bytes(dict(handoff), keys=host.config == "daemon"))
        return child

    return launch

"""A runtime on another host: ``shard agent --stdio --handoff`` started through the host's master
connection, with the handoff (keys, the daemon's config.toml, a child's instructions) written on its
stdin before anything else. The key crosses the encrypted channel only: it is never on a command
line, in an environment or on the host's disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from shard import _secrets
from shard._hosts import HostConfig
from shard.daemon.children import Child, spawn
from shard.daemon.hosts import ssh
from shard.daemon.hosts.connections import Masters
from shard.daemon.runtime_proc import Launcher

_keep: set[asyncio.Future[int | None]] = set()  # the waits that give a runtime's place back


def remote_launcher(
    masters: Masters, host: HostConfig, env: Mapping[str, str], handoff: Mapping[str, object]
) -> Launcher:
    """A :data:`Launcher` whose ``argv`` is the runtime's arguments after ``--home`` (on the host)."""

    async def launch(argv: list[str], _env: dict[str, str], _keys: int | None) -> Child:
        socket = await masters.take(host)
        try:
            child = await spawn(
                ssh.command_argv(host, socket, ssh.runtime_command(host, argv)), dict(env), None
            )
        except BaseException:
            masters.release(socket)
            raise
        released = asyncio.ensure_future(child.wait())
        released.add_done_callback(lambda _: masters.release(socket))
        _keep.add(released)
        released.add_done_callback(_keep.discard)
        assert child.stdin is not None
        child.stdin.write(_secrets.handoff_bytes(dict(handoff), keys=host.config == "daemon"))
        return child

    return launch

"""``fs.list``, ``fs.read`` and ``fs.complete`` (Shard, protocol v1 additive), sans-I/O: the checks
that need no disk here (``paths.py``), the reading in a worker thread (``tree.py`` through
``effects.Offload``), so a large folder or a slow disk never holds up the daemon. A command holds its
connection until answered, as every command does.

Who may ask: any connection of the daemon, attached or not, as ``agent.status`` — the daemon is its
user's own, and an enrolled client can already read the folder through the agent. What may be seen:
``tree.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from shard._secret_places import HOME_SECRETS
from shard.daemon import wire
from shard.daemon.desk import Desk
from shard.daemon.effects import Client, Offload
from shard.daemon.files import tree
from shard.daemon.files.paths import parts_of
from shard.protocol.base import WireModel
from shard.protocol.daemon_commands import FsComplete, FsList, FsRead
from shard.protocol.errors import ErrorCode, ShardError

FS_COMMANDS = (FsList, FsRead, FsComplete)
FsCommand = FsList | FsRead | FsComplete


class FolderView:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.shard_home: str | None = None  # never listed by fs.complete (set by the shell)

    def handle(self, client: Client, command: FsCommand) -> None:
        if isinstance(command, FsComplete):
            home = self.shard_home
            self._offload(client, command, lambda: tree.complete(command.prefix, home))
            return
        cwd = self.desk.slot(command.agent_id).record.cwd  # NOT_FOUND for an unknown agent
        parts = parts_of(command.path or "")
        hidden = self._hidden()
        if isinstance(command, FsList):
            self._offload(client, command, lambda: tree.list_folder(cwd, parts, hidden))
        else:
            self._offload(client, command, lambda: tree.read_file(cwd, parts, hidden))

    def _hidden(self) -> tuple[str, ...]:
        """``$SHARD_HOME`` and the home's credential places, as written (resolved in the thread)."""
        home = os.path.expanduser("~")
        places = [os.path.join(home, p) for p in HOME_SECRETS]
        return tuple([self.shard_home] if self.shard_home else []) + tuple(places)

    def _offload(self, client: Client, command: FsCommand, work: Callable[[], WireModel]) -> None:
        client.waiting = True

        def back(outcome: Any) -> None:
            def answer() -> None:
                if isinstance(outcome, ShardError):
                    raise outcome
                if isinstance(outcome, BaseException):
                    why = f"{command.type} failed: {type(outcome).__name__}"
                    raise ShardError(ErrorCode.INTERNAL_ERROR, why)
                self.desk.send(client, wire.reply(command, outcome))
                self.desk.resume(client)

            self.desk.step(client, command, answer)

        self.desk.emit(Offload(work, back))

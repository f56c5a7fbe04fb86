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
from typing import Any, Protocol

from shard._secret_places import HOME_SECRETS
from shard.daemon import wire
from shard.daemon.desk import Desk
from shard.daemon.effects import Client, Offload
from shard.daemon.files import tree
from shard.daemon.files.paths import parts_of
from shard.protocol.base import WireModel
from shard.protocol.daemon_commands import FsComplete, FsList, FsRead
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.results import FsListResult, FsReadResult

FS_COMMANDS = (FsList, FsRead, FsComplete)
FsCommand = FsList | FsRead | FsComplete


class RemoteFolders(Protocol):
    """An agent's folder on another host (``hosts/remote_files.py``)."""

    def list(self, cwd: str, path: str) -> FsListResult: ...

    def read(self, cwd: str, path: str) -> FsReadResult: ...


class FolderView:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.shard_home: str | None = None  # never listed by fs.complete (set by the shell)
        self.remote: Callable[[str], RemoteFolders] | None = None  # agents on hosts (set by the shell)

    def handle(self, client: Client, command: FsCommand) -> None:
        if isinstance(command, FsComplete):
            home = self.shard_home
            self._offload(client, command, lambda: tree.complete(command.prefix, home))
            return
        record = self.desk.slot(command.agent_id).record  # NOT_FOUND for an unknown agent
        cwd, path = record.cwd, command.path or ""
        if record.host is not None:  # its folder is on that host: the same path here is another machine's
            if self.remote is None:
                raise ShardError(ErrorCode.INVALID_REQUEST, f"no file tree for agents on host {record.host}")
            far = self.remote(record.host)
            if isinstance(command, FsList):
                self._offload(client, command, lambda: far.list(cwd, path))
            else:
                self._offload(client, command, lambda: far.read(cwd, path))
            return
        parts = parts_of(path)
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

"""The file tree of an agent on another host (``fs.list``, ``fs.read``): the same ``files/tree.py``
run there by the host's own shard (``shard hosts fs``), which hides that host's SHARD_HOME and its
home's credential places. Its folder is a path on that host: the same path here is another
machine's files, never read. Blocking: a worker thread's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shard._hosts import HostConfig
from shard.daemon.hosts.remote_call import RemoteFailure, call
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.results import FsListResult, FsReadResult

_TIMEOUT = 60.0


class RemoteFiles:
    def __init__(self, host: HostConfig, socket: Path) -> None:
        self.host = host
        self.socket = socket

    def _call(self, op: str, cwd: str, path: str) -> Any:
        try:
            answer = call(self.host, self.socket, "fs", {"op": op, "cwd": cwd, "path": path}, _TIMEOUT)
        except RemoteFailure as exc:
            raise ShardError(ErrorCode.INTERNAL_ERROR, str(exc)) from None
        if "error" in answer:
            code = answer.get("code")
            known = code if code in {c.value for c in ErrorCode} else ErrorCode.INTERNAL_ERROR.value
            raise ShardError(ErrorCode(known), f"host {self.host.name}: {answer['error']}")
        return answer.get("ok")

    def list(self, cwd: str, path: str) -> FsListResult:
        return FsListResult.model_validate(self._call("list", cwd, path))

    def read(self, cwd: str, path: str) -> FsReadResult:
        return FsReadResult.model_validate(self._call("read", cwd, path))

"""A workspace's git on another host: each operation of :class:`~shard.daemon.workspaces.ops.GitOps`
is run there by the host's own shard (``shard hosts git``, the same ``workspaces/git.py`` with the
same pins), one ssh command over the host's connection, JSON in and out. Worktrees go under the
host's SHARD_HOME (``worktrees/``). Blocking: called in a worker thread."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from shard._hosts import HostConfig
from shard.daemon.hosts.remote_call import RemoteFailure, call
from shard.daemon.workspaces import git
from shard.daemon.workspaces.invoke import TIMEOUT
from shard.daemon.workspaces.model import Observed, Workspace


class RemoteGit:
    def __init__(self, host: HostConfig, socket: Path) -> None:
        self.host = host
        self.socket = socket

    def _call(self, op: str, **args: Any) -> Any:
        try:
            answer = call(self.host, self.socket, "git", {"op": op, **args}, TIMEOUT + 30)
        except RemoteFailure as exc:
            raise git.GitError(str(exc)) from None
        if "error" in answer:
            if answer.get("ignored") is not None:
                raise git.IgnoredFiles(list(answer["ignored"]))
            raise git.GitError(str(answer["error"]), conflict=bool(answer.get("conflict")))
        return answer.get("ok")

    def discover(self, cwd: str) -> git.Repository:
        return git.Repository(**self._call("discover", cwd=cwd))

    def worktree_path(self, repo: git.Repository, label: str, workspace_id: str) -> str:
        return str(
            self._call("worktree_path", repo=dataclasses.asdict(repo), label=label, workspace_id=workspace_id)
        )

    def resolve(self, repo: git.Repository, ref: str) -> str:
        return str(self._call("resolve", repo=dataclasses.asdict(repo), ref=ref))

    def create(self, repo: git.Repository, path: str, branch: str, base_ref: str) -> str:
        return str(
            self._call("create", repo=dataclasses.asdict(repo), path=path, branch=branch, base_ref=base_ref)
        )

    def observe(self, ws: Workspace) -> Observed:
        return Observed(**self._call("observe", ws=dataclasses.asdict(ws)))

    def merged(self, ws: Workspace) -> bool:
        return bool(self._call("merged", ws=dataclasses.asdict(ws)))

    def retire(self, ws: Workspace, *, delete_branch: bool, discard_ignored: bool = False) -> None:
        self._call(
            "retire", ws=dataclasses.asdict(ws), delete_branch=delete_branch, discard_ignored=discard_ignored
        )

    def diff(self, ws: Workspace) -> dict[str, Any]:
        answer = self._call("diff", ws=dataclasses.asdict(ws))
        if not isinstance(answer, dict):
            raise git.GitError(f"host {self.host.name}: its shard answered no diff")
        return answer

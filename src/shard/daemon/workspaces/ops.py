"""The git a workspace needs, behind one port (:class:`GitOps`): on this machine (:class:`LocalGit`,
``git.py`` with worktrees under ``$SHARD_HOME/worktrees``) or on another host (``hosts/remote_git.py``:
the same functions run there by the host's own shard, over ssh). Blocking: called in a worker thread
through ``effects.Offload``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from shard.daemon.workspaces import git, worktree_diff
from shard.daemon.workspaces.model import Observed, Workspace


class GitOps(Protocol):
    def discover(self, cwd: str) -> git.Repository: ...

    def worktree_path(self, repo: git.Repository, label: str, workspace_id: str) -> str: ...

    def resolve(self, repo: git.Repository, ref: str) -> str: ...

    def create(self, repo: git.Repository, path: str, branch: str, base_ref: str) -> str: ...

    def observe(self, ws: Workspace) -> Observed: ...

    def merged(self, ws: Workspace) -> bool: ...

    def retire(self, ws: Workspace, *, delete_branch: bool, discard_ignored: bool = False) -> None: ...

    def diff(self, ws: Workspace) -> dict[str, Any]: ...


class LocalGit:
    def __init__(self, root: Path) -> None:
        self.root = root  # where worktrees go

    def discover(self, cwd: str) -> git.Repository:
        return git.discover(cwd)

    def worktree_path(self, repo: git.Repository, label: str, workspace_id: str) -> str:
        return git.worktree_path(self.root, repo, label, workspace_id)

    def resolve(self, repo: git.Repository, ref: str) -> str:
        return git.resolve(repo, ref)

    def create(self, repo: git.Repository, path: str, branch: str, base_ref: str) -> str:
        return git.create(repo, path, branch, base_ref)

    def observe(self, ws: Workspace) -> Observed:
        return git.observe(ws)

    def merged(self, ws: Workspace) -> bool:
        return git.merged(ws)

    def retire(self, ws: Workspace, *, delete_branch: bool, discard_ignored: bool = False) -> None:
        git.retire(ws, delete_branch=delete_branch, discard_ignored=discard_ignored)

    def diff(self, ws: Workspace) -> dict[str, Any]:
        return worktree_diff.diff(ws)

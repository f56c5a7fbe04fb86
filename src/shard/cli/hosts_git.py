"""``shard hosts git`` — run on a host by its daemon over ssh (``shard.daemon.hosts.remote_git``):
one workspace git operation, a JSON request on stdin, a JSON answer on stdout. The same
``workspaces/git.py`` the daemon runs at home, with the same pins: nothing a repository's files
name ever runs."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from shard.agent.config.settings import shard_home
from shard.daemon.workspaces import git, worktree_diff
from shard.daemon.workspaces.model import Workspace


def main_git(home_flag: str | None) -> int:
    try:
        request = json.loads(sys.stdin.buffer.read())
        answer: dict[str, Any] = {"ok": _run(request, shard_home(home_flag) / "worktrees")}
    except git.IgnoredFiles as found:
        answer = {"error": found.message, "conflict": True, "ignored": found.paths}
    except git.GitError as exc:
        answer = {"error": exc.message, "conflict": exc.conflict}
    except (ValueError, KeyError, TypeError) as exc:
        answer = {"error": f"a malformed request: {exc}"}
    sys.stdout.write(json.dumps(answer))
    return 0


def _run(request: dict[str, Any], root: Path) -> Any:
    op = request["op"]
    if op == "discover":
        return asdict(git.discover(str(request["cwd"])))
    if op in ("worktree_path", "resolve", "create"):
        repo = git.Repository(**request["repo"])
        if op == "worktree_path":
            return git.worktree_path(root, repo, str(request["label"]), str(request["workspace_id"]))
        if op == "resolve":
            return git.resolve(repo, str(request["ref"]))
        return git.create(repo, str(request["path"]), str(request["branch"]), str(request["base_ref"]))
    ws = Workspace(**request["ws"])
    if op == "observe":
        return asdict(git.observe(ws))
    if op == "diff":
        return worktree_diff.diff(ws)
    if op == "merged":
        return git.merged(ws)
    if op == "retire":
        git.retire(
            ws, delete_branch=bool(request["delete_branch"]), discard_ignored=bool(request["discard_ignored"])
        )
        return None
    raise ValueError(f"unknown operation {op!r}")

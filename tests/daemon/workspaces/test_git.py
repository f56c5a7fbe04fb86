"""The daemon's git: it runs no hook of the project, ignores the GIT_* variables it inherited, and
its error messages name no private path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from shard.daemon.workspaces import git
from shard.daemon.workspaces.model import Workspace
from workspaces.conftest import commit
from workspaces.conftest import git as run_git


def test_a_projects_hooks_never_run(repo: Path, tmp_path: Path):
    """A post-checkout hook (which `git worktree add` would run) leaves no trace: the daemon does
    not run the project's code on its own."""
    marker = tmp_path / "hook-ran"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    found = git.discover(str(repo))
    git.create(found, str(tmp_path / "wt"), "topic", "main")
    assert (tmp_path / "wt" / "README.md").exists()
    assert not marker.exists()


def test_inherited_git_variables_are_ignored(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A daemon started from inside a hook has GIT_DIR set: it must not act on that repository."""
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("GIT_DIR", str(other))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    found = git.discover(str(repo))
    assert found.main_root == os.path.realpath(repo)
    assert found.branch == "main"


def test_errors_cut_out_the_repository_path(repo: Path, tmp_path: Path):
    found = git.discover(str(repo))
    ws = Workspace(
        "ws-1", "l", str(tmp_path / "x"), found.main_root, found.common_dir, "b", "main", "0", "main", 0, 0
    )
    with pytest.raises(git.GitError) as caught:
        git.retire(ws, delete_branch=True)  # no such branch
    assert found.common_dir not in caught.value.message
    assert caught.value.message


def test_a_bare_repository_has_no_main_checkout(tmp_path: Path, repo: Path):
    bare = tmp_path / "bare.git"
    run_git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    with pytest.raises(git.GitError, match="bare"):
        git.discover(str(bare))


def test_merged_is_proven_by_reachability(repo: Path, tmp_path: Path):
    found = git.discover(str(repo))
    base = git.create(found, str(tmp_path / "wt"), "topic", "main")
    ws = Workspace(
        "ws-1",
        "l",
        str(tmp_path / "wt"),
        found.main_root,
        found.common_dir,
        "topic",
        "main",
        base,
        "main",
        0,
        0,
    )
    assert git.merged(ws) is True  # no commits of its own: nothing to lose
    commit(tmp_path / "wt", "new.txt")
    assert git.merged(ws) is False

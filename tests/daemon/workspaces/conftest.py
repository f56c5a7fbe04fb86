"""Real git repositories for the workspace tests, and the broker in memory with its git work done
inline (``shard.testing.broker`` performs ``Offload`` at once: git and files are real)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shard.testing.broker import BrokerHarness

GIT_ID = ["-c", "user.name=Shard Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", *GIT_ID, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return result.stdout.strip()


def commit(cwd: Path, name: str, text: str = "x\n", message: str | None = None) -> str:
    (cwd / name).write_text(text)
    git(cwd, "add", name)
    git(cwd, "commit", "-q", "-m", message or f"add {name}")
    return git(cwd, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit on ``main``."""
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit(path, "README.md", "# project\n", "initial")
    return path


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[BrokerHarness]:
    h = BrokerHarness()
    h.broker.workspaces.root = tmp_path / "home" / "worktrees"
    yield h
    assert h.wire_problems() == []

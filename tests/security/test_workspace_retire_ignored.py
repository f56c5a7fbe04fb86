"""Retiring a workspace loses nothing (issue 25, item 5): git-ignored files count.

``git worktree remove`` deletes what ``.gitignore`` hides (a ``.env``, build output) without a word,
so the daemon refuses while the worktree holds any, naming them, until the caller confirms their loss
with ``discard_ignored: true``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import text_step
from shard.testing.broker import BrokerHarness, MemoryClient

GIT_ID = ["-c", "user.name=Shard Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_ID, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )
    return done.stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / ".gitignore").write_text(".env\nout/\n*.log\n")
    (path / "README.md").write_text("# project\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[BrokerHarness]:
    h = BrokerHarness()
    h.broker.workspaces.root = tmp_path / "home" / "worktrees"
    yield h
    assert h.wire_problems() == []


def _stopped_workspace(harness: BrokerHarness, client: MemoryClient, project: Path) -> dict[str, Any]:
    created = client.request({"type": "workspace.create", "cwd": str(project)})
    assert created["success"], created
    harness.runtime(created["data"]["agent_id"]).exit(0)
    return created["data"]["workspace"]


def _retire(client: MemoryClient, ws: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return client.request({"type": "workspace.retire", "workspace_id": ws["workspace_id"], **fields})


def _plant(cwd: Path) -> None:
    (cwd / ".env").write_text("API_KEY=not-in-git\n")
    (cwd / "out").mkdir()
    (cwd / "out" / "report.csv").write_text("a,b\n1,2\n")


def test_ignored_files_refuse_the_retirement_until_their_loss_is_confirmed(
    harness: BrokerHarness, project: Path
):
    """A worktree with an ignored ``.env`` and ``out/report.csv``: CONFLICT confirmation_required
    naming them (relative to the worktree), nothing removed, the workspace still active; the retry
    with ``discard_ignored: true`` retires it.

    Covers: R10.1a.9, R10.1a.14
    """
    client = harness.connect()
    ws = _stopped_workspace(harness, client, project)
    cwd = Path(ws["cwd"])
    _plant(cwd)
    for disposition in (None, "keep", "delete_confirmed"):
        refused = _retire(client, ws, **({"branch_disposition": disposition} if disposition else {}))
        assert refused["error"]["code"] == "CONFLICT", refused
        data = refused["error"]["data"]
        assert data["kind"] == "confirmation_required"
        assert data["workspace_id"] == ws["workspace_id"]
        assert data["confirmation_field"] == "discard_ignored"
        assert data["ignored"] == [".env", "out/"]
        assert data["ignored_total"] == 2
        assert str(cwd) not in data["reason"]
    assert (cwd / ".env").read_text() == "API_KEY=not-in-git\n"
    assert (cwd / "out" / "report.csv").read_text() == "a,b\n1,2\n"
    status = client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"]})["data"]
    assert status["workspace"]["lifecycle"] == "active"
    (conflict,) = {c["reason"] for c in client.of_type("workspace_conflict")}
    assert ".env" not in conflict  # told to everyone: the daemon's words, no file names

    done = _retire(client, ws, discard_ignored=True)
    assert done["success"], done
    assert done["data"]["workspace"]["lifecycle"] == "retired"
    assert not cwd.exists()
    assert ws["branch"] in git(project, "branch", "--format=%(refname:short)").split()


def test_the_list_of_ignored_paths_is_bounded(harness: BrokerHarness, project: Path):
    """Covers: R10.1a.14"""
    client = harness.connect()
    ws = _stopped_workspace(harness, client, project)
    cwd = Path(ws["cwd"])
    for n in range(80):
        (cwd / f"build-{n:02}.log").write_text("log\n")
    data = _retire(client, ws)["error"]["data"]
    assert data["ignored_total"] == 80
    assert data["ignored"] == [f"build-{n:02}.log" for n in range(len(data["ignored"]))]
    assert 0 < len(data["ignored"]) <= 50
    assert len(list(cwd.glob("*.log"))) == 80


def test_an_ignored_directory_holding_nothing_loses_nothing(harness: BrokerHarness, project: Path):
    """Empty ignored folders hold no work: no confirmation is asked for them."""
    client = harness.connect()
    ws = _stopped_workspace(harness, client, project)
    (Path(ws["cwd"]) / "out" / "empty").mkdir(parents=True)
    assert _retire(client, ws)["success"]


def test_discard_ignored_does_not_discard_changes(harness: BrokerHarness, project: Path):
    """The confirmation covers ignored files only: an untracked file still refuses as dirty.

    Covers: R10.1a.14
    """
    client = harness.connect()
    ws = _stopped_workspace(harness, client, project)
    cwd = Path(ws["cwd"])
    _plant(cwd)
    (cwd / "notes.md").write_text("untracked work\n")
    refused = _retire(client, ws, discard_ignored=True)
    assert refused["error"]["data"]["kind"] == "dirty"
    assert (cwd / "notes.md").exists()
    assert (cwd / ".env").exists()


def test_discard_ignored_must_be_a_boolean(harness: BrokerHarness, project: Path):
    client = harness.connect()
    ws = _stopped_workspace(harness, client, project)
    _plant(Path(ws["cwd"]))
    refused = _retire(client, ws, discard_ignored="yes")
    assert refused["error"]["code"] == "INVALID_REQUEST"
    assert "discard_ignored" in refused["error"]["message"]
    assert (Path(ws["cwd"]) / ".env").exists()


async def test_through_a_real_daemon_ignored_files_survive_a_plain_retire(daemon_factory, project: Path):
    """Covers: R10.1a.14"""
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await daemon.unix()
    created, _ = await client.request({"type": "workspace.create", "id": "c", "cwd": str(project)})
    ws = created["data"]["workspace"]
    await daemon.stop()  # its agent's runtime ends with it

    again = await daemon_factory()
    client = await again.unix()
    cwd = Path(ws["cwd"])
    _plant(cwd)
    refused, _ = await client.request(
        {"type": "workspace.retire", "id": "r1", "workspace_id": ws["workspace_id"]}
    )
    assert refused["error"]["data"]["ignored"] == [".env", "out/"]
    assert (cwd / "out" / "report.csv").exists()
    retired, _ = await client.request(
        {"type": "workspace.retire", "id": "r2", "workspace_id": ws["workspace_id"], "discard_ignored": True}
    )
    assert retired["success"], retired
    assert not cwd.exists()

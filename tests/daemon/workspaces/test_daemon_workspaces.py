"""Workspaces through a real daemon on a real repository: two siblings listed together, a retire
refused while its agent runs, a restart that keeps them, and no git-dir path anywhere on the wire."""

from __future__ import annotations

from pathlib import Path

from shard.testing import text_step
from workspaces.conftest import git


async def test_workspaces_through_a_daemon_and_its_restart(daemon_factory, repo: Path, home: Path):
    """Covers: R10.1a.1, R10.1a.9, R10.1a.14, R10.1a.17, R10.1a.20, R10.1a.23"""
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await daemon.unix()
    seen: list = []

    async def request(message: dict) -> dict:
        response, before = await client.request(message)
        seen.extend([*before, response])
        return response

    first = await request({"type": "workspace.create", "id": "c1", "cwd": str(repo), "label": "one"})
    second = await request({"type": "workspace.create", "id": "c2", "cwd": str(repo), "label": "two"})
    assert first["success"], first
    assert second["success"], second
    one, two = first["data"], second["data"]
    assert Path(one["workspace"]["cwd"]).is_relative_to(home / "worktrees")
    listed = (await request({"type": "workspace.list", "id": "l", "cwd": str(repo)}))["data"]["workspaces"]
    assert [w["label"] for w in listed] == ["one", "two"]
    assert {w["repository_cwd"] for w in listed} == {str(repo.resolve())}
    refused = await request(
        {"type": "workspace.retire", "id": "r1", "workspace_id": two["workspace"]["workspace_id"]}
    )
    assert refused["error"]["code"] == "CONFLICT"
    assert refused["error"]["data"]["kind"] in ("live", "busy")
    assert Path(two["workspace"]["cwd"]).is_dir()
    await daemon.stop()

    again = await daemon_factory()
    client = await again.unix()
    listed = (await request({"type": "workspace.list", "id": "l2"}))["data"]["workspaces"]
    assert [(w["workspace_id"], w["lifecycle"]) for w in listed] == [
        (one["workspace"]["workspace_id"], "active"),
        (two["workspace"]["workspace_id"], "active"),
    ]
    retired = await request(
        {"type": "workspace.retire", "id": "r2", "workspace_id": two["workspace"]["workspace_id"]}
    )
    assert retired["success"], retired  # its agent's runtime ended with the old daemon
    assert not Path(two["workspace"]["cwd"]).exists()
    common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
    worktree_gitdir = git(Path(one["workspace"]["cwd"]), "rev-parse", "--path-format=absolute", "--git-dir")
    wire = str(seen)
    assert common not in wire
    assert worktree_gitdir not in wire
    assert str(home / "state.db") not in wire

"""Everything is checked before anything is written (issue 25 item 7): against a real daemon, each
bad ``agent.create`` or ``subagent.create`` is INVALID_REQUEST naming its field, the connection
serves on, and ``state.db`` — read from the file, and through ``agent.list`` — has no new row. The
daemon has no tool extensions here, so it knows every tool name a runtime could offer."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shard.testing import text_step
from shard.testing.reader import MessageReader

GHOST = '\n[[providers]]\nname = "ghost"\nkind = "scripted"\nscript = "script.json"\nmodels = ["g"]\n'


def _rows(home: Path) -> dict[str, int]:
    db = sqlite3.connect(home / "state.db")
    try:
        return {
            table: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("agents", "jobs", "runs")
        }
    finally:
        db.close()


async def _refused(client: MessageReader, home: Path, message: dict[str, Any], field: str) -> None:
    """``message`` is INVALID_REQUEST naming ``field``; nothing was written; the connection is up."""
    before = _rows(home)
    response, seen = await client.request(message)
    assert response["success"] is False, (field, response)
    assert response["error"]["code"] == "INVALID_REQUEST", (field, response)
    assert field in response["error"]["message"], (field, response["error"]["message"])
    assert len(response["error"]["message"]) < 2000, "a bounded message, whatever was sent"
    assert not [m for m in seen if m["type"] == "agent_spawned"]
    assert _rows(home) == before, field
    listed, _ = await client.request({"type": "agent.list", "id": "after"})
    assert listed["success"] is True, "the connection serves on"
    assert len(listed["data"]["agents"]) == before["agents"]


@pytest.fixture
async def daemon(daemon_factory: Any) -> Any:
    return await daemon_factory([text_step("ok")], extensions=[])


async def test_a_bad_agent_create_is_refused_naming_its_field_before_any_row(daemon, home, project):
    """An unknown tool, model, provider or mode, a 1 MB name, a NUL in cwd: each INVALID_REQUEST
    naming the field, and no Agent row; the same create with good values makes one, and a model
    added to config.toml while the daemon runs is known at once.

    Covers: R10.1.3, R10.1.4, R8.7, R8.1
    """
    client = await daemon.unix()
    create = {"type": "agent.create", "id": "c", "cwd": str(project)}
    await _refused(client, home, {**create, "tools": ["read", "teleport"]}, "tools[1]")
    await _refused(client, home, {**create, "model": "ghost/g"}, "model")
    await _refused(client, home, {**create, "model": "g", "provider": "ghost"}, "provider")
    await _refused(client, home, {**create, "mode": "yolo"}, "mode")
    await _refused(client, home, {**create, "name": "n" * (1024 * 1024)}, "name")
    await _refused(client, home, {**create, "cwd": f"{project}\0/evil"}, "cwd")
    await _refused(client, home, {**create, "tools": ["t" * 65]}, "tools")
    good = {**create, "tools": ["read", "grep", "recall"], "mode": "plan", "model": "m", "provider": "test"}
    made, _ = await client.request(good)
    assert made["success"] is True, made
    assert _rows(home)["agents"] == 1
    listed, _ = await client.request({"type": "agent.list", "id": "l"})
    (info,) = listed["data"]["agents"]
    assert (info["model"], info["mode"]) == ("test/m", "plan")

    config = home / "config.toml"  # the catalog follows config.toml, as the runtimes read it
    config.write_text(config.read_text() + GHOST)
    ghost, _ = await client.request({**create, "model": "ghost/g"})
    assert ghost["success"] is True, ghost


async def test_a_bad_subagent_create_is_refused_naming_its_field_before_any_row(daemon, home, project):
    """Under a good parent: an unknown model, provider or mode, an over-long task name, and an agent
    definition naming a model no runtime has — each INVALID_REQUEST naming it, with no job, run or
    Agent row; then a good create writes them.

    Covers: R10.3.16, R10.3.17, R8.7
    """
    agents = project / ".shard" / "agents"
    agents.mkdir(parents=True)
    (agents / "dreamer.md").write_text("---\ndescription: Dreams\nmodel: ghost/g\n---\nDream.\n")
    client = await daemon.unix()
    created, _ = await client.request({"type": "agent.create", "id": "p", "cwd": str(project)})
    parent = created["data"]["agent_id"]
    create = {"type": "subagent.create", "id": "s", "parent_agent_id": parent, "name": "kid", "task": "t"}
    await _refused(client, home, {**create, "model": "ghost/g"}, "model")
    await _refused(client, home, {**create, "model": "m", "provider": "ghost"}, "provider")
    await _refused(client, home, {**create, "mode": "yolo"}, "mode")
    await _refused(client, home, {**create, "name": "k" * 65}, "name")
    await _refused(client, home, {**create, "name": "dreamer"}, "agent definition dreamer: unknown model")
    made, _ = await client.request({**create, "model": "test/m", "mode": "plan"})
    assert made["success"] is True, made
    assert _rows(home) == {"agents": 2, "jobs": 1, "runs": 1}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout


async def test_a_bad_workspace_create_or_attach_is_refused_before_anything_is_made(daemon, home, project):
    """``workspace.create`` and ``workspace.attach`` launch an agent too: an unknown model, provider
    or mode is INVALID_REQUEST naming it before any worktree, branch or row is made.

    Covers: R10.1a.2, R8.7
    """
    _git(project, "init", "-q", "-b", "main")
    (project / "f.txt").write_text("x\n")
    _git(project, "add", "f.txt")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    client = await daemon.unix()
    create = {"type": "workspace.create", "id": "w", "cwd": str(project), "label": "feature"}
    await _refused(client, home, {**create, "model": "ghost/g"}, "model")
    await _refused(client, home, {**create, "model": "m", "provider": "ghost"}, "provider")
    await _refused(client, home, {**create, "mode": "yolo"}, "mode")
    assert _git(project, "branch", "--list").split() == ["*", "main"], "no branch was made"
    assert _git(project, "worktree", "list").count("\n") == 1, "no worktree was made"
    made, _ = await client.request({**create, "model": "test/m", "mode": "plan"})
    assert made["success"] is True, made
    workspace_id = made["data"]["workspace"]["workspace_id"]
    attach = {"type": "workspace.attach", "id": "a", "workspace_id": workspace_id}
    await _refused(client, home, {**attach, "mode": "yolo"}, "mode")
    await _refused(client, home, {**attach, "model": "ghost/g"}, "model")

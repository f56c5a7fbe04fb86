"""The workspaces department on its own, against a fake desk (``fake_desk.py``) and a real git
repository: what it asks of the desk, with no broker behind it. The same commands through the whole
broker are ``test_service.py``'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_desk import FakeDesk

from shard.daemon.effects import Client, Offload
from shard.daemon.workspaces.service import Workspaces
from shard.protocol import commands as cmd


def _work(desk: FakeDesk) -> None:
    """Perform the git work handed off, inline, as the worker thread would."""
    while offloads := [e for e in desk.effects if isinstance(e, Offload)]:
        for effect in offloads:
            desk.effects.remove(effect)
            outcome: Any
            try:
                outcome = effect.call()
            except Exception as exc:
                outcome = exc
            effect.then(outcome)


@pytest.fixture
def made(tmp_path: Path, repo: Path) -> tuple[FakeDesk, Workspaces, Client, dict[str, Any]]:
    """A workspace made through the department: the desk, the department, the client, its answer."""
    desk = FakeDesk()
    workspaces = Workspaces(desk, desk.manifests)
    workspaces.root = tmp_path / "worktrees"
    client = Client(1, "unix")
    workspaces.handle(client, cmd.WorkspaceCreate(id="w1", cwd=str(repo), label="try it"))
    assert client.waiting
    _work(desk)
    desk.run_started()
    [answer] = desk.replies(client)
    assert answer["success"], answer
    return desk, workspaces, client, answer["data"]


def test_create_records_the_workspace_and_admits_its_one_agent_through_the_desk(made):
    desk, _, client, data = made
    assert [s.agent_id for s in desk.admitted] == [data["agent_id"]]
    assert desk.admitted[0].record.workspace_id == data["workspace"]["workspace_id"]
    assert list(desk.manifests.workspaces) == [data["workspace"]["workspace_id"]]
    assert [m["type"] for m in desk.broadcasts] == ["workspace_created"]
    assert not client.waiting


def test_status_shows_the_agent_the_desk_holds_for_the_workspace(made):
    desk, workspaces, client, data = made
    ws_id = data["workspace"]["workspace_id"]
    workspaces.handle(client, cmd.WorkspaceStatus(id="s1", workspace_id=ws_id))
    _work(desk)
    shown = desk.replies(client)[-1]["data"]["workspace"]
    assert [a["agent_id"] for a in shown["bindings"]] == [data["agent_id"]]


def test_a_workspace_whose_agent_is_gone_from_the_desk_lists_none(made):
    desk, workspaces, client, data = made
    desk.forget(desk.slot(data["agent_id"]))
    workspaces.handle(client, cmd.WorkspaceStatus(id="s1", workspace_id=data["workspace"]["workspace_id"]))
    _work(desk)
    assert desk.replies(client)[-1]["data"]["workspace"]["bindings"] == []

"""``agent.remove`` of a workspace's agent, in process on a real repository (additive to PROTOCOL
§10.1; ARCHITECTURE → The daemon → Removing an agent): the workspace, its worktree and its branch
stay; it lists one agent fewer and takes a fresh one."""

from __future__ import annotations

from pathlib import Path

from shard.testing.broker import BrokerHarness
from workspaces.conftest import git


def test_removing_a_workspaces_agent_keeps_the_workspace(harness: BrokerHarness, repo: Path):
    """The agent leaves; the workspace stays active with its worktree and branch, its binding gone;
    ``workspace.attach`` gives it a fresh agent and ``workspace.retire`` still retires it.

    Covers: R10.1a.9, R10.1a.15, R10.1a.19
    """
    client = harness.connect()
    data = client.request({"type": "workspace.create", "cwd": str(repo), "label": "Fix login"})["data"]
    ws_id, agent = data["workspace"]["workspace_id"], data["agent_id"]

    answer = client.request({"type": "agent.remove", "agent_id": agent})
    assert answer["data"] == {"removed": [agent]}
    ws = client.request({"type": "workspace.status", "workspace_id": ws_id})["data"]["workspace"]
    assert (ws["lifecycle"], ws["counts"]["agents"], ws["bindings"]) == ("active", 0, [])
    assert Path(ws["cwd"]).is_dir()
    assert ws["branch"] in git(repo, "branch", "--format=%(refname:short)").split()

    again = client.request({"type": "workspace.attach", "workspace_id": ws_id})
    assert again["success"] is True, again
    assert again["data"]["agent_id"] != agent
    client.request({"type": "agent.remove", "agent_id": again["data"]["agent_id"]})
    retired = client.request({"type": "workspace.retire", "workspace_id": ws_id})
    assert retired["success"] is True, retired

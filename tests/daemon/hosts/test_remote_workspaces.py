"""A workspace on another host (issue: remote hosts, item 2): the worktree is made, observed, diffed
and retired there by the host's own shard over ssh; its agent runs there."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from conftest import absolute_script, host_toml
from shard.testing import DaemonProcess, text_step, write_scripted_home

# a real sshd, daemons and runtimes on the "host" (so no local runtime: its daemons need no template)
pytestmark = [pytest.mark.slow, pytest.mark.no_local_runtimes]


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.mark.long
async def test_a_workspace_on_the_host_is_made_used_and_retired_there(tmp_path, sshd, remote):
    repo = remote / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# on the host\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "initial")
    home = write_scripted_home(
        tmp_path / "home", [text_step("hi")], loop=True, extra_toml=host_toml(sshd, remote)
    )
    absolute_script(home)
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        made, _ = await client.request(
            {"type": "workspace.create", "id": "w", "cwd": str(repo), "host": "box", "label": "far"}
        )
        assert made["success"] is True, made
        worktree = Path(made["data"]["workspace"]["cwd"])
        assert worktree.is_relative_to(remote / "home" / "worktrees"), "under the host's SHARD_HOME"
        assert (worktree / "README.md").read_text() == "# on the host\n"
        assert not (home / "worktrees").exists()
        agent_id = made["data"]["agent_id"]
        attached, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        assert attached["data"]["info"]["host"] == "box"
        assert attached["data"]["info"]["cwd"] == str(worktree)
        ws_id = made["data"]["workspace"]["workspace_id"]
        status, _ = await client.request({"type": "workspace.status", "id": "s", "workspace_id": ws_id})
        assert status["success"] is True, status
        (worktree / "README.md").write_text("# changed on the host\n")
        diff, _ = await client.request({"type": "workspace.diff", "id": "d", "workspace_id": ws_id})
        assert diff["success"] is True, diff  # run there, by the host's shard
        assert [(f["path"], f["hunks"][0]["lines"]) for f in diff["data"]["files"]] == [
            ("README.md", ["-# on the host", "+# changed on the host"])
        ]
        (worktree / "README.md").write_text("# on the host\n")
        refused, _ = await client.request({"type": "workspace.retire", "id": "r", "workspace_id": ws_id})
        assert refused["error"]["code"] == "CONFLICT"
        await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent_id})
        for _ in range(600):  # its runtime stops (a poll: the daemon says it in the list)
            listed, _ = await client.request({"type": "agent.list", "id": "l"})
            states = [a["runtime_state"] for a in listed["data"]["agents"] if a["agent_id"] == agent_id]
            if states in ([], ["stopped"]):
                break
            await asyncio.sleep(0.05)
        assert states in ([], ["stopped"]), states
        retired, _ = await client.request({"type": "workspace.retire", "id": "r2", "workspace_id": ws_id})
        assert retired["success"] is True, retired
        assert not worktree.exists()
        unknown, _ = await client.request(
            {"type": "workspace.create", "id": "w2", "cwd": str(repo), "host": "nowhere"}
        )
        assert unknown["error"]["code"] == "INVALID_REQUEST"
    finally:
        await daemon.stop()

"""The runtime's line to its daemon (DESIGN §2), against a real ``shard daemon``: a command's data,
a refusal as its protocol code, a daemon that is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.daemon_link import SOCKET_VARIABLE, DaemonLink, LinkError
from shard.protocol.commands import SubagentStatus
from shard.testing import DaemonProcess, text_step, write_scripted_home


async def test_a_command_answers_its_data_and_a_refusal_its_code(tmp_path: Path):
    """Covers: R10.3.48, R10.3.50"""
    home = write_scripted_home(tmp_path / "home", [text_step("hi")])
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(tmp_path)})
        parent = created["data"]["agent_id"]
        link = DaemonLink.hosted(parent, {SOCKET_VARIABLE: str(daemon.socket)})
        assert link is not None
        assert await link.call(SubagentStatus(parent_agent_id=parent)) == {"agents": [], "jobs": []}
        stranger = DaemonLink(daemon.socket, "agent-nobody")
        with pytest.raises(LinkError) as refused:
            await stranger.call(SubagentStatus(parent_agent_id="agent-nobody"))
        assert refused.value.code == "NOT_FOUND"
        assert "\n" not in refused.value.message
    finally:
        await daemon.kill()


async def test_a_daemon_that_is_not_there_is_one_error(tmp_path: Path):
    link = DaemonLink(tmp_path / "daemon.sock", "agent-1")
    with pytest.raises(LinkError) as failed:
        await link.call(SubagentStatus(parent_agent_id="agent-1"))
    assert failed.value.code == "INTERNAL_ERROR"
    assert failed.value.message.startswith("the daemon is not reachable")

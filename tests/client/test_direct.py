"""A direct connection to a spawned ``shard agent --stdio`` (no daemon)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.client import ConnectionLost, connect_stdio
from shard.client.transports import ProcessTransport
from shard.protocol.events import Sync
from shard.testing import write_scripted_home
from shard.testing.home import text_step


async def test_prompt_and_wait_on_a_spawned_agent(tmp_path: Path, project: Path):
    """hello, then sync at once (no attach, no agent_id); prompt-and-wait; mode switch gated on
    sync.capabilities; closing ends the agent's input and it exits.

    Covers: R6.1.2, R9.1.2, R9.1.7, R5.2.6, R9.1.12, R7.10, R12.1.1, R10.2.6
    """
    home = write_scripted_home(tmp_path / "home", [text_step("Direct answer.")])
    agent = await connect_stdio(cwd=project, home=home)
    async with agent:
        first = await agent.events().next(10)
        assert isinstance(first, Sync)
        assert first.agent_id is None
        assert agent.agent_id is None
        assert agent.supports("mode-switch")
        result = await agent.prompt_and_wait("hello?", timeout=30)
        assert result.text == "Direct answer."
        assert all(e.agent_id is None for e in result.events)
        modes = await agent.list_modes()
        other = next(m.name for m in modes.modes if m.name != modes.active)
        changed = await agent.set_mode(other)
        assert changed.mode == other
        assert agent.mode == other  # mode_changed arrived before or alongside the response
    transport = agent.connection.transport
    assert isinstance(transport, ProcessTransport)
    assert transport.proc.returncode == 0


async def test_a_dead_agent_fails_waiting_requests(tmp_path: Path, project: Path):
    """The agent process dies: the stream ends with ConnectionLost and no reconnect is tried (the
    process was the agent)."""
    home = write_scripted_home(tmp_path / "home", [text_step("x")])
    agent = await connect_stdio(cwd=project, home=home)
    agent.connection.drop()  # kills the process
    stream = agent.events()
    with pytest.raises(ConnectionLost):
        await drain(stream)
    await agent.close()


async def drain(stream) -> None:
    while True:
        await stream.next(10)

"""``ShardClient.remove_agent`` against a real daemon (issue 26 item 6; additive ``agent.remove``):
the agent leaves this client and every other, its stream ends, and its session reopens as a new
agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shard.client import CommandError, ShardClient
from shard.protocol.events import AgentRemoved
from shard.testing.home import text_step


async def test_remove_agent_ends_its_stream_and_tells_other_clients(daemon_factory, project: Path):
    """Covers: R5.2.4, R10.1.9, R12.4.1"""
    daemon = await daemon_factory([text_step("kept in the session")])
    async with (
        await ShardClient.connect_unix(home=daemon.home) as remover,
        await ShardClient.connect_unix(home=daemon.home) as watcher,
    ):
        agent = await remover.create_agent(project)
        await agent.prompt_and_wait("remember this")
        assert agent.last_sync is not None
        session = agent.last_sync.session_id
        told = watcher.subscribe_orchestrator()
        watched = await watcher.attach(agent.agent_id)
        stream = watched.subscribe()

        assert await remover.remove_agent(agent.agent_id) == [agent.agent_id]
        assert agent.agent_id not in remover.agents
        while not isinstance(event := await told.next(10), AgentRemoved):
            pass
        assert (event.agent_id, event.session_id) == (agent.agent_id, session)
        assert agent.agent_id not in watcher.agents
        await asyncio.wait_for(_drain(stream), 10)  # the watcher's stream has ended
        assert agent.agent_id not in [a.agent_id for a in await watcher.list_agents()]
        with pytest.raises(CommandError) as refused:
            await watcher.remove_agent(agent.agent_id)
        assert refused.value.code == "NOT_FOUND"

        reopened = await remover.create_agent(project, session_id=session)
        assert reopened.last_sync is not None
        assert reopened.last_sync.live_window.messages[0].content[0].text == "remember this"


async def _drain(stream) -> None:
    async for _ in stream:
        pass

"""``ShardClient.rename_agent`` against a real daemon (additive ``agent.rename``): the answer is the
renamed AgentInfo, and another client hears ``agent_changed``."""

from __future__ import annotations

from pathlib import Path

from shard.client import ShardClient
from shard.protocol.events import AgentChanged


async def test_rename_agent_tells_other_clients(daemon_factory, project: Path):
    daemon = await daemon_factory([])
    async with (
        await ShardClient.connect_unix(home=daemon.home) as renamer,
        await ShardClient.connect_unix(home=daemon.home) as watcher,
    ):
        agent_id = await renamer.create_agent_id(project)
        told = watcher.subscribe_orchestrator()
        info = await renamer.rename_agent(agent_id, "Fix the parser")
        assert (info.agent_id, info.name) == (agent_id, "Fix the parser")
        while not isinstance(event := await told.next(10), AgentChanged):
            pass
        assert (event.agent_id, event.info.name) == (agent_id, "Fix the parser")
        assert (await renamer.rename_agent(agent_id, None)).name is None

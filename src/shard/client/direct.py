"""A direct connection: one spawned ``shard agent --stdio``, no daemon (PROTOCOL §3, §5.2). The
agent sends ``hello`` then ``sync`` at once; commands and events carry no ``agent_id``.

    async with await connect_stdio(cwd=".") as agent:
        print((await agent.prompt_and_wait("hi")).text)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from shard.client.agent import Agent
from shard.client.connection import DEFAULT_REQUEST_TIMEOUT, Connection
from shard.client.connectors import Connector, stdio
from shard.protocol.commands import AgentCommand
from shard.protocol.events import AgentEvent, EventBase, Response


class DirectAgent(Agent):
    """An :class:`Agent` that owns its connection (and, for stdio, its process)."""

    def __init__(self, connector: Connector, *, request_timeout: float = DEFAULT_REQUEST_TIMEOUT) -> None:
        super().__init__(self._direct_request, None)
        self.connection = Connection(
            connector,
            on_event=self._route,
            on_closed=self._end,
            reconnect=False,  # the process is the agent: there is nothing to reconnect to
            request_timeout=request_timeout,
        )
        self._on_stale = lambda exc: self.connection.fail_agent_requests(None, exc)

    async def _direct_request(self, command: AgentCommand, timeout: float | None, _: str | None) -> Response:
        return await self.connection.request(command, timeout=timeout, agent_id=None)

    def _route(self, event: EventBase) -> None:
        if isinstance(event, AgentEvent):
            self._receive(event)

    async def close(self) -> None:
        """End the agent's input; it finishes its work and exits."""
        await self.connection.close()

    async def __aenter__(self) -> DirectAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def connect(connector: Connector, **options: Any) -> DirectAgent:
    """A direct connection over any connector; returns once ``sync`` arrived."""
    agent = DirectAgent(connector, **options)
    await agent.connection.open()
    await agent.wait_synced(agent.connection.request_timeout)
    return agent


async def connect_stdio(
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    command: Sequence[str] | None = None,
    **options: Any,
) -> DirectAgent:
    """Spawn ``shard agent --stdio ARGS…`` (e.g. ``--model``, ``--session``) and connect to it."""
    return await connect(stdio(*args, cwd=cwd, home=home, env=env, command=command), **options)

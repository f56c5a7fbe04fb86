"""Where an ACP session's agent runs: in the daemon when one is running on the SHARD_HOME (so the web
client and ``shard attach`` see the same agent), else in a ``shard agent --stdio`` of its own.

Both hand back an :class:`Opened`: the attached agent, its Shard session id (which is the ACP
session id, so a later session/load — in this process or another — finds it again) and how to let
it go. The session id comes from the agent's ``sync`` (its additive ``session_id``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from shard.client import (
    Agent,
    CommandError,
    ConnectError,
    ConnectionLost,
    DirectAgent,
    ShardClient,
    ShardClientError,
)
from shard.client.connectors import stdio
from shard.protocol.events import ErrorEvent, Sync

START_TIMEOUT = 30.0  # a runtime restoring a long session still says hello and sync well within it

log = logging.getLogger("shard.acp")


@dataclass
class Opened:
    agent: Agent
    session_id: str
    release: Callable[[], Awaitable[None]]


class Backend(Protocol):
    name: str

    async def open(self, cwd: str, session_id: str | None) -> Opened:
        """A new session in ``cwd``, or the agent of ``session_id`` (restored if need be)."""
        ...

    async def close(self) -> None: ...


def _session_of(agent: Agent) -> str:
    sync = agent.last_sync
    extra = sync.model_extra if sync is not None else None
    session_id = (extra or {}).get("session_id")
    if not isinstance(session_id, str):
        raise ShardClientError("the agent's sync names no session_id (an older runtime?)")
    return session_id


class DaemonBackend:
    """One daemon connection for every session. A session this process creates is owned: when the
    editor goes away the agent is terminated (its session stays, for session/load). A session
    loaded while an agent already holds it is attached to, and left running afterwards."""

    name = "daemon"

    def __init__(self, client: ShardClient) -> None:
        self.client = client

    async def open(self, cwd: str, session_id: str | None) -> Opened:
        if session_id is not None:
            for info in await self.client.list_agents():
                if getattr(info, "session_id", None) == session_id:
                    agent = await self.client.attach(info.agent_id)
                    return Opened(agent, session_id, self._detacher(info.agent_id))
            agent = await self.client.create_agent(cwd, session_id=session_id)
        else:
            agent = await self.client.create_agent(cwd)
        assert agent.agent_id is not None
        return Opened(agent, _session_of(agent), self._terminator(agent.agent_id))

    def _detacher(self, agent_id: str) -> Callable[[], Awaitable[None]]:
        async def release() -> None:
            await self.client.detach(agent_id)

        return release

    def _terminator(self, agent_id: str) -> Callable[[], Awaitable[None]]:
        async def release() -> None:
            await self.client.terminate(agent_id)

        return release

    async def close(self) -> None:
        await self.client.close()  # terminates the agents still owned


class DirectBackend:
    """Each session is its own ``shard agent --stdio`` child; closing it ends the child."""

    name = "direct"

    def __init__(self, home: str | None) -> None:
        self.home = home
        self._open: list[DirectAgent] = []

    async def open(self, cwd: str, session_id: str | None) -> Opened:
        args = ["--cwd", cwd]
        if session_id is not None:
            args += ["--session", session_id]
        agent = DirectAgent(stdio(*args, cwd=cwd, home=self.home))
        try:
            await agent.connection.open()
        except ShardClientError as exc:  # it stopped before hello: its reason went to our stderr
            raise ConnectionLost(f"the agent process did not start ({exc}); see shard acp's log") from None
        try:
            first = await agent.events().next(START_TIMEOUT)
        except (TimeoutError, StopAsyncIteration, ShardClientError) as exc:
            await agent.close()
            raise ConnectionLost(f"the agent process did not start: {exc or type(exc).__name__}") from None
        if not isinstance(first, Sync):  # it could not open the session: hello, error, exit
            await agent.close()
            if isinstance(first, ErrorEvent):
                raise CommandError("session/load", first.code, first.message)
            raise ConnectionLost(f"the agent process sent {first.type} before its sync")
        self._open.append(agent)

        async def release() -> None:
            if agent in self._open:
                self._open.remove(agent)
            await agent.close()

        return Opened(agent, _session_of(agent), release)

    async def close(self) -> None:
        for agent in list(self._open):
            await agent.close()
        self._open.clear()


async def choose(home: str | None, *, direct: bool) -> Backend:
    """The daemon's when one answers on the home's socket (and ``direct`` is not asked), else direct."""
    if not direct:
        try:
            # who answers from the editor, as the other clients say it ("Allowed by editor (pid 4242)")
            client = await ShardClient.connect_unix(home=home, name=f"editor (pid {os.getpid()})")
        except ConnectError as exc:
            log.info("no daemon (%s): each session runs its own agent process", exc)
        else:
            log.info("hosting sessions in the daemon")
            return DaemonBackend(client)
    return DirectBackend(home if home is not None else os.environ.get("SHARD_HOME"))

"""The daemon client: orchestrator commands (PROTOCOL §10.1), subagent job commands (§10.3), the
orchestrator event stream (§10.2), and the agents it attached, demultiplexed by ``agent_id``
(R5.2.8), and the requests background children ask it as their ancestor's client (§6.3, see
:mod:`.delegated`). It re-attaches every watched agent after a reconnect (R2.2.8, R6.4.18), and
terminates the agents it created and owns when it closes (R3.7).

    async with await ShardClient.connect_unix() as client:
        agent = await client.create_agent(cwd=".")
        result = await agent.prompt_and_wait("Summarise README.md")
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any, Literal

from shard.client.agent import Agent, permission_response
from shard.client.auth import WebSession
from shard.client.backoff import Backoff
from shard.client.connection import DEFAULT_REQUEST_TIMEOUT, Connection, Sleep, State
from shard.client.connectors import Connector, TicketSource, unix, websocket
from shard.client.delegated import DELEGATED_TYPES, RESOLUTIONS, Delegated
from shard.client.errors import CommandError, ShardClientError
from shard.client.streams import EventStream, broadcast, end_all
from shard.protocol.agents import AgentInfo
from shard.protocol.commands import (
    AgentAttach,
    AgentCommand,
    AgentCreate,
    AgentDetach,
    AgentKill,
    AgentList,
    AgentRemove,
    AgentStatusQuery,
    AgentTerminate,
    ClientIdentify,
    CommandBase,
    DaemonShutdown,
    SubagentCreate,
    SubagentRelaunch,
    SubagentStatus,
    SubagentSteer,
    SubagentStop,
    SubagentWait,
    UiResponse,
)
from shard.protocol.daemon_commands import AgentRename
from shard.protocol.events import (
    AgentEvent,
    AgentRemoved,
    EventBase,
    PermissionRequest,
    PermissionResolved,
    Response,
    UiRequest,
    UiResolved,
)
from shard.protocol.jobs import TaskSpec
from shard.protocol.permissions import Decision, ResolvedPermission
from shard.protocol.results import (
    AgentAttachResult,
    AgentCreateResult,
    AgentListResult,
    AgentRemoveResult,
    AgentRenameResult,
    AgentTerminateResult,
    SubagentCreateResult,
    SubagentRelaunchResult,
    SubagentStatusResult,
    SubagentSteerResult,
    SubagentStopResult,
    SubagentWaitResult,
)

log = logging.getLogger("shard.client")
Role = Literal["interactive", "observer"]


class ShardClient:
    def __init__(
        self,
        connector: Connector,
        *,
        reconnect: bool = True,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        name: str | None = None,
    ) -> None:
        self.agents: dict[str, Agent] = {}
        self.name = name  # what people see as who answered from here (client.identify)
        self._my_ids: set[str] = set()  # this client's connection ids, one per hello
        self._orchestrator: list[EventStream[EventBase]] = []
        self._primary = EventStream[EventBase](self._orchestrator)
        self.delegated = Delegated()
        self.connection = Connection(
            connector,
            on_event=self._route,
            on_reconnect=self._reattach,
            on_closed=self._closed,
            reconnect=reconnect,
            backoff=backoff,
            sleep=sleep,
            request_timeout=request_timeout,
        )

    # --- connecting ---------------------------------------------------------------------------

    @classmethod
    async def connect(cls, connector: Connector, **options: Any) -> ShardClient:
        """Connect with any connector; ``options`` are the constructor's (reconnect, backoff,
        sleep, request_timeout, name)."""
        client = cls(connector, **options)
        await client.connection.open()
        await client._identify()
        return client

    @classmethod
    async def connect_unix(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> ShardClient:
        """The daemon's unix socket: ``path``, else the one ``$SHARD_HOME/daemon.json`` names."""
        return await cls.connect(unix(path, home=home), **options)

    @classmethod
    async def connect_websocket(
        cls,
        credentials: WebSession | TicketSource,
        *,
        host: str | None = None,
        port: int | None = None,
        home: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> ShardClient:
        """The daemon's WebSocket, with a ticket from ``credentials`` on every (re)connect."""
        return await cls.connect(websocket(credentials, host=host, port=port, home=home), **options)

    async def __aenter__(self) -> ShardClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def client_id(self) -> str | None:
        """This connection's id on the daemon (``hello.client_id``): the ``source`` of its answers."""
        hello = self.connection.hello
        return hello.client_id if hello is not None else None

    async def _identify(self) -> None:
        """After each hello: remember the connection's id, and give the daemon this client's name."""
        hello = self.connection.hello
        if hello is None:
            return
        if hello.client_id:
            self._my_ids.add(hello.client_id)
        if self.name and "client-identify" in hello.capabilities:
            try:
                await self.request(ClientIdentify(name=self.name))
            except CommandError as exc:  # the name is for people; the connection works without it
                log.warning("shard client: the daemon did not take the name %r: %s", self.name, exc)

    def answered_here(self, event: PermissionResolved | UiResolved | ResolvedPermission) -> bool:
        """Whether this client answered the request ``event`` closes (on any of its connections):
        ``resolution_text(event, request, mine=client.answered_here(event))`` then says "you"."""
        return event.source is not None and event.source in self._my_ids

    @property
    def generation(self) -> int:
        """How many times this client has said hello to a daemon (1 until the first reconnect)."""
        return self.connection.generation

    def drop(self) -> None:
        """Cut the connection as a network failure would; the client reconnects by itself."""
        self.connection.drop()

    async def close(self) -> None:
        """Terminate the agents this client owns (R3.7), then disconnect."""
        for agent in list(self.agents.values()):
            if agent.owned and agent.agent_id is not None and self.connection.state is State.OPEN:
                with contextlib.suppress(ShardClientError):
                    await self.terminate(agent.agent_id)
        await self.connection.close()

    # --- routing ------------------------------------------------------------------------------

    def _route(self, event: EventBase) -> None:
        if isinstance(event, AgentEvent):
            agent = self.agents.get(event.agent_id) if event.agent_id is not None else None
            if agent is not None:
                agent._receive(event)
            # a background child asks its ancestor (§6.3); a resolution closes a delegated request
            # however it comes (the child may have been attached since)
            if isinstance(event, RESOLUTIONS) or (agent is None and isinstance(event, DELEGATED_TYPES)):
                self.delegated.receive(event)
            return  # any other event of an agent this client does not watch (R6.1.3): nothing to do
        if isinstance(event, AgentRemoved):
            self._forget(event.agent_id)
        broadcast(self._orchestrator, event)

    def _forget(self, agent_id: str) -> None:
        """The agent left the registry: its streams end."""
        agent = self.agents.pop(agent_id, None)
        if agent is not None:
            agent._end(None)

    def _closed(self, error: BaseException | None) -> None:
        for agent in self.agents.values():
            agent._end(error)
        end_all(self._orchestrator, error)
        self.delegated.end(error)

    async def _reattach(self) -> None:
        """After a reconnect: attach again to every agent watched, each yielding a fresh sync; then
        close the delegated requests the daemon did not show again (see :mod:`.delegated`)."""
        self.delegated.reconnected()
        try:
            await self._identify()
        except ShardClientError as exc:  # dropped again: the next reconnect tries again
            log.info("shard client: re-attach interrupted: %s", exc)
            return
        for agent in list(self.agents.values()):
            try:
                await self._attach(agent)
            except CommandError as exc:  # gone for good (NOT_FOUND) or not startable now
                log.warning("shard client: re-attaching %s failed: %s", agent.agent_id, exc)
                if exc.code == "NOT_FOUND":
                    self.agents.pop(agent.agent_id or "", None)
                    agent._end(exc)
            except ShardClientError as exc:  # dropped again: the next reconnect tries again
                log.info("shard client: re-attach interrupted: %s", exc)
                return
        if self.delegated.unsettled:
            try:  # a fence: its answer comes after everything the re-attaches made the daemon send
                await self.request(AgentList())
            except ShardClientError as exc:
                log.info("shard client: re-attach interrupted: %s", exc)
                return
            self.delegated.settle()

    # --- requests -----------------------------------------------------------------------------

    async def request(self, command: CommandBase, *, timeout: float | None = None) -> Response:
        """Any command; its successful response (CommandError otherwise)."""
        return await self.connection.request(command, timeout=timeout)

    async def _agent_request(
        self, command: AgentCommand, timeout: float | None, agent_id: str | None
    ) -> Response:
        return await self.connection.request(command, timeout=timeout, agent_id=agent_id)

    def orchestrator_events(self) -> EventStream[EventBase]:
        """Orchestrator events since connect: agent_spawned/exited/status_changed, agent_activity,
        workspace_*, subagent_run_changed (their ``agent_id`` is payload, R10.2.20)."""
        return self._primary

    def subscribe_orchestrator(self) -> EventStream[EventBase]:
        return EventStream[EventBase](self._orchestrator)

    def delegated_requests(self) -> EventStream[AgentEvent]:
        """Permission / UI requests of agents this client does not attach — a background child with
        no client of its own asks its nearest interactive ancestor's clients (§6.3) — and their
        ``*_resolved``: each request once (a re-shown one is not repeated), since connect.
        ``client.delegated.pending`` holds the ones still open."""
        return self.delegated.primary

    def subscribe_delegated(self) -> EventStream[AgentEvent]:
        return self.delegated.subscribe()

    async def answer_delegated(
        self,
        request: PermissionRequest,
        *,
        choice_id: str | None = None,
        decision: Decision | None = None,
        reason: str | None = None,
    ) -> Response:
        """Answer a delegated permission request under the asking child's ``agent_id`` (R6.3.10):
        by ``choice_id`` (preferred) or by legacy ``decision``."""
        command = permission_response(request.request_id, choice_id, decision, reason)
        command.agent_id = request.agent_id
        return await self.request(command)

    async def answer_delegated_ui(self, request: UiRequest, value: str | list[str] | None) -> Response:
        """Answer a delegated UI request under the asking child's ``agent_id``."""
        command = UiResponse(agent_id=request.agent_id, request_id=request.request_id, value=value)
        return await self.request(command)

    # --- agent.* (§10.1) ----------------------------------------------------------------------

    async def list_agents(self) -> list[AgentInfo]:
        return AgentListResult.model_validate((await self.request(AgentList())).data).agents

    async def agent_status(self, agent_id: str | None = None) -> list[AgentInfo]:
        command = AgentStatusQuery(agent_id=agent_id) if agent_id else AgentStatusQuery()
        return AgentListResult.model_validate((await self.request(command)).data).agents

    async def create_agent_id(self, cwd: str | os.PathLike[str], **fields: Any) -> str:
        """``agent.create`` (fields: model, provider, mode, tools, skills, headless_policy, name,
        parent_agent_id, session_id), without attaching: the new agent_id. A relative ``cwd`` is
        taken from this process's working directory."""
        data = (await self.request(AgentCreate(cwd=_absolute(cwd), **fields))).data
        return AgentCreateResult.model_validate(data).agent_id

    async def create_agent(self, cwd: str | os.PathLike[str], *, own: bool = True, **fields: Any) -> Agent:
        """``agent.create`` then ``agent.attach``: the attached :class:`Agent`. ``own`` (default):
        this client terminates it when it closes (R3.7)."""
        agent = await self.attach(await self.create_agent_id(cwd, **fields))
        agent.owned = own
        return agent

    async def attach(self, agent_id: str, *, role: Role | None = None, timeout: float | None = None) -> Agent:
        """``agent.attach``; returns once the agent's ``sync`` arrived (its stream yields it first)."""
        agent = self.agents.get(agent_id)
        if agent is None:
            agent = Agent(self._agent_request, agent_id, role=role)
            agent._on_stale = lambda exc: self.connection.fail_agent_requests(agent_id, exc)
            self.agents[agent_id] = agent
        try:
            await self._attach(agent, timeout)
        except BaseException:
            if agent.last_sync is None:
                self.agents.pop(agent_id, None)
            raise
        return agent

    async def _attach(self, agent: Agent, timeout: float | None = None) -> AgentAttachResult:
        assert agent.agent_id is not None
        agent._synced.clear()
        fields: dict[str, Any] = {"agent_id": agent.agent_id}
        if agent.role:
            fields["role"] = agent.role
        command = AgentAttach(**fields)
        response = await self.request(command, timeout=timeout)
        await agent.wait_synced(timeout if timeout is not None else self.connection.request_timeout)
        return AgentAttachResult.model_validate(response.data)

    async def detach(self, agent_id: str) -> None:
        await self.request(AgentDetach(agent_id=agent_id))
        agent = self.agents.pop(agent_id, None)
        if agent is not None:
            agent._end(None)

    async def terminate(self, agent_id: str) -> AgentTerminateResult:
        """``agent.terminate``: stops an idle agent now, an active one when its work is done."""
        data = (await self.request(AgentTerminate(agent_id=agent_id))).data
        agent = self.agents.get(agent_id)
        if agent is not None:
            agent.owned = False
        return AgentTerminateResult.model_validate(data)

    async def kill(self, agent_id: str, *, force: bool | None = None) -> None:
        fields: dict[str, Any] = {"agent_id": agent_id}
        if force is not None:
            fields["force"] = force
        await self.request(AgentKill(**fields))

    async def remove_agent(self, agent_id: str) -> list[str]:
        """``agent.remove``: the agent and its subagents leave the registry (a running one is stopped
        first); their sessions stay, to reopen with ``create_agent_id(cwd, session_id=…)``. The ids
        removed, the named agent last."""
        data = (await self.request(AgentRemove(agent_id=agent_id))).data
        removed = AgentRemoveResult.model_validate(data).removed
        for gone in removed:
            self._forget(gone)
        return removed

    async def rename_agent(self, agent_id: str, name: str | None) -> AgentInfo:
        """``agent.rename`` (capability ``agent-rename``): the name people see, kept by the daemon and
        told to every client (``agent_changed``); None gives the derived name back."""
        data = (await self.request(AgentRename(agent_id=agent_id, name=name))).data
        return AgentRenameResult.model_validate(data).info

    async def shutdown_daemon(self, *, force: bool | None = None) -> None:
        fields: dict[str, Any] = {"force": force} if force is not None else {}
        await self.request(DaemonShutdown(**fields))

    # --- subagent.* (§10.3) -------------------------------------------------------------------

    async def subagent_create(
        self,
        parent_agent_id: str,
        *,
        name: str | None = None,
        task: str | None = None,
        tasks: list[tuple[str, str]] | None = None,
        strategy: Literal["single", "parallel", "chain"] | None = None,
        **fields: Any,
    ) -> SubagentCreateResult:
        """A background job: ``name`` + ``task``, or ``tasks=[(name, task), …]`` with a strategy."""
        if tasks is not None:
            fields["tasks"] = [TaskSpec(name=n, task=t) for n, t in tasks]
        for key, value in (("name", name), ("task", task), ("strategy", strategy)):
            if value is not None:
                fields[key] = value
        command = SubagentCreate(parent_agent_id=parent_agent_id, **fields)
        return SubagentCreateResult.model_validate((await self.request(command)).data)

    async def subagent_wait(
        self,
        parent_agent_id: str,
        handles: list[str],
        *,
        mode: Literal["any", "all"] | None = None,
        timeout: float | None = None,
        request_timeout: float | None = None,
    ) -> SubagentWaitResult:
        """``timeout`` is the daemon's (seconds; 0 polls); ``request_timeout`` is how long this
        client waits for the answer (default: the client's)."""
        fields: dict[str, Any] = {"handles": handles}
        if mode is not None:
            fields["mode"] = mode
        if timeout is not None:
            fields["timeout"] = float(timeout)
        command = SubagentWait(parent_agent_id=parent_agent_id, **fields)
        return SubagentWaitResult.model_validate((await self.request(command, timeout=request_timeout)).data)

    async def subagent_steer(self, parent_agent_id: str, target: str, message: str) -> SubagentSteerResult:
        command = SubagentSteer(parent_agent_id=parent_agent_id, target=target, message=message)
        return SubagentSteerResult.model_validate((await self.request(command)).data)

    async def subagent_relaunch(self, parent_agent_id: str, target: str, task: str) -> SubagentRelaunchResult:
        command = SubagentRelaunch(parent_agent_id=parent_agent_id, target=target, task=task)
        return SubagentRelaunchResult.model_validate((await self.request(command)).data)

    async def subagent_status(
        self, parent_agent_id: str, targets: list[str] | None = None
    ) -> SubagentStatusResult:
        fields: dict[str, Any] = {"targets": targets} if targets is not None else {}
        command = SubagentStatus(parent_agent_id=parent_agent_id, **fields)
        return SubagentStatusResult.model_validate((await self.request(command)).data)

    async def subagent_stop(self, parent_agent_id: str, handle: str) -> SubagentStopResult:
        command = SubagentStop(parent_agent_id=parent_agent_id, handle=handle)
        return SubagentStopResult.model_validate((await self.request(command)).data)


def _absolute(cwd: str | os.PathLike[str]) -> str:
    """The daemon takes absolute paths only; a relative one is this process's (no I/O)."""
    return os.path.abspath(cwd)

"""The orchestrator commands (PROTOCOL §10.1), sans-I/O: what each one changes in the broker and
answers. A command that must wait (a runtime starting, a sync on its way, a runtime exiting) leaves
its client ``waiting`` and completes from the input that ends the wait."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shard.daemon import removal, wire
from shard.daemon.catalog import selection
from shard.daemon.effects import Client, Generation
from shard.daemon.jobs import children, requests
from shard.daemon.lifecycle import INTERACTIVE, Role
from shard.daemon.record import AgentRecord
from shard.daemon.slot import AgentSlot
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import new_id
from shard.protocol.results import (
    AgentAttachResult,
    AgentCreateResult,
    AgentListResult,
    AgentTerminateResult,
    ClientIdentifyResult,
    CompareEnvResult,
)

if TYPE_CHECKING:
    from shard.daemon.broker import Broker

DAEMON_SET_FIELDS = (
    "system_prompt",
    "depth",
    "launch_policy",
    "alias",
    "definition_name",
    "display_name",
    "names",
)


class Orchestrator:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.supervisor = broker.supervisor

    def handle(self, client: Client, command: cmd.CommandBase) -> None:
        b = self.broker
        if isinstance(command, cmd.AgentList | cmd.AgentStatusQuery):
            if isinstance(command, cmd.AgentStatusQuery) and command.agent_id is not None:
                infos = [b.slot(command.agent_id).info()]
            else:
                infos = [s.info() for s in b.agents.values()]
            b.send(client, wire.reply(command, AgentListResult(agents=infos)))
        elif isinstance(command, cmd.AgentCreate):
            self._create(client, command)
        elif isinstance(command, cmd.AgentAttach):
            self._attach(client, command)
        elif isinstance(command, cmd.AgentDetach):
            b.slot(command.agent_id)
            b.detach(client, command.agent_id)
            b.send(client, wire.reply(command))
        elif isinstance(command, cmd.AgentTerminate):
            self._terminate(client, command)
        elif isinstance(command, cmd.AgentRemove):
            removal.remove(b, client, command)
        elif isinstance(command, cmd.ClientIdentify):
            client.label = command.name
            b.send(
                client, wire.reply(command, ClientIdentifyResult(client_id=client.source, label=client.label))
            )
        elif isinstance(command, cmd.AgentKill):
            slot = b.slot(command.agent_id)
            self._when_ended(
                client, command, slot, self.supervisor.kill(slot, force=bool(command.force)), None
            )
        elif isinstance(command, cmd.SubagentCommand):
            b.coordinator.handle(client, command)
        elif isinstance(command, cmd.WorkspaceCommand):
            b.workspaces.handle(client, command)
        elif isinstance(command, cmd.DaemonShutdown):
            b.send(client, wire.reply(command))
            self.supervisor.shutdown(force=bool(command.force))
        elif isinstance(command, cmd.DaemonCompareEnv):
            if client.transport != "unix":  # asked by shard run; nothing a browser needs to know
                raise ShardError(ErrorCode.INVALID_REQUEST, "daemon.compare_env: on the unix socket only")
            differ = b.provider_env.differing(command.nonce, command.variables)
            b.send(client, wire.reply(command, CompareEnvResult(differ=differ)))
        else:
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"'{command.type}' is not available in this daemon yet"
            )

    def _when_ended(
        self,
        client: Client,
        command: cmd.CommandBase,
        slot: AgentSlot,
        gen: Generation | None,
        result: AgentTerminateResult | None,
    ) -> None:
        """Answer now, or once the runtime process ``gen`` has exited."""
        b = self.broker
        if gen is None:
            b.send(client, wire.reply(command, result))
            return
        client.waiting = True

        def answer() -> None:
            b.send(client, wire.reply(command, result))
            b.resume(client)

        slot.exit_waiters.append(answer)

    # --- create ---------------------------------------------------------------------------------

    def _create(self, client: Client, command: cmd.AgentCreate) -> None:
        b = self.broker
        for name in DAEMON_SET_FIELDS:
            if getattr(command, name) is not None:
                raise ShardError(
                    ErrorCode.INVALID_REQUEST,
                    f"{name} is set by the daemon for managed children, not by clients",
                )
        cwd = b.manifests.canonical_cwd(command.cwd)
        if command.parent_agent_id is not None and command.parent_agent_id not in b.agents:
            raise ShardError(ErrorCode.NOT_FOUND, f"no parent agent {shown(command.parent_agent_id)}")
        parent = b.agents.get(command.parent_agent_id) if command.parent_agent_id else None
        if parent is not None:  # a child made this way is bound like a subagent.create one
            requests.check_depth(parent.record.depth, b.coordinator.policy)
            kids = sum(1 for s in b.agents.values() if s.record.parent_agent_id == parent.agent_id)
            requests.check_room(parent.agent_id, kids, 1, b.coordinator.max_children)
        catalog = b.manifests.catalog()  # every choice checked before the row is written
        if catalog is not None:
            model = catalog.check(command.model, command.provider, command.mode, command.tools)
        else:
            model = selection(command.model, command.provider)
        if command.session_id is not None:
            b.manifests.check_adoption(command.session_id, cwd)
        elif model is None:  # an adopted session keeps the model it recorded
            model = b.fallback_model
        record = AgentRecord(
            agent_id=new_id("agent"),
            session_id=command.session_id or new_id("sess"),
            cwd=cwd,
            name=command.name,
            model=model,
            provider=command.provider,
            mode=children.stricter_mode(parent.record.mode, command.mode) if parent else command.mode,
            tools=command.tools,
            headless_policy=command.headless_policy or "deny",
            parent_agent_id=command.parent_agent_id,
            depth=parent.record.depth + 1 if parent else 0,
            adopted=command.session_id is not None,
            sandbox=command.sandbox or (parent.record.sandbox if parent else None),
            subagents=command.subagents is not False,
            ephemeral=command.ephemeral is True,
        )
        b.manifests.add(record)  # the manifest, written atomically before the runtime starts
        slot = AgentSlot(record, adoption_overrides=record.adopted and bool(model or command.mode))
        b.agents[record.agent_id] = slot
        b.broadcast(wire.spawned(slot))

        def started(error: ShardError | None) -> None:
            if error is None:
                b.send(client, wire.reply(command, AgentCreateResult(agent_id=record.agent_id)))
            else:
                b.send(
                    client, wire.failure(_naming(error, record.agent_id), id=command.id, command=command.type)
                )
            b.resume(client)

        client.waiting = True
        try:
            self.supervisor.ensure_running(slot, started)
        except ShardError as exc:
            client.waiting = False
            raise _naming(exc, record.agent_id) from None

    # --- attach ---------------------------------------------------------------------------------

    def _attach(self, client: Client, command: cmd.AgentAttach) -> None:
        """Completes once the connection is attached (or the attach failed), so a client that sends
        ``agent.attach`` and then ``prompt`` without waiting gets them handled in that order."""
        b = self.broker
        slot = b.slot(command.agent_id)
        role: Role = command.role or INTERACTIVE

        def started(error: ShardError | None) -> None:
            if error is not None:
                b.send(client, wire.failure(error, id=command.id, command=command.type))
                b.resume(client)
                return
            b.step(client, command, lambda: self._sync(client, command, slot, role))

        client.waiting = True
        try:
            self.supervisor.ensure_running(slot, started)
        except ShardError:
            client.waiting = False
            raise

    def _sync(self, client: Client, command: cmd.AgentAttach, slot: AgentSlot, role: Role) -> None:
        """Ask the runtime for a snapshot through its own command queue: it answers in its output
        order, so every event before the answer is in the snapshot and every event after it is new.
        The connection joins the fan-out right after the snapshot: nothing lost, nothing twice."""
        b = self.broker
        b.detach(client, slot.agent_id)

        def promote(response: dict[str, Any]) -> None:
            b.step(client, command, lambda: self._promote(client, command, slot, role, response))
            b.resume(client)

        b.internal(slot, {"type": "runtime.sync"}, promote)

    def _promote(
        self, client: Client, command: cmd.AgentAttach, slot: AgentSlot, role: Role, response: dict[str, Any]
    ) -> None:
        b = self.broker
        if client.closed:
            return
        if not response.get("success"):
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED,
                f"the runtime of {slot.agent_id} exited before the attach completed; retry",
            )
        sync = response.get("data") or {}
        result = AgentAttachResult(status=sync.get("status", slot.status), info=slot.info())
        b.send(client, wire.reply(command, result))
        b.send(client, wire.tagged_sync(sync, slot))
        if role == INTERACTIVE:
            for entry in slot.open_requests.values():  # re-shown (§12.6)
                b.send(client, entry.tagged)
        slot.attach(client, role)
        b.responders_changed(slot)

    # --- terminate ------------------------------------------------------------------------------

    def _terminate(self, client: Client, command: cmd.AgentTerminate) -> None:
        b = self.broker
        slot = b.slot(command.agent_id)
        if slot.forgettable:
            removal.forget(b, slot)
            b.send(client, wire.reply(command, AgentTerminateResult(deferred=False, forgotten=True)))
            return
        result = AgentTerminateResult(deferred=slot.live and slot.busy)
        if result.deferred:
            slot.terminate_when_idle = True
            b.send(client, wire.reply(command, result))
            return
        self._when_ended(client, command, slot, self.supervisor.begin_stop(slot), result)


def _naming(error: ShardError, agent_id: str) -> ShardError:
    """The binding is kept for a retry: the error says which agent it is."""
    error.data = {**(error.data or {}), "agent_id": agent_id}
    return error

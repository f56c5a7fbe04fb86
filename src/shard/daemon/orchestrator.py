"""The ``agent.*`` commands (PROTOCOL §10.1), sans-I/O: what each one changes through the desk and
answers. A command that must wait (a runtime starting, a sync on its way, a runtime exiting) leaves
its client ``waiting`` and completes from the input that ends the wait."""

from __future__ import annotations

from collections.abc import Callable

from shard.daemon import removal, rename, wire
from shard.daemon.catalog import selection
from shard.daemon.desk import Department, OrchestratorDesk
from shard.daemon.effects import Client, Generation
from shard.daemon.hosts.ssh import remote_cwd
from shard.daemon.jobs import children, requests
from shard.daemon.lifecycle import INTERACTIVE, Role
from shard.daemon.record import AgentRecord
from shard.daemon.slot import AgentSlot, Answer
from shard.protocol import commands as cmd
from shard.protocol.base import WireModel
from shard.protocol.daemon_commands import AgentRename
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import new_id
from shard.protocol.results import (
    AgentAttachResult,
    AgentCreateResult,
    AgentListResult,
    AgentTerminateResult,
    SessionActivateResult,
)

AGENT_COMMANDS = (
    cmd.AgentList,
    cmd.AgentStatusQuery,
    cmd.AgentCreate,
    cmd.AgentAttach,
    cmd.AgentDetach,
    cmd.AgentTerminate,
    cmd.AgentKill,
    cmd.AgentRemove,
    AgentRename,
)

DAEMON_SET_FIELDS = (
    "system_prompt",
    "depth",
    "launch_policy",
    "alias",
    "definition_name",
    "display_name",
    "names",
)


class Orchestrator(Department):
    def __init__(self, desk: OrchestratorDesk, limits: requests.ChildLimits) -> None:
        self.desk = desk
        self.limits = limits  # a child made by agent.create is bound like a subagent.create one

    def handle(self, client: Client, command: cmd.CommandBase) -> None:
        d = self.desk
        if isinstance(command, cmd.AgentList | cmd.AgentStatusQuery):
            if isinstance(command, cmd.AgentStatusQuery) and command.agent_id is not None:
                infos = [d.slot(command.agent_id).info()]
            else:
                infos = [s.info() for s in d.agents.values()]
            d.send(client, wire.reply(command, AgentListResult(agents=infos)))
        elif isinstance(command, cmd.AgentCreate):
            self._create(client, command)
        elif isinstance(command, cmd.AgentAttach):
            self._attach(client, command)
        elif isinstance(command, cmd.AgentDetach):
            d.slot(command.agent_id)
            d.detach(client, command.agent_id)
            d.send(client, wire.reply(command))
        elif isinstance(command, cmd.AgentTerminate):
            self._terminate(client, command)
        elif isinstance(command, cmd.AgentRemove):
            removal.remove(d, client, command)
        elif isinstance(command, AgentRename):
            rename.rename(d, client, command)
        elif isinstance(command, cmd.AgentKill):
            slot = d.slot(command.agent_id)
            self._when_ended(client, command, slot, d.kill(slot, force=bool(command.force)), None)
        else:
            raise ShardError(ErrorCode.INVALID_REQUEST, f"'{command.type}' is not an agent command")

    def _when_ended(
        self,
        client: Client,
        command: cmd.CommandBase,
        slot: AgentSlot,
        gen: Generation | None,
        result: AgentTerminateResult | None,
    ) -> None:
        """Answer now, or once the runtime process ``gen`` has exited."""
        b = self.desk
        if gen is None:
            b.send(client, wire.reply(command, result))
            return
        client.waiting = True

        def answer() -> None:
            b.send(client, wire.reply(command, result))
            b.resume(client)

        slot.exit_waiters.append(answer)

    # --- create ---------------------------------------------------------------------------------

    def _create(
        self,
        client: Client,
        command: cmd.AgentCreate,
        answered: cmd.CommandBase | None = None,
        result: Callable[[str], WireModel] = lambda agent_id: AgentCreateResult(agent_id=agent_id),
    ) -> None:
        """``answered``: the command the reply goes to (``command`` itself, or a ``session.activate``
        that asked for this create), with ``result(agent_id)`` as its data."""
        b = self.desk
        to = answered or command
        for name in DAEMON_SET_FIELDS:
            if getattr(command, name) is not None:
                raise ShardError(
                    ErrorCode.INVALID_REQUEST,
                    f"{name} is set by the daemon for managed children, not by clients",
                )
        catalog = b.manifests.catalog()  # every choice checked before the row is written
        if catalog is not None:
            catalog.host(command.host)
        if command.parent_agent_id is not None and command.parent_agent_id not in b.agents:
            raise ShardError(ErrorCode.NOT_FOUND, f"no parent agent {shown(command.parent_agent_id)}")
        parent = b.agents.get(command.parent_agent_id) if command.parent_agent_id else None
        host = command.host if command.host is not None else (parent.record.host if parent else None)
        # a folder on another host is that host's to check, when its runtime starts there
        cwd = b.manifests.canonical_cwd(command.cwd) if host is None else remote_cwd(command.cwd)
        if parent is not None:  # a child made this way is bound like a subagent.create one
            requests.check_depth(parent.record.depth, self.limits.policy)
            kids = sum(1 for s in b.agents.values() if s.record.parent_agent_id == parent.agent_id)
            requests.check_room(parent.agent_id, kids, 1, self.limits.max_children)
        if catalog is not None and host in catalog.own_config_hosts:
            catalog.mode(command.mode)  # the host's own providers: only its runtime knows its models
            catalog.tool_names(command.tools)
            model = selection(command.model, command.provider)
        elif catalog is not None:
            model = catalog.check(command.model, command.provider, command.mode, command.tools)
        else:
            model = selection(command.model, command.provider)
        if command.session_id is not None and host is None:
            b.manifests.check_adoption(command.session_id, cwd)
        elif command.session_id is not None:  # the session is on the host: its runtime opens it there
            b.manifests.check_unadopted(command.session_id)
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
            host=host,
        )
        b.manifests.add(record)  # the manifest, written atomically before the runtime starts
        slot = b.admit(record, adoption_overrides=record.adopted and bool(model or command.mode))

        def started(error: ShardError | None) -> None:
            if error is None:
                b.send(client, wire.reply(to, result(record.agent_id)))
            else:
                b.send(client, wire.failure(_naming(error, record.agent_id), id=to.id, command=to.type))
            b.resume(client)

        client.waiting = True
        try:
            b.ensure_running(slot, started)
        except ShardError as exc:
            client.waiting = False
            raise _naming(exc, record.agent_id) from None

    # --- session.activate ---------------------------------------------------------------------------

    def guard(self, client: Client, slot: AgentSlot, command: cmd.AgentCommand) -> bool:
        if isinstance(command, cmd.SessionActivate):
            self._activate(client, command, slot)
            return True
        return False

    def _activate(self, client: Client, command: cmd.SessionActivate, slot: AgentSlot) -> None:
        """PROTOCOL §9.2 fork: "a session-first client refreshes session.list, selects the returned
        session_id, then uses session.activate to adopt/start the forked session". A session of this
        agent's folder gets an agent of its own: the one already bound to it, else a new one adopting
        it (its recorded model and mode) with this agent's sandbox — never a wider one. The agent asked
        is left as it is, and is not woken."""
        args = command
        d = self.desk
        bound = next((s for s in d.agents.values() if s.record.session_id == args.session_id), None)
        if bound is not None and bound.record.cwd == slot.record.cwd:
            found = SessionActivateResult(agent_id=bound.agent_id, session_id=args.session_id, created=False)
            d.send(client, wire.reply(command, found))
            return
        if bound is not None:  # as agent.create's adoption says it (manifests.check_adoption)
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"session {shown(args.session_id)} belongs to another directory"
            )
        fields = {"id": command.id, "cwd": slot.record.cwd, "session_id": args.session_id}
        if slot.record.sandbox is not None:  # validated: the record keeps the sandbox as text
            fields["sandbox"] = slot.record.sandbox
        if slot.record.host is not None:  # the fork was written on that host: it is opened there
            fields["host"] = slot.record.host
        create = cmd.AgentCreate.model_validate(fields)
        self._create(
            client,
            create,
            answered=command,
            result=lambda agent_id: SessionActivateResult(
                agent_id=agent_id, session_id=args.session_id, created=True
            ),
        )

    # --- attach ---------------------------------------------------------------------------------

    def _attach(self, client: Client, command: cmd.AgentAttach) -> None:
        """Completes once the connection is attached (or the attach failed), so a client that sends
        ``agent.attach`` and then ``prompt`` without waiting gets them handled in that order."""
        b = self.desk
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
            b.ensure_running(slot, started)
        except ShardError:
            client.waiting = False
            raise

    def _sync(self, client: Client, command: cmd.AgentAttach, slot: AgentSlot, role: Role) -> None:
        """Ask the runtime for a snapshot through its own command queue: it answers in its output
        order, so every event before the answer is in the snapshot and every event after it is new.
        The connection joins the fan-out right after the snapshot: nothing lost, nothing twice."""
        b = self.desk
        b.detach(client, slot.agent_id)

        def promote(answer: Answer) -> None:
            b.step(client, command, lambda: self._promote(client, command, slot, role, answer))
            b.resume(client)

        b.ask(slot, cmd.RuntimeSync(), promote)

    def _promote(
        self, client: Client, command: cmd.AgentAttach, slot: AgentSlot, role: Role, answer: Answer
    ) -> None:
        b = self.desk
        if client.closed:
            return
        if not answer.success:
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED,
                f"the runtime of {slot.agent_id} exited before the attach completed; retry",
            )
        sync = answer.data
        result = AgentAttachResult(status=sync.get("status", slot.status), info=slot.info())
        b.send(client, wire.reply(command, result))
        b.send(client, wire.tagged_sync(sync, slot))
        if role == INTERACTIVE:
            for entry in slot.open_requests.values():  # re-shown (§12.6)
                b.send(client, entry.tagged)
        b.attach(client, slot, role)

    # --- terminate ------------------------------------------------------------------------------

    def _terminate(self, client: Client, command: cmd.AgentTerminate) -> None:
        b = self.desk
        slot = b.slot(command.agent_id)
        if slot.forgettable:
            b.forget(slot)
            b.send(client, wire.reply(command, AgentTerminateResult(deferred=False, forgotten=True)))
            return
        result = AgentTerminateResult(deferred=slot.live and slot.busy)
        if result.deferred:
            slot.terminate_when_idle = True
            b.send(client, wire.reply(command, result))
            return
        self._when_ended(client, command, slot, b.stop(slot), result)


def _naming(error: ShardError, agent_id: str) -> ShardError:
    """The binding is kept for a retry: the error says which agent it is."""
    error.data = {**(error.data or {}), "agent_id": agent_id}
    return error

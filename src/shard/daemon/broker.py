"""The daemon's broker, sans-I/O (PROTOCOL §5, §6, §10; DESIGN §2): plain state and decisions.

Each input — a client's line, a client gone, a runtime ready, failed, writing a line or exiting, a
timer, a shutdown — returns the effects to perform, in order (``effects.py``); ``core.py`` performs
them with sockets, processes and timers, ``shard.testing.broker`` in memory.

* **Routing.** A per-agent command needs an ``agent_id`` this connection is attached to
  (NOT_ATTACHED), naming an agent that exists (NOT_FOUND). It goes to the runtime under a daemon id
  (client ids may collide) with ``agent_id`` stripped; the response comes back to the sender alone,
  with its own id restored.
* **Fan-out** (``output.py``). Every event a runtime writes is tagged with its ``agent_id`` once — a
  byte splice, no decoding for ``message_delta`` — and the same bytes go to every attachment;
  internal subscribers (the activity overview) receive the agent's events without being attachments.
* **Attach** (§6.4): the runtime is started (coalesced), asked for a ``runtime.sync`` snapshot, and
  the connection is promoted in the runtime's own output order: the attach response, then ``sync``,
  then every later event exactly once. Open requests are re-shown to an interactive attacher.
* **Broadcast requests** (§6.3): the first valid answer is forwarded, later ones are acknowledged and
  dropped; observers cannot answer. A child with no interactive client of its own has its requests
  shown to its nearest interactive ancestor's clients. Whether anyone can answer is told to the
  runtime (``runtime.responders``), whose headless policy then decides.
* **Departments** (``agent.*``: ``orchestrator.py``; ``subagent.*``: ``jobs/``; ``workspace.*``:
  ``workspaces/``; ``fs.*``, which only reads: ``files/``) are given the broker as their
  :class:`~shard.daemon.desk.Desk` only, and told
  what happens through one :class:`~shard.daemon.desk.Department` loop. Supervision:
  ``supervisor.py``; the daemon's own commands: ``admin.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import count
from typing import Any, Protocol

import orjson

from shard._provider_env import Holder
from shard.daemon import wire
from shard.daemon.admin import DAEMON_COMMANDS, DaemonCommands
from shard.daemon.answers import ancestors, answerers, open_request_answered
from shard.daemon.desk import Answered, Department
from shard.daemon.effects import (
    AgentManifests,
    Broadcast,
    Client,
    Effect,
    Generation,
    Log,
    Outbox,
    Remember,
    Resume,
    Send,
    Subscriber,
    TimerKey,
    ToRuntime,
)
from shard.daemon.files.service import FS_COMMANDS, FolderView
from shard.daemon.jobs.coordinator import Coordinator
from shard.daemon.jobs.store import JobStore
from shard.daemon.lifecycle import Responders, Role
from shard.daemon.orchestrator import AGENT_COMMANDS, Orchestrator
from shard.daemon.output import TEXT, THINKING, RuntimeOutput
from shard.daemon.record import AgentRecord
from shard.daemon.slot import UNANSWERED, AgentSlot, Forwarded, Started
from shard.daemon.supervisor import Supervisor
from shard.daemon.workspaces.service import Workspaces
from shard.daemon.workspaces.store import WorkspaceStore
from shard.protocol import commands as cmd
from shard.protocol.agents import AGENT_STATUSES
from shard.protocol.codec import parse_command
from shard.protocol.errors import ErrorCode, FrameError, ShardError, shown
from shard.protocol.framing import Oversized

_NEVER_WAKE = ("list_modes", "list_reasoning_levels", "list_models")  # a stale read undid a terminate
Handler = Callable[[Client, Any], None]


class Manifests(AgentManifests, JobStore, WorkspaceStore, Protocol):
    """The whole durable half; each department is given its own part."""


class Broker:
    def __init__(
        self,
        records: Iterable[AgentRecord],
        manifests: Manifests,
        *,
        clock: Callable[[], float],
        wall: Callable[[], float],
        idle_timeout: float,
        max_runtimes: int,
        subscribers: Iterable[Subscriber] = (),
        fallback_model: str | None = None,
    ) -> None:
        self.agents: dict[str, AgentSlot] = {r.agent_id: AgentSlot(r) for r in records}
        self.clients: set[Client] = set()
        self.manifests = manifests
        self.wall = wall
        self.subscribers = list(subscribers)  # of every agent
        self.fallback_model = fallback_model  # a new agent's model when neither it nor config names one
        self.provider_env = Holder(lambda _: None, tuple, tuple)  # the shell gives the daemon's own
        self.out = Outbox()
        self.supervisor = Supervisor(
            self.agents, self.out, clock=clock, idle_timeout=idle_timeout, max_runtimes=max_runtimes
        )
        self._ids = count(1)
        self.output = RuntimeOutput(self.agents, self.out, self.supervisor, self.subscribers)
        self.coordinator = Coordinator(self, manifests)  # reconciles the jobs a previous daemon left
        self.subscribers.append(self.coordinator)
        self.workspaces = Workspaces(self, manifests)
        self.orchestrator = Orchestrator(self, self.coordinator)
        self.files = FolderView(self)  # fs.*: the agents' folders, read-only
        self.departments: tuple[Department, ...] = (self.orchestrator, self.coordinator, self.workspaces)
        self.admin = DaemonCommands(
            self.send,
            lambda force: self.supervisor.shutdown(force=force),
            lambda: self.provider_env,
            lambda: sorted(catalog.hosts) if (catalog := manifests.catalog()) is not None else [],
        )
        # by command family, the first that matches: per-agent, agent.*, subagent.*, workspace.*, fs.*, daemon
        self.routes: tuple[tuple[type | tuple[type, ...], Handler], ...] = (
            (cmd.AgentCommand, self._per_agent),
            (AGENT_COMMANDS, self.orchestrator.handle),
            (cmd.SubagentCommand, self.coordinator.handle),
            (cmd.WorkspaceCommand, self.workspaces.handle),
            (FS_COMMANDS, self.files.handle),
            (DAEMON_COMMANDS, self.admin.handle),
        )

    def startup(self) -> list[Effect]:
        """The shell serves now: the work a previous daemon left (its unreported completions)."""
        for department in self.departments:
            department.startup()
        return self.out.take()

    # --- clients --------------------------------------------------------------------------------

    def connect(self, number: int, transport: str, label: str = "") -> tuple[Client, list[Effect]]:
        client = Client(number, transport, label)
        self.clients.add(client)
        self.out.add(Send((client,), wire.hello(transport, client.source)))
        return client, self.out.take()

    def disconnect(self, client: Client) -> list[Effect]:
        """A closed connection is detached from every agent; their work goes on (R3.5)."""
        if not client.closed:
            client.closed = True
            self.clients.discard(client)
            for department in self.departments:
                department.disconnected(client)
            for agent_id in list(client.attached):
                self.detach(client, agent_id)
        return self.out.take()

    def receive(self, client: Client, record: bytes | Oversized) -> list[Effect]:
        """One line (or WebSocket text message) from ``client``. While ``client.waiting`` after this,
        the command goes on; the shell reads nothing more from the client until :class:`Resume`."""
        try:
            command = parse_command(record, orchestrator=True)
        except FrameError as exc:
            self.send(client, wire.failure(exc, id=exc.id, command=exc.command))
            return self.out.take()
        self.step(client, command, lambda: self._dispatch_command(client, command))
        return self.out.take()

    def _dispatch_command(self, client: Client, command: cmd.CommandBase) -> None:
        for family, handle in self.routes:
            if isinstance(command, family):
                handle(client, command)
                return
        raise ShardError(ErrorCode.INVALID_REQUEST, f"'{command.type}' is not available in this daemon yet")

    def step(self, client: Client, command: cmd.CommandBase, work: Callable[[], None]) -> bool:
        """Run part of ``command``'s handling; a failure answers the command (False) and the client
        is no longer waiting for it."""
        try:
            work()
            return True
        except ShardError as exc:
            self.send(client, wire.failure(exc, id=command.id, command=command.type))
        except Exception as exc:  # a bug or an OS failure: the client is answered, the daemon serves on
            why = f"{command.type} failed: {type(exc).__name__}: {exc}"
            self.out.add(Log(f"shard daemon: {why}"))
            self.send(
                client,
                wire.failure(ShardError(ErrorCode.INTERNAL_ERROR, why), id=command.id, command=command.type),
            )
        self.resume(client)
        return False

    def resume(self, client: Client) -> None:
        if client.waiting:
            client.waiting = False
            self.out.add(Resume(client))

    def send(self, client: Client, data: bytes) -> None:
        self.out.add(Send((client,), data))

    def broadcast(self, data: bytes) -> None:
        self.out.add(Broadcast(data))

    def emit(self, effect: Effect) -> None:
        self.out.add(effect)

    # --- the desk's agents (desk.py) ------------------------------------------------------------

    def slot(self, agent_id: str) -> AgentSlot:
        slot = self.agents.get(agent_id)
        if slot is None:
            raise ShardError(ErrorCode.NOT_FOUND, f"no agent {shown(agent_id)}")
        return slot

    def admit(self, record: AgentRecord, *, adoption_overrides: bool = False) -> AgentSlot:
        slot = AgentSlot(record, adoption_overrides=adoption_overrides)
        self.agents[record.agent_id] = slot
        self.broadcast(wire.spawned(slot))
        return slot

    def forget(self, slot: AgentSlot) -> None:
        self.manifests.remove(slot.agent_id)  # first: if the disk refuses, nothing has changed
        self.supervisor.cancel_reap(slot)
        for client in list(slot.attachments):
            slot.detach(client)
        del self.agents[slot.agent_id]
        slot.runtime.move("stopped")
        self.broadcast(wire.status_changed(slot, "forgotten"))  # what older clients know
        self.broadcast(wire.removed(slot))

    def removing(self, agent_ids: Sequence[str]) -> None:
        for department in self.departments:
            department.removing(agent_ids)

    def now(self) -> float:
        return self.wall()

    # --- the desk's runtimes: the supervisor's, as far as departments may -----------------------

    def ensure_running(self, slot: AgentSlot, then: Started) -> None:
        self.supervisor.ensure_running(slot, then)

    def stop(self, slot: AgentSlot) -> Generation | None:
        return self.supervisor.begin_stop(slot)

    def kill(self, slot: AgentSlot, *, force: bool) -> Generation | None:
        return self.supervisor.kill(slot, force=force)

    def stop_now(self, slot: AgentSlot, grace: float) -> None:
        self.supervisor.stop_now(slot, grace)

    def cancel_start(self, slot: AgentSlot, error: ShardError) -> None:
        self.supervisor.cancel_start(slot, error)

    @property
    def shutting_down(self) -> bool:
        return self.supervisor.shutting_down

    # --- per-agent commands ---------------------------------------------------------------------

    def _per_agent(self, client: Client, command: cmd.AgentCommand) -> None:
        agent_id = command.agent_id
        if agent_id is None:
            raise ShardError(
                ErrorCode.NOT_ATTACHED, f"'{command.type}' needs an agent_id on a daemon connection"
            )
        slot = self.slot(agent_id)
        role = client.attached.get(agent_id)
        if isinstance(command, cmd.PermissionResponse | cmd.UiResponse):
            self._answer(client, slot, command)
            return
        if role is None:
            raise ShardError(
                ErrorCode.NOT_ATTACHED, f"this connection is not attached to {agent_id}; send agent.attach"
            )
        if any(department.guard(client, slot, command) for department in self.departments):
            return
        if command.type in _NEVER_WAKE and not slot.live:
            raise ShardError(
                ErrorCode.CONFLICT,
                f"the runtime of {agent_id} is stopped and {command.type} does not wake it",
            )
        if isinstance(command, cmd.Unqueue) and not slot.live:  # a stopped runtime holds no queue
            raise ShardError(ErrorCode.NOT_FOUND, f"nothing is queued for {agent_id}: its runtime stopped")
        sender = {"source": client.source} if isinstance(command, cmd.Prompt | cmd.Steer) else {}
        if slot.live:
            self.forward(slot, command, client, **sender)
            return
        client.waiting = True

        def started(error: ShardError | None) -> None:
            if error is not None:
                self.send(client, wire.failure(error, id=command.id, command=command.type))
            else:
                self.step(client, command, lambda: self.forward(slot, command, client, **sender))
            self.resume(client)

        self.supervisor.ensure_running(slot, started)

    def forward(self, slot: AgentSlot, command: cmd.CommandBase, client: Client | None, **extra: Any) -> None:
        payload = command.to_wire()
        payload.pop("agent_id", None)  # the runtime's connection is bound to one agent
        payload.update(extra)
        self.supervisor.cancel_reap(slot)
        if not self.to_runtime(slot, payload, Forwarded(client, command.id, command.type)):
            raise ShardError(ErrorCode.RUNTIME_START_FAILED, f"the runtime of {slot.agent_id} is gone; retry")

    def ask(self, slot: AgentSlot, command: cmd.AgentCommand, then: Answered | None = None) -> None:
        """The daemon's own command (``runtime.*``, a task, a report); ``then`` gets the answer."""
        payload = command.to_wire()
        payload.pop("agent_id", None)
        if not self.to_runtime(slot, payload, Forwarded(None, None, command.type, then)) and then:
            then(UNANSWERED)  # the runtime is gone: the waiter learns it now, not never

    def to_runtime(self, slot: AgentSlot, payload: dict[str, Any], fwd: Forwarded) -> bool:
        """Send a command to the live runtime under a fresh daemon id, remembering who waits for the
        response; False when there is no live runtime."""
        if not slot.live or slot.gen is None:
            return False
        did = f"d{next(self._ids)}"
        slot.forwarded[did] = fwd
        self.out.add(ToRuntime(slot.gen, orjson.dumps({**payload, "id": did})))
        return True

    # --- answers to broadcast requests (first valid one wins, §6.3) -----------------------------

    def _answer(
        self, client: Client, slot: AgentSlot, command: cmd.PermissionResponse | cmd.UiResponse
    ) -> None:
        entry = open_request_answered(client, slot, command)
        if entry is not None:
            entry.answered = True
            if not slot.live:
                raise ShardError(ErrorCode.CONFLICT, f"the runtime of {slot.agent_id} is no longer running")
            self.forward(slot, command, None, source=client.source, source_label=client.shown)
        self.send(client, wire.reply(command, agent_id=slot.agent_id))  # late or unknown: dropped silently

    # --- attachments, responders and delegation (§6.3, §6.4) ------------------------------------

    def attach(self, client: Client, slot: AgentSlot, role: Role) -> None:
        slot.attach(client, role)
        self.responders_changed(slot)

    def detach(self, client: Client, agent_id: str) -> None:
        slot = self.agents.get(agent_id)
        if slot is None:
            client.attached.pop(agent_id, None)
        elif slot.detach(client):
            self.responders_changed(slot)

    def subscribe(self, agent_id: str, subscriber: Subscriber) -> None:
        """``subscriber`` receives this agent's events from now on, as an internal subscriber."""
        self.slot(agent_id).subscribers.append(subscriber)

    def responders_changed(self, slot: AgentSlot) -> None:
        """Attachments of ``slot`` changed: it and its descendants may have gained or lost responders."""
        for affected in [slot, *[s for s in self.agents.values() if slot in ancestors(self.agents, s)]]:
            if not affected.live:
                continue
            conns, delegated = answerers(self.agents, affected)
            told = Responders.of(bool(conns))
            if affected.responders != told:
                affected.responders = told
                self.ask(affected, cmd.RuntimeResponders(present=bool(conns)))
            if delegated:  # re-show open requests to the ancestor's (new) clients
                for entry in affected.open_requests.values():
                    for c in conns:
                        if c not in entry.delegated_to:
                            entry.delegated_to.add(c)
                            if c not in affected.attachments:  # else its sync showed it
                                self.send(c, entry.tagged)

    # --- runtimes -------------------------------------------------------------------------------

    def runtime_ready(self, gen: Generation, hello: dict[str, Any], sync: dict[str, Any]) -> list[Effect]:
        slot = self.agents.get(gen.agent_id)
        if slot is None or slot.gen is not gen:
            return self.out.take()
        if slot.record.started_at is None:
            slot.record.started_at = self.wall()
            self.out.add(Remember(slot.agent_id, {"started_at": slot.record.started_at}))
        caps = hello.get("capabilities")
        slot.capabilities = [c for c in caps if isinstance(c, str)] if isinstance(caps, list) else []
        status = sync.get("status")
        slot.status = status if status in AGENT_STATUSES else "idle"
        slot.responders = Responders.UNTOLD
        waiters = self.supervisor.ready(slot)
        self.responders_changed(slot)
        if slot.epoch > 0:  # a replacement: attachments get a fresh authoritative sync (§9.1)
            self.out.add(Send(slot.fanout, wire.tagged_sync(sync, slot)))
        self.supervisor.schedule_reap(slot)
        if self.supervisor.shutting_down:
            self.supervisor.begin_stop(slot)
        for then in waiters:
            then(None)
        return self.out.take()

    def runtime_failed(self, gen: Generation, error: ShardError) -> list[Effect]:
        slot = self.agents.get(gen.agent_id)
        if slot is not None and slot.gen is gen:
            self.supervisor.start_failed(slot, error)
        return self.out.take()

    def runtime_line(self, gen: Generation, line: bytes) -> list[Effect]:
        """One line the runtime wrote (without its LF)."""
        slot = self.agents.get(gen.agent_id)
        if slot is None or slot.gen is not gen:
            return self.out.take()
        if line.startswith(b'{"type":"message_delta"'):  # the hot path, inline: tag, fan out, summarize
            if slot.fanout:
                self.out.add(Send(slot.fanout, slot.tag + line[1:]))
            self.output.notify(slot, THINKING if b'"kind":"thinking"' in line else TEXT)
        else:
            self.output.line(slot, line)
        return self.out.take()

    def runtime_oversized(self, gen: Generation, record: Oversized) -> list[Effect]:
        """A runtime line over the cap is dropped; when it was a response, its waiter is told."""
        slot = self.agents.get(gen.agent_id)
        if slot is not None and slot.gen is gen:
            self.output.oversized(slot, record)
        return self.out.take()

    def runtime_exited(self, gen: Generation, code: int | None, stderr: str) -> list[Effect]:
        slot = self.agents.get(gen.agent_id)
        if slot is None or slot.gen is not gen:
            return self.out.take()
        crashed = self.supervisor.exited(slot, gen)
        self.output.gone(slot)
        self.supervisor.ended(slot, crashed, code, stderr)
        for department in self.departments:
            department.child_exited(slot.agent_id)
        return self.out.take()

    def timer(self, key: TimerKey) -> list[Effect]:
        self.supervisor.timer(key)
        for department in self.departments:
            department.timer(key)
        return self.out.take()

    def offloaded(self, then: Callable[[Any], None], outcome: Any) -> list[Effect]:
        """Blocking work (:class:`Offload`) finished: its continuation runs like any other input."""
        then(outcome)
        return self.out.take()

    def shutdown(self, *, force: bool) -> list[Effect]:
        self.supervisor.shutdown(force=force)
        return self.out.take()

    def interrupt(self) -> list[Effect]:
        """Ctrl-C / SIGTERM on the daemon (a second one stops at once): ``Supervisor.interrupt``."""
        self.supervisor.interrupt()
        return self.out.take()

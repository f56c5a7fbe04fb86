"""What the broker keeps per agent: the durable record plus what routing needs (DESIGN §2) — the
runtime generation and its state, status, attachments, open broadcast requests, the commands
forwarded and not yet answered, and the supervisor's marks. Plain data: no I/O. The runtime itself
is the authority on everything else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from shard.daemon.effects import Client, Generation, Subscriber
from shard.daemon.lifecycle import ACTIVE_STATUSES, INTERACTIVE, Responders, Role, RuntimeMachine
from shard.daemon.record import AgentRecord
from shard.protocol.agents import AgentInfo, AgentStatus, Usage
from shard.protocol.errors import ShardError

Started = Callable[[ShardError | None], None]  # told once the runtime is ready, or why it is not


@dataclass(slots=True)
class OpenRequest:
    """A permission or UI request the runtime broadcast and nobody has answered yet."""

    tagged: bytes  # the event as clients get it (agent_id added)
    event: dict[str, Any]
    answered: bool = False
    delegated_to: set[Client] = field(default_factory=set)  # ancestors' clients shown it


@dataclass(frozen=True, slots=True)
class Answer:
    """A runtime's response to a command the daemon sent on its own (``Desk.ask``). ``success`` is
    False also when no runtime was there to answer, or it exited or wrote too much first."""

    success: bool
    data: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None

    @classmethod
    def of(cls, response: dict[str, Any]) -> Answer:
        data, error = response.get("data"), response.get("error")
        return cls(
            bool(response.get("success")),
            data if isinstance(data, dict) else {},
            error if isinstance(error, dict) else None,
        )


UNANSWERED = Answer(False)  # for a waiter whose runtime is gone


@dataclass(slots=True)
class Forwarded:
    """A command sent to the runtime under a daemon id, waiting for its response."""

    client: Client | None  # None: the daemon's own, or an answer (its client was answered at once)
    original_id: str | None
    command: str
    then: Callable[[Answer], None] | None = None  # the daemon's own: who takes the answer


@dataclass(slots=True)
class AgentSlot:
    record: AgentRecord
    runtime: RuntimeMachine = field(default_factory=RuntimeMachine)
    gen: Generation | None = None  # the runtime process, from spawn until it exits
    epoch: int = -1  # 0 for the first runtime generation, +1 for each replacement
    capabilities: list[str] = field(default_factory=list)
    status: AgentStatus = "idle"
    attachments: dict[Client, Role] = field(default_factory=dict)
    fanout: tuple[Client, ...] = ()  # the attachments, kept as one tuple for the delta hot path
    subscribers: list[Subscriber] = field(default_factory=list)
    open_requests: dict[str, OpenRequest] = field(default_factory=dict)
    forwarded: dict[str, Forwarded] = field(default_factory=dict)
    responders: Responders = Responders.UNTOLD
    usage: dict[str, Any] = field(default_factory=dict)
    queue: list[Any] = field(default_factory=list)  # the runtime's last queue_changed.queue
    # An adopted session given a model/mode at agent.create: applied on the next start, after which
    # the session itself records them.
    adoption_overrides: bool = False
    # --- the supervisor's -------------------------------------------------------------------------
    start_pending: bool = False  # admitted under the limit: queued or spawning
    ready_waiters: list[Started] = field(default_factory=list)
    exit_waiters: list[Callable[[], None]] = field(default_factory=list)
    reap_armed: bool = False
    idle_since: float = 0.0  # clock time its idle clock last started: the longest idle makes room first
    terminate_when_idle: bool = False
    removing: bool = False  # agent.remove is under way: no runtime may start for it any more
    tag: bytes = field(init=False)  # spliced in front of a runtime line's "{" to tag it with the agent

    def __post_init__(self) -> None:
        self.tag = b'{"agent_id":' + orjson.dumps(self.record.agent_id) + b","

    @property
    def agent_id(self) -> str:
        return self.record.agent_id

    @property
    def live(self) -> bool:
        """A ready runtime the daemon has not asked to end: commands can go to it."""
        return self.runtime.state == "running" and self.gen is not None and not self.gen.stop_requested

    @property
    def busy(self) -> bool:
        """Active work: an active status, or a client's command the runtime has not answered yet."""
        return self.status in ACTIVE_STATUSES or any(f.client is not None for f in self.forwarded.values())

    @property
    def forgettable(self) -> bool:
        """Nothing to stop and nothing worth keeping the agent for: no runtime running or starting,
        and none ever became ready, or the last one failed, or the agent was made to be removed once
        stopped (agent.terminate then forgets it)."""
        return (
            self.gen is None
            and not self.start_pending
            and (self.runtime.state == "failed" or self.record.started_at is None or self.record.ephemeral)
        )

    def attach(self, client: Client, role: Role) -> None:
        self.attachments[client] = role
        client.attached[self.agent_id] = role
        self.fanout = tuple(self.attachments)

    def detach(self, client: Client) -> bool:
        """False when ``client`` was not attached."""
        client.attached.pop(self.agent_id, None)
        if self.attachments.pop(client, None) is None:
            return False
        self.fanout = tuple(self.attachments)
        return True

    def interactive(self) -> list[Client]:
        return [c for c, role in self.attachments.items() if role == INTERACTIVE and not c.closed]

    def info(self) -> AgentInfo:
        """AgentInfo (PROTOCOL §11)."""
        r = self.record
        provider = r.provider
        if r.model and "/" in r.model and provider is None:
            provider = r.model.split("/", 1)[0]
        optional: dict[str, Any] = {
            "name": r.name,
            "model": r.model,
            "provider": provider,
            "mode": r.mode,
            "parent_agent_id": r.parent_agent_id,
            "alias": r.alias,
            "definition_name": r.definition_name,
            "display_name": r.display_name,
            "session_id": r.session_id,
            "host": r.host,
            "workspace_id": r.workspace_id,
            "usage": Usage.model_validate(self.usage) if self.usage else None,
        }
        return AgentInfo(
            agent_id=r.agent_id,
            cwd=r.cwd,
            status=self.status,
            runtime_state=self.runtime.state,
            created_at=r.created_at,
            **{k: v for k, v in optional.items() if v is not None},
        )

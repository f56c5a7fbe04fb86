"""What the daemon keeps per agent: the durable record plus what routing needs (DESIGN §2) — the
runtime process and its generation, status, attachments, open broadcast requests and the commands
forwarded and not yet answered. The runtime itself is the authority on everything else."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from shard.daemon.connection import Connection
from shard.daemon.registry import AgentRecord
from shard.daemon.runtime_proc import RuntimeProcess

INTERACTIVE, OBSERVER = "interactive", "observer"
ACTIVE_STATUSES = frozenset({"streaming", "waiting_for_permission", "waiting_for_ui", "compacting"})


@dataclass(slots=True)
class OpenRequest:
    """A permission or UI request the runtime broadcast and nobody has answered yet."""

    tagged: bytes  # the event as clients get it (agent_id added)
    event: dict[str, Any]
    answered: bool = False
    delegated_to: set[Connection] = field(default_factory=set)  # ancestors' clients shown it


@dataclass(slots=True)
class Forwarded:
    """A command sent to the runtime under a daemon id, waiting for its response."""

    conn: Connection | None  # None: the daemon's own (the response goes to `then`)
    original_id: str | None
    command: str
    then: Callable[[dict[str, Any]], None] | None = None


@dataclass(slots=True)
class AgentSlot:
    record: AgentRecord
    proc: RuntimeProcess | None = None
    runtime_state: str = "stopped"
    epoch: int = -1  # 0 for the first runtime generation, +1 for each replacement
    capabilities: list[str] = field(default_factory=list)
    status: str = "idle"
    phase: str | None = None
    starting: asyncio.Future[None] | None = None
    attachments: dict[Connection, str] = field(default_factory=dict)
    open_requests: dict[str, OpenRequest] = field(default_factory=dict)
    forwarded: dict[str, Forwarded] = field(default_factory=dict)
    reap_handle: asyncio.TimerHandle | None = None
    idle_since: float = 0.0  # loop time its idle clock last started: the longest idle makes room first
    terminate_when_idle: bool = False
    responders_told: bool | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    # An adopted session given a model/mode at agent.create: applied on the next start, after which
    # the session itself records them.
    adoption_overrides: bool = False
    tag: bytes = field(init=False)  # spliced in front of a runtime line's "{" to tag it with the agent

    def __post_init__(self) -> None:
        self.tag = b'{"agent_id":' + orjson.dumps(self.record.agent_id) + b","

    @property
    def agent_id(self) -> str:
        return self.record.agent_id

    @property
    def live(self) -> bool:
        return self.proc is not None and self.proc.alive

    @property
    def busy(self) -> bool:
        """Active work: an active status, or a client's command the runtime has not answered yet."""
        return self.status in ACTIVE_STATUSES or any(f.conn is not None for f in self.forwarded.values())

    @property
    def forgettable(self) -> bool:
        """Nothing to stop and nothing worth keeping the agent for: no runtime running or starting,
        and none ever became ready or the last one failed (agent.terminate then forgets it)."""
        return (
            self.proc is None
            and self.starting is None
            and (self.runtime_state == "failed" or self.record.started_at is None)
        )

    def interactive(self) -> list[Connection]:
        return [c for c, role in self.attachments.items() if role == INTERACTIVE and not c.closed]

    def info(self) -> dict[str, Any]:
        """AgentInfo (PROTOCOL §11)."""
        r = self.record
        model = r.model
        provider = r.provider
        if model and "/" in model and provider is None:
            provider = model.split("/", 1)[0]
        out: dict[str, Any] = {
            "agent_id": r.agent_id,
            "cwd": r.cwd,
            "status": self.status,
            "runtime_state": self.runtime_state,
            "created_at": r.created_at,
        }
        optional = {
            "name": r.name,
            "model": model,
            "provider": provider,
            "mode": r.mode,
            "parent_agent_id": r.parent_agent_id,
            "usage": self.usage or None,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

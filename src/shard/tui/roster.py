"""The agent list as a pure fold: ``agent.list`` once, then the orchestrator events every client
receives (PROTOCOL §10.2) — spawned, changed (a rename), exited, status changed, activity, removed.
No Textual, no asyncio.

The list is ordered by recent activity: each row keeps the time of the last event about its agent
(``agent_activity``'s own timestamp; for the events that carry none, the time the client received
them, given to :meth:`Roster.apply`), starting from ``created_at``; a re-list keeps what was seen."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePath

from shard.protocol import words
from shard.protocol.agents import AgentInfo, AgentStatus, RuntimeState
from shard.protocol.events import (
    AgentActivity,
    AgentChanged,
    AgentExited,
    AgentRemoved,
    AgentSpawned,
    AgentStatusChanged,
    EventBase,
)

_ASKING: frozenset[str] = frozenset({"waiting_for_permission", "waiting_for_ui"})


@dataclass(frozen=True)
class Row:
    agent_id: str
    label: str
    cwd: str
    status: AgentStatus
    runtime_state: RuntimeState
    activity: str = ""
    model: str | None = None  # provider/model as the registry knows it (sync does not carry it)
    parent: str | None = None  # parent_agent_id: a background child asks its ancestor's clients
    session_id: str | None = None  # the session it runs on: the sessions view marks it "current"
    last: float = 0.0  # when the last event about it came (wall-clock seconds): the list's order
    host: str | None = None  # the [[hosts]] machine it runs on; None: the daemon's own

    @property
    def needs_answer(self) -> bool:
        return self.status in _ASKING

    @property
    def stopped(self) -> bool:
        """No runtime: nothing to terminate or kill (a prompt or attach starts one again)."""
        return self.runtime_state in ("stopped", "failed")

    @property
    def state(self) -> str:
        """One word or two for what it does now: the runtime state when not running, "needs an
        answer" while a request waits, the activity (a tool, thinking…) mid-turn, else the status."""
        if self.runtime_state != "running":
            return self.runtime_state
        if self.needs_answer:
            return "needs an answer"
        if self.activity and self.status != "idle":
            return self.activity
        return words.status(self.status)

    @property
    def title(self) -> str:
        """How the list names it: its name, else its folder and the end of its id (an id alone
        would fill a narrow list and tell a person nothing)."""
        where = f" @{self.host}" if self.host else ""
        if self.label != self.agent_id:
            return self.label + where
        return f"{PurePath(self.cwd).name or self.cwd} #{self.agent_id[-4:]}{where}"

    def line(self) -> str:
        """The row as one line: name, state, model."""
        return " · ".join([self.title, self.state, *([self.model] if self.model else [])])


def model_name(provider: str | None, model: str | None) -> str | None:
    """``provider/model`` once: the registry's model id usually names its provider already."""
    if provider and model and not model.startswith(f"{provider}/"):
        return f"{provider}/{model}"
    return model


def row_of(info: AgentInfo, seen: Row | None = None) -> Row:
    """The row of ``info``; ``seen``: the row it replaces, whose activity time stays, and whose
    model too when the registry names none (the runtime's default, learnt from the agent)."""
    renamed = info.name if info.name and info.name != info.alias else None  # agent.rename's, a person's
    label = renamed or info.display_name or info.name or info.alias or info.agent_id
    return Row(
        info.agent_id,
        label,
        info.cwd,
        info.status,
        info.runtime_state,
        model=model_name(info.provider, info.model) or (seen.model if seen else None),
        parent=info.parent_agent_id,
        session_id=info.session_id,
        host=info.host,
        last=max(seen.last if seen else 0.0, float(info.created_at)),
    )


@dataclass
class Roster:
    rows: dict[str, Row]

    @classmethod
    def of(cls, infos: list[AgentInfo], seen: Roster | None = None) -> Roster:
        """The rows of ``agent.list``; ``seen``: the roster it replaces (what it learnt stays)."""
        known = seen.rows if seen is not None else {}
        return cls({info.agent_id: row_of(info, known.get(info.agent_id)) for info in infos})

    def ordered(self) -> list[Row]:
        """The rows as the list shows them: the most recently active first."""
        return sorted(self.rows.values(), key=lambda row: (-row.last, row.agent_id))

    def know_model(self, agent_id: str, model: str) -> bool:
        """The model an agent's own events name (attached agents): whether the list changed."""
        row = self.rows.get(agent_id)
        if row is None or row.model == model:
            return False
        self.rows[agent_id] = replace(row, model=model)
        return True

    def descends(self, agent_id: str, ancestor: str) -> bool:
        """Whether ``agent_id`` is a child, grandchild, … of ``ancestor`` (a cycle ends the walk)."""
        seen: set[str] = set()
        row = self.rows.get(agent_id)
        while row is not None and row.parent is not None and row.parent not in seen:
            if row.parent == ancestor:
                return True
            seen.add(row.parent)
            row = self.rows.get(row.parent)
        return False

    def descendants(self, agent_id: str) -> list[str]:
        """The agents that descend from ``agent_id`` (they are removed with it)."""
        return [a for a in self.rows if a != agent_id and self.descends(a, agent_id)]

    def asker(self, agent_id: str) -> str:
        """Who asks, as a request dialog names it: "<display name or alias> (<agent_id>)"."""
        row = self.rows.get(agent_id)
        return f"{row.label} ({agent_id})" if row is not None and row.label != agent_id else agent_id

    def apply(self, event: EventBase, at: float = 0.0) -> bool:
        """Fold one orchestrator event received at ``at``; whether the list changed."""
        if isinstance(event, AgentSpawned):
            self.rows[event.agent_id] = replace(row_of(event.info), last=max(at, event.info.created_at))
            return True
        if isinstance(event, AgentRemoved):
            return self.rows.pop(event.agent_id, None) is not None
        if isinstance(event, AgentChanged) and event.agent_id in self.rows:
            seen = self.rows[event.agent_id]
            self.rows[event.agent_id] = new = replace(row_of(event.info, seen), activity=seen.activity)
            return new != seen
        row = self.rows.get(getattr(event, "agent_id", None) or "")
        if row is None:
            return False
        last = max(row.last, at)
        if isinstance(event, AgentStatusChanged):
            new = replace(row, status=event.status, runtime_state=event.runtime_state, last=last)
        elif isinstance(event, AgentExited):
            new = replace(row, runtime_state=event.runtime_state, activity=event.reason, last=last)
        elif isinstance(event, AgentActivity):
            activity = f"{event.phase}: {event.tool_name}" if event.tool_name else event.phase
            new = replace(row, status=event.status, activity=activity, last=max(row.last, event.timestamp))
        else:
            return False
        self.rows[row.agent_id] = new
        return new != row

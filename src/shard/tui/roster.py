"""The agent list as a pure fold: ``agent.list`` once, then the orchestrator events every client
receives (PROTOCOL §10.2) — spawned, exited, status changed, activity, removed. No Textual, no
asyncio."""

from __future__ import annotations

from dataclasses import dataclass, replace

from shard.protocol.agents import AgentInfo, AgentStatus, RuntimeState
from shard.protocol.events import (
    AgentActivity,
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

    @property
    def needs_answer(self) -> bool:
        return self.status in _ASKING

    @property
    def stopped(self) -> bool:
        """No runtime: nothing to terminate or kill (a prompt or attach starts one again)."""
        return self.runtime_state in ("stopped", "failed")

    def line(self) -> str:
        """The row as one line: name, status (runtime state when not running), activity, badge."""
        state = self.status if self.runtime_state == "running" else self.runtime_state
        parts = [self.label, state]
        if self.activity and self.activity != self.status and self.runtime_state == "running":
            parts.append(self.activity)
        if self.needs_answer:
            parts.append("needs an answer")
        return " · ".join(parts)


def row_of(info: AgentInfo) -> Row:
    label = info.display_name or info.name or info.alias or info.agent_id
    model = f"{info.provider}/{info.model}" if info.provider and info.model else info.model
    parent = info.parent_agent_id
    return Row(
        info.agent_id,
        label,
        info.cwd,
        info.status,
        info.runtime_state,
        model=model,
        parent=parent,
        session_id=info.session_id,
    )


@dataclass
class Roster:
    rows: dict[str, Row]

    @classmethod
    def of(cls, infos: list[AgentInfo]) -> Roster:
        return cls({info.agent_id: row_of(info) for info in infos})

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

    def apply(self, event: EventBase) -> bool:
        """Fold one orchestrator event; whether the list changed."""
        if isinstance(event, AgentSpawned):
            self.rows[event.agent_id] = row_of(event.info)
            return True
        if isinstance(event, AgentRemoved):
            return self.rows.pop(event.agent_id, None) is not None
        row = self.rows.get(getattr(event, "agent_id", None) or "")
        if row is None:
            return False
        if isinstance(event, AgentStatusChanged):
            new = replace(row, status=event.status, runtime_state=event.runtime_state)
        elif isinstance(event, AgentExited):
            new = replace(row, runtime_state=event.runtime_state, activity=event.reason)
        elif isinstance(event, AgentActivity):
            activity = f"{event.phase}: {event.tool_name}" if event.tool_name else event.phase
            new = replace(row, status=event.status, activity=activity)
        else:
            return False
        self.rows[row.agent_id] = new
        return new != row

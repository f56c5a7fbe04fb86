"""``agent_activity`` (PROTOCOL §10.2): a coarse, sanitized phase per agent — pure.

The phase is derived from the runtime's own events and carries nothing of their content: no prompt,
text, tool arguments or results, paths, descriptors or transcripts — only the phase, the status and,
while a tool runs, the tool's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from shard.daemon.effects import Broadcast, Effect
from shard.protocol.agents import AgentStatus
from shard.protocol.events import AgentActivity

Phase = Literal["idle", "thinking", "streaming", "tool", "waiting", "compacting", "retrying", "error"]

_BY_STATUS: dict[str, Phase] = {
    "idle": "idle",
    "streaming": "streaming",
    "waiting_for_permission": "waiting",
    "waiting_for_ui": "waiting",
    "compacting": "compacting",
    "error": "error",
}


def phase_of(event: Mapping[str, Any], status: str, current: str | None) -> tuple[Phase, str | None] | None:
    """The (phase, tool_name) an event moves the agent to, or None when it does not change the phase."""
    kind = event.get("type")
    if kind == "status":
        detail = event.get("detail") or ""
        status_phase = _BY_STATUS.get(event.get("status", ""), "idle")
        phase: Phase = "retrying" if detail.startswith("retrying") else status_phase
        return (phase, None) if phase != current else None
    if kind == "message_delta":
        delta: Phase = "thinking" if event.get("kind") == "thinking" else "streaming"
        return (delta, None) if delta != current else None
    if kind == "tool_call":
        name = event.get("name")
        return ("tool", name if isinstance(name, str) else None)
    return None


class ActivityTracker:
    """The overview as an internal subscriber of every agent: ``agent_activity`` to every
    connection whenever an agent's phase changes (and on every tool call). It is never a responder."""

    def __init__(self, wall: Callable[[], float]) -> None:
        self._wall = wall
        self._phases: dict[str, str] = {}

    def event(self, agent_id: str, status: AgentStatus, event: Mapping[str, Any]) -> Iterable[Effect]:
        change = phase_of(event, status, self._phases.get(agent_id))
        if change is None:
            return ()
        phase, tool = change
        self._phases[agent_id] = phase
        fields: dict[str, Any] = {
            "agent_id": agent_id,
            "timestamp": self._wall(),
            "phase": phase,
            "status": status,
        }
        if tool:
            fields["tool_name"] = tool
        return (Broadcast(AgentActivity.model_validate(fields).to_json()),)

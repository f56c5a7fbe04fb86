"""``agent_activity`` (PROTOCOL §10.2): a coarse, sanitized phase per agent — pure.

The phase is derived from the runtime's own events and carries nothing of their content: no prompt,
text, tool arguments or results, paths, descriptors or transcripts — only the phase, the status and,
while a tool runs, the tool's name.
"""

from __future__ import annotations

from typing import Any

_BY_STATUS = {
    "idle": "idle",
    "streaming": "streaming",
    "waiting_for_permission": "waiting",
    "waiting_for_ui": "waiting",
    "compacting": "compacting",
    "error": "error",
}


def phase_of(event: dict[str, Any], status: str, current: str | None) -> tuple[str, str | None] | None:
    """The (phase, tool_name) an event moves the agent to, or None when it does not change the phase."""
    kind = event.get("type")
    if kind == "status":
        detail = event.get("detail") or ""
        status_phase = _BY_STATUS.get(event.get("status", ""), "idle")
        phase = "retrying" if detail.startswith("retrying") else status_phase
        return (phase, None) if phase != current else None
    if kind == "message_delta":
        phase = "thinking" if event.get("kind") == "thinking" else "streaming"
        return (phase, None) if phase != current else None
    if kind == "tool_call":
        name = event.get("name")
        return ("tool", name if isinstance(name, str) else None)
    return None

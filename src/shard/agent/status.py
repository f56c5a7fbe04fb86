"""The AgentStatus lifecycle as one transition table (PROTOCOL §9.1).

``idle`` → a turn starts (``streaming``) or a compaction runs. Within a turn the agent waits on a
permission or UI answer and comes back. ``error`` is terminal for the runtime (a fatal error); only a
restore leaves it. An illegal transition is a bug and raises.
"""

from __future__ import annotations

from shard.protocol.agents import AgentStatus, IllegalTransition

TRANSITIONS: dict[AgentStatus, frozenset[AgentStatus]] = {
    "idle": frozenset({"streaming", "compacting", "error"}),
    "streaming": frozenset({"idle", "waiting_for_permission", "waiting_for_ui", "compacting", "error"}),
    "waiting_for_permission": frozenset({"streaming", "idle", "error"}),
    "waiting_for_ui": frozenset({"streaming", "idle", "error"}),
    "compacting": frozenset({"idle", "streaming", "error"}),
    "error": frozenset(),
}


class StatusMachine:
    def __init__(self, initial: AgentStatus = "idle") -> None:
        self.current: AgentStatus = initial

    def move(self, to: AgentStatus) -> bool:
        """Move to ``to``; False when already there (no event is due), raise if not allowed."""
        if to == self.current:
            return False
        if to not in TRANSITIONS[self.current]:
            raise IllegalTransition(f"agent status cannot go from {self.current} to {to}")
        self.current = to
        return True

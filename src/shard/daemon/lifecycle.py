"""What the daemon keeps per agent as explicit states, each read in one place: the Runtime
generation's ``RuntimeState`` (DESIGN §6) as a transition table that raises on an illegal move, and
what the runtime was last told about responders (PROTOCOL §6.3).
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from shard.protocol.agents import AgentStatus, IllegalTransition, RuntimeState

Role = Literal["interactive", "observer"]
INTERACTIVE: Role = "interactive"

# The statuses in which an agent is working: its runtime is never reaped then (R6.4.14).
ACTIVE_STATUSES: frozenset[AgentStatus] = frozenset(
    {"streaming", "waiting_for_permission", "waiting_for_ui", "compacting"}
)

TRANSITIONS: dict[RuntimeState, frozenset[RuntimeState]] = {
    # a start is spawned; or refused before any process exists (the daemon is shutting down)
    "stopped": frozenset({"starting", "failed"}),
    # ready (hello + sync), or not
    "starting": frozenset({"running", "failed"}),
    # stdin closed (reaped, terminated, making room, shutdown); an exit after agent.kill; a crash
    "running": frozenset({"stopping", "stopped", "failed"}),
    "stopping": frozenset({"stopped"}),
    # restored; or forgotten by agent.terminate
    "failed": frozenset({"starting", "stopped"}),
}


class RuntimeMachine:
    def __init__(self, initial: RuntimeState = "stopped") -> None:
        self.state: RuntimeState = initial

    def move(self, to: RuntimeState) -> bool:
        """Move to ``to``; False when already there (nothing to announce), raise if not allowed."""
        if to == self.state:
            return False
        if to not in TRANSITIONS[self.state]:
            raise IllegalTransition(f"runtime state cannot go from {self.state} to {to}")
        self.state = to
        return True


class Responders(Enum):
    """What a Runtime generation was last told by ``runtime.responders``."""

    UNTOLD = "untold"  # a generation that has just become ready: it must be told either way
    PRESENT = "present"
    ABSENT = "absent"

    @classmethod
    def of(cls, present: bool) -> Responders:
        return cls.PRESENT if present else cls.ABSENT

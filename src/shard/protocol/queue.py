"""What waits to be delivered to an agent (Shard, additive to PROTOCOL §9.2 / §9.4).

A ``prompt`` with ``streaming_behavior`` (or a ``steer``) sent while the agent works is not delivered
at once: it waits in the agent's queue — a steer until the turn's next model call, a follow-up until
the agent stops. Every change of the queue is a ``queue_changed`` event carrying the *whole* queue
after the change, so a client folds it by replacing what it had (idempotent, whatever it missed);
``sync.queue`` carries it to a client that attaches or reconnects. ``unqueue`` withdraws a message
that has not been delivered yet. A message the agent will never deliver — the turn was aborted, the
turn failed before a steer's model call, the agent stopped — is handed back: ``returned`` lists it,
so each client can offer its text again, and the session records it (a ``queue_returned`` entry).
"""

from typing import Literal

from shard.protocol.base import WireModel
from shard.protocol.content import Image
from shard.protocol.event_base import AgentEvent

Behavior = Literal["steer", "follow_up"]


class QueuedMessage(WireModel):
    """A user message waiting to be delivered: ``steer`` before the turn's next model call,
    ``follow_up`` as a new turn once the agent stops. ``queued_at`` is Unix time in seconds;
    ``source`` names the client that sent it when the daemon knows it."""

    queue_id: str
    message: str
    images: list[Image] | None = None
    behavior: Behavior
    queued_at: int | float
    source: str | None = None


class QueueChanged(AgentEvent):
    """The agent's queue changed; ``queue`` is all of it now, in delivery order. ``reason``:
    ``queued``, ``delivered``, ``withdrawn``, or why ``returned`` messages were handed back
    (``aborted``, ``turn_failed``, ``agent_failed``, ``runtime_exited``; other values may come)."""

    type: Literal["queue_changed"] = "queue_changed"
    queue: list[QueuedMessage]
    reason: str
    returned: list[QueuedMessage] | None = None

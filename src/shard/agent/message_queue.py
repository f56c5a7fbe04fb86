"""What waits to be delivered to the agent: the steers and follow-ups sent while it works
(PROTOCOL §9.2; the additive ``queue_changed`` / ``sync.queue`` / ``unqueue`` of ``protocol/queue.py``).

The runtime owns the queue; the turn loop takes from it. Every change goes out at once as a
``queue_changed`` carrying the whole queue, so what a client shows is never behind what the agent
will do:

* ``queued`` — :meth:`MessageQueue.accept`, when a ``prompt``/``steer`` arrives mid-work;
* ``delivered`` — :meth:`take_steer` / :meth:`take_follow_up`, right before the message is recorded
  and reported as a user message (same event-loop step: no ``sync`` can fall in between);
* ``withdrawn`` — :meth:`withdraw` (``unqueue``); a message already delivered is NOT_FOUND: delivery
  wins the race, since both happen on the runtime's one loop, one after the other;
* handed back — :meth:`hand_back`, for messages the agent will never deliver (an abort, a turn that
  failed before a steer's model call, a fatal error): ``returned`` lists them, and the session
  records a ``queue_returned`` entry first, so the session shows they were not sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from shard.agent.sink import EventSink
from shard.protocol.content import Image
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import new_id
from shard.protocol.queue import Behavior, QueueChanged, QueuedMessage

Record = Callable[..., object]


class MessageQueue:
    def __init__(self, events: EventSink, record: Record, clock: Callable[[], float] = time.time) -> None:
        self._events = events
        self._record = record
        self._clock = clock
        self._items: list[QueuedMessage] = []

    def snapshot(self) -> list[QueuedMessage]:
        """The queue in delivery order (for ``sync.queue``)."""
        return list(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    # --- in ---------------------------------------------------------------------------------------

    def accept(
        self,
        text: str,
        images: list[Image] | None,
        behavior: Behavior | None,
        compacting: bool,
        source: str | None = None,
    ) -> QueuedMessage:
        """A message sent while the agent works. It must say how it waits (R9.2.2) — except during
        a compaction, when there is no turn to steer and it waits as a follow-up."""
        if compacting:
            behavior = "follow_up"  # a prompt sent during a compaction runs right after it
        if behavior is None:
            raise ShardError(
                ErrorCode.INVALID_REQUEST,
                "the agent is mid-turn: send the prompt with streaming_behavior 'steer' (deliver "
                "before the next model call) or 'follow_up' (deliver when the agent stops), or use steer",
            )
        return self._add(text, images, behavior, source)

    def _add(
        self, text: str, images: list[Image] | None, behavior: Behavior, source: str | None
    ) -> QueuedMessage:
        item = QueuedMessage(
            queue_id=new_id("queue"), message=text, behavior=behavior, queued_at=self._clock()
        )
        if images:
            item.images = images
        if source is not None:
            item.source = source
        self._items.append(item)
        self._changed("queued")
        return item

    # --- out: delivered, withdrawn, handed back --------------------------------------------------

    def has(self, behavior: Behavior) -> bool:
        return any(item.behavior == behavior for item in self._items)

    def take_steer(self) -> QueuedMessage | None:
        return self._take("steer")

    def take_follow_up(self) -> QueuedMessage | None:
        return self._take("follow_up")

    def _take(self, behavior: Behavior) -> QueuedMessage | None:
        item = next((i for i in self._items if i.behavior == behavior), None)
        if item is not None:
            self._items.remove(item)
            self._changed("delivered")
        return item

    def withdraw(self, queue_id: str) -> QueuedMessage:
        item = next((i for i in self._items if i.queue_id == queue_id), None)
        if item is None:
            raise ShardError(
                ErrorCode.NOT_FOUND,
                f"nothing queued has id {shown(queue_id)}: it was delivered or handed back already",
            )
        self._items.remove(item)
        self._changed("withdrawn")
        return item

    def take_all(self, behavior: Behavior | None = None) -> list[QueuedMessage]:
        """Remove (without an event) what will not be delivered; :meth:`hand_back` reports it."""
        taken = [i for i in self._items if behavior is None or i.behavior == behavior]
        self._items = [i for i in self._items if i not in taken]
        return taken

    def hand_back(self, items: list[QueuedMessage], reason: str, *, record: bool = True) -> None:
        """Give ``items`` back to the clients: recorded in the session (unless it cannot be written
        any more), then one ``queue_changed`` with them in ``returned``."""
        if not items:
            return
        if record:
            try:
                self._record("queue_returned", reason=reason, messages=[i.to_wire() for i in items])
            except ShardError as exc:  # the session cannot be written: the agent stops on it
                self._events.fail(exc)
        self._changed(reason, returned=items)

    def _changed(self, reason: str, returned: list[QueuedMessage] | None = None) -> None:
        event = QueueChanged(queue=list(self._items), reason=reason)
        if returned:
            event.returned = returned
        self._events.emit(event)

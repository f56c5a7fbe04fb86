"""Requests of agents this client does not attach: a background child with no interactive client of
its own asks its nearest interactive ancestor's clients, under the *child's* ``agent_id``
(PROTOCOL §6.3, R6.3.8 to R6.3.11). :class:`Delegated` folds them — ``permission_request``,
``ui_request`` and their ``*_resolved`` — into the requests still open, and hands each to the
streams once: the daemon re-shows an open one when a (re)attach makes this client its answerer
again, and a re-shown request the consumer already has is not yielded a second time.

After a reconnect the daemon re-sends only what is still open; a request it did not re-send was
closed (answered, or no longer this client's to answer) while the link was down. The client calls
:meth:`Delegated.reconnected` before re-attaching and :meth:`Delegated.settle` once the re-attaches
are answered, and the stale ones are closed for the consumer with a resolution whose ``source`` is
:data:`CLOSED_WHILE_AWAY` (the real outcome is unknown: the permission one says ``deny``, the UI one
``value: null``, as the daemon's own ``runtime-exited`` closing does). No I/O here.
"""

from __future__ import annotations

from shard.client.streams import EventStream, broadcast, end_all
from shard.protocol.events import AgentEvent, PermissionRequest, PermissionResolved, UiRequest, UiResolved

DELEGATED_TYPES = (PermissionRequest, UiRequest, PermissionResolved, UiResolved)
RESOLUTIONS = (PermissionResolved, UiResolved)
CLOSED_WHILE_AWAY = "closed-while-disconnected"
Key = tuple[str, str]  # (the asking agent's id, request_id)


class Delegated:
    def __init__(self) -> None:
        self.pending: dict[Key, PermissionRequest | UiRequest] = {}
        self._streams: list[EventStream[AgentEvent]] = []
        self.primary = EventStream[AgentEvent](self._streams)
        self._unconfirmed: set[Key] = set()  # open before the reconnect, not re-sent since

    def subscribe(self) -> EventStream[AgentEvent]:
        return EventStream[AgentEvent](self._streams)

    def receive(self, event: AgentEvent) -> None:
        """One of :data:`DELEGATED_TYPES` for an agent the client does not attach."""
        if not isinstance(event, DELEGATED_TYPES) or event.agent_id is None:
            return
        key = (event.agent_id, event.request_id)
        if isinstance(event, PermissionRequest | UiRequest):
            if isinstance(event, UiRequest) and event.kind == "notify":
                return  # a notification asks nothing and is not routed up (§9.5)
            known = key in self.pending
            self.pending[key] = event
            self._unconfirmed.discard(key)
            if not known:  # a re-shown request the consumer has already
                broadcast(self._streams, event)
        elif self.pending.pop(key, None) is not None:
            self._unconfirmed.discard(key)
            broadcast(self._streams, event)

    def reconnected(self) -> None:
        """A new connection: what is open now must be re-sent to stay open."""
        self._unconfirmed = set(self.pending)

    @property
    def unsettled(self) -> bool:
        return bool(self._unconfirmed)

    def settle(self) -> None:
        """The re-attaches are done: close, for the consumer, what the daemon did not re-send."""
        for key in sorted(self._unconfirmed):
            request = self.pending.pop(key, None)
            if request is None:
                continue
            agent_id, request_id = key
            closing: AgentEvent
            if isinstance(request, PermissionRequest):
                closing = PermissionResolved(
                    agent_id=agent_id, request_id=request_id, decision="deny", source=CLOSED_WHILE_AWAY
                )
            else:
                fields = {"agent_id": agent_id, "request_id": request_id, "value": None}
                closing = UiResolved.model_validate({**fields, "source": CLOSED_WHILE_AWAY})
            broadcast(self._streams, closing)
        self._unconfirmed.clear()

    def end(self, error: BaseException | None) -> None:
        end_all(self._streams, error)

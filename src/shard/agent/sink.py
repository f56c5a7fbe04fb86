"""Everything the agent tells its clients goes out here, in order — and the status line with it.

The status is a :class:`~shard.agent.status.StatusMachine` (an illegal move raises); a ``status``
event goes out on every transition, and when only the detail changes (``retrying in 2.0 s …``). A
fatal error is reported once and leaves the agent in ``error`` for good: every later prompt is
refused with it.
"""

from __future__ import annotations

from collections.abc import Callable

from shard.agent.status import StatusMachine
from shard.protocol.agent_events import ErrorEvent, Status
from shard.protocol.agents import AgentStatus
from shard.protocol.errors import ShardError
from shard.protocol.event_base import EventBase

Sink = Callable[[EventBase], None]


class EventSink:
    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._machine = StatusMachine()
        self._detail: str | None = None
        self.fatal: ShardError | None = None

    def emit(self, event: EventBase) -> None:
        self._sink(event)

    @property
    def status(self) -> AgentStatus:
        return self._machine.current

    @property
    def detail(self) -> str | None:
        """The detail of the last ``status`` event (a retry's wait), None when it said none."""
        return self._detail

    def set_status(self, status: AgentStatus, detail: str | None = None) -> None:
        if self._machine.move(status) or detail != self._detail:
            self._detail = detail
            event = Status(status=status)
            if detail is not None:
                event.detail = detail
            self.emit(event)

    def fail(self, error: ShardError) -> None:
        """A fatal error: report it once and refuse further work (status ``error``)."""
        if self.fatal is None:
            self.fatal = error
            self.emit(ErrorEvent(code=error.code.value, message=error.message, fatal=True))
            self.set_status("error")

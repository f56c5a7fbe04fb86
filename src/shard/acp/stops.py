"""One ACP prompt's turn, followed through our events to its ``stopReason`` — a pure fold.

The turn is the one that delivers the prompt: its user message (``message_complete``, role user,
the prompt's text) claims it, and its ``turn_end`` ends it. The stop reason is ``cancelled`` when the
editor cancelled (session/cancel became ``abort``), ``max_tokens`` when the model's reply was cut at
its output limit (the runtime reports that as a non-fatal error), else ``end_turn``. A fatal error
fails the prompt instead. A re-sync that finds the agent idle after the prompt was claimed ends it
too (the connection dropped across the turn's end).
"""

from __future__ import annotations

import enum

from acp.schema import StopReason

from shard.client.transcript import message_text
from shard.protocol.events import AgentEvent, ErrorEvent, MessageComplete, Sync, TurnEnd, TurnStart

_CUT_MARK = "output limit"  # in the runtime's notice for a reply cut at max_tokens


class Seen(enum.Enum):
    PROMPT = "prompt"  # the event is the prompt's own user message: the editor shows it already
    END = "end"  # the turn ended: ``stop`` (or ``failure``) says how


class TurnWatch:
    def __init__(self, text: str) -> None:
        self.text = text
        self.claimed = False
        self.cancelled = False
        self.stop: StopReason | None = None
        self.failure: str | None = None  # a fatal error's message: the prompt fails with it
        self._current: str | None = None
        self._turn_id: str | None = None
        self._cut = False

    def feed(self, event: AgentEvent) -> Seen | None:
        if isinstance(event, TurnStart):
            self._current = event.turn_id
        elif isinstance(event, MessageComplete):
            msg = event.message
            if not self.claimed and msg.role == "user" and message_text(msg) == self.text:
                self.claimed, self._turn_id = True, self._current
                return Seen.PROMPT
        elif isinstance(event, ErrorEvent) and self.claimed:
            if event.fatal:
                self.failure = event.message
            elif _CUT_MARK in event.message:
                self._cut = True
        elif self.claimed and _ends(event, self._turn_id):
            return self._end()
        return None

    def _end(self) -> Seen:
        self.stop = "cancelled" if self.cancelled else "max_tokens" if self._cut else "end_turn"
        return Seen.END


def _ends(event: AgentEvent, turn_id: str | None) -> bool:
    if isinstance(event, TurnEnd):
        return turn_id in (None, event.turn_id)
    return isinstance(event, Sync) and event.status == "idle"  # re-synced after the turn ended

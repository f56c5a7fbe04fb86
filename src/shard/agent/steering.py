"""Strict steers: the daemon's ``runtime.steer`` (DESIGN §2; PROTOCOL §10.3, R10.3.34 to R10.3.39).

A strict steer is bound to the turn running when it is accepted. It drains into that turn at the
turn's next provider boundary, exactly where ordinary steers drain, and is then answered ``injected``
with the turn's id. If the turn ends first — completed, failed, aborted or fatal — it is answered
``conflict`` and dropped: unlike an ordinary steer it never reaches a later turn, a follow-up or the
idle queue. With no turn running (idle, or only a compaction) it is refused at once (``conflict``).

The turn loop calls :meth:`StrictSteers.begin` / :meth:`drain` / :meth:`end`; the runtime calls
:meth:`accept` and, on abort, :meth:`end`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shard.protocol.agent_results import RuntimeSteerResult

Settle = Callable[[RuntimeSteerResult], None]


@dataclass(frozen=True, slots=True)
class _Pending:
    text: str
    settle: Settle


class StrictSteers:
    def __init__(self) -> None:
        self.turn_id: str | None = None  # the running turn, if any
        self._pending: list[_Pending] = []

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def accept(self, text: str, settle: Settle) -> bool:
        """Hold ``text`` for the running turn; ``settle`` gets the answer later. False: no turn runs."""
        if self.turn_id is None:
            return False
        self._pending.append(_Pending(text, settle))
        return True

    def begin(self, turn_id: str) -> None:
        self.end()  # nothing may carry over from a turn that did not say it ended
        self.turn_id = turn_id

    def drain(self, deliver: Callable[[str], None]) -> None:
        """At a provider boundary of the running turn: deliver each held steer, answer ``injected``."""
        while self._pending and self.turn_id is not None:
            steer = self._pending.pop(0)
            try:
                deliver(steer.text)
            except BaseException:
                steer.settle(RuntimeSteerResult(status="conflict"))
                raise
            steer.settle(RuntimeSteerResult(status="injected", turn_id=self.turn_id))

    def end(self) -> None:
        """The turn is over (or aborted): every steer still held is answered ``conflict`` and dropped."""
        self.turn_id = None
        pending, self._pending = self._pending, []
        for steer in pending:
            steer.settle(RuntimeSteerResult(status="conflict"))

"""Reconnect delays (PROTOCOL §2.2): 1 s, 2 s, 4 s, … doubling on each attempt, capped at 30 s
(R2.2.6, R2.2.7). Pure, so tests read the schedule without waiting it out; jitter is optional and
takes its randomness from the caller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MAX_DELAY = 30.0


@dataclass(frozen=True, slots=True)
class Backoff:
    """``delay(attempt)`` for attempt 0, 1, 2 …: ``min(cap, first * 2**attempt)``, then jitter.

    ``jitter`` is a fraction (0.1 = up to 10 % shorter); ``random`` gives a number in [0, 1).
    """

    first: float = 1.0
    cap: float = MAX_DELAY
    jitter: float = 0.0
    random: Callable[[], float] | None = None

    def delay(self, attempt: int) -> float:
        base = min(self.cap, self.first * 2.0 ** min(attempt, 64))
        if self.jitter and self.random is not None:
            base -= base * self.jitter * self.random()
        return base

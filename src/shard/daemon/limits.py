"""How many runtimes may live at once, and which one makes room for another (pure, no I/O).

Each runtime is a ``shard agent --stdio`` process of 35 to 40 MB, so the daemon keeps at most
``max_runtimes`` of them (``--max-runtimes``, ``[daemon] max_runtimes``; 16 by default, a laptop's
budget). Runtimes that are starting count. At the limit the *inactive* runtime (status idle or
error, no client command awaiting its response: what the idle reaper would stop) idle longest is
stopped first; when none is inactive the start is refused and may be retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

DEFAULT_MAX_RUNTIMES = 16


class Occupant(NamedTuple):
    """A runtime holding a place: live, or starting."""

    agent_id: str
    inactive: bool  # the idle reaper's test: it could be stopped now and restored later
    idle_since: float  # when its idle clock last started (meaningful while inactive)


class Admission(NamedTuple):
    allowed: bool
    reap: str | None = None  # the agent whose runtime must stop first to make room


def admit(occupants: Sequence[Occupant], limit: int) -> Admission:
    """May one more runtime start beside ``occupants``, and whose runtime must stop for it?"""
    if len(occupants) < limit:
        return Admission(True)
    idle = [o for o in occupants if o.inactive]
    if not idle:
        return Admission(False)
    return Admission(True, min(idle, key=lambda o: o.idle_since).agent_id)

"""The choice of which runtime makes room at the limit (``shard.daemon.limits``), a pure function."""

from __future__ import annotations

from shard.daemon.limits import Occupant, admit


def _idle(agent_id: str, since: float) -> Occupant:
    return Occupant(agent_id, inactive=True, idle_since=since)


def _busy(agent_id: str, since: float = 0.0) -> Occupant:
    return Occupant(agent_id, inactive=False, idle_since=since)


def test_below_the_limit_a_start_needs_no_room():
    """Fewer occupants than the limit: start, stopping nobody."""
    assert admit([_idle("a", 1.0)], limit=2) == (True, None)
    assert admit([], limit=1) == (True, None)


def test_at_the_limit_the_runtime_idle_longest_makes_room():
    """At the limit the inactive runtime with the oldest idle clock is stopped; busy ones are never
    chosen, however long ago they were last idle."""
    occupants = [_busy("old-but-busy", 0.0), _idle("recent", 50.0), _idle("longest", 10.0)]
    assert admit(occupants, limit=3) == (True, "longest")


def test_at_the_limit_with_every_runtime_busy_the_start_is_refused():
    """At the limit with no inactive runtime (busy, or still starting): no start."""
    assert admit([_busy("a"), _busy("b")], limit=2) == (False, None)

"""The AgentStatus lifecycle: the transition table, illegal moves raising, no-op moves."""

from __future__ import annotations

import itertools
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shard.agent.status import TRANSITIONS, StatusMachine
from shard.protocol.agents import AGENT_STATUSES, AgentStatus, IllegalTransition

STATUSES = ("idle", "streaming", "waiting_for_permission", "waiting_for_ui", "compacting", "error")

# The lifecycle written out independently of the implementation (PROTOCOL §9.1, status.py docstring):
# a turn starts from idle or after a compaction; inside a turn the agent waits on a permission or a UI
# answer and comes back (or the turn ends); compaction runs between turns or mid-turn; anything can
# fail; error is terminal.
LEGAL = {
    ("idle", "streaming"),
    ("idle", "compacting"),
    ("streaming", "idle"),
    ("streaming", "waiting_for_permission"),
    ("streaming", "waiting_for_ui"),
    ("streaming", "compacting"),
    ("waiting_for_permission", "streaming"),
    ("waiting_for_permission", "idle"),
    ("waiting_for_ui", "streaming"),
    ("waiting_for_ui", "idle"),
    ("compacting", "idle"),
    ("compacting", "streaming"),
} | {(s, "error") for s in STATUSES if s != "error"}


def test_the_six_statuses() -> None:
    """Covers: R9.1.20. AgentStatus is exactly the six protocol strings, and the transition table
    has a row for each."""
    assert set(typing.get_args(AgentStatus)) == set(STATUSES)
    assert set(AGENT_STATUSES) == set(STATUSES)
    assert len(AGENT_STATUSES) == len(STATUSES)
    assert set(TRANSITIONS) == set(STATUSES)
    assert all(set(targets) <= set(STATUSES) for targets in TRANSITIONS.values())


@pytest.mark.parametrize(("start", "to"), list(itertools.product(STATUSES, STATUSES)))
def test_every_pair_of_statuses(start: AgentStatus, to: AgentStatus) -> None:
    """Checks the transition table for every (from, to): staying put returns False, a legal move returns True
    and moves, an illegal one raises IllegalTransition and leaves the status unchanged."""
    machine = StatusMachine(start)
    if start == to:
        assert machine.move(to) is False
        assert machine.current == start
    elif (start, to) in LEGAL:
        assert machine.move(to) is True
        assert machine.current == to
    else:
        with pytest.raises(IllegalTransition, match=f"from {start} to {to}"):
            machine.move(to)
        assert machine.current == start


def test_error_is_terminal() -> None:
    """Checks that no status can be reached from error (only a restore, i.e. a new machine)."""
    machine = StatusMachine("idle")
    assert machine.move("error") is True
    for to in STATUSES:
        if to == "error":
            assert machine.move(to) is False
        else:
            with pytest.raises(IllegalTransition):
                machine.move(to)
    assert machine.current == "error"


def test_a_turn_with_a_permission_wait_and_a_compaction() -> None:
    """Checks a realistic sequence runs through without raising and reports each change once."""
    machine = StatusMachine()
    assert machine.current == "idle"
    path: list[AgentStatus] = ["streaming", "waiting_for_permission", "streaming", "streaming", "idle"]
    path += ["compacting", "idle"]
    assert [machine.move(s) for s in path] == [True, True, True, False, True, True, True]


@given(st.lists(st.sampled_from(STATUSES), max_size=40))
def test_any_walk_matches_the_lifecycle(walk: list[AgentStatus]) -> None:
    """Checks that over any sequence of requested moves the machine agrees with the written-out
    lifecycle: the status is always one of the six and changes exactly on legal moves."""
    machine = StatusMachine()
    expected: AgentStatus = "idle"
    for to in walk:
        if to == expected:
            assert machine.move(to) is False
        elif (expected, to) in LEGAL:
            assert machine.move(to) is True
            expected = to
        else:
            with pytest.raises(IllegalTransition):
                machine.move(to)
        assert machine.current == expected
        assert machine.current in STATUSES

"""The jobs' timer keys: each comes back to the coordinator as the value that armed it."""

from __future__ import annotations

from dataclasses import dataclass

from shard.daemon.effects import TimerKey


@dataclass(frozen=True, slots=True)
class Deadline(TimerKey):
    """A run's ``run_timeout``."""

    run_id: str


@dataclass(frozen=True, slots=True)
class Quiet(TimerKey):
    """A stopped run's child, aborted, gets its stdin closed if it is still busy."""

    agent_id: str


@dataclass(frozen=True, slots=True)
class Kill(TimerKey):
    """A stopped run's child, its stdin closed, is killed if it is still there."""

    agent_id: str


@dataclass(frozen=True, slots=True)
class Report(TimerKey):
    """The completion reports collected for a parent go out (``delivery.py``)."""

    parent_id: str


@dataclass(frozen=True, slots=True)
class WaitEnd(TimerKey):
    """A ``subagent.wait``'s timeout (``waits.py``)."""

    number: int

"""The job catalog's records and the run state machine (PROTOCOL §11.2), pure.

A :class:`Job` is one accepted ``subagent.create`` (or ``subagent.relaunch``): its strategy and its
runs in order. A :class:`Run` is one task on one child Agent. The task text lives here and in
``state.db`` only: the snapshots sent on the wire are built by :func:`run_snapshot` /
:func:`job_snapshot`, which have no field for it (R10.3.7 to R10.3.9, R11.2.9).

Run states move only along :data:`RUN_TRANSITIONS`; an illegal move raises, so a bug cannot turn a
terminal record back into live work (``interrupted`` and the other terminal states have no way out).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from shard.protocol.jobs import (
    TERMINAL_RUN_STATES,
    JobSnapshot,
    JobState,
    JobStrategy,
    RunSnapshot,
    RunState,
    RunUsage,
)

_ENDS: frozenset[RunState] = frozenset(("completed", "failed", "timed_out", "cancelled", "interrupted"))
_STARTING: frozenset[RunState] = frozenset(("active",))
RUN_TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    # queued work may be cancelled, or found interrupted after a daemon restart, before it starts
    "queued": frozenset(("starting", "cancelled", "interrupted", "failed")),
    "starting": _STARTING | _ENDS,
    "active": _ENDS,
    **{end: frozenset() for end in _ENDS},
}


class IllegalRunTransition(RuntimeError):
    """A run asked to move where its state machine has no edge: a bug, never a client's mistake."""


def terminal(state: RunState) -> bool:
    return state in TERMINAL_RUN_STATES


@dataclass(slots=True)
class Run:
    run_id: str
    job_id: str
    index: int
    name: str
    task: str  # private: never in a snapshot, an event, a response or a log
    agent_id: str
    alias: str
    definition_name: str | None = None
    display_name: str | None = None
    state: RunState = "queued"
    error: str | None = None
    final_text: str | None = None
    usage_in: int = 0
    usage_out: int = 0
    deadline: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    reported: bool = False  # the completion report reached the parent (R10.3.65)

    def move(self, state: RunState, now: float) -> RunState:
        """Move to ``state``; the previous state. Raises :class:`IllegalRunTransition`."""
        previous = self.state
        if state not in RUN_TRANSITIONS[previous]:
            raise IllegalRunTransition(f"run {self.run_id}: {previous} -> {state}")
        self.state = state
        if state == "starting":
            self.started_at = now
        if terminal(state):
            self.ended_at = now
        return previous

    @property
    def terminal(self) -> bool:
        return terminal(self.state)


@dataclass(slots=True)
class Job:
    job_id: str
    parent_agent_id: str
    strategy: JobStrategy
    created_at: float
    runs: list[Run] = field(default_factory=list)
    stopped_at: float | None = None

    @property
    def state(self) -> JobState:
        return job_state(r.state for r in self.runs) if self.stopped_at is None else _stopped(self)

    @property
    def ended_at(self) -> float | None:
        ends = [r.ended_at for r in self.runs]
        return None if not all(r.terminal for r in self.runs) else max(e for e in ends if e is not None)

    @property
    def chain_step(self) -> int | None:
        """The chain's current step: the first run not completed (the last one once all are)."""
        if self.strategy != "chain":
            return None
        return next((r.index for r in self.runs if r.state != "completed"), len(self.runs) - 1)


def reconcile(job: Job, now: float) -> list[Run]:
    """After a daemon restart: the work of every nonterminal run was lost with the old process. It
    is ``interrupted``, a chain's later steps ``cancelled``, and nothing is replayed; the runs
    changed."""
    changed: list[Run] = []
    for run in job.runs:
        if run.terminal:
            continue
        dependent = job.strategy == "chain" and bool(changed)
        run.error = "a later step of an interrupted chain" if dependent else "the daemon restarted"
        run.move("cancelled" if dependent else "interrupted", now)
        changed.append(run)
    return changed


def _stopped(job: Job) -> JobState:
    return "cancelled" if all(r.terminal for r in job.runs) else "running"


def as_job_state(state: RunState) -> JobState:
    """What one run's state says of a job: the aggregate vocabulary of ``subagent.wait``."""
    if state == "queued":
        return "queued"
    if state in ("starting", "active"):
        return "running"
    if state == "completed":
        return "completed"
    if state == "cancelled":
        return "cancelled"
    return "failed"  # failed, timed_out, interrupted: the work did not complete


def job_state(states: Iterable[RunState]) -> JobState:
    """All queued → queued; any still live → running; all done → completed only if every run
    completed, failed if any failed (or timed out, or was interrupted), else cancelled."""
    mapped = [as_job_state(s) for s in states]
    if all(m == "queued" for m in mapped):
        return "queued"
    if any(m in ("queued", "running") for m in mapped):
        return "running"
    if all(m == "completed" for m in mapped):
        return "completed"
    return "failed" if "failed" in mapped else "cancelled"


def aggregate(runs: Iterable[Run]) -> JobState | str:
    """``subagent.wait``'s ``aggregate_state``: the one state all runs share, else ``mixed``."""
    states = {as_job_state(r.state) for r in runs}
    return states.pop() if len(states) == 1 else "mixed"


def run_snapshot(run: Run, *, owner: bool) -> RunSnapshot:
    """The wire view of a run; ``final_text`` only for its owning parent (R11.2.7)."""
    usage = RunUsage(input=run.usage_in, output=run.usage_out) if run.usage_in or run.usage_out else None
    return RunSnapshot(
        job_id=run.job_id,
        run_id=run.run_id,
        index=run.index,
        name=run.name,
        agent_id=run.agent_id,
        alias=run.alias,
        state=run.state,
        **_given(
            definition_name=run.definition_name,
            display_name=run.display_name,
            deadline=run.deadline,
            final_text=run.final_text if owner else None,
            usage=usage,
            error=run.error,
            started_at=run.started_at,
            ended_at=run.ended_at,
        ),
    )


def job_snapshot(job: Job) -> JobSnapshot:
    return JobSnapshot(
        job_id=job.job_id,
        parent_agent_id=job.parent_agent_id,
        strategy=job.strategy,
        state=job.state,
        runs=[run_snapshot(r, owner=True) for r in job.runs],
        created_at=job.created_at,
        **_given(chain_step=job.chain_step, stopped_at=job.stopped_at, ended_at=job.ended_at),
    )


def _given(**fields: Any) -> dict[str, Any]:
    """Optional wire fields are absent, never null."""
    return {k: v for k, v in fields.items() if v is not None}

"""Completion delivery (PROTOCOL §10.3 "Async flow", §12.5), sans-I/O: after a run's terminal
transition is persisted, its report goes into the owning parent's conversation.

* **Steer or wake.** The report is sent as a ``prompt`` with ``streaming_behavior: "steer"``: a parent
  whose turn is running takes it before its next model call (R10.3.66); an idle one starts a turn
  on it (R10.3.67). The runtime decides between the two atomically, so a turn that ends in between
  cannot lose the report. A parent whose runtime is not running is restored first (woken).
* **Together.** Runs that end in the same step (a chain's failed step and the steps it cancels, a
  stopped job) are told in one message: reports are collected and sent on a zero-delay timer.
* **At least once.** A run is marked ``reported`` (and persisted) only when the parent's runtime
  accepted the message. A delivery that fails is tried again after :data:`RETRY` seconds, up to
  :data:`ATTEMPTS` times; what a daemon crash interrupts is delivered by the next daemon at start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shard.daemon.desk import Desk
from shard.daemon.effects import Log, StartTimer
from shard.daemon.jobs.model import Job, Run
from shard.daemon.jobs.report import completion_report
from shard.daemon.jobs.timers import Report
from shard.daemon.slot import Answer
from shard.protocol import commands as cmd
from shard.protocol.errors import ShardError

RETRY = 5.0
ATTEMPTS = 3


class Delivery:
    def __init__(
        self, desk: Desk, jobs: Mapping[str, Job], persist: Callable[[Job, list[Run]], None]
    ) -> None:
        self.desk = desk
        self.jobs = jobs
        self.persist = persist
        self.pending: dict[str, list[Run]] = {}  # parent agent_id -> runs to tell, oldest first
        self.attempts: dict[str, int] = {}  # run_id -> deliveries tried

    def ended(self, run: Run) -> None:
        """``run`` reached a terminal state and was persisted."""
        parent_id = self.jobs[run.job_id].parent_agent_id
        waiting = self.pending.setdefault(parent_id, [])
        if not waiting:
            self.desk.emit(StartTimer(Report(parent_id), 0.0))
        if run not in waiting:
            waiting.append(run)

    def undelivered(self) -> None:
        """At daemon start: the runs a previous daemon ended but never reported."""
        for job in self.jobs.values():
            for run in job.runs:
                if run.terminal and not run.reported:
                    self.ended(run)

    def timer(self, key: Report) -> None:
        parent_id = key.parent_id
        if self.desk.shutting_down:
            return  # no parent is woken on the way down: the next daemon delivers what is unreported
        runs = [r for r in self.pending.pop(parent_id, []) if not r.reported]
        if not runs:
            return
        parent = self.desk.agents.get(parent_id)
        if parent is None:  # the parent was forgotten: nobody is left to tell
            self._mark(runs)
            return
        message = cmd.Prompt(message=completion_report(runs), streaming_behavior="steer")

        def accepted(answer: Answer) -> None:
            if answer.success:
                self._mark(runs)
            else:
                self._failed(parent_id, runs, "its runtime did not accept the report")

        def started(error: ShardError | None) -> None:
            if error is None:
                self.desk.ask(parent, message, accepted)
            else:
                self._failed(parent_id, runs, f"it could not be woken ({error.code})")

        try:
            self.desk.ensure_running(parent, started)
        except ShardError as exc:  # no room for another runtime now
            self._failed(parent_id, runs, f"it could not be woken ({exc.code})")

    def _mark(self, runs: list[Run]) -> None:
        for run in runs:
            run.reported = True
            self.attempts.pop(run.run_id, None)
            self.persist(self.jobs[run.job_id], [run])

    def _failed(self, parent_id: str, runs: list[Run], why: str) -> None:
        again = []
        for run in runs:
            tries = self.attempts[run.run_id] = self.attempts.get(run.run_id, 0) + 1
            if tries < ATTEMPTS:
                again.append(run)
        self.desk.emit(Log(f"shard daemon: a completion report for {parent_id} was not delivered: {why}"))
        if again:
            self.pending.setdefault(parent_id, []).extend(again)
            self.desk.emit(StartTimer(Report(parent_id), RETRY))

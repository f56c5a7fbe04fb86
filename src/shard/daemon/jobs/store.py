"""The jobs' durable half (PROTOCOL §11.2): what the coordinator asks of ``state.db``, answered before
it goes on. ``shard.daemon.manifests`` has the real one, ``shard.testing.manifests`` one in memory."""

from __future__ import annotations

from typing import Protocol

from shard.daemon.jobs.children import ChildSpec
from shard.daemon.jobs.model import Job, Run
from shard.daemon.record import AgentRecord


class JobStore(Protocol):
    def commit_job(self, job: Job, children: list[AgentRecord]) -> None:
        """Write a new job, its runs and its children's rows in one transaction: all or nothing
        (INTERNAL_ERROR when the disk refuses)."""

    def save_runs(self, job: Job, runs: list[Run]) -> None:
        """Update the job's row and these runs' rows (INTERNAL_ERROR when the disk refuses)."""

    def load_jobs(self) -> list[Job]:
        """Every job with its runs, as last saved."""

    def definition(self, cwd: str, name: str) -> ChildSpec | None:
        """The agent definition ``name`` (case-insensitive) seen from the project at ``cwd``, if any."""

"""Subagent job/run types (PROTOCOL §11.2). Task text is private and has no field here."""

from typing import Literal

from shard.protocol.base import WireModel
from shard.protocol.bounds import TaskName

JobState = Literal["queued", "running", "completed", "failed", "cancelled"]
RunState = Literal[
    "queued", "starting", "active", "completed", "failed", "timed_out", "cancelled", "interrupted"
]
JobStrategy = Literal["single", "parallel", "chain"]

TERMINAL_RUN_STATES: frozenset[str] = frozenset(
    {"completed", "failed", "timed_out", "cancelled", "interrupted"}
)


class RunUsage(WireModel):
    """A run's tokens: ``input`` counts every input token, those read from a provider's cache
    included (``figures.tokens_in``)."""

    input: int
    output: int


class RunSnapshot(WireModel):
    job_id: str
    run_id: str
    index: int
    name: str
    agent_id: str | None = None
    alias: str | None = None
    definition_name: str | None = None
    display_name: str | None = None
    state: RunState
    deadline: int | float | None = None
    final_text: str | None = None
    usage: RunUsage | None = None
    error: str | None = None
    started_at: int | float | None = None
    ended_at: int | float | None = None


class JobSnapshot(WireModel):
    job_id: str
    parent_agent_id: str
    strategy: JobStrategy
    state: JobState
    runs: list[RunSnapshot]
    chain_step: int | None = None
    stopped_at: int | float | None = None
    created_at: int | float
    ended_at: int | float | None = None


class TaskSpec(WireModel):
    """One ``{name, task}`` of a batch ``subagent.create``."""

    name: TaskName
    task: str


class LaunchPolicy(WireModel):
    maxTasks: int
    maxDepth: int

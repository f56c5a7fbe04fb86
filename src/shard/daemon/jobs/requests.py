"""The checks of a ``subagent.create`` / ``subagent.relaunch`` request (PROTOCOL §10.3), pure: all
of them run before anything is written (R10.3.17). A refusal is INVALID_REQUEST and never quotes a
task, only its position (R10.3.8)."""

from __future__ import annotations

from shard.daemon.jobs import handles
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.jobs import LaunchPolicy

MAX_TASK_BYTES = 256 * 1024


def create_specs(c: cmd.SubagentCreate, parent_depth: int, policy: LaunchPolicy) -> list[tuple[str, str]]:
    """The request's ``(name, task)`` pairs, names cleaned for use as aliases."""
    specs = [(str(c.name), str(c.task))] if c.tasks is None else [(t.name, t.task) for t in c.tasks]
    if (c.strategy or "single") == "single" and len(specs) != 1:
        raise ShardError(ErrorCode.INVALID_REQUEST, "strategy 'single' takes exactly one task")
    if len(specs) > policy.maxTasks:
        raise ShardError(
            ErrorCode.INVALID_REQUEST,
            f"{len(specs)} tasks is over the launch policy's maxTasks ({policy.maxTasks})",
        )
    if parent_depth + 1 > policy.maxDepth:
        raise ShardError(
            ErrorCode.INVALID_REQUEST,
            f"a child of this agent would be at depth {parent_depth + 1}, over the launch policy's"
            f" maxDepth ({policy.maxDepth})",
        )
    names = [handles.check_name(name) for name, _ in specs]
    for i, (_, task) in enumerate(specs):
        check_task(task, i)
    return [(name, task) for name, (_, task) in zip(names, specs, strict=True)]


def check_task(task: str, index: int) -> None:
    """INVALID_REQUEST for an empty or oversized task."""
    if not task.strip() or len(task.encode()) > MAX_TASK_BYTES:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"task {index} must be 1 to {MAX_TASK_BYTES} bytes")

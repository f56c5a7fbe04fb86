"""The checks of a ``subagent.create`` / ``subagent.relaunch`` request (PROTOCOL §10.3), pure: all
of them run before anything is written (R10.3.17). A refusal is INVALID_REQUEST and never quotes a
task, only its position (R10.3.8) — except a parent at its ``[subagents] max_children``, which is
CONFLICT: the same request succeeds once it has room (and ``agent.create`` of a child checks the
same depth and room, so no path around them)."""

from __future__ import annotations

from typing import Protocol

from shard.daemon.jobs import handles
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.jobs import LaunchPolicy

MAX_TASK_BYTES = 256 * 1024


class ChildLimits(Protocol):
    """How deep children may go and how many one parent may have (the coordinator's, as
    configured): ``agent.create`` of a child checks the same bounds as ``subagent.create``."""

    @property
    def policy(self) -> LaunchPolicy: ...

    @property
    def max_children(self) -> int: ...


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
    check_depth(parent_depth, policy)
    names = [handles.check_name(name) for name, _ in specs]
    for i, (_, task) in enumerate(specs):
        check_task(task, i)
    return [(name, task) for name, (_, task) in zip(names, specs, strict=True)]


def check_task(task: str, index: int) -> None:
    """INVALID_REQUEST for an empty or oversized task."""
    if not task.strip() or len(task.encode()) > MAX_TASK_BYTES:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"task {index} must be 1 to {MAX_TASK_BYTES} bytes")


def check_depth(parent_depth: int, policy: LaunchPolicy) -> None:
    """INVALID_REQUEST when a child of the parent would be deeper than ``maxDepth``."""
    if parent_depth + 1 > policy.maxDepth:
        raise ShardError(
            ErrorCode.INVALID_REQUEST,
            f"a child of this agent would be at depth {parent_depth + 1}, over the launch policy's"
            f" maxDepth ({policy.maxDepth})",
        )


def check_room(parent_id: str, children: int, adding: int, limit: int) -> None:
    """CONFLICT when ``adding`` more durable children would take the parent over ``limit``."""
    if children + adding > limit:
        raise ShardError(
            ErrorCode.CONFLICT,
            f"{parent_id} has {children} children and may have at most {limit} ([subagents]"
            " max_children): relaunch one of them (subagent.relaunch), or remove one that never ran",
            {"max_children": limit, "children": children},
        )

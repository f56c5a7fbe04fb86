"""Handles and aliases (PROTOCOL §10.3), pure.

A handle is an opaque string: a typed id (``job-…``, ``run-…``, ``agent-…``) or a friendly alias.
Typed ids are tried first, exactly; then aliases, compared case-insensitively after NFKC
normalization (R10.3.4 to R10.3.6). Everything is scoped to the requesting parent: its own jobs and its
direct children. A handle outside that scope is NOT_FOUND, exactly like one that does not exist, so
a parent cannot even learn that another parent's job exists (R10.3.2).

Aliases are durable and parent-scoped: a task's ``name`` becomes its child's alias, with ``-2``,
``-3``… added when the parent already has a child of that alias (or the same request reserves it).
A name that could be taken for a typed id is refused, or resolution would be ambiguous.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from shard.daemon.jobs.model import Job, Run
from shard.protocol.bounds import MAX_ALIAS_CHARS
from shard.protocol.errors import ErrorCode, ShardError, shown

MAX_NAME = MAX_ALIAS_CHARS  # a task name, after NFKC (the wire bounds it before, PROTOCOL §10.3)
_TYPED = ("job-", "run-", "agent-")


def alias_key(alias: str) -> str:
    """The form aliases are compared in: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", alias).casefold()


def check_name(name: str) -> str:
    """A task name usable as an alias, or INVALID_REQUEST (the name itself is the client's own and
    short, so it may be echoed)."""
    clean = unicodedata.normalize("NFKC", name).strip()
    if not clean or len(clean) > MAX_NAME:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"a task name must be 1 to {MAX_NAME} characters")
    if any(unicodedata.category(c).startswith("C") for c in clean):
        raise ShardError(ErrorCode.INVALID_REQUEST, "a task name may not hold control characters")
    if alias_key(clean).startswith(_TYPED):
        raise ShardError(
            ErrorCode.INVALID_REQUEST,
            f"task name {shown(clean)} looks like a typed id (job-, run-, agent-); choose another",
        )
    return clean


def allocate(names: Iterable[str], taken: Iterable[str]) -> list[str]:
    """One alias per name, unique among ``taken`` (the parent's children) and each other."""
    used = {alias_key(t) for t in taken}
    out = []
    for name in names:
        alias, n = name, 1
        while alias_key(alias) in used:
            n += 1
            alias = f"{name}-{n}"
        used.add(alias_key(alias))
        out.append(alias)
    return out


@dataclass(frozen=True, slots=True)
class Target:
    """What a handle resolved to: a whole job, or one run (a run id, or an agent's snapshot run)."""

    job: Job | None = None
    run: Run | None = None
    agent_id: str | None = None  # the child the handle named, when it named one


def resolve(handle: str, jobs: list[Job], children: dict[str, str]) -> Target:
    """Resolve ``handle`` among one parent's ``jobs`` (oldest first) and direct ``children``
    (agent_id → alias). An agent or alias names its current/queued run, else its latest terminal
    one (R10.3.27); a child with no run at all resolves to the agent alone."""
    for job in jobs:
        if job.job_id == handle:
            return Target(job=job)
        for run in job.runs:
            if run.run_id == handle:
                return Target(run=run, agent_id=run.agent_id)
    agent_id = handle if handle in children else None
    if agent_id is None and not handle.startswith(_TYPED):
        key = alias_key(handle)
        agent_id = next((a for a, alias in children.items() if alias_key(alias) == key), None)
    if agent_id is None:
        raise ShardError(ErrorCode.NOT_FOUND, f"no job, run or child {shown(handle)} of this parent")
    return Target(run=current_run(agent_id, jobs), agent_id=agent_id)


def current_run(agent_id: str, jobs: list[Job]) -> Run | None:
    """The child's queued or live run, else its latest terminal one, else None."""
    runs = [r for job in jobs for r in job.runs if r.agent_id == agent_id]
    live = [r for r in runs if not r.terminal]
    if live:
        return live[-1]
    return max(runs, key=lambda r: r.ended_at or 0.0) if runs else None

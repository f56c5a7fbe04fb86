"""What the coordinator answers and tells (PROTOCOL §10.3, §11.2), pure: the ``subagent.status`` and
``subagent.wait`` results and the ``subagent_run_changed`` event, built from the catalog. None of
them has a field for task text; ``final_text`` is in the results only, which go to the owning
parent alone (every query is scoped to it), never in an event (R10.3.64)."""

from __future__ import annotations

from typing import Any

from shard.daemon.jobs import handles
from shard.daemon.jobs.model import Job, Run, aggregate, job_snapshot, run_snapshot
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.events import SubagentRunChanged
from shard.protocol.jobs import RunState
from shard.protocol.results import SubagentAgentStatus, SubagentStatusResult, SubagentWaitResult

STATUS_LIMIT = 50  # jobs listed by subagent.status without targets (R10.3.50)


def status(
    parent_id: str, jobs: list[Job], children: dict[str, str], targets: list[str] | None
) -> SubagentStatusResult:
    """Targets' children with their current runs; without targets every direct child and the latest
    :data:`STATUS_LIMIT` jobs, newest first."""
    if targets is None:
        agent_ids = list(children)
    else:
        agent_ids = []
        for handle in targets:
            target = handles.resolve(handle, jobs, children)
            ids = [r.agent_id for r in target.job.runs] if target.job else [str(target.agent_id)]
            agent_ids += [a for a in ids if a not in agent_ids]
    entries = []
    for agent_id in agent_ids:
        run = handles.current_run(agent_id, jobs)
        fields: dict[str, Any] = {
            "agent_id": agent_id,
            "alias": children.get(agent_id),
            "parent_agent_id": parent_id,
        }
        if run is not None:
            fields["definition_name"] = run.definition_name
            fields["display_name"] = run.display_name
            fields["run"] = run_snapshot(run, owner=True).to_wire()
        entries.append(SubagentAgentStatus.model_validate({k: v for k, v in fields.items() if v is not None}))
    if targets is not None:
        return SubagentStatusResult(agents=entries)
    latest = sorted(jobs, key=lambda j: j.created_at, reverse=True)[:STATUS_LIMIT]
    return SubagentStatusResult(agents=entries, jobs=[job_snapshot(j) for j in latest])


def wait_runs(handle_list: list[str], jobs: list[Job], children: dict[str, str]) -> list[Run]:
    """The runs a wait watches, fixed at acceptance (R10.3.27, R10.3.28): a job's runs, a run, or an
    agent's current/queued run, else its latest terminal one."""
    runs: list[Run] = []
    for handle in handle_list:
        target = handles.resolve(handle, jobs, children)
        found = target.job.runs if target.job else [target.run] if target.run else []
        if not found:
            raise ShardError(ErrorCode.NOT_FOUND, f"child {target.agent_id} has no run to wait for")
        runs += [r for r in found if r not in runs]
    return runs


def wait_result(runs: list[Run], *, timed_out: bool) -> SubagentWaitResult:
    return SubagentWaitResult.model_validate(
        {
            "timed_out": timed_out,
            "aggregate_state": aggregate(runs),
            "runs": [run_snapshot(r, owner=True).to_wire() for r in runs],
        }
    )


def handle(run: Run) -> dict[str, Any]:
    """How a create or relaunch answer names a queued run's child (R10.3.20, R10.3.46)."""
    fields = {
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "alias": run.alias,
        "definition_name": run.definition_name,
        "display_name": run.display_name,
    }
    return {k: v for k, v in fields.items() if v is not None}


def run_changed(job: Job, run: Run, previous: RunState) -> bytes:
    fields = {
        "parent_agent_id": job.parent_agent_id,
        "job_id": job.job_id,
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "alias": run.alias,
        "definition_name": run.definition_name,
        "display_name": run.display_name,
        "state": run.state,
        "previous_state": previous,
        "error": run.error,
        "ended_at": run.ended_at,
    }
    return SubagentRunChanged.model_validate({k: v for k, v in fields.items() if v is not None}).to_json()

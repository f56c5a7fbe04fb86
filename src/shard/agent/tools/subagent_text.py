"""What the subagent tools tell the model: the daemon's ``subagent.*`` response data (PROTOCOL
§10.3, §11.2) as compact text — ids, aliases, states, final texts — never a raw JSON dump."""

from __future__ import annotations

from typing import Any

MAX_FINAL_CHARS = 20_000  # of one child's final text in a wait result


def launched(data: dict[str, Any]) -> str:
    runs = data.get("runs") or []
    lines = [f"Launched job {data.get('job_id')} ({data.get('strategy')}, {_count(len(runs), 'run')}):"]
    lines += [f"- {_who(r)}: {r.get('state', 'queued')}" for r in runs]
    lines.append(
        "They run in the background; each one's completion report reaches you by itself. "
        "subagent_wait blocks until they finish; use the job id or the aliases as handles."
    )
    return "\n".join(lines)


def waited(data: dict[str, Any]) -> str:
    head = f"State: {data.get('aggregate_state')}"
    if data.get("timed_out"):
        head += " (timed out waiting; the runs go on)"
    lines = [head]
    for run in data.get("runs") or []:
        lines.append(f"- {_who(run)}: {_state(run)}")
        final = run.get("final_text")
        if isinstance(final, str) and final:
            if len(final) > MAX_FINAL_CHARS:
                cut = len(final) - MAX_FINAL_CHARS
                final = final[:MAX_FINAL_CHARS] + f"\n[{cut} more characters not shown]"
            lines.append("  final text:")
            lines += [f"    {line}" for line in final.splitlines()]
    return "\n".join(lines)


def steered(data: dict[str, Any]) -> str:
    run = data.get("run_id")
    if data.get("status") == "injected":
        return f"Delivered to {run} in its running turn {data.get('turn_id')}."
    return (
        f"Not delivered (conflict): the turn of {run} ended before it could take the message. "
        "It was dropped; relaunch the child with a new task if it still matters."
    )


def status(data: dict[str, Any]) -> str:
    agents = data.get("agents") or []
    jobs = data.get("jobs")
    lines: list[str] = []
    if jobs is not None:
        lines.append(f"{_count(len(jobs), 'job')} (newest first):" if jobs else "No jobs.")
        for job in jobs:
            step = f", chain step {job['chain_step']}" if job.get("chain_step") is not None else ""
            lines.append(f"- {job.get('job_id')} ({job.get('strategy')}{step}): {job.get('state')}")
            lines += [f"  - {_who(r)}: {_state(r)}" for r in job.get("runs") or []]
    if agents and jobs is None:
        for agent in agents:
            run = agent.get("run")
            name = agent.get("display_name") or agent.get("alias") or agent.get("agent_id")
            where = f" ({agent.get('agent_id')})" if name != agent.get("agent_id") else ""
            now = f"run {run.get('run_id')} {_state(run)}" if isinstance(run, dict) else "no run"
            lines.append(f"- {name}{where}: {now}")
    return "\n".join(lines) or "Nothing found."


def stopped(data: dict[str, Any]) -> str:
    cancelled = data.get("cancelled") or []
    job = f" of job {data['job_id']}" if data.get("job_id") else ""
    if not cancelled:
        return f"Nothing to stop{job}: no queued or active run."
    lines = [f"Stopped {_count(len(cancelled), 'run')}{job}:"]
    for run in cancelled:
        agent = f" ({run['agent_id']})" if run.get("agent_id") else ""
        lines.append(f"- {run.get('run_id')}{agent}: {run.get('state')}")
    return "\n".join(lines)


def relaunched(data: dict[str, Any]) -> str:
    return (
        f"Relaunched {_who(data)} as job {data.get('job_id')}: {data.get('state', 'queued')}. "
        "It keeps its conversation; its completion report reaches you by itself."
    )


def _who(run: dict[str, Any]) -> str:
    """``alias [definition] (run-…)``, whatever of it the daemon gave."""
    name = run.get("alias") or run.get("name") or run.get("agent_id") or "?"
    definition = f" [{run['definition_name']}]" if run.get("definition_name") else ""
    return f"{name}{definition} ({run.get('run_id')})"


def _state(run: dict[str, Any]) -> str:
    text = str(run.get("state"))
    if run.get("error"):
        text += f" — {' '.join(str(run['error']).split())}"
    return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")

"""Subagent jobs against a real daemon with scripted agents: a job that plays out, the privacy of
its task text on disk and on the wire, and a daemon killed mid-run (PROTOCOL §10.3, §12.5)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
from pathlib import Path

from daemon_helpers import create_agent, runtime_pids

from shard.testing import text_step, tool_step

TASK = "PRIVATE-TASK-c0ffee: audit the payroll exporter"


async def _request(client, seen: list, message: dict) -> dict:
    """A command's response; it and everything read before it are added to ``seen``."""
    response, before = await client.request(message)
    seen += [*before, response]
    return response


async def _create(client, seen: list, parent_id: str, *names: str) -> dict:
    tasks = [{"name": n, "task": f"{TASK} ({n})"} for n in names]
    message = {"type": "subagent.create", "id": "c", "parent_agent_id": parent_id, "tasks": tasks}
    response = await _request(client, seen, {**message, "strategy": "parallel"})
    assert response["success"], response
    return response["data"]


async def test_a_parallel_job_plays_out_and_its_task_never_leaves_the_private_record(
    daemon_factory, project: Path, home: Path
):
    """Three children run in parallel; the parent's connection is told of each transition, a wait on
    the job returns every final_text; nothing the daemon printed or sent, and no file of SHARD_HOME
    but state.db, the children's own sessions and the scripted provider's record of what the model
    was sent, holds the task text.

    Covers: R12.5.1, R12.5.3, R12.5.4, R12.5.5, R10.3.9, R10.3.11, R10.3.19
    """
    daemon = await daemon_factory([text_step("child finished")])
    client = await daemon.unix()
    parent_id = await create_agent(client, project)
    seen: list = []
    data = await _create(client, seen, parent_id, "a", "b", "c")
    wait = {"type": "subagent.wait", "id": "w", "parent_agent_id": parent_id, "handles": [data["job_id"]]}
    result = (await _request(client, seen, wait))["data"]
    assert result["aggregate_state"] == "completed", result
    assert [r["final_text"] for r in result["runs"]] == ["child finished"] * 3
    await _request(client, seen, {"type": "subagent.status", "id": "s", "parent_agent_id": parent_id})
    await _request(client, seen, {"type": "agent.list", "id": "l"})
    states = [m["state"] for m in seen if m.get("type") == "subagent_run_changed"]
    assert states.count("completed") == 3
    assert states.count("active") == 3
    assert "PRIVATE-TASK" not in str(seen)
    await daemon.stop()
    assert "PRIVATE-TASK" not in "\n".join(daemon.output)
    db = sqlite3.connect(home / "state.db")
    rows = db.execute("SELECT session_id FROM agents WHERE parent_agent_id = ?", (parent_id,)).fetchall()
    db.close()
    own = {home / "sessions" / session for (session,) in rows}  # the children's own conversations
    assert len(own) == 3
    # what the scripted provider was sent: the model's input is the child's conversation too
    private = {home / "requests.jsonl"}
    leaks = [
        str(path)
        for path in home.rglob("*")
        if path.is_file()
        and not path.name.startswith("state.db")
        and path not in private
        and not own & set(path.parents)
        and "PRIVATE-TASK" in path.read_text(errors="replace")
    ]
    assert leaks == []


async def test_a_daemon_killed_mid_run_leaves_the_run_interrupted(daemon_factory, project: Path, home: Path):
    """kill -9 of the daemon while a child sleeps in its run: the next daemon marks the run
    interrupted, starts nothing of the child again, status tells the parent, and the parent is
    woken with the report in its own conversation.

    Covers: R10.3.72, R10.3.75, R10.3.76, R11.2.10, R10.3.65, R10.3.67
    """
    daemon = await daemon_factory([tool_step("sleep", {"seconds": 60}), text_step("late")])
    client = await daemon.unix()
    parent_id = await create_agent(client, project)
    data = await _create(client, [], parent_id, "sleeper")
    await client.until(lambda m: m.get("type") == "subagent_run_changed" and m.get("state") == "active")
    before = set(runtime_pids(home))
    daemon.proc.send_signal(signal.SIGKILL)
    await daemon.kill()
    for pid in before:  # the orphaned runtimes of the killed daemon
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    again = await daemon_factory()
    client = await again.unix()
    response, _ = await client.request(
        {"type": "subagent.status", "id": "s", "parent_agent_id": parent_id, "targets": ["sleeper"]}
    )
    run = response["data"]["agents"][0]["run"]
    assert run["run_id"] == data["runs"][0]["run_id"]
    assert run["state"] == "interrupted"
    assert run["error"] == "the daemon restarted"
    db = sqlite3.connect(home / "state.db")
    sessions = dict(db.execute("SELECT agent_id, session_id FROM agents").fetchall())
    db.close()
    parent_file = home / "sessions" / sessions[parent_id] / "session.jsonl"
    for _ in range(200):  # the report reaches the parent's conversation
        if parent_file.exists() and 'state=\\"interrupted\\"' in parent_file.read_text():
            break
        await asyncio.sleep(0.05)
    assert 'state=\\"interrupted\\"' in parent_file.read_text()
    started = [session_of(pid) for pid in runtime_pids(home)]
    assert sessions[data["runs"][0]["agent_id"]] not in started  # nothing replayed
    assert started == [sessions[parent_id]]  # only the parent, woken to be told


def session_of(pid: int) -> str:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return argv[argv.index("--session") + 1]

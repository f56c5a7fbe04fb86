"""Jobs in ``state.db`` (the real registry): one transaction per create, a round trip through a
restart, and the migration of a registry from before jobs."""

from __future__ import annotations

import sqlite3

import pytest

from shard.daemon.jobs.model import Job, Run
from shard.daemon.record import AgentRecord
from shard.daemon.registry import SCHEMA_VERSION, Registry
from shard.protocol.errors import ShardError


def _job(n: int = 2) -> tuple[Job, list[AgentRecord]]:
    job = Job("job-1", "agent-p", "parallel", 10.0)
    children = []
    for i in range(n):
        children.append(
            AgentRecord(f"agent-c{i}", f"sess-c{i}", "/p", parent_agent_id="agent-p", depth=1, alias=f"a{i}")
        )
        job.runs.append(Run(f"run-{i}", "job-1", i, f"a{i}", f"private task {i}", f"agent-c{i}", f"a{i}"))
    return job, children


def test_a_job_round_trips_and_run_changes_are_saved(tmp_path):
    """What commit_job and save_runs write is what the next daemon loads, task included (the
    private record), alias on the child's row.

    Covers: R10.3.72, R10.3.7
    """
    registry = Registry(tmp_path / "state.db")
    job, children = _job()
    registry.commit_job(job, children)
    job.runs[1].move("starting", 11.0)
    job.runs[1].move("active", 12.0)
    job.runs[1].move("completed", 13.0)
    job.runs[1].final_text = "answer"
    job.stopped_at = 14.0
    registry.save_runs(job, [job.runs[1]])
    registry.close()
    again = Registry(tmp_path / "state.db")
    (loaded,) = again.load_jobs()
    assert loaded == job
    assert [r.alias for r in again.all()] == ["a0", "a1"]


def test_a_failed_commit_writes_nothing(tmp_path):
    """A child row that cannot be written (its session id is taken) fails the whole commit: no job,
    no run, no other child — INTERNAL_ERROR, and the registry goes on.

    Covers: R10.3.17
    """
    registry = Registry(tmp_path / "state.db")
    registry.add(AgentRecord("agent-x", "sess-c1", "/p"))
    job, children = _job()
    with pytest.raises(ShardError) as caught:
        registry.commit_job(job, children)
    assert caught.value.code == "INTERNAL_ERROR"
    assert registry.load_jobs() == []
    assert [r.agent_id for r in registry.all()] == ["agent-x"]
    registry.commit_job(*_job(1))
    assert len(registry.load_jobs()) == 1


def test_a_registry_from_before_jobs_is_migrated(tmp_path):
    """An agents table without the alias columns and no job tables gains them; its rows stay."""
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE agents (agent_id TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, cwd TEXT NOT NULL,"
        " name TEXT, model TEXT, provider TEXT, mode TEXT, tools TEXT, headless_policy TEXT NOT NULL"
        " DEFAULT 'deny', parent_agent_id TEXT, depth INTEGER NOT NULL DEFAULT 0, adopted INTEGER NOT NULL"
        " DEFAULT 0, created_at REAL NOT NULL, started_at REAL)"
    )
    db.execute(
        "INSERT INTO agents (agent_id, session_id, cwd, created_at) VALUES ('agent-o', 'sess-o', '/p', 1)"
    )
    db.commit()
    db.close()
    registry = Registry(path)
    assert [(r.agent_id, r.alias) for r in registry.all()] == [("agent-o", None)]
    registry.commit_job(*_job(1))
    assert registry._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_schema_3_keeps_definitions_prompts_and_whether_a_run_was_reported(tmp_path):
    """A child's definition, display name, system prompt and alias pool round-trip; a run is saved
    unreported, then reported.

    Covers: R10.3.72, R10.3.65
    """
    registry = Registry(tmp_path / "state.db")
    job, children = _job(1)
    children[0].definition_name, children[0].display_name = "reviewer", "reviewer · a0"
    children[0].system_prompt, children[0].names = "You review.", ["ada", "grace"]
    job.runs[0].definition_name, job.runs[0].display_name = "reviewer", "reviewer · a0"
    registry.commit_job(job, children)
    registry.close()
    again = Registry(tmp_path / "state.db")
    (loaded,) = again.load_jobs()
    assert (loaded.runs[0].definition_name, loaded.runs[0].display_name) == ("reviewer", "reviewer · a0")
    assert loaded.runs[0].reported is False
    job.runs[0].move("cancelled", 2.0)
    job.runs[0].reported = True
    again.save_runs(job, job.runs)
    assert again.load_jobs()[0].runs[0].reported is True
    child = next(r for r in again.all() if r.agent_id == "agent-c0")
    assert (child.system_prompt, child.names) == ("You review.", ["ada", "grace"])


def test_runs_ended_under_a_schema_2_daemon_count_as_reported(tmp_path):
    """A parent is not woken for runs that ended before completion reports existed.

    Covers: R10.3.72
    """
    path = tmp_path / "state.db"
    registry = Registry(path)
    registry.commit_job(*_job(1))
    registry.close()
    db = sqlite3.connect(path)  # back to schema 2: the columns schema 3 added are gone
    db.execute("ALTER TABLE runs DROP COLUMN reported")
    db.execute("ALTER TABLE runs DROP COLUMN definition_name")
    db.execute("ALTER TABLE agents DROP COLUMN system_prompt")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    again = Registry(path)
    assert again.load_jobs()[0].runs[0].reported is True
    assert again._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4

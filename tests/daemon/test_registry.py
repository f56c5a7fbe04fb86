"""``state.db``: the started_at migration and the read-only look-up used outside the daemon."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shard.daemon.registry import AgentRecord, Registry, bound_agent

_OLD_SCHEMA = """
CREATE TABLE agents (
    agent_id TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, cwd TEXT NOT NULL, name TEXT,
    model TEXT, provider TEXT, mode TEXT, tools TEXT, headless_policy TEXT NOT NULL DEFAULT 'deny',
    parent_agent_id TEXT, depth INTEGER NOT NULL DEFAULT 0, adopted INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
)
"""


def test_a_registry_from_before_started_at_takes_its_agents_as_started(tmp_path: Path):
    """A state.db written before the started_at column is migrated on open, and its agents count
    as started (so agent.terminate never forgets one of them for want of the column); the
    read-only look-up sees the same before the daemon migrated it."""
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.execute(_OLD_SCHEMA)
    db.execute(
        "INSERT INTO agents (agent_id, session_id, cwd, created_at) VALUES ('agent-1', 'sess-1', '/', 5.0)"
    )
    db.commit()
    db.close()
    old = bound_agent(path, "sess-1")
    assert old is not None
    assert old.started_at == 5.0

    registry = Registry(path)
    try:
        (record,) = registry.all()
        assert record.started_at == 5.0
        registry.add(AgentRecord(agent_id="agent-2", session_id="sess-2", cwd="/"))
        assert registry.by_session("sess-2").started_at is None
        registry.update("agent-2", started_at=7.0)
        assert registry.by_session("sess-2").started_at == 7.0
        registry.remove("agent-1")
        assert registry.by_session("sess-1") is None
    finally:
        registry.close()


def test_bound_agent_reads_without_creating(tmp_path: Path):
    """The look-up never creates a registry where there is none, and finds the owner of a session."""
    path = tmp_path / "state.db"
    assert bound_agent(path, "sess-1") is None
    assert not path.exists()
    registry = Registry(path)
    try:
        registry.add(AgentRecord(agent_id="agent-1", session_id="sess-1", cwd="/", name="helper"))
        found = bound_agent(path, "sess-1")
        assert found is not None
        assert (found.agent_id, found.name) == ("agent-1", "helper")
        assert bound_agent(path, "sess-2") is None
    finally:
        registry.close()

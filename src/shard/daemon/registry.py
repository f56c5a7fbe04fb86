"""Durable agent identities in ``$SHARD_HOME/state.db`` (SQLite, WAL).

One row per agent: its id, the session it owns, and the configuration its runtimes start with. The
live state (runtime process, status, attachments) lives in memory; after a daemon restart the rows
are all that is needed to list agents and restore them. ``started_at`` (when a runtime of the agent
first became ready; NULL until then) is kept so that an agent that never started can be told apart
from one that is merely stopped, across restarts.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from shard._home import open_private, private_dirs
from shard.daemon.record import AgentRecord
from shard.protocol.errors import ErrorCode, ShardError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agents (
    agent_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    cwd TEXT NOT NULL,
    name TEXT,
    model TEXT,
    provider TEXT,
    mode TEXT,
    tools TEXT,
    headless_policy TEXT NOT NULL DEFAULT 'deny',
    parent_agent_id TEXT,
    depth INTEGER NOT NULL DEFAULT 0,
    adopted INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    started_at REAL
)
"""


class Registry:
    def __init__(self, path: Path) -> None:
        private_dirs(path.parent)
        # Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's mode.
        os.close(open_private(path, os.O_RDWR))
        self._path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(agents)")}
        if "started_at" not in columns:
            # A registry from before the column: its agents are taken as started, so none of them is
            # ever forgotten by mistake.
            self._db.execute("ALTER TABLE agents ADD COLUMN started_at REAL")
            self._db.execute("UPDATE agents SET started_at = created_at")

    def close(self) -> None:
        self._db.close()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """SQLite failures (a full disk, an I/O error) become one INTERNAL_ERROR here, at the
        boundary; the statement is atomic, so nothing half-written stays behind."""
        try:
            yield
        except sqlite3.Error as exc:
            why = f"the daemon could not write {self._path}: {exc}"
            raise ShardError(ErrorCode.INTERNAL_ERROR, why) from None

    def add(self, record: AgentRecord) -> None:
        with self._writing():
            self._add(record)

    def _add(self, record: AgentRecord) -> None:
        self._db.execute(
            "INSERT INTO agents (agent_id, session_id, cwd, name, model, provider, mode, tools,"
            " headless_policy, parent_agent_id, depth, adopted, created_at, started_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.agent_id,
                record.session_id,
                record.cwd,
                record.name,
                record.model,
                record.provider,
                record.mode,
                orjson.dumps(record.tools).decode() if record.tools is not None else None,
                record.headless_policy,
                record.parent_agent_id,
                record.depth,
                int(record.adopted),
                record.created_at,
                record.started_at,
            ),
        )

    def remove(self, agent_id: str) -> None:
        with self._writing():
            self._db.execute("DELETE FROM agents WHERE agent_id = ?", (agent_id,))

    def update(self, agent_id: str, **fields: Any) -> None:
        columns = ", ".join(f"{k} = ?" for k in fields)
        with self._writing():
            self._db.execute(f"UPDATE agents SET {columns} WHERE agent_id = ?", (*fields.values(), agent_id))

    def by_session(self, session_id: str) -> AgentRecord | None:
        row = self._db.execute("SELECT * FROM agents WHERE session_id = ?", (session_id,)).fetchone()
        return self._record(row) if row else None

    def all(self) -> list[AgentRecord]:
        return [self._record(r) for r in self._db.execute("SELECT * FROM agents ORDER BY created_at")]

    def _record(self, row: tuple[Any, ...]) -> AgentRecord:
        names = [d[0] for d in self._db.execute("SELECT * FROM agents LIMIT 0").description]
        return _from_row(dict(zip(names, row, strict=True)))


def _from_row(data: dict[str, Any]) -> AgentRecord:
    data["tools"] = orjson.loads(data["tools"]) if data["tools"] else None
    data["adopted"] = bool(data["adopted"])
    data.setdefault("started_at", data["created_at"])  # a registry the daemon has not migrated yet
    return AgentRecord(**data)


def bound_agent(path: Path, session_id: str) -> AgentRecord | None:
    """The agent of a daemon registry at ``path`` that owns ``session_id`` (None: no registry, or no
    such agent), read without creating or changing anything — for commands outside the daemon.
    Raises sqlite3.Error when the registry exists but cannot be read."""
    if not path.exists():
        return None
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'agents'").fetchone():
            return None
        row = db.execute("SELECT * FROM agents WHERE session_id = ?", (session_id,)).fetchone()
        return _from_row(dict(row)) if row is not None else None
    finally:
        db.close()

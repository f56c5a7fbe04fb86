"""Durable agent identities in ``$SHARD_HOME/state.db`` (SQLite, WAL).

One row per agent: its id, the session it owns, and the configuration its runtimes start with. The
live state (runtime process, status, attachments) lives in memory; after a daemon restart the rows
are all that is needed to list agents and restore them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from shard._home import open_private, private_dirs

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
    created_at REAL NOT NULL
)
"""


@dataclass(slots=True)
class AgentRecord:
    agent_id: str
    session_id: str
    cwd: str
    name: str | None = None
    model: str | None = None
    provider: str | None = None
    mode: str | None = None
    tools: list[str] | None = None
    headless_policy: str = "deny"
    parent_agent_id: str | None = None
    depth: int = 0
    adopted: bool = False
    created_at: float = field(default_factory=time.time)


class Registry:
    def __init__(self, path: Path) -> None:
        private_dirs(path.parent)
        # Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's mode.
        os.close(open_private(path, os.O_RDWR))
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def add(self, record: AgentRecord) -> None:
        self._db.execute(
            "INSERT INTO agents (agent_id, session_id, cwd, name, model, provider, mode, tools,"
            " headless_policy, parent_agent_id, depth, adopted, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            ),
        )

    def update(self, agent_id: str, **fields: Any) -> None:
        columns = ", ".join(f"{k} = ?" for k in fields)
        self._db.execute(f"UPDATE agents SET {columns} WHERE agent_id = ?", (*fields.values(), agent_id))

    def by_session(self, session_id: str) -> AgentRecord | None:
        row = self._db.execute("SELECT * FROM agents WHERE session_id = ?", (session_id,)).fetchone()
        return self._record(row) if row else None

    def all(self) -> list[AgentRecord]:
        return [self._record(r) for r in self._db.execute("SELECT * FROM agents ORDER BY created_at")]

    def _record(self, row: tuple[Any, ...]) -> AgentRecord:
        names = [d[0] for d in self._db.execute("SELECT * FROM agents LIMIT 0").description]
        data = dict(zip(names, row, strict=True))
        data["tools"] = orjson.loads(data["tools"]) if data["tools"] else None
        data["adopted"] = bool(data["adopted"])
        return AgentRecord(**data)

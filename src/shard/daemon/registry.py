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
from shard.daemon.jobs.model import Job, Run
from shard.daemon.record import AgentRecord
from shard.daemon.workspaces.model import Workspace
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
    started_at REAL,
    alias TEXT,
    definition_name TEXT,
    display_name TEXT,
    system_prompt TEXT,
    names TEXT,
    workspace_id TEXT,
    sandbox TEXT,
    host TEXT
)
"""
# Jobs and runs (PROTOCOL §10.3, §11.2). ``runs.task`` is the only place task text is kept: the
# daemon-private record.
_JOBS_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    parent_agent_id TEXT NOT NULL,
    strategy TEXT NOT NULL,
    created_at REAL NOT NULL,
    stopped_at REAL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES jobs(job_id),
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    task TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    state TEXT NOT NULL,
    error TEXT,
    final_text TEXT,
    usage_in INTEGER NOT NULL DEFAULT 0,
    usage_out INTEGER NOT NULL DEFAULT 0,
    deadline REAL,
    started_at REAL,
    ended_at REAL,
    definition_name TEXT,
    display_name TEXT,
    reported INTEGER NOT NULL DEFAULT 0
);
"""
# Workspaces (PROTOCOL §10.1a): ``path``, ``repository_cwd`` and ``common_dir`` are for git; only the
# first two ever reach a projection.
_WORKSPACES_SCHEMA = """
CREATE TABLE IF NOT EXISTS workspaces (
    workspace_id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    path TEXT NOT NULL,
    repository_cwd TEXT NOT NULL,
    common_dir TEXT NOT NULL,
    branch TEXT NOT NULL,
    base_ref TEXT NOT NULL,
    base_sha TEXT NOT NULL,
    integration_target TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    ownership TEXT NOT NULL,
    retired_at REAL,
    branch_deleted INTEGER NOT NULL DEFAULT 0,
    disposition TEXT,
    conflict TEXT,
    host TEXT
);
"""
_WORKSPACE_FIELDS = (
    "workspace_id",
    "label",
    "path",
    "repository_cwd",
    "common_dir",
    "branch",
    "base_ref",
    "base_sha",
    "integration_target",
    "created_at",
    "updated_at",
    "ownership",
    "retired_at",
    "branch_deleted",
    "disposition",
    "conflict",
    "host",
)
_RUN_FIELDS = (
    "state",
    "error",
    "final_text",
    "usage_in",
    "usage_out",
    "deadline",
    "started_at",
    "ended_at",
    "reported",
)
# 1: agents; 2: + agents.alias/definition_name/display_name, jobs, runs; 3: + agents.system_prompt/
# names/workspace_id, runs.definition_name/display_name/reported, workspaces; 4: + agents.host
SCHEMA_VERSION = 4


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
        for column in (
            "alias",
            "definition_name",
            "display_name",
            "system_prompt",
            "names",
            "workspace_id",
            "sandbox",
            "host",  # version 4
        ):
            if column not in columns:
                self._db.execute(f"ALTER TABLE agents ADD COLUMN {column} TEXT")
        self._db.executescript(_JOBS_SCHEMA + _WORKSPACES_SCHEMA)
        if "host" not in {row[1] for row in self._db.execute("PRAGMA table_info(workspaces)")}:  # version 4
            self._db.execute("ALTER TABLE workspaces ADD COLUMN host TEXT")
        run_columns = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
        for column in ("definition_name", "display_name"):  # version 3
            if column not in run_columns:
                self._db.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")
        if "reported" not in run_columns:
            # Runs that ended under an older daemon count as reported: a parent is not woken for them.
            self._db.execute("ALTER TABLE runs ADD COLUMN reported INTEGER NOT NULL DEFAULT 1")
        self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

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

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """All of the block's statements or none of them (a failure rolls back), as one write."""
        with self._writing():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def commit_job(self, job: Job, children: list[AgentRecord]) -> None:
        with self._transaction():
            for record in children:
                self._add(record)
            self._db.execute(
                "INSERT INTO jobs (job_id, parent_agent_id, strategy, created_at, stopped_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (job.job_id, job.parent_agent_id, job.strategy, job.created_at, job.stopped_at),
            )
            for run in job.runs:
                self._db.execute(
                    "INSERT INTO runs (run_id, job_id, idx, name, task, agent_id, alias, state,"
                    " definition_name, display_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run.run_id,
                        job.job_id,
                        run.index,
                        run.name,
                        run.task,
                        run.agent_id,
                        run.alias,
                        run.state,
                        run.definition_name,
                        run.display_name,
                    ),
                )
                self._save_run(run)

    def save_runs(self, job: Job, runs: list[Run]) -> None:
        with self._transaction():
            self._db.execute("UPDATE jobs SET stopped_at = ? WHERE job_id = ?", (job.stopped_at, job.job_id))
            for run in runs:
                self._save_run(run)

    def _save_run(self, run: Run) -> None:
        columns = ", ".join(f"{name} = ?" for name in _RUN_FIELDS)
        values = [getattr(run, name) for name in _RUN_FIELDS]
        self._db.execute(f"UPDATE runs SET {columns} WHERE run_id = ?", (*values, run.run_id))

    def load_jobs(self) -> list[Job]:
        jobs = {
            row[0]: Job(row[0], row[1], row[2], row[3], stopped_at=row[4])
            for row in self._db.execute(
                "SELECT job_id, parent_agent_id, strategy, created_at, stopped_at FROM jobs"
                " ORDER BY created_at"
            )
        }
        head = (
            "run_id",
            "job_id",
            "idx",
            "name",
            "task",
            "agent_id",
            "alias",
            "definition_name",
            "display_name",
        )
        query = f"SELECT {', '.join((*head, *_RUN_FIELDS))} FROM runs ORDER BY job_id, idx"
        for row in self._db.execute(query):
            fields = dict(
                zip(
                    ("index" if h == "idx" else h for h in (*head, *_RUN_FIELDS)),
                    row,
                    strict=True,
                )
            )
            fields["reported"] = bool(fields["reported"])
            jobs[row[1]].runs.append(Run(**fields))
        return list(jobs.values())

    def _add(self, record: AgentRecord) -> None:
        self._db.execute(
            "INSERT INTO agents (agent_id, session_id, cwd, name, model, provider, mode, tools,"
            " headless_policy, parent_agent_id, depth, adopted, created_at, started_at, alias,"
            " definition_name, display_name, system_prompt, names, workspace_id, sandbox, host)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                record.alias,
                record.definition_name,
                record.display_name,
                record.system_prompt,
                orjson.dumps(record.names).decode() if record.names is not None else None,
                record.workspace_id,
                record.sandbox,
                record.host,
            ),
        )

    def add_workspace(self, ws: Workspace, record: AgentRecord) -> None:
        """The workspace and its first agent, in one transaction."""
        with self._transaction():
            self._db.execute(
                f"INSERT INTO workspaces ({', '.join(_WORKSPACE_FIELDS)})"
                f" VALUES ({', '.join('?' for _ in _WORKSPACE_FIELDS)})",
                _workspace_row(ws),
            )
            self._add(record)

    def save_workspace(self, ws: Workspace) -> None:
        columns = ", ".join(f"{name} = ?" for name in _WORKSPACE_FIELDS[1:])
        with self._writing():
            self._db.execute(
                f"UPDATE workspaces SET {columns} WHERE workspace_id = ?",
                (*_workspace_row(ws)[1:], ws.workspace_id),
            )

    def load_workspaces(self) -> list[Workspace]:
        rows = self._db.execute(f"SELECT {', '.join(_WORKSPACE_FIELDS)} FROM workspaces ORDER BY created_at")
        out = []
        for row in rows:
            fields = dict(zip(_WORKSPACE_FIELDS, row, strict=True))
            fields["branch_deleted"] = bool(fields["branch_deleted"])
            fields["conflict"] = orjson.loads(fields["conflict"]) if fields["conflict"] else None
            out.append(Workspace(**fields))
        return out

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
    data["names"] = orjson.loads(data["names"]) if data.get("names") else None
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


def _workspace_row(ws: Workspace) -> tuple[Any, ...]:
    values = {name: getattr(ws, name) for name in _WORKSPACE_FIELDS}
    values["branch_deleted"] = int(ws.branch_deleted)
    values["conflict"] = orjson.dumps(ws.conflict).decode() if ws.conflict is not None else None
    return tuple(values[name] for name in _WORKSPACE_FIELDS)

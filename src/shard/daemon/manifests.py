"""The broker's durable half (``broker.Manifests``: the agents', the jobs' and the workspaces'
ports) on the real disk: ``state.db`` through the registry, and the session files an adoption
names."""

from __future__ import annotations

import os
from pathlib import Path

from shard.daemon import sessions
from shard.daemon.catalog import Catalog
from shard.daemon.jobs.children import ChildSpec
from shard.daemon.jobs.model import Job, Run
from shard.daemon.jobs.settings import Catalogs, Definitions
from shard.daemon.record import AgentRecord
from shard.daemon.registry import Registry
from shard.daemon.workspaces.model import Workspace
from shard.protocol.errors import ErrorCode, ShardError, shown


class RegistryManifests:
    def __init__(
        self,
        home: Path,
        registry: Registry,
        definitions: Definitions | None = None,
        catalog: Catalogs | None = None,
    ) -> None:
        self.home = home
        self.registry = registry
        self._definitions = definitions
        self._catalog = catalog

    def canonical_cwd(self, cwd: str) -> str:
        if "\0" in cwd:  # no system call takes one (realpath would raise ValueError)
            raise ShardError(ErrorCode.INVALID_REQUEST, "cwd holds a NUL byte")
        expanded = os.path.expanduser(cwd)
        if not os.path.isabs(expanded):  # relative to what? the daemon's cwd is not the client's
            raise ShardError(ErrorCode.INVALID_REQUEST, f"cwd must be an absolute path, not {shown(cwd)}")
        canonical = os.path.realpath(expanded)
        if not os.path.isdir(canonical):
            raise ShardError(ErrorCode.INVALID_REQUEST, f"cwd {shown(cwd)} is not a directory")
        return canonical

    def check_unadopted(self, session_id: str) -> None:
        if self.registry.by_session(session_id) is not None:
            raise ShardError(ErrorCode.INVALID_REQUEST, f"session {shown(session_id)} is already adopted")

    def check_adoption(self, session_id: str, cwd: str) -> None:
        self.check_unadopted(session_id)
        header = sessions.header_of(self.home, session_id)  # NOT_FOUND / SESSION_CORRUPT
        if os.path.realpath(str(header.get("cwd", ""))) != cwd:
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"session {shown(session_id)} belongs to another directory"
            )

    def add(self, record: AgentRecord) -> None:
        self.registry.add(record)

    def remove(self, agent_id: str) -> None:
        self.registry.remove(agent_id)

    def commit_job(self, job: Job, children: list[AgentRecord]) -> None:
        self.registry.commit_job(job, children)

    def save_runs(self, job: Job, runs: list[Run]) -> None:
        self.registry.save_runs(job, runs)

    def load_jobs(self) -> list[Job]:
        return self.registry.load_jobs()

    def definition(self, cwd: str, name: str) -> ChildSpec | None:
        return self._definitions(cwd, name) if self._definitions is not None else None

    def catalog(self) -> Catalog | None:
        return self._catalog() if self._catalog is not None else None

    def add_workspace(self, ws: Workspace, record: AgentRecord) -> None:
        self.registry.add_workspace(ws, record)

    def save_workspace(self, ws: Workspace) -> None:
        self.registry.save_workspace(ws)

    def load_workspaces(self) -> list[Workspace]:
        return self.registry.load_workspaces()

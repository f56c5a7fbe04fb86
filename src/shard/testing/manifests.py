"""The registry and the session files in memory: the broker's ``Manifests`` ports
(``shard.daemon.broker``: the agents', the jobs' and the workspaces') for
:class:`shard.testing.broker.BrokerHarness`."""

from __future__ import annotations

import copy
import dataclasses

from shard.daemon.catalog import Catalog
from shard.daemon.jobs.children import ChildSpec
from shard.daemon.jobs.model import Job, Run
from shard.daemon.record import AgentRecord
from shard.daemon.workspaces.model import Workspace
from shard.protocol.errors import ErrorCode, ShardError


class MemoryManifests:
    """The registry and the session files, in memory. ``sessions`` maps an adoptable session id to its
    directory; ``full`` makes every write fail as a full disk does."""

    def __init__(self) -> None:
        self.rows: dict[str, AgentRecord] = {}
        self.sessions: dict[str, str] = {}
        self.jobs: dict[str, Job] = {}  # as saved: a new broker on these manifests is a daemon restart
        self.full = False
        self.definitions: dict[str, ChildSpec] = {}  # by lower-cased name, seen from every cwd
        self.choices: Catalog | None = None  # what new agents are checked against; None: nothing
        self.workspaces: dict[str, Workspace] = {}

    def canonical_cwd(self, cwd: str) -> str:
        if "\0" in cwd:
            raise ShardError(ErrorCode.INVALID_REQUEST, "cwd holds a NUL byte")
        if not cwd.startswith("/"):
            raise ShardError(ErrorCode.INVALID_REQUEST, f"cwd must be an absolute path, not {cwd!r}")
        return cwd

    def check_unadopted(self, session_id: str) -> None:
        if any(r.session_id == session_id for r in self.rows.values()):
            raise ShardError(ErrorCode.INVALID_REQUEST, f"session {session_id} is already adopted")

    def check_adoption(self, session_id: str, cwd: str) -> None:
        self.check_unadopted(session_id)
        if session_id not in self.sessions:
            raise ShardError(ErrorCode.NOT_FOUND, f"no session {session_id}")
        if self.sessions[session_id] != cwd:
            raise ShardError(ErrorCode.INVALID_REQUEST, f"session {session_id} belongs to another directory")

    def add(self, record: AgentRecord) -> None:
        self._writable()
        self.rows[record.agent_id] = dataclasses.replace(record)

    def remove(self, agent_id: str) -> None:
        self._writable()
        self.rows.pop(agent_id, None)

    def commit_job(self, job: Job, children: list[AgentRecord]) -> None:
        self._writable()
        for record in children:
            self.rows[record.agent_id] = dataclasses.replace(record)
        self.jobs[job.job_id] = copy.deepcopy(job)

    def save_runs(self, job: Job, runs: list[Run]) -> None:
        self._writable()
        saved = self.jobs[job.job_id]
        saved.stopped_at = job.stopped_at
        for run in runs:
            saved.runs[run.index] = dataclasses.replace(run)

    def load_jobs(self) -> list[Job]:
        return [copy.deepcopy(job) for job in self.jobs.values()]

    def add_workspace(self, ws: Workspace, record: AgentRecord) -> None:
        self._writable()
        self.workspaces[ws.workspace_id] = copy.deepcopy(ws)
        self.rows[record.agent_id] = dataclasses.replace(record)

    def save_workspace(self, ws: Workspace) -> None:
        self._writable()
        self.workspaces[ws.workspace_id] = copy.deepcopy(ws)

    def load_workspaces(self) -> list[Workspace]:
        return [copy.deepcopy(ws) for ws in self.workspaces.values()]

    def definition(self, cwd: str, name: str) -> ChildSpec | None:
        return self.definitions.get(name.lower())

    def catalog(self) -> Catalog | None:
        return self.choices

    def _writable(self) -> None:
        if self.full:
            raise ShardError(ErrorCode.INTERNAL_ERROR, "the daemon could not write state.db: disk full")

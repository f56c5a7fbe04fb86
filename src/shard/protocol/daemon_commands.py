"""Workspace (PROTOCOL §10.1a) and subagent job (§10.3) commands: orchestrator-level, addressed by
opaque workspace or job handles, never by a routing ``agent_id``; and the additive commands of the
web client's file tree, folder completion and renaming (``agent_id`` as payload, as in
``agent.attach``). ``shard.protocol.commands`` re-exports them with the rest of the catalog."""

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from shard.protocol.bounds import AgentName, Choice, DirectoryPath, HostName, TaskName
from shard.protocol.command_base import CommandBase
from shard.protocol.jobs import JobStrategy, TaskSpec
from shard.protocol.workspaces import BranchDisposition

# --- §10.1a workspace commands ------------------------------------------------------------------


class WorkspaceCommand(CommandBase):
    version: Literal[1] | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):  # True == 1 in Python; on the wire it is not the number 1
            raise ValueError("version must be the number 1")
        return value


class _FreshIdentity(WorkspaceCommand):
    """The agent and session of a workspace are always the daemon's to make (R10.1a.16): a client
    that names either is told so, rather than having the field silently ignored."""

    @model_validator(mode="before")
    @classmethod
    def _no_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in ("agent_id", "session_id"):
                if name in data:
                    raise ValueError(f"{name} is made by the daemon for a workspace's agent; do not send it")
        return data


class WorkspaceCreate(_FreshIdentity):
    type: Literal["workspace.create"] = "workspace.create"
    cwd: str
    # Additive (Shard): the worktree is made on this [[hosts]] entry, ``cwd`` a repository there.
    host: HostName | None = None
    label: str | None = None
    branch: str | None = None
    base_ref: str | None = None
    integration_target: str | None = None
    title: str | None = None
    name: str | None = None
    model: str | None = None
    provider: str | None = None
    mode: str | None = None


class WorkspaceAttach(_FreshIdentity):
    type: Literal["workspace.attach"] = "workspace.attach"
    workspace_id: str
    title: str | None = None
    name: str | None = None
    model: str | None = None
    provider: str | None = None
    mode: str | None = None


class WorkspaceList(WorkspaceCommand):
    type: Literal["workspace.list"] = "workspace.list"
    cwd: str | None = None
    include_retired: bool | None = None


class WorkspaceStatus(WorkspaceCommand):
    type: Literal["workspace.status"] = "workspace.status"
    workspace_id: str


class WorkspaceRetire(WorkspaceCommand):
    type: Literal["workspace.retire"] = "workspace.retire"
    workspace_id: str
    branch_disposition: BranchDisposition | None = None
    discard_ignored: bool | None = None  # confirms that git-ignored files may go with the worktree


class WorkspaceDiff(WorkspaceCommand):
    """Additive (Shard): the worktree's changes against its base — the agent's commits, its edits and
    its untracked files — file by file, with hunks shaped as the diff RenderDescriptor's. Offered
    when ``hello.capabilities`` holds ``workspace-diff``."""

    type: Literal["workspace.diff"] = "workspace.diff"
    workspace_id: str


# --- §10.3 subagent job commands ----------------------------------------------------------------


class SubagentCommand(CommandBase):
    """Orchestrator-level: ``parent_agent_id`` is payload, there is no routing ``agent_id`` (R5.2.5)."""

    parent_agent_id: str


class SubagentCreate(SubagentCommand):
    type: Literal["subagent.create"] = "subagent.create"
    name: TaskName | None = None
    task: str | None = None
    tasks: Annotated[list[TaskSpec], Field(min_length=1)] | None = None
    strategy: JobStrategy | None = None
    model: Choice | None = None
    provider: Choice | None = None
    mode: Choice | None = None
    # Additive (Shard): run the children on this [[hosts]] entry (in the parent's path there);
    # absent: their definition's host, else their parent's machine.
    host: HostName | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "SubagentCreate":
        single = self.name is not None or self.task is not None
        batch = self.tasks is not None
        if single == batch:
            raise ValueError("give either 'name' and 'task' (single form) or 'tasks' (batch form)")
        if single and (self.name is None or self.task is None):
            raise ValueError("the single form needs both 'name' and 'task'")
        if batch and self.strategy is None:
            raise ValueError("'strategy' is required with 'tasks'")
        return self


class SubagentWait(SubagentCommand):
    type: Literal["subagent.wait"] = "subagent.wait"
    handles: Annotated[list[str], Field(min_length=1)]
    mode: Literal["any", "all"] | None = None
    timeout: Annotated[float, Field(ge=0)] | None = None


class SubagentSteer(SubagentCommand):
    type: Literal["subagent.steer"] = "subagent.steer"
    target: str
    message: str


class SubagentRelaunch(SubagentCommand):
    type: Literal["subagent.relaunch"] = "subagent.relaunch"
    target: str
    task: str


class SubagentStatus(SubagentCommand):
    type: Literal["subagent.status"] = "subagent.status"
    targets: list[str] | None = None


class SubagentStop(SubagentCommand):
    type: Literal["subagent.stop"] = "subagent.stop"
    handle: str


# --- the agent's folder, read-only, and its name (Shard, protocol v1 additive) --------------------


class FsList(CommandBase):
    """The entries of a folder inside the agent's ``cwd``: ``path`` is relative to it, '/'-separated
    (absent or "" for the folder itself). Offered when ``hello.capabilities`` holds ``fs-read``."""

    type: Literal["fs.list"] = "fs.list"
    agent_id: str
    path: DirectoryPath | None = None


class FsRead(CommandBase):
    """One file inside the agent's ``cwd``, read-only (capability ``fs-read``)."""

    type: Literal["fs.read"] = "fs.read"
    agent_id: str
    path: Annotated[DirectoryPath, Field(min_length=1)]


class FsComplete(CommandBase):
    """The folders an absolute path (or ``~/…``) being typed may go on with: directories only, for a
    new agent's folder (capability ``fs-complete``)."""

    type: Literal["fs.complete"] = "fs.complete"
    prefix: Annotated[DirectoryPath, Field(min_length=1)]


class AgentRename(CommandBase):
    """The name people see for an agent (``AgentInfo.name``), kept with its manifest; ``null`` gives
    the client's derived name back. Told to every connection as ``agent_changed`` (capability
    ``agent-rename``)."""

    type: Literal["agent.rename"] = "agent.rename"
    agent_id: str
    name: AgentName | None

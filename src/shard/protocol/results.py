"""The ``data`` of successful responses, one model per command that returns data (PROTOCOL §9.2,
§10.1, §10.3). They give the runtime typed construction and the schema its shapes. Those a runtime
answers with (per-agent commands, ``runtime.steer``) are defined in ``agent_results.py``."""

from typing import Literal

from shard.protocol.agent_results import CompactNoop as CompactNoop
from shard.protocol.agent_results import CompactResult as CompactResult
from shard.protocol.agent_results import ForkResult as ForkResult
from shard.protocol.agent_results import ListModelsResult as ListModelsResult
from shard.protocol.agent_results import ListModesResult as ListModesResult
from shard.protocol.agent_results import ListReasoningLevelsResult as ListReasoningLevelsResult
from shard.protocol.agent_results import NextProviderCall as NextProviderCall
from shard.protocol.agent_results import QueuedResult as QueuedResult
from shard.protocol.agent_results import RuntimeSteerResult as RuntimeSteerResult
from shard.protocol.agent_results import SessionForkInfo as SessionForkInfo
from shard.protocol.agent_results import SessionListResult as SessionListResult
from shard.protocol.agent_results import SessionSummary as SessionSummary
from shard.protocol.agent_results import SetModelResult as SetModelResult
from shard.protocol.agent_results import SetModeResult as SetModeResult
from shard.protocol.agent_results import SetReasoningLevelResult as SetReasoningLevelResult
from shard.protocol.agent_results import UnqueueResult as UnqueueResult
from shard.protocol.agents import AgentInfo, AgentStatus
from shard.protocol.base import WireModel
from shard.protocol.jobs import JobSnapshot, JobState, JobStrategy, RunSnapshot, RunState
from shard.protocol.workspaces import DiffBase, FileDiff, WorkspaceDetail, WorkspaceSummary


class SessionActivateResult(WireModel):
    """Additive (Shard): the agent that talks on ``session_id`` now — one already bound to it
    (``created`` false), or one made to adopt it."""

    agent_id: str
    session_id: str
    created: bool


class AgentCreateResult(WireModel):
    agent_id: str


class AgentAttachResult(WireModel):
    status: AgentStatus
    info: AgentInfo


class AgentListResult(WireModel):
    agents: list[AgentInfo]


class AgentTerminateResult(WireModel):
    deferred: bool
    # Additive: true when the agent was forgotten — its runtime never started or failed, so there
    # was nothing to stop and it left the registry (its session file is kept).
    forgotten: bool | None = None


class AgentRemoveResult(WireModel):
    """``agent.remove`` (additive): the agents that left the registry — its subagents deepest first,
    then the one named — each told to every connection as ``agent_removed``."""

    removed: list[str]


class AgentRenameResult(WireModel):
    """``agent.rename`` (additive): the agent as every connection now sees it."""

    info: AgentInfo


class FsEntry(WireModel):
    """One entry of ``fs.list``. ``kind`` is what a click opens: a ``dir`` or a ``file`` (a symlink
    inside the folder counts as its target, with ``symlink: true``); ``link`` is a symlink that
    leads outside the folder or nowhere, listed but never followed or opened."""

    name: str
    kind: Literal["dir", "file", "link"]
    size: int | None = None  # bytes, for a file
    symlink: bool | None = None


class FsListResult(WireModel):
    path: str  # relative to the agent's cwd, '/'-separated; "" for the folder itself
    entries: list[FsEntry]
    hidden: int  # entries not listed: .git and what the ignore files exclude
    truncated: bool


class FsReadResult(WireModel):
    """``text`` is absent for a binary file (a NUL byte, or not UTF-8); at most ``limit`` bytes of a
    longer file are read (``truncated``)."""

    path: str
    size: int
    binary: bool
    truncated: bool
    limit: int
    text: str | None = None


class FsCompleteResult(WireModel):
    directories: list[str]  # absolute paths, sorted
    truncated: bool


class HostListResult(WireModel):
    """``host.list`` (additive): each [[hosts]] entry's name, sorted."""

    hosts: list[str]


class ClientIdentifyResult(WireModel):
    """``client.identify`` (additive): this connection's id (``permission_resolved.source``) and the
    label its answers now carry (``source_label``)."""

    client_id: str
    label: str


class CompareEnvResult(WireModel):
    """The caller's provider variables whose value differs from the daemon's (by name only)."""

    differ: list[str]


class SubagentRunHandle(WireModel):
    run_id: str
    index: int
    name: str
    state: Literal["queued"] = "queued"
    agent_id: str
    alias: str
    definition_name: str | None = None
    display_name: str | None = None


class SubagentCreateResult(WireModel):
    job_id: str
    strategy: JobStrategy
    runs: list[SubagentRunHandle]


class SubagentWaitResult(WireModel):
    timed_out: bool
    aggregate_state: JobState | Literal["mixed"]
    runs: list[RunSnapshot]


class SubagentSteerResult(WireModel):
    status: Literal["injected", "conflict"]
    run_id: str
    turn_id: str | None = None
    correlation_id: str


class SubagentRelaunchResult(WireModel):
    job_id: str
    run_id: str
    agent_id: str
    alias: str
    definition_name: str | None = None
    display_name: str | None = None
    state: Literal["queued"] = "queued"


class SubagentAgentStatus(WireModel):
    agent_id: str
    alias: str | None = None
    definition_name: str | None = None
    display_name: str | None = None
    parent_agent_id: str | None = None
    run: RunSnapshot | None = None


class SubagentStatusResult(WireModel):
    agents: list[SubagentAgentStatus]
    jobs: list[JobSnapshot] | None = None


class CancelledRun(WireModel):
    run_id: str
    agent_id: str | None = None
    state: RunState


class SubagentStopResult(WireModel):
    cancelled: list[CancelledRun]
    job_id: str | None = None


class WorkspaceResult(WireModel):
    agent_id: str
    session_id: str
    workspace: WorkspaceDetail


class WorkspaceListResult(WireModel):
    workspaces: list[WorkspaceSummary]


class WorkspaceDetailResult(WireModel):
    """``workspace.status`` and ``workspace.retire``: the protocol names no data for them; Shard
    answers with the workspace's detail (for retire: as retired)."""

    workspace: WorkspaceDetail


class WorkspaceDiffResult(WireModel):
    """``workspace.diff``: the worktree against ``base`` (the merge-base of its HEAD with the
    integration target) — at most 500 files, 256 KiB of hunk lines per file and 2 MiB in all;
    ``truncated`` when anything was cut, ``total_files`` counting every changed file."""

    workspace_id: str
    base: DiffBase
    head: str
    files: list[FileDiff]
    truncated: bool
    total_files: int


# The data models a successful response may carry, by the command it answers (``session_op``'s depend
# on its op, so any of them fits). Commands absent here answer without data.
RESULT_MODELS: dict[str, tuple[type[WireModel], ...]] = {
    "prompt": (QueuedResult,),
    "steer": (QueuedResult,),
    "unqueue": (UnqueueResult,),
    "set_mode": (SetModeResult,),
    "list_modes": (ListModesResult,),
    "list_models": (ListModelsResult,),
    "set_model": (SetModelResult,),
    "list_reasoning_levels": (ListReasoningLevelsResult,),
    "set_reasoning_level": (SetReasoningLevelResult,),
    "session_op": (CompactResult, CompactNoop, ForkResult, SessionListResult),
    "session.activate": (SessionActivateResult,),
    "agent.create": (AgentCreateResult,),
    "agent.attach": (AgentAttachResult,),
    "agent.list": (AgentListResult,),
    "agent.status": (AgentListResult,),
    "agent.terminate": (AgentTerminateResult,),
    "agent.remove": (AgentRemoveResult,),
    "agent.rename": (AgentRenameResult,),
    "fs.list": (FsListResult,),
    "fs.read": (FsReadResult,),
    "fs.complete": (FsCompleteResult,),
    "client.identify": (ClientIdentifyResult,),
    "host.list": (HostListResult,),
    "daemon.compare_env": (CompareEnvResult,),
    "workspace.create": (WorkspaceResult,),
    "workspace.attach": (WorkspaceResult,),
    "workspace.list": (WorkspaceListResult,),
    "workspace.status": (WorkspaceDetailResult,),
    "workspace.retire": (WorkspaceDetailResult,),
    "workspace.diff": (WorkspaceDiffResult,),
    "subagent.create": (SubagentCreateResult,),
    "subagent.wait": (SubagentWaitResult,),
    "subagent.steer": (SubagentSteerResult,),
    "subagent.relaunch": (SubagentRelaunchResult,),
    "subagent.status": (SubagentStatusResult,),
    "subagent.stop": (SubagentStopResult,),
    "runtime.steer": (RuntimeSteerResult,),
}

"""The daemon's workspace broadcasts (PROTOCOL §10.2), ``subagent_run_changed`` (§10.3) and the
additive ``agent_changed``: orchestrator-level events about workspaces, job runs and agents.
``shard.protocol.events`` re-exports them with the rest of the catalog."""

from typing import Literal

from shard.protocol.agents import AgentInfo, AgentStatus, RuntimeState
from shard.protocol.event_base import EventBase
from shard.protocol.jobs import RunState
from shard.protocol.workspaces import WorkspaceDetail


class WorkspaceCreated(EventBase):
    type: Literal["workspace_created"] = "workspace_created"
    workspace: WorkspaceDetail


class WorkspaceAttached(EventBase):
    type: Literal["workspace_attached"] = "workspace_attached"
    workspace: WorkspaceDetail
    agent_id: str
    session_id: str


class WorkspaceRetired(EventBase):
    type: Literal["workspace_retired"] = "workspace_retired"
    workspace: WorkspaceDetail


class WorkspaceConflict(EventBase):
    type: Literal["workspace_conflict"] = "workspace_conflict"
    workspace: WorkspaceDetail
    reason: str


class AgentChanged(EventBase):
    """Additive (Shard): what the registry knows of an agent changed other than its status (a
    rename); to every connection. ``agent_id`` is payload, as in ``agent_spawned``."""

    type: Literal["agent_changed"] = "agent_changed"
    agent_id: str
    info: AgentInfo


class SubagentRunChanged(EventBase):
    """No routing ``agent_id``: ``parent_agent_id`` is payload; ``agent_id`` names the child (R10.3.63)."""

    type: Literal["subagent_run_changed"] = "subagent_run_changed"
    parent_agent_id: str
    job_id: str
    run_id: str
    agent_id: str | None = None
    alias: str | None = None
    definition_name: str | None = None
    display_name: str | None = None
    state: RunState
    previous_state: RunState | None = None
    error: str | None = None
    ended_at: int | float | None = None


class AgentSpawned(EventBase):
    type: Literal["agent_spawned"] = "agent_spawned"
    agent_id: str
    info: AgentInfo


class AgentExited(EventBase):
    type: Literal["agent_exited"] = "agent_exited"
    agent_id: str
    runtime_state: Literal["failed"] = "failed"
    reason: str
    exit_code: int | None = None


class AgentStatusChanged(EventBase):
    type: Literal["agent_status_changed"] = "agent_status_changed"
    agent_id: str
    status: AgentStatus
    runtime_state: RuntimeState
    detail: str | None = None


class AgentActivity(EventBase):
    """Coarse, sanitized activity: never prompts, text, args, results or paths (R10.2.16)."""

    type: Literal["agent_activity"] = "agent_activity"
    agent_id: str
    timestamp: int | float
    phase: Literal["idle", "thinking", "streaming", "tool", "waiting", "compacting", "retrying", "error"]
    status: AgentStatus
    tool_name: str | None = None


class AgentRemoved(EventBase):
    """Additive (Shard): the agent left the registry (``agent.remove``, or ``agent.terminate`` of one
    with nothing to stop); its session file stays. ``agent_id`` is payload, as in ``agent_spawned``."""

    type: Literal["agent_removed"] = "agent_removed"
    agent_id: str
    session_id: str | None = None  # the session kept: reopen it with agent.create {session_id}

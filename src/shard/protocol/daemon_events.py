"""The daemon's workspace broadcasts (PROTOCOL §10.2), ``subagent_run_changed`` (§10.3) and the
additive ``agent_changed``: orchestrator-level events about workspaces, job runs and agents.
``shard.protocol.events`` re-exports them with the rest of the catalog."""

from typing import Literal

from shard.protocol.agents import AgentInfo
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

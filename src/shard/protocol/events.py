"""Every event of the catalog: what one agent's runtime sends (lifecycle, PROTOCOL §9.1; the response
envelope, §9.3; streaming and turn events, §9.4; permission/UI requests, §9.5; its broadcasts, §10.2:
``agent_events.py``) and the daemon's (the registry's and workspaces' broadcasts, §10.2, and
``subagent_run_changed``, §10.3: ``daemon_events.py``). ``EVENTS`` maps each wire ``type`` to its
model; ``Event`` is their discriminated union for JSON Schema. A runtime imports ``agent_events``
only: it never sends a daemon event.

Events never carry a correlation ``id`` (R5.1.7); only ``response`` does, echoing its command's.
"""

from typing import Annotated

from pydantic import Field

from shard.protocol.agent_events import Compaction as Compaction
from shard.protocol.agent_events import ErrorEvent as ErrorEvent
from shard.protocol.agent_events import ErrorInfo as ErrorInfo
from shard.protocol.agent_events import Hello as Hello
from shard.protocol.agent_events import MessageComplete as MessageComplete
from shard.protocol.agent_events import MessageDelta as MessageDelta
from shard.protocol.agent_events import ModeChanged as ModeChanged
from shard.protocol.agent_events import ModelChanged as ModelChanged
from shard.protocol.agent_events import PendingRequest as PendingRequest
from shard.protocol.agent_events import PermissionRequest as PermissionRequest
from shard.protocol.agent_events import PermissionResolved as PermissionResolved
from shard.protocol.agent_events import ReasoningLevelChanged as ReasoningLevelChanged
from shard.protocol.agent_events import Response as Response
from shard.protocol.agent_events import Status as Status
from shard.protocol.agent_events import Sync as Sync
from shard.protocol.agent_events import ToolCall as ToolCall
from shard.protocol.agent_events import ToolResult as ToolResult
from shard.protocol.agent_events import TurnEnd as TurnEnd
from shard.protocol.agent_events import TurnStart as TurnStart
from shard.protocol.agent_events import UiRequest as UiRequest
from shard.protocol.agent_events import UiResolved as UiResolved
from shard.protocol.agent_events import UsageEvent as UsageEvent
from shard.protocol.daemon_events import AgentActivity as AgentActivity
from shard.protocol.daemon_events import AgentChanged as AgentChanged
from shard.protocol.daemon_events import AgentExited as AgentExited
from shard.protocol.daemon_events import AgentRemoved as AgentRemoved
from shard.protocol.daemon_events import AgentSpawned as AgentSpawned
from shard.protocol.daemon_events import AgentStatusChanged as AgentStatusChanged
from shard.protocol.daemon_events import SubagentRunChanged as SubagentRunChanged
from shard.protocol.daemon_events import WorkspaceAttached as WorkspaceAttached
from shard.protocol.daemon_events import WorkspaceConflict as WorkspaceConflict
from shard.protocol.daemon_events import WorkspaceCreated as WorkspaceCreated
from shard.protocol.daemon_events import WorkspaceRetired as WorkspaceRetired
from shard.protocol.event_base import AgentEvent as AgentEvent
from shard.protocol.event_base import EventBase as EventBase
from shard.protocol.queue import QueueChanged as QueueChanged
from shard.protocol.queue import QueuedMessage as QueuedMessage

Event = Annotated[
    Hello
    | Sync
    | Status
    | Response
    | TurnStart
    | MessageDelta
    | MessageComplete
    | ToolCall
    | ToolResult
    | TurnEnd
    | UsageEvent
    | Compaction
    | ErrorEvent
    | QueueChanged
    | PermissionRequest
    | PermissionResolved
    | UiRequest
    | UiResolved
    | ModelChanged
    | ModeChanged
    | ReasoningLevelChanged
    | AgentSpawned
    | AgentExited
    | AgentStatusChanged
    | AgentActivity
    | AgentRemoved
    | AgentChanged
    | WorkspaceCreated
    | WorkspaceAttached
    | WorkspaceRetired
    | WorkspaceConflict
    | SubagentRunChanged,
    Field(discriminator="type"),
]

EVENTS: dict[str, type[EventBase]] = {
    m.model_fields["type"].default: m
    for m in (
        Hello,
        Sync,
        Status,
        Response,
        TurnStart,
        MessageDelta,
        MessageComplete,
        ToolCall,
        ToolResult,
        TurnEnd,
        UsageEvent,
        Compaction,
        ErrorEvent,
        QueueChanged,
        PermissionRequest,
        PermissionResolved,
        UiRequest,
        UiResolved,
        ModelChanged,
        ModeChanged,
        ReasoningLevelChanged,
        AgentSpawned,
        AgentExited,
        AgentStatusChanged,
        AgentActivity,
        AgentRemoved,
        AgentChanged,
        WorkspaceCreated,
        WorkspaceAttached,
        WorkspaceRetired,
        WorkspaceConflict,
        SubagentRunChanged,
    )
}

ORCHESTRATOR_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "agent_spawned",
        "agent_exited",
        "agent_status_changed",
        "agent_activity",
        "agent_removed",
        "agent_changed",
        "workspace_created",
        "workspace_attached",
        "workspace_retired",
        "workspace_conflict",
        "subagent_run_changed",
    }
)

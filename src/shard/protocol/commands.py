"""Every command of the catalog: per-agent (PROTOCOL §9.2, §9.5; defined in ``agent_commands.py``),
orchestrator (§10.1), workspace (§10.1a) and subagent job commands (§10.3; ``daemon_commands.py``).

``PER_AGENT_COMMANDS`` / ``ORCHESTRATOR_COMMANDS`` map each wire ``type`` to its model; ``Command`` is
the discriminated union of both for JSON Schema. A runtime imports ``agent_commands`` only: it never
parses an orchestrator command.
"""

from typing import Annotated, Literal

from pydantic import Field

from shard.protocol import daemon_commands as dc
from shard.protocol.agent_commands import PER_AGENT_COMMANDS as PER_AGENT_COMMANDS
from shard.protocol.agent_commands import RUNTIME_COMMANDS as RUNTIME_COMMANDS
from shard.protocol.agent_commands import Abort as Abort
from shard.protocol.agent_commands import AgentCommand as AgentCommand
from shard.protocol.agent_commands import CompactArgs as CompactArgs
from shard.protocol.agent_commands import ForkArgs as ForkArgs
from shard.protocol.agent_commands import ListModels as ListModels
from shard.protocol.agent_commands import ListModes as ListModes
from shard.protocol.agent_commands import ListReasoningLevels as ListReasoningLevels
from shard.protocol.agent_commands import PerAgentCommand as PerAgentCommand
from shard.protocol.agent_commands import PermissionResponse as PermissionResponse
from shard.protocol.agent_commands import Prompt as Prompt
from shard.protocol.agent_commands import RuntimeResponders as RuntimeResponders
from shard.protocol.agent_commands import RuntimeSteer as RuntimeSteer
from shard.protocol.agent_commands import RuntimeSync as RuntimeSync
from shard.protocol.agent_commands import SessionActivate as SessionActivate
from shard.protocol.agent_commands import SessionListArgs as SessionListArgs
from shard.protocol.agent_commands import SessionOp as SessionOp
from shard.protocol.agent_commands import SetMode as SetMode
from shard.protocol.agent_commands import SetModel as SetModel
from shard.protocol.agent_commands import SetReasoningLevel as SetReasoningLevel
from shard.protocol.agent_commands import Steer as Steer
from shard.protocol.agent_commands import UiResponse as UiResponse
from shard.protocol.agent_commands import Unqueue as Unqueue
from shard.protocol.bounds import AgentName, Choice, ClientName, DirectoryPath, HostName, ToolList
from shard.protocol.command_base import CommandBase as CommandBase
from shard.protocol.command_base import by_type
from shard.protocol.daemon_commands import (
    SubagentCommand as SubagentCommand,
)
from shard.protocol.daemon_commands import (
    SubagentCreate as SubagentCreate,
)
from shard.protocol.daemon_commands import (
    SubagentRelaunch as SubagentRelaunch,
)
from shard.protocol.daemon_commands import (
    SubagentStatus as SubagentStatus,
)
from shard.protocol.daemon_commands import (
    SubagentSteer as SubagentSteer,
)
from shard.protocol.daemon_commands import (
    SubagentStop as SubagentStop,
)
from shard.protocol.daemon_commands import (
    SubagentWait as SubagentWait,
)
from shard.protocol.daemon_commands import (
    WorkspaceAttach as WorkspaceAttach,
)
from shard.protocol.daemon_commands import (
    WorkspaceCommand as WorkspaceCommand,
)
from shard.protocol.daemon_commands import (
    WorkspaceCreate as WorkspaceCreate,
)
from shard.protocol.daemon_commands import (
    WorkspaceList as WorkspaceList,
)
from shard.protocol.daemon_commands import (
    WorkspaceRetire as WorkspaceRetire,
)
from shard.protocol.daemon_commands import (
    WorkspaceStatus as WorkspaceStatus,
)
from shard.protocol.headless import HeadlessPolicy
from shard.protocol.jobs import LaunchPolicy

# --- §10.1 orchestrator commands ----------------------------------------------------------------


class AgentList(CommandBase):
    type: Literal["agent.list"] = "agent.list"


class AgentCreate(CommandBase):
    type: Literal["agent.create"] = "agent.create"
    cwd: DirectoryPath
    session_id: str | None = None
    model: Choice | None = None
    provider: Choice | None = None
    mode: Choice | None = None
    tools: ToolList | None = None
    skills: ToolList | None = None
    headless_policy: HeadlessPolicy | None = None
    name: AgentName | None = None
    parent_agent_id: str | None = None
    # Additive (Shard): how this agent's bash is confined; absent: [sandbox] mode of config.toml.
    sandbox: Literal["off", "ask", "auto"] | None = None
    # Additive (Shard): false offers this agent's runtime no subagent tools — what a one-shot
    # `shard run` asks for, since a direct run has none. Held for this daemon's life, not in state.db.
    subagents: bool | None = None
    # Additive (Shard): true lets agent.terminate of the stopped agent remove it from the registry
    # (its session stays), as for one that never started — a one-shot's agent. This daemon's life only.
    ephemeral: bool | None = None
    # Additive (Shard): run the agent on this [[hosts]] entry of config.toml (over SSH); ``cwd`` is
    # then a path on that host, checked there when the runtime starts.
    host: HostName | None = None
    # Managed-child manifest fields: set by the daemon, never by clients (R10.1.6).
    system_prompt: str | None = None
    depth: int | None = None
    launch_policy: LaunchPolicy | None = None
    alias: str | None = None
    definition_name: str | None = None
    display_name: str | None = None
    names: list[str] | None = None


class AgentAttach(CommandBase):
    type: Literal["agent.attach"] = "agent.attach"
    agent_id: str
    role: Literal["interactive", "observer"] | None = None


class AgentDetach(CommandBase):
    type: Literal["agent.detach"] = "agent.detach"
    agent_id: str


class AgentTerminate(CommandBase):
    type: Literal["agent.terminate"] = "agent.terminate"
    agent_id: str


class AgentKill(CommandBase):
    type: Literal["agent.kill"] = "agent.kill"
    agent_id: str
    force: bool | None = None


class AgentRemove(CommandBase):
    """Additive (Shard): take an agent out of the registry — with its subagents, each runtime
    stopped first — keeping every session file. Offered when ``hello.capabilities`` holds
    ``agent-remove``."""

    type: Literal["agent.remove"] = "agent.remove"
    agent_id: str


class ClientIdentify(CommandBase):
    """Additive (Shard): the name this connection goes by, shown to people as who answered a
    request ("Allowed by my-bot"). Offered when ``hello.capabilities`` holds ``client-identify``."""

    type: Literal["client.identify"] = "client.identify"
    name: ClientName


class HostList(CommandBase):
    """Additive (Shard): the machines of config.toml's ``[[hosts]]`` an agent or a workspace may be
    made on (``agent.create``'s ``host``). Offered when ``hello.capabilities`` holds ``hosts``."""

    type: Literal["host.list"] = "host.list"


class AgentStatusQuery(CommandBase):
    type: Literal["agent.status"] = "agent.status"
    agent_id: str | None = None


class DaemonShutdown(CommandBase):
    type: Literal["daemon.shutdown"] = "daemon.shutdown"
    force: bool | None = None


_Short = Annotated[str, Field(max_length=256)]


class DaemonCompareEnv(CommandBase):
    """Shard, additive: is the daemon's provider environment the caller's? ``variables`` maps each
    of the caller's provider variables to HMAC-SHA256(``nonce``, value) in hex, or null when unset;
    answered with the names that differ (``shard._provider_env``). The unix socket only."""

    type: Literal["daemon.compare_env"] = "daemon.compare_env"
    nonce: _Short
    variables: Annotated[dict[_Short, _Short | None], Field(max_length=512)]


OrchestratorCommand = Annotated[
    AgentList
    | AgentCreate
    | AgentAttach
    | AgentDetach
    | AgentTerminate
    | AgentKill
    | AgentRemove
    | AgentStatusQuery
    | DaemonShutdown
    | ClientIdentify
    | HostList
    | DaemonCompareEnv
    | WorkspaceCreate
    | WorkspaceAttach
    | WorkspaceList
    | WorkspaceStatus
    | WorkspaceRetire
    | dc.WorkspaceDiff
    | SubagentCreate
    | SubagentWait
    | SubagentSteer
    | SubagentRelaunch
    | SubagentStatus
    | SubagentStop
    | dc.AgentRename
    | dc.FsList
    | dc.FsRead
    | dc.FsComplete,
    Field(discriminator="type"),
]


ORCHESTRATOR_COMMANDS: dict[str, type[CommandBase]] = by_type(
    AgentList,
    AgentCreate,
    AgentAttach,
    AgentDetach,
    AgentTerminate,
    AgentKill,
    AgentRemove,
    AgentStatusQuery,
    DaemonShutdown,
    ClientIdentify,
    HostList,
    DaemonCompareEnv,
    WorkspaceCreate,
    WorkspaceAttach,
    WorkspaceList,
    WorkspaceStatus,
    WorkspaceRetire,
    dc.WorkspaceDiff,
    SubagentCreate,
    SubagentWait,
    SubagentSteer,
    SubagentRelaunch,
    SubagentStatus,
    SubagentStop,
    dc.AgentRename,
    dc.FsList,
    dc.FsRead,
    dc.FsComplete,
)

"""Every command of the catalog: per-agent (PROTOCOL §9.2, §9.5), orchestrator (§10.1), workspace
(§10.1a) and subagent job commands (§10.3).

``PER_AGENT_COMMANDS`` / ``ORCHESTRATOR_COMMANDS`` map each wire ``type`` to its model; ``Command`` is
the discriminated union of both for JSON Schema.
"""

from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, StrictInt, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from shard.protocol import daemon_commands as dc
from shard.protocol.base import WireModel
from shard.protocol.bounds import AgentName, Choice, ClientName, DirectoryPath, HostName, ToolList
from shard.protocol.command_base import CommandBase as CommandBase
from shard.protocol.content import Image
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
from shard.protocol.permissions import Decision


class AgentCommand(CommandBase):
    """A per-agent command: ``agent_id`` routes it on a daemon connection, absent on a direct one."""

    agent_id: str | None = None


# --- §9.2 drive commands ------------------------------------------------------------------------


class Prompt(AgentCommand):
    type: Literal["prompt"] = "prompt"
    message: str
    images: list[Image] | None = None
    streaming_behavior: Literal["steer", "follow_up"] | None = None


class Steer(AgentCommand):
    type: Literal["steer"] = "steer"
    message: str
    images: list[Image] | None = None


class Abort(AgentCommand):
    type: Literal["abort"] = "abort"


class Unqueue(AgentCommand):
    """Withdraw a queued message before it is delivered (Shard, additive: ``queue.py``)."""

    type: Literal["unqueue"] = "unqueue"
    queue_id: str


class SessionActivate(AgentCommand):
    """PROTOCOL §9.2 fork's ``session.activate`` (named there, defined here, additive): a session of
    the agent's folder, picked from a refreshed ``session_op list``, gets an agent of its own. The
    daemon answers it (``orchestrator.py``); a runtime alone refuses it."""

    type: Literal["session.activate"] = "session.activate"
    session_id: Annotated[str, Field(min_length=1)]


class SetMode(AgentCommand):
    type: Literal["set_mode"] = "set_mode"
    mode: str


class ListModes(AgentCommand):
    type: Literal["list_modes"] = "list_modes"


class ListModels(AgentCommand):
    type: Literal["list_models"] = "list_models"


class SetModel(AgentCommand):
    type: Literal["set_model"] = "set_model"
    model: str


class ListReasoningLevels(AgentCommand):
    type: Literal["list_reasoning_levels"] = "list_reasoning_levels"


class SetReasoningLevel(AgentCommand):
    type: Literal["set_reasoning_level"] = "set_reasoning_level"
    model: str
    effort: str


class CompactArgs(WireModel):
    keep_recent_tokens: Annotated[StrictInt, Field(gt=0)] | None = None


class ForkArgs(WireModel):
    from_entry_id: Annotated[str, Field(min_length=1)]


class SessionListArgs(WireModel):
    pass


_SESSION_OP_ARGS: dict[str, type[WireModel]] = {
    "list": SessionListArgs,
    "compact": CompactArgs,
    "fork": ForkArgs,
}


class SessionOp(AgentCommand):
    """``session_op {op, args?}``; ``args`` is checked against the op's own shape."""

    type: Literal["session_op"] = "session_op"
    op: Literal["list", "compact", "fork"]
    args: dict[str, Any] | None = None
    _typed_args: WireModel = PrivateAttr()

    @model_validator(mode="after")
    def _check_args(self) -> "SessionOp":
        try:
            self._typed_args = _SESSION_OP_ARGS[self.op].model_validate(self.args or {})
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in ("args", *first["loc"]))
            raise PydanticCustomError(
                "session_op_args",
                "field '{loc}' of op '{op}': {msg}",
                {"loc": loc, "op": self.op, "msg": first["msg"]},
            ) from None
        return self

    @property
    def typed_args(self) -> WireModel:
        """``args`` validated as ``CompactArgs`` / ``ForkArgs`` / ``SessionListArgs``."""
        return self._typed_args


# --- §9.5 permission and UI answers -------------------------------------------------------------


class PermissionResponse(AgentCommand):
    """Exactly one of ``choice_id`` or ``decision`` (R9.5.6)."""

    type: Literal["permission_response"] = "permission_response"
    request_id: str
    choice_id: str | None = None
    decision: Decision | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "PermissionResponse":
        has_choice = "choice_id" in self.model_fields_set
        has_decision = "decision" in self.model_fields_set
        if has_choice == has_decision:
            raise ValueError("exactly one of 'choice_id' or 'decision' is required")
        if has_choice and not self.choice_id:
            raise ValueError("'choice_id' must be a non-empty string")
        if has_decision and self.decision is None:
            raise ValueError("'decision' must be one of allow, allow_always, deny")
        return self


class UiResponse(AgentCommand):
    type: Literal["ui_response"] = "ui_response"
    request_id: str
    value: str | list[str] | None


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


# --- daemon-internal commands (DESIGN §2): daemon → runtime only, never accepted from clients -------


class RuntimeSync(AgentCommand):
    """Ask the runtime for an authoritative sync snapshot; answered by a ``response`` whose ``data``
    is the ``sync`` event (the daemon adds ``agent_id`` and ``runtime_epoch`` for its clients)."""

    type: Literal["runtime.sync"] = "runtime.sync"


class RuntimeResponders(AgentCommand):
    """Tell the runtime whether any interactive client can answer its requests (the daemon tracks
    attachments, including ancestors' for a delegated child); without one the headless policy applies."""

    type: Literal["runtime.responders"] = "runtime.responders"
    present: bool


class RuntimeSteer(AgentCommand):
    """A strict steer for the running turn: answered ``injected`` once it drains, else ``conflict``."""

    type: Literal["runtime.steer"] = "runtime.steer"
    message: str


PerAgentCommand = Annotated[
    Prompt
    | Steer
    | Abort
    | Unqueue
    | SetMode
    | ListModes
    | ListModels
    | SetModel
    | ListReasoningLevels
    | SetReasoningLevel
    | SessionOp
    | SessionActivate
    | PermissionResponse
    | UiResponse,
    Field(discriminator="type"),
]

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


def _by_type(*models: type[CommandBase]) -> dict[str, type[CommandBase]]:
    return {m.model_fields["type"].default: m for m in models}


PER_AGENT_COMMANDS: dict[str, type[CommandBase]] = _by_type(
    Prompt,
    Steer,
    Abort,
    Unqueue,
    SetMode,
    ListModes,
    ListModels,
    SetModel,
    ListReasoningLevels,
    SetReasoningLevel,
    SessionOp,
    SessionActivate,
    PermissionResponse,
    UiResponse,
)

RUNTIME_COMMANDS: dict[str, type[CommandBase]] = _by_type(RuntimeSync, RuntimeResponders, RuntimeSteer)

ORCHESTRATOR_COMMANDS: dict[str, type[CommandBase]] = _by_type(
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

"""Agent-level shared types: statuses, Usage, descriptors, AgentInfo (PROTOCOL §9.1, §11)."""

from typing import Literal

from shard.protocol.base import WireModel

AgentStatus = Literal["idle", "streaming", "waiting_for_permission", "waiting_for_ui", "compacting", "error"]
AGENT_STATUSES: tuple[AgentStatus, ...] = (
    "idle",
    "streaming",
    "waiting_for_permission",
    "waiting_for_ui",
    "compacting",
    "error",
)

# DESIGN §6 pins the RuntimeState the protocol leaves open.
RuntimeState = Literal["starting", "running", "stopping", "stopped", "failed"]


class IllegalTransition(RuntimeError):
    """A move a state table does not allow (an agent's status in the runtime, a runtime's state in
    the daemon): a bug in whoever moved it, never a peer's doing."""


# Where a model's context window came from: config.toml, Shard's built-in catalog, the server that
# serves the model, or Shard's conservative default (Shard, additive).
WindowSource = Literal["config", "builtin", "server", "default"]


class Usage(WireModel):
    """Token accounting of one provider call or a whole turn (R11.0.18)."""

    input: int
    output: int
    cache_read: int | None = None
    cache_write: int | None = None
    cost: int | float | None = None
    context_tokens: int | None = None
    model: str | None = None


class ModelDescriptor(WireModel):
    """``{id, provider, model, context_window?}`` (R11.0.2). ``id`` is ``"<provider>/<model>"``.

    ``context_window`` is the window in use, once known, and the additive ``context_window_source``
    says where it came from: ``config``, ``builtin``, ``server`` or ``default``."""

    id: str
    provider: str
    model: str
    context_window: int | None = None
    context_window_source: WindowSource | None = None


class ModeDescriptor(WireModel):
    """A secret-free mode catalog entry: ``{name, description}`` (R9.2.18)."""

    name: str
    description: str


class ReasoningLevel(WireModel):
    id: str
    label: str
    description: str | None = None


class AgentInfo(WireModel):
    """What the registry knows of one agent (R11.0.19)."""

    agent_id: str
    name: str | None = None
    cwd: str
    model: str | None = None
    provider: str | None = None
    mode: str | None = None
    status: AgentStatus
    runtime_state: RuntimeState
    created_at: int | float
    usage: Usage | None = None
    parent_agent_id: str | None = None
    alias: str | None = None
    definition_name: str | None = None
    display_name: str | None = None
    # Additive (Shard): the session the agent runs on, so a client can find the agent holding a
    # session (`shard acp`'s session/load attaches to it rather than adopting the session twice).
    session_id: str | None = None
    # Additive (Shard): the [[hosts]] entry whose machine runs the agent (over SSH); absent: the
    # daemon's own machine, and ``cwd`` is a path there.
    host: str | None = None
    # Additive (Shard): the workspace (git worktree) the agent was made in, for ``workspace.*``.
    workspace_id: str | None = None

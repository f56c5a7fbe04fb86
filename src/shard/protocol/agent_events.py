"""The events one agent's runtime sends: lifecycle (PROTOCOL §9.1), the response envelope (§9.3),
streaming and turn events (§9.4), permission/UI requests (§9.5) and the agent's own broadcasts
(§10.2: model, mode and reasoning level changed).

Kept apart from the daemon's events (``daemon_events.py``) so that a runtime builds only the models
it sends; ``shard.protocol.events`` re-exports every name here with the rest of the catalog.
Events never carry a correlation ``id`` (R5.1.7); only ``response`` does, echoing its command's.
"""

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from shard.protocol.agents import AgentStatus, ModelDescriptor, Usage, WindowSource
from shard.protocol.base import WireModel
from shard.protocol.content import Message, ToolResultContent
from shard.protocol.event_base import AgentEvent, EventBase
from shard.protocol.live_window import InstructionFile, LiveWindow, StreamingMessage
from shard.protocol.permissions import ChoiceIntent, Decision, PermissionChoice, PermissionDetail
from shard.protocol.queue import QueuedMessage
from shard.protocol.render import RenderDescriptor

# --- §9.1 lifecycle -----------------------------------------------------------------------------


class Hello(EventBase):
    type: Literal["hello"] = "hello"
    protocol_version: str
    server_version: str
    capabilities: list[str]
    # Additive (Shard), daemon connections: how this connection's answers are attributed
    # (``permission_resolved.source``), so a client can tell its own answers ("you").
    client_id: str | None = None


class PermissionRequest(AgentEvent):
    """R9.5.1, and the additive ``tool_call_id``: the tool call the request is about (a client shows
    the answer on that call's card)."""

    type: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_name: str
    input: Any
    prompt: str
    options: list[Decision]
    details: list[PermissionDetail] | None = None
    choices: list[PermissionChoice] | None = None
    tool_call_id: str | None = None


class UiRequest(AgentEvent):
    type: Literal["ui_request"] = "ui_request"
    request_id: str
    kind: Literal["select", "confirm", "input", "editor", "notify"]
    title: str | None = None
    message: str | None = None
    options: list[str] | None = None
    placeholder: str | None = None
    prefill: str | None = None
    notify_type: Literal["info", "warning", "error"] | None = None


PendingRequest = Annotated[PermissionRequest | UiRequest, Field(discriminator="type")]


class Sync(AgentEvent):
    type: Literal["sync"] = "sync"
    status: AgentStatus
    mode: str
    capabilities: list[str] | None = None
    runtime_epoch: Annotated[int, Field(ge=0)] | None = None
    live_window: LiveWindow
    pending_requests: list[PendingRequest]
    streaming: StreamingMessage | None = None  # additive: see StreamingMessage
    instructions: list[InstructionFile] | None = None  # additive: AGENTS.md & co. the session loaded
    # additive: the last ``status`` event's ``detail`` while it holds (``retrying in 2.5 s: …``), so a
    # client that attaches or reloads mid-wait shows what the agent waits for
    status_detail: str | None = None
    queue: list[QueuedMessage] | None = None  # additive: what waits to be delivered (queue.py)
    # additive: the active model, with its context window and where that came from once known
    model: ModelDescriptor | None = None


class Status(AgentEvent):
    type: Literal["status"] = "status"
    status: AgentStatus
    detail: str | None = None


# --- §9.3 response ------------------------------------------------------------------------------


class ErrorInfo(WireModel):
    code: str
    message: str
    data: Any = None


class Response(EventBase):
    """``{type:"response", id, command, success, data?, error?}``.

    ``id`` and ``command`` echo the command; they are absent only when the command's line could not
    be read far enough to know them.
    """

    type: Literal["response"] = "response"
    id: str | None = None
    agent_id: str | None = None
    command: str | None = None
    success: bool
    data: Any = None
    error: ErrorInfo | None = None


# --- §9.4 streaming and turn events -------------------------------------------------------------


class TurnStart(AgentEvent):
    type: Literal["turn_start"] = "turn_start"
    turn_id: str


class MessageDelta(AgentEvent):
    type: Literal["message_delta"] = "message_delta"
    message_id: str
    block_index: int
    kind: Literal["text", "tool_call", "thinking"]
    text_delta: str | None = None
    tool_call_id: str | None = None
    name: str | None = None
    args_delta: str | None = None


class MessageComplete(AgentEvent):
    type: Literal["message_complete"] = "message_complete"
    message_id: str
    message: Message


class ToolCall(AgentEvent):
    type: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    args: dict[str, Any]
    render: RenderDescriptor | None = None
    read_only: bool | None = None
    # Additive (issue 19): true when the call runs inside Shard's sandbox; absent when no sandbox is in use.
    sandboxed: bool | None = None


class ToolResult(AgentEvent):
    """R9.4.14. ``duration_ms`` is the time the tool ran: from when it started, after the gate allowed
    it, so a wait for a permission answer is not in it; a call that never ran has none. Additive
    ``message_id``: the id of the ``user`` message that holds this result in the live window, so a
    client folding the live events builds the window a ``sync`` carries."""

    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: ToolResultContent
    is_error: bool
    exit_code: int | None = None
    duration_ms: int | float | None = None
    render: RenderDescriptor | None = None
    message_id: str | None = None


class TurnEnd(AgentEvent):
    type: Literal["turn_end"] = "turn_end"
    turn_id: str
    usage: Usage | None = None


class UsageEvent(Usage, AgentEvent):  # Usage first: its fields come after type and agent_id
    """One provider call's :class:`Usage` as an event."""

    type: Literal["usage"] = "usage"
    # additive: the window ``context_tokens`` is measured against, and where it came from
    context_window: int | None = None
    context_window_source: WindowSource | None = None


class Compaction(AgentEvent):
    type: Literal["compaction"] = "compaction"
    index: int
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: str
    message_range: Annotated[list[str], Field(min_length=2, max_length=2)]


class ErrorEvent(AgentEvent):
    type: Literal["error"] = "error"
    code: str
    message: str
    fatal: bool | None = None


# --- §9.5 permission / UI resolution ------------------------------------------------------------


class PermissionResolved(AgentEvent):
    """``{request_id, decision, source?, source_label?}`` or ``{request_id, choice_id, source?,
    source_label?}``, and the additive ``tool_call_id`` and ``intent``: ``source`` is who answered as
    an id (a daemon connection's ``hello.client_id``, or ``headless``, ``timeout``, ``abort``,
    ``runtime-exited``), ``source_label`` (additive) the same in words a person recognises, ``intent``
    (additive) what the answer meant — ``allow``, ``persist`` or ``deny`` — so a client words it
    without the request (after a reload)."""

    type: Literal["permission_resolved"] = "permission_resolved"
    request_id: str
    decision: Decision | None = None
    choice_id: str | None = None
    source: str | None = None
    # Additive (Shard): who answered, in words a person recognises ("Chrome on Linux", "my-bot")
    source_label: str | None = None
    tool_call_id: str | None = None  # additive: the tool call the request was about
    intent: ChoiceIntent | None = None  # additive (Shard): allow, persist or deny

    @model_validator(mode="after")
    def _one_form(self) -> "PermissionResolved":
        if (self.decision is not None) == (self.choice_id is not None):
            raise ValueError("exactly one of 'decision' or 'choice_id' is required")
        return self


class UiResolved(AgentEvent):
    type: Literal["ui_resolved"] = "ui_resolved"
    request_id: str
    value: Any
    source: str | None = None  # additive (Shard), as on permission_resolved
    source_label: str | None = None  # additive (Shard), as on permission_resolved


# --- §10.2 broadcasts ---------------------------------------------------------------------------


class ModelChanged(AgentEvent):
    type: Literal["model_changed"] = "model_changed"
    previous: ModelDescriptor | None
    active: ModelDescriptor
    effective: Literal["next_provider_call"] = "next_provider_call"
    capabilities: list[str] | None = None


class ModeChanged(AgentEvent):
    type: Literal["mode_changed"] = "mode_changed"
    previous_mode: str
    mode: str


class ReasoningLevelChanged(AgentEvent):
    type: Literal["reasoning_level_changed"] = "reasoning_level_changed"
    model: ModelDescriptor
    previous: str
    active: str
    effective: Literal["next_provider_call"] = "next_provider_call"

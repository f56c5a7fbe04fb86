"""Conversation content (PROTOCOL §11): Image, Message, ContentBlock, ToolResultContent."""

from typing import Annotated, Any, Literal

from pydantic import Field

from shard.protocol.base import WireModel
from shard.protocol.permissions import ResolvedPermission
from shard.protocol.render import RenderDescriptor


class Image(WireModel):
    """``{type: "image", data, mime_type}``; ``data`` is base64 (R11.0.1)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class TextContent(WireModel):
    kind: Literal["text"] = "text"
    text: str


class JsonContent(WireModel):
    kind: Literal["json"] = "json"
    value: Any


class ErrorContent(WireModel):
    kind: Literal["error"] = "error"
    message: str


ToolResultContent = Annotated[TextContent | JsonContent | ErrorContent, Field(discriminator="kind")]


class TextBlock(WireModel):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(WireModel):
    type: Literal["thinking"] = "thinking"
    text: str


class ToolCallBlock(WireModel):
    """``{type: "tool_call", id, name, args}`` (R11.0.4). In a ``sync`` window (and a client's fold of
    the live events) it also carries, additively, what the call's events said, so that a reloaded
    client shows the card a live one showed: the ``tool_call`` event's ``render``, ``read_only`` and
    ``sandboxed`` once the tool started, and ``permission``, how its permission request was answered.
    The model never sees these."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    args: dict[str, Any]
    render: RenderDescriptor | None = None
    read_only: bool | None = None
    sandboxed: bool | None = None
    permission: ResolvedPermission | None = None


class ToolResultBlock(WireModel):
    """``{type: "tool_result", tool_call_id, content, is_error?}`` (R11.0.4). In a ``sync`` window it
    also carries, additively, the ``tool_result`` event's ``exit_code``, ``duration_ms`` and ``render``
    (the model sees the exit code as text, never the others)."""

    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: ToolResultContent
    is_error: bool | None = None
    exit_code: int | None = None
    duration_ms: int | float | None = None
    render: RenderDescriptor | None = None


class ImageBlock(Image):
    """An image inside a user message (the prompt's ``images``), kept in the transcript.

    Additive to §11's ContentBlock union: a client that does not know it skips it (§7).
    """


ContentBlock = Annotated[
    TextBlock | ToolCallBlock | ToolResultBlock | ThinkingBlock | ImageBlock,
    Field(discriminator="type"),
]


class Message(WireModel):
    """``{id, role, content}`` (R11.0.3), and on an assistant message the additive ``stop_reason``:
    why it ended — ``completed``, ``aborted``, ``interrupted``, ``max_tokens`` or ``failed``
    (``shard.protocol.stops``); absent reads as ``completed``, and a client shows a value it does not
    know as it is, so later reasons can be added — with ``stop_detail`` saying how a ``failed`` one
    failed. Both travel wherever the message does: ``message_complete``, ``sync.live_window``, the
    session file."""

    id: str
    role: Literal["user", "assistant"]
    content: list[ContentBlock]
    stop_reason: str | None = None  # a StopReason; a string so that a newer server's reason parses
    stop_detail: str | None = None

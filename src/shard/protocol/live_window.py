"""What ``sync`` shows of the conversation (PROTOCOL §9.1): the live window, the turns' usage, the
message in flight, the instruction files the session loaded."""

from typing import Literal

from shard.protocol.agents import Usage
from shard.protocol.base import WireModel
from shard.protocol.content import Message


class TurnSummary(WireModel):
    """A turn's usage as its ``turn_end`` reported it (additive, issue 26), placed after the turn's
    last message: ``last_message_id`` is the last message of the window when the turn ended."""

    turn_id: str
    last_message_id: str
    usage: Usage


class LiveWindow(WireModel):
    """``{messages, compaction_index?}`` (R9.1.4), and the additive ``turns``: the usage of each turn
    whose last message is in the window, oldest first (absent: none). Its messages' tool blocks carry
    what the live ``tool_call``, ``tool_result`` and ``permission_resolved`` events said (see
    ToolCallBlock, ToolResultBlock), so a client renders the same view from a ``sync`` as it did live."""

    messages: list[Message]
    compaction_index: int | None = None
    turns: list[TurnSummary] | None = None


class StreamingBlock(WireModel):
    """One block of the assistant message being streamed, as far as it has come: the text so far,
    or a tool call's name and its argument JSON so far (unparsed: it is usually incomplete)."""

    kind: Literal["text", "thinking", "tool_call"]
    text: str | None = None
    tool_call_id: str | None = None
    name: str | None = None
    args_text: str | None = None


class StreamingMessage(WireModel):
    """Additive: the assistant message in flight when ``sync`` was taken. Applying every later
    ``message_delta`` of ``message_id`` to ``blocks`` (by ``block_index``) gives exactly the
    ``message_complete`` that ends it — so a client attaching mid-stream shows the text so far."""

    message_id: str
    blocks: list[StreamingBlock]


class InstructionFile(WireModel):
    """An instruction file the session's system prompt holds (Shard, additive)."""

    path: str
    bytes: int
    truncated: bool

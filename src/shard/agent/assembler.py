"""Fold a provider's normalized stream into ``message_delta`` events and the final Message — a pure
state machine with no I/O (the turn loop emits what it returns).

Blocks: a text or thinking delta continues the open block of the same kind and otherwise opens a new
one; a tool-call start always opens a new block. The first delta of a tool-call block carries
``tool_call_id`` and ``name``; later ones carry ``args_delta`` fragments (PROTOCOL §9.4).

A reply that ended at the output limit (stop ``max_tokens``) may have been cut inside a tool call: a
call whose arguments do not parse, or the last block if it is a call that got no arguments at all, is
``cut`` — it never runs (``tool_runs.py``, ``output_limit.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from shard.agent.providers.base import (
    ProviderEvent,
    Stop,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from shard.protocol.agent_events import MessageDelta
from shard.protocol.content import ContentBlock, Message, TextBlock, ThinkingBlock, ToolCallBlock
from shard.protocol.live_window import StreamingBlock, StreamingMessage


@dataclass(slots=True)
class _Block:
    kind: str  # "text" | "thinking" | "tool_call"
    parts: list[str] = field(default_factory=list)
    tool_call_id: str = ""
    name: str = ""
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class AssembledToolCall:
    id: str
    name: str
    args: dict[str, Any]
    args_error: str | None  # why the concatenated fragments did not parse as a JSON object
    cut: bool = False  # the output limit ended the reply while this call's arguments were being written


class MessageAssembler:
    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self.blocks: list[_Block] = []
        self.usage: UsageReport | None = None
        self.stop: StopReason | None = None
        self.output_limit: int | None = None  # with stop "max_tokens": the limit that cut the reply

    def feed(self, event: ProviderEvent) -> MessageDelta | None:
        """Take one provider event; return the delta event to emit, if any."""
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            signature = event.signature if isinstance(event, ThinkingDelta) else None
            if not event.text and not signature:
                return None  # an empty delta opens no block: no client ever sees a block it was not told of
            block = self._open(kind)
            if signature:
                block.signature = signature
            if not event.text:
                return None
            block.parts.append(event.text)
            return MessageDelta(
                message_id=self.message_id,
                block_index=len(self.blocks) - 1,
                kind=kind,
                text_delta=event.text,
            )
        if isinstance(event, ToolCallStart):
            self.blocks.append(_Block("tool_call", tool_call_id=event.id, name=event.name))
            return MessageDelta(
                message_id=self.message_id,
                block_index=len(self.blocks) - 1,
                kind="tool_call",
                tool_call_id=event.id,
                name=event.name,
            )
        if isinstance(event, ToolCallArgs):
            index = self._tool_block(event.call_id)
            if index is None:
                return None  # arguments with no tool call to attach them to
            self.blocks[index].parts.append(event.fragment)
            return MessageDelta(
                message_id=self.message_id,
                block_index=index,
                kind="tool_call",
                args_delta=event.fragment,
            )
        if isinstance(event, UsageReport):
            self.usage = event
        elif isinstance(event, Stop):
            self.stop = event.reason
            self.output_limit = event.output_limit
        return None

    def _tool_block(self, call_id: str | None) -> int | None:
        """The block a fragment belongs to: the call it names, else the last block if it is a call."""
        if call_id is not None:
            for i in range(len(self.blocks) - 1, -1, -1):
                if self.blocks[i].kind == "tool_call" and self.blocks[i].tool_call_id == call_id:
                    return i
        if self.blocks and self.blocks[-1].kind == "tool_call":
            return len(self.blocks) - 1
        return None

    def _open(self, kind: str) -> _Block:
        if self.blocks and self.blocks[-1].kind == kind:
            return self.blocks[-1]
        block = _Block(kind)
        self.blocks.append(block)
        return block

    @property
    def empty(self) -> bool:
        return not self.blocks

    def tool_calls(self) -> list[AssembledToolCall]:
        calls = []
        for i, b in enumerate(self.blocks):
            if b.kind == "tool_call":
                text = "".join(b.parts)
                args, err = _parse_args(text)
                last = i == len(self.blocks) - 1
                cut = self.stop == "max_tokens" and (err is not None or (last and not text.strip()))
                calls.append(AssembledToolCall(b.tool_call_id, b.name, args, err, cut))
        return calls

    def snapshot(self) -> StreamingMessage:
        """The message so far, block by block, for a ``sync`` taken mid-stream (raw tool arguments)."""
        blocks = []
        for b in self.blocks:
            if b.kind == "tool_call":
                blocks.append(
                    StreamingBlock(
                        kind="tool_call", tool_call_id=b.tool_call_id, name=b.name, args_text="".join(b.parts)
                    )
                )
            else:
                blocks.append(StreamingBlock(kind=b.kind, text="".join(b.parts)))  # type: ignore[arg-type]
        return StreamingMessage(message_id=self.message_id, blocks=blocks)

    def message(self) -> Message:
        """The message as assembled so far (also valid mid-stream, for an aborted turn)."""
        content: list[ContentBlock] = []
        for b in self.blocks:
            if b.kind == "text":
                content.append(TextBlock(text="".join(b.parts)))
            elif b.kind == "thinking":
                block = ThinkingBlock(text="".join(b.parts))
                if b.signature:
                    block.signature = b.signature  # extra field: kept for the provider's next request
                content.append(block)
            else:
                args, _ = _parse_args("".join(b.parts))
                content.append(ToolCallBlock(id=b.tool_call_id, name=b.name, args=args))
        return Message(id=self.message_id, role="assistant", content=content)


def _parse_args(text: str) -> tuple[dict[str, Any], str | None]:
    if not text.strip():
        return {}, None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return {}, f"the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return {}, "the arguments must be a JSON object"
    return value, None

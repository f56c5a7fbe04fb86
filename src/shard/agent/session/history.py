"""The live window as models: what clients see (``sync``) and what the model sees.

:class:`LiveView` follows the dict-based :class:`~shard.agent.session.window.Window` entry by entry
and keeps two model lists beside it. They differ only at the history-assembly seam PROTOCOL §9.4
names: a tool result that carries an exit code is shown to the model with ``[exit code: N]`` appended,
while clients get the pure output and the structured ``exit_code``. What only clients render — a
result's duration and RenderDescriptor, a call's start-time descriptor and permission answer, the
turns' usage — is in the clients' list and never in the model's. Validating into models is the
authoritative check of a session's messages: a failure is SESSION_CORRUPT.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from shard.agent.session.window import CALL_NOTES, MESSAGE_KINDS, Item, Window, WindowError, replay_start
from shard.protocol.content import ErrorContent, Message, TextContent, ToolResultBlock, ToolResultContent
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.live_window import TurnSummary


def _corrupt(entry_id: object, why: object) -> ShardError:
    return ShardError(ErrorCode.SESSION_CORRUPT, f"session entry {entry_id!r} is malformed: {why}")


def item_message(item: Item) -> Message:
    try:
        return Message.model_validate(item.message)
    except ValidationError as exc:
        raise _corrupt(item.entry_id, exc) from None


def model_message(item: Item, message: Message) -> Message:
    """The message as the model sees it: a tool result's exit code injected as text, and nothing of
    what only clients render (its duration and RenderDescriptor)."""
    block = message.content[0] if message.role == "user" and len(message.content) == 1 else None
    if not isinstance(block, ToolResultBlock):
        return message
    if item.exit_code is None:
        if block.duration_ms is None and block.render is None:
            return message
        return _result_message(message, block, block.content)
    suffix = f"[exit code: {item.exit_code}]"
    if isinstance(block.content, TextContent):
        text = f"{block.content.text}\n\n{suffix}" if block.content.text else suffix
        content: TextContent | ErrorContent = TextContent(text=text)
    elif isinstance(block.content, ErrorContent):
        content = ErrorContent(message=f"{block.content.message}\n\n{suffix}")
    else:  # JSON output: the model reads it as text, with the exit code after it
        dumped = orjson.dumps(block.content.value).decode()
        content = TextContent(text=f"{dumped}\n\n{suffix}")
    return _result_message(message, block, content)


def _result_message(message: Message, block: ToolResultBlock, content: ToolResultContent) -> Message:
    """The tool result message with ``content``, its error flag and extras (images), nothing else."""
    shown = ToolResultBlock(tool_call_id=block.tool_call_id, content=content, **(block.model_extra or {}))
    if block.is_error is not None:
        shown.is_error = block.is_error
    return Message(id=message.id, role="user", content=[shown])


class LiveView:
    """The window of a session, as dicts and as models, kept in step."""

    def __init__(self, entries: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
        self.dicts = Window()
        self.messages: list[Message] = []
        self.model_messages: list[Message] = []
        self.turns: list[TurnSummary] = []
        try:
            start, self.dicts.compactions = replay_start(list(entries))
        except WindowError as exc:
            raise _corrupt("compaction", exc) from None
        for entry in list(entries)[start:]:
            self.add(entry)

    @property
    def compaction_index(self) -> int | None:
        return self.dicts.compaction_index

    def add(self, entry: dict[str, Any]) -> None:
        kind = entry["kind"]
        try:
            if kind in MESSAGE_KINDS:
                item = self.dicts.add(entry)
                assert item is not None
                message = item_message(item)
                self.messages.append(message)
                self.model_messages.append(model_message(item, message))
            elif kind == "compaction":
                first = entry.get("first_kept_entry_id")
                keep = next((i for i, it in enumerate(self.dicts.items) if it.entry_id == first), None)
                self.dicts.compact(entry)
                assert keep is not None
                summary = item_message(self.dicts.items[0])
                self.messages = [summary, *self.messages[keep:]]
                self.model_messages = [summary, *self.model_messages[keep:]]
                kept = {m.id for m in self.messages}
                self.turns = [t for t in self.turns if t.last_message_id in kept]
            elif kind in CALL_NOTES:
                at = self.dicts.annotate(entry)
                if at is not None:  # the clients' message only: the model's stays as it was sent
                    self.messages[at] = item_message(self.dicts.items[at])
            elif kind == "turn_end":
                before = len(self.dicts.turns)
                self.dicts.add(entry)
                if len(self.dicts.turns) > before:  # a turn that reported usage
                    self.turns.append(_turn(entry, self.dicts.turns[-1]))
        except (WindowError, KeyError, TypeError) as exc:
            raise _corrupt(entry.get("id"), exc) from None


def _turn(entry: dict[str, Any], turn: dict[str, Any]) -> TurnSummary:
    try:
        return TurnSummary.model_validate(turn)
    except ValidationError as exc:
        raise _corrupt(entry.get("id"), exc) from None

"""The live window as models: what clients see (``sync``) and what the model sees.

:class:`LiveView` follows the dict-based :class:`~shard.agent.session.window.Window` entry by entry
and keeps two model lists beside it. They differ only at the history-assembly seam PROTOCOL §9.4
names: a tool result that carries an exit code is shown to the model with ``[exit code: N]`` appended,
while clients get the pure output and the structured ``exit_code``. Validating into models is the
authoritative check of a session's messages: a failure is SESSION_CORRUPT.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from shard.agent.session.window import MESSAGE_KINDS, Item, Window, WindowError, replay_start
from shard.protocol.content import ErrorContent, Message, TextContent, ToolResultBlock
from shard.protocol.errors import ErrorCode, ShardError


def _corrupt(entry_id: object, why: object) -> ShardError:
    return ShardError(ErrorCode.SESSION_CORRUPT, f"session entry {entry_id!r} is malformed: {why}")


def item_message(item: Item) -> Message:
    try:
        return Message.model_validate(item.message)
    except ValidationError as exc:
        raise _corrupt(item.entry_id, exc) from None


def model_message(item: Item, message: Message) -> Message:
    """The message as the model sees it (an exit code injected as text)."""
    if item.exit_code is None:
        return message
    block = message.content[0]
    assert isinstance(block, ToolResultBlock)
    suffix = f"[exit code: {item.exit_code}]"
    if isinstance(block.content, TextContent):
        text = f"{block.content.text}\n\n{suffix}" if block.content.text else suffix
        content: TextContent | ErrorContent = TextContent(text=text)
    elif isinstance(block.content, ErrorContent):
        content = ErrorContent(message=f"{block.content.message}\n\n{suffix}")
    else:  # JSON output: the model reads it as text, with the exit code after it
        dumped = orjson.dumps(block.content.value).decode()
        content = TextContent(text=f"{dumped}\n\n{suffix}")
    injected = ToolResultBlock(tool_call_id=block.tool_call_id, content=content, **(block.model_extra or {}))
    if block.is_error is not None:
        injected.is_error = block.is_error
    return Message(id=message.id, role="user", content=[injected])


class LiveView:
    """The window of a session, as dicts and as models, kept in step."""

    def __init__(self, entries: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
        self.dicts = Window()
        self.messages: list[Message] = []
        self.model_messages: list[Message] = []
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
        except (WindowError, KeyError, TypeError) as exc:
            raise _corrupt(entry.get("id"), exc) from None

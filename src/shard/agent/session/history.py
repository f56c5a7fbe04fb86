"""Views of session entries as messages: the live window clients see, and what the model sees.

The two differ only at the history-assembly seam PROTOCOL §9.4 names: a tool result that carries an
exit code is shown to the model with ``[exit code: N]`` appended to its text, while clients get the
pure output and the structured ``exit_code``.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from shard.protocol.content import ErrorContent, Image, Message, TextContent, ToolResultBlock
from shard.protocol.errors import ErrorCode, ShardError

MESSAGE_KINDS = frozenset({"message", "tool_result"})


def entry_message(entry: dict[str, Any]) -> Message:
    """The Message a ``message`` or ``tool_result`` entry holds; SESSION_CORRUPT if malformed."""
    try:
        if entry["kind"] == "message":
            return Message.model_validate(entry["message"])
        fields = {
            "tool_call_id": entry["tool_call_id"],
            "content": entry["content"],
            "is_error": entry.get("is_error", False),
        }
        if entry.get("images"):
            fields["images"] = [Image.model_validate(i).to_wire() for i in entry["images"]]
        block = ToolResultBlock.model_validate(fields)
        return Message(id=entry["id"], role="user", content=[block])
    except (KeyError, ValidationError) as exc:
        raise ShardError(
            ErrorCode.SESSION_CORRUPT, f"session entry {entry.get('id')!r} is malformed: {exc}"
        ) from None


def model_message(entry: dict[str, Any], message: Message) -> Message:
    """The message as the model sees it (exit codes injected as text)."""
    code = entry.get("exit_code") if entry["kind"] == "tool_result" else None
    if code is None:
        return message
    block = message.content[0]
    assert isinstance(block, ToolResultBlock)
    suffix = f"[exit code: {code}]"
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


def replay(entries: list[dict[str, Any]]) -> tuple[list[Message], list[Message]]:
    """(live window, model view) of a loaded session."""
    window: list[Message] = []
    model_view: list[Message] = []
    for entry in entries:
        if entry["kind"] in MESSAGE_KINDS:
            msg = entry_message(entry)
            window.append(msg)
            model_view.append(model_message(entry, msg))
    return window, model_view

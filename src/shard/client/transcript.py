"""The conversation as a client sees it: a pure fold of ``sync`` and the events after it.

``sync`` replaces everything (its live window and, when a message is streaming, the text so far);
``message_delta`` grows the in-flight message; ``message_complete`` settles it. Because ``sync`` is
authoritative, a client that re-attaches after a drop folds the new ``sync`` and the events after
it, each exactly once (PROTOCOL §6.4), and ends with the session's conversation. ``mismatches``
records every streamed message whose deltas did not add up to its ``message_complete`` — a lost or
duplicated delta shows there.

What clients render beside the text folds in too, the same live and from a ``sync`` window (issue 26):
a ``tool_call`` sets its RenderDescriptor, ``read_only`` and ``sandboxed`` on the message's
``tool_call`` block, a ``permission_resolved`` sets ``permission`` (the choice or decision, and who
answered) on the block of the call it names, a ``tool_result`` adds the ``user`` message that holds
it in the window (``message_id``: its exit code, duration and RenderDescriptor on the block), a
``turn_end`` with usage adds a :class:`~shard.protocol.live_window.TurnSummary` to ``turns``, after
the message last at its end. So the fold of a turn's live events equals the fold of a later
``sync``: a client that reloads shows what it showed.

Each assistant message says why it ended (:func:`stop_reason`: ``completed``, ``aborted``,
``interrupted``, ``max_tokens``, ``failed``), live and after a re-attach alike, since the ``sync``
window carries the same messages; :func:`stop_note` is how a client words one that did not complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shard.protocol.content import Message, TextBlock, ToolCallBlock
from shard.protocol.events import (
    EventBase,
    MessageComplete,
    MessageDelta,
    PermissionResolved,
    Sync,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from shard.protocol.live_window import TurnSummary
from shard.protocol.permissions import ResolvedPermission
from shard.protocol.stops import stop_note as _note
from shard.protocol.words import permission_outcome

_CALL = ("render", "read_only", "sandboxed", "unknown_render")  # of a tool_call event, kept on its block
_RESULT = ("exit_code", "duration_ms", "render", "images", "unknown_render")  # of a tool_result event
_ANSWER = (
    "request_id",
    "decision",
    "choice_id",
    "source",
    "source_label",
    "intent",
)  # of a permission_resolved


@dataclass
class LiveBlock:
    kind: str
    text: str = ""
    tool_call_id: str | None = None
    name: str | None = None
    args_text: str = ""


@dataclass
class Transcript:
    messages: list[Message] = field(default_factory=list)
    turns: list[TurnSummary] = field(default_factory=list)  # each turn's usage, oldest first
    streaming: dict[str, dict[int, LiveBlock]] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    syncs: int = 0

    def apply(self, event: EventBase) -> None:
        if isinstance(event, Sync):
            self.syncs += 1
            self.messages = list(event.live_window.messages)
            self.turns = list(event.live_window.turns or [])
            self.streaming = {}
            if event.streaming is not None:
                self.streaming[event.streaming.message_id] = {
                    i: LiveBlock(b.kind, b.text or "", b.tool_call_id, b.name, b.args_text or "")
                    for i, b in enumerate(event.streaming.blocks)
                }
        elif isinstance(event, MessageDelta):
            blocks = self.streaming.setdefault(event.message_id, {})
            block = blocks.setdefault(event.block_index, LiveBlock(event.kind))
            block.text += event.text_delta or ""
            block.args_text += event.args_delta or ""
            block.tool_call_id = event.tool_call_id or block.tool_call_id
            block.name = event.name or block.name
        elif isinstance(event, MessageComplete):
            live = self.streaming.pop(event.message_id, None)
            if live is not None and live_text(live) != message_text(event.message):
                self.mismatches.append(event.message_id)
            for i, known in enumerate(self.messages):
                if known.id == event.message_id:
                    self.messages[i] = event.message
                    break
            else:
                self.messages.append(event.message)
        elif isinstance(event, ToolCall):
            self._on_call(event.tool_call_id, _fields(event, _CALL))
        elif isinstance(event, PermissionResolved) and event.tool_call_id is not None:
            self._on_call(event.tool_call_id, {"permission": _fields(event, _ANSWER)})
        elif isinstance(event, ToolResult) and event.message_id is not None:
            self.messages.append(_result_message(event, event.message_id))
        elif isinstance(event, TurnEnd) and event.usage is not None and self.messages:
            last = self.messages[-1].id
            self.turns.append(TurnSummary(turn_id=event.turn_id, last_message_id=last, usage=event.usage))

    def _on_call(self, tool_call_id: str, fields: dict[str, Any]) -> None:
        """Set ``fields`` on the ``tool_call`` block of ``tool_call_id`` (the latest message first)."""
        for i in range(len(self.messages) - 1, -1, -1):
            message = self.messages[i]
            if any(isinstance(b, ToolCallBlock) and b.id == tool_call_id for b in message.content):
                wire = message.to_wire()
                for block in wire["content"]:
                    if block.get("type") == "tool_call" and block.get("id") == tool_call_id:
                        block.update(fields)
                self.messages[i] = Message.model_validate(wire)
                return

    def live_text(self, message_id: str) -> str:
        """The text streamed so far of an in-flight message."""
        return live_text(self.streaming.get(message_id, {}))


def _result_message(event: ToolResult, message_id: str) -> Message:
    """The ``user`` message that holds a tool result in the window, as a ``sync`` shows it."""
    wire = event.to_wire()
    block = {"type": "tool_result", **{k: wire[k] for k in ("tool_call_id", "content", "is_error")}}
    block.update(_fields(event, _RESULT))
    return Message.model_validate({"id": message_id, "role": "user", "content": [block]})


def _fields(event: EventBase, names: tuple[str, ...]) -> dict[str, Any]:
    """The event's fields of ``names`` that are present, in wire form (extras too: ``images``, and
    ``unknown_render``, a RenderDescriptor of a kind this client does not know)."""
    wire = event.to_wire()
    return {name: wire[name] for name in names if name in wire}


def live_text(blocks: dict[int, LiveBlock]) -> str:
    return "".join(blocks[i].text for i in sorted(blocks) if blocks[i].kind == "text")


def message_text(message: Message) -> str:
    """The text blocks of ``message``, joined."""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def answer_note(permission: ResolvedPermission, *, mine: bool = False, me: str = "you") -> str:
    """How a client words the answer to a tool call's permission request, live and after a reload
    alike: "Allowed by Chrome on Linux", "Denied by you" (``mine``: this client answered)."""
    intent = permission.intent or permission.decision or ("" if permission.choice_id else "deny")
    return permission_outcome(intent, permission.source, permission.source_label, mine=mine, me=me)


def stop_reason(message: Message) -> str:
    """Why ``message`` ended; ``completed`` when it does not say (a user message, or one recorded
    before messages carried the reason)."""
    return message.stop_reason or "completed"


def stop_note(message: Message) -> str | None:
    """The marker a client shows under a reply that ended early ("stopped by you", "interrupted",
    "cut off: max tokens", "failed: …"), or None when the message completed."""
    return _note(message.stop_reason, message.stop_detail)

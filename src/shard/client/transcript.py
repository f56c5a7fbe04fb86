"""The conversation as a client sees it: a pure fold of ``sync`` and the events after it.

``sync`` replaces everything (its live window and, when a message is streaming, the text so far);
``message_delta`` grows the in-flight message; ``message_complete`` settles it. Because ``sync`` is
authoritative, a client that re-attaches after a drop folds the new ``sync`` and the events after
it, each exactly once (PROTOCOL §6.4), and ends with the session's conversation. ``mismatches``
records every streamed message whose deltas did not add up to its ``message_complete`` — a lost or
duplicated delta shows there.

Each assistant message says why it ended (:func:`stop_reason`: ``completed``, ``aborted``,
``interrupted``, ``max_tokens``, ``failed``), live and after a re-attach alike, since the ``sync``
window carries the same messages; :func:`stop_note` is how a client words one that did not complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shard.protocol.content import Message, TextBlock
from shard.protocol.events import EventBase, MessageComplete, MessageDelta, Sync
from shard.protocol.stops import stop_note as _note


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
    streaming: dict[str, dict[int, LiveBlock]] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    syncs: int = 0

    def apply(self, event: EventBase) -> None:
        if isinstance(event, Sync):
            self.syncs += 1
            self.messages = list(event.live_window.messages)
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

    def live_text(self, message_id: str) -> str:
        """The text streamed so far of an in-flight message."""
        return live_text(self.streaming.get(message_id, {}))


def live_text(blocks: dict[int, LiveBlock]) -> str:
    return "".join(blocks[i].text for i in sorted(blocks) if blocks[i].kind == "text")


def message_text(message: Message) -> str:
    """The text blocks of ``message``, joined."""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def stop_reason(message: Message) -> str:
    """Why ``message`` ended; ``completed`` when it does not say (a user message, or one recorded
    before messages carried the reason)."""
    return message.stop_reason or "completed"


def stop_note(message: Message) -> str | None:
    """The marker a client shows under a reply that ended early ("stopped by you", "interrupted",
    "cut off: max tokens", "failed: …"), or None when the message completed."""
    return _note(message.stop_reason, message.stop_detail)

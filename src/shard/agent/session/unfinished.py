"""What a runtime that died mid-turn left open in its session, closed when the session is restored.

A reply is written to the session when it ends, however it ends; when it starts streaming only a
``message_start {message_id}`` entry is written. A runtime killed mid-reply (SIGKILL, a crash, a
power cut) therefore leaves a ``message_start`` with no ``message`` of that id after it, and one
killed while a tool ran leaves tool calls of the last assistant message without results.
:func:`unfinished` plans what closes both: the reply as an assistant message with
``stop_reason: "interrupted"`` and no content (what had streamed never reached the disk), and an
error result for each call without one. Start-up's phase A shows the planned entries in the ``sync``
it writes; the runtime records them once it has validated the session (``Runtime.from_prepared``),
so a session found corrupt is never written to. Every client then shows the reply as interrupted,
and the conversation holds no call without its result.

Plain dicts, like the rest of phase A; nothing here trusts the shape of what it reads.
"""

from __future__ import annotations

from typing import Any

from shard.protocol.ids import new_id

INTERRUPTED_CALL = (
    "Interrupted: the agent stopped (its process ended) before this tool call finished; "
    "it may not have run, or may have done part of its work."
)


def unfinished(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries (``{id, kind, ...fields}``, not yet chained) that close what ``entries`` left
    open; [] when nothing is."""
    started: str | None = None
    replied: set[str] = set()  # ids of the messages after the point the scan has reached
    answered: set[Any] = set()
    calls: list[Any] = []
    for entry in reversed(entries):  # back to the last assistant message: only the tail can be open
        kind = entry["kind"]
        message = entry.get("message")
        if kind == "tool_result":
            answered.add(entry.get("tool_call_id"))
        elif kind == "message_start" and started is None and entry.get("message_id") not in replied:
            started = entry.get("message_id")
        elif kind == "message" and isinstance(message, dict):
            replied.add(entry["id"])
            if message.get("role") == "assistant":
                content = message.get("content")
                blocks = content if isinstance(content, list) else []
                calls = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_call"]
                break
    out: list[dict[str, Any]] = []
    for call in calls:
        if isinstance(call, str) and call not in answered:
            content = {"kind": "error", "message": INTERRUPTED_CALL}
            out.append(
                {
                    "id": new_id("msg"),
                    "kind": "tool_result",
                    "tool_call_id": call,
                    "content": content,
                    "is_error": True,
                }
            )
    if isinstance(started, str):
        message = {"id": started, "role": "assistant", "content": [], "stop_reason": "interrupted"}
        out.append({"id": started, "kind": "message", "message": message, "incomplete": "interrupted"})
    return out

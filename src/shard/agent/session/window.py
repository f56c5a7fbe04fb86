"""The live window: what of a session the model and the clients currently see — pure, dict-based.

Replaying a session's entries gives the live window (PROTOCOL §9.1 ``live_window``): each ``message``
entry's Message, each ``tool_result`` entry as a ``user`` Message holding one ``tool_result`` block,
and at each ``compaction`` entry everything before its ``first_kept_entry_id`` is replaced by one
summary message. It works on plain dicts so that start-up can send ``sync`` before pydantic loads;
the runtime validates the same dicts into models afterwards (and that validation is authoritative).

What the live events showed beside the messages is replayed too (issue 26), so a reloaded client
shows the same view: a ``tool_result`` block carries its entry's ``exit_code``, ``duration_ms`` and
``render``; a ``tool_start`` entry (the ``tool_call`` event: ``render``, ``read_only``,
``sandboxed``) and a ``permission`` entry (``permission_resolved``) are set on the ``tool_call``
block they name; a ``turn_end`` entry with usage becomes one of the window's ``turns``, after the
message that was last when the turn ended. A call or turn no longer in the window is skipped.
"""

from __future__ import annotations

from typing import Any, NamedTuple

MESSAGE_KINDS = frozenset({"message", "tool_result"})
# Entries that annotate a tool call of the window, and the block fields each sets.
CALL_NOTES = {"tool_start": ("render", "read_only", "sandboxed"), "permission": ("permission",)}
_SHOWN = ("exit_code", "duration_ms", "render")  # a tool_result entry's fields that only clients see
_ANSWER = ("request_id", "decision", "choice_id", "source", "source_label", "intent")
# An assistant entry recorded before messages carried stop_reason: its `incomplete` (or the provider's
# own stop reason) says how it ended; anything else reads as completed.
_LEGACY_STOPS = {"aborted": "aborted", "error": "failed", "max_tokens": "max_tokens"}


class Item(NamedTuple):
    entry_id: str
    message: dict[str, Any]  # a protocol Message in wire form
    exit_code: int | None = None  # tool results: shown to the model as "[exit code: N]"
    summary_of: int | None = None  # a compaction summary: its index


class WindowError(ValueError):
    """An entry that cannot be part of a window; the caller reports SESSION_CORRUPT."""


def entry_item(entry: dict[str, Any], *, for_clients: bool = True) -> Item:
    """The window item a ``message`` or ``tool_result`` entry stands for (without ``for_clients``,
    a result's block leaves out what only clients render: recall shows the model what it saw)."""
    if entry["kind"] == "message":
        message = entry.get("message")
        _check_message(message, entry["id"])
        if message.get("role") == "assistant" and "stop_reason" not in message:
            legacy = stop_reason_of(entry)
            if legacy is not None:  # recorded before messages carried stop_reason
                message = {**message, "stop_reason": legacy}
        return Item(entry["id"], message)
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_call_id": entry.get("tool_call_id"),
        "content": entry.get("content"),
        "is_error": entry.get("is_error", False),
    }
    for name in _SHOWN if for_clients else ():
        if entry.get(name) is not None:
            block[name] = entry[name]
    if entry.get("images"):
        block["images"] = entry["images"]
    if not isinstance(block["tool_call_id"], str) or not isinstance(block["content"], dict):
        raise WindowError(f"tool_result entry {entry['id']} lacks tool_call_id or content")
    code = entry.get("exit_code")
    return Item(entry["id"], {"id": entry["id"], "role": "user", "content": [block]}, code)


def stop_reason_of(entry: dict[str, Any]) -> str | None:
    """Why an assistant ``message`` entry ended: its message's ``stop_reason``, else what an older
    entry's ``incomplete`` (or the provider's own stop reason) says; None reads as completed."""
    message = entry.get("message")
    said = message.get("stop_reason") if isinstance(message, dict) else None
    if isinstance(said, str):
        return said
    legacy = entry.get("incomplete") or entry.get("stop_reason")
    return _LEGACY_STOPS.get(legacy) if isinstance(legacy, str) else None


def summary_item(entry: dict[str, Any], total: int) -> Item:
    text = summary_text(entry.get("summary", ""), entry.get("index", 0), total)
    return Item(entry["id"], {"id": entry["id"], "role": "user", "content": [{"type": "text", "text": text}]},
                summary_of=entry.get("index"))  # fmt: skip


def summary_text(summary: str, index: int, total: int) -> str:
    """How a compaction summary reads to the model: what it is, and that recall can bring back the rest."""
    which = f"1..{total}" if total > 1 else "1"
    return (
        f"[Summary of the earlier conversation (compaction {index}). The original messages are not lost: "
        f"call the recall tool with index {which} to read them exactly.]\n\n{summary}"
    )


class Window:
    """The items in view, the turns that reported usage, and the index of the compaction that shaped
    it (None: none yet)."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.turns: list[dict[str, Any]] = []  # {turn_id, last_message_id, usage}
        self.compaction_index: int | None = None
        self.compactions = 0
        self._calls: dict[str, int] = {}  # tool_call_id -> index of the item that makes the call

    def add(self, entry: dict[str, Any]) -> Item | None:
        """Fold one entry in; returns the item it added (None for entries that add none)."""
        kind = entry["kind"]
        if kind in MESSAGE_KINDS:
            item = entry_item(entry)
            self._index(item, len(self.items))
            self.items.append(item)
            return item
        if kind == "compaction":
            self.compact(entry)
        elif kind in CALL_NOTES:
            self.annotate(entry)
        elif kind == "turn_end" and entry.get("usage") is not None and self.items:
            turn = {"turn_id": entry.get("turn_id"), "last_message_id": self.items[-1].entry_id}
            self.turns.append({**turn, "usage": entry["usage"]})
        return None

    def annotate(self, entry: dict[str, Any]) -> int | None:
        """Set what a ``tool_start`` or ``permission`` entry says on the ``tool_call`` block it names;
        the index of the item changed (None: that call is not in the window)."""
        call_id = entry.get("tool_call_id")
        at = self._calls.get(call_id) if isinstance(call_id, str) else None
        if at is None:
            return None
        if entry["kind"] == "permission":
            fields: dict[str, Any] = {"permission": {k: entry[k] for k in _ANSWER if k in entry}}
        else:
            fields = {k: entry[k] for k in CALL_NOTES["tool_start"] if entry.get(k) is not None}
        item = self.items[at]
        content = [
            {**b, **fields} if b.get("type") == "tool_call" and b.get("id") == call_id else b
            for b in item.message["content"]
        ]
        self.items[at] = item._replace(message={**item.message, "content": content})
        return at

    def compact(self, entry: dict[str, Any]) -> None:
        first = entry.get("first_kept_entry_id")
        keep_from = next((i for i, it in enumerate(self.items) if it.entry_id == first), None)
        if keep_from is None:
            raise WindowError(f"compaction {entry['id']} keeps from {first!r}, which is not in the window")
        self.compactions += 1
        self.compaction_index = entry.get("index", self.compactions)
        self.items = [summary_item(entry, self.compactions), *self.items[keep_from:]]
        self._calls = {}
        for index, item in enumerate(self.items):
            self._index(item, index)
        kept = {item.entry_id for item in self.items}
        self.turns = [t for t in self.turns if t["last_message_id"] in kept]

    def _index(self, item: Item, index: int) -> None:
        if item.message.get("role") == "assistant":
            for block in item.message["content"]:
                if block.get("type") == "tool_call" and isinstance(block.get("id"), str):
                    self._calls[block["id"]] = index

    def messages(self) -> list[dict[str, Any]]:
        return [it.message for it in self.items]


def replay(entries: list[dict[str, Any]], upto: str | None = None) -> Window:
    """The window after every entry (or after the entry ``upto``)."""
    if upto is not None:
        end = next((i for i, e in enumerate(entries) if e["id"] == upto), len(entries) - 1)
        entries = entries[: end + 1]
    start, earlier = replay_start(entries)
    window = Window()
    window.compactions = earlier
    for entry in entries[start:]:
        window.add(entry)
    return window


def replay_start(entries: list[dict[str, Any]]) -> tuple[int, int]:
    """Where a replay may begin, and how many compactions come before that point.

    The window after the last compaction is its summary plus every message from its first kept
    entry on, so nothing before that entry needs building (a long session restores in time that
    depends on its live window, not its history).
    """
    last = next((i for i in range(len(entries) - 1, -1, -1) if entries[i]["kind"] == "compaction"), None)
    if last is None:
        return 0, 0
    first = entries[last].get("first_kept_entry_id")
    start = next((i for i in range(last - 1, -1, -1) if entries[i]["id"] == first), None)
    if start is None:
        raise WindowError(f"compaction {entries[last]['id']} keeps from {first!r}, which is not before it")
    earlier = sum(1 for e in entries[:start] if e["kind"] == "compaction")
    return start, earlier


_BLOCK_TYPES = frozenset({"text", "thinking", "tool_call", "tool_result", "image"})


def _check_message(message: Any, entry_id: str) -> None:
    """Cheap shape checks; full validation happens when the runtime loads the models."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        raise WindowError(f"message entry {entry_id} has no valid message")
    content = message.get("content")
    if not isinstance(content, list) or not all(
        isinstance(b, dict) and b.get("type") in _BLOCK_TYPES for b in content
    ):
        raise WindowError(f"message entry {entry_id} has malformed content")

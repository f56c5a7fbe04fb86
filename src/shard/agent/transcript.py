"""The session as the agent works on it: entries recorded before the events that report them, the
live view clients and the model see, the message in flight, the stored grants, and the context-token
accounting that compaction triggers on.

Token counts: what the provider last reported as context (``usage.context_tokens``) plus an estimate
(4 characters a token) of what was added since — of the messages as the model sees them, not of what
only clients render (a result's RenderDescriptor would count a file twice).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from shard.agent.assembler import MessageAssembler
from shard.agent.session.history import LiveView
from shard.agent.session.listing import title_of, write_meta
from shard.agent.session.store import SessionStore, find_session, load_entries
from shard.protocol.agent_events import PermissionResolved
from shard.protocol.content import Message
from shard.protocol.live_window import LiveWindow


def estimate_tokens(message: Message) -> int:
    return max(1, len(message.to_json()) // 4)


class Transcript:
    def __init__(self, store: SessionStore, home: Path) -> None:
        self.store = store
        self._home = home
        self.view = LiveView(store.entries)
        self.grants: list[Any] = [e.get("rule") for e in store.entries if e["kind"] == "grant"]
        self.streaming: MessageAssembler | None = None  # the assistant message in flight, for sync
        self._context_reported: int | None = None
        self._context_since = 0
        self._message_count = sum(1 for e in store.entries if e["kind"] in ("message", "tool_result"))
        self.assistant_messages = sum(
            1 for e in store.entries if e["kind"] == "message" and e["message"].get("role") == "assistant"
        )
        self._title: str | None = next(
            (
                _first_text(e["message"])
                for e in store.entries
                if e["kind"] == "message" and e["message"].get("role") == "user"
            ),
            None,
        )
        self._untitled = bool(store.header.get("delegated"))  # a child's task is private (R10.3.8)

    @property
    def session_id(self) -> str:
        return self.store.session_id

    # --- recording ----------------------------------------------------------------------------

    def record(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        """Append an entry (before the event that reports it is sent) and keep the views current."""
        entry = self.store.append(kind, **fields)
        self.view.add(entry)
        if kind in ("message", "tool_result"):
            self._message_count += 1
            self._context_since += estimate_tokens(self.view.model_messages[-1])
            role = fields["message"].get("role") if kind == "message" else None
            if role == "assistant":
                self.assistant_messages += 1
            if self._title is None and role == "user":
                self._title = _first_text(fields["message"])
        return entry

    def record_message(self, message: Message, **extra: Any) -> dict[str, Any]:
        return self.record("message", entry_id=message.id, message=message.to_wire(), **extra)

    def record_planned(self, entries: list[dict[str, Any]]) -> None:
        """Record entries planned as ``{id, kind, ...fields}`` before the session was validated:
        what a runtime that died mid-turn left open (``session/unfinished.py``)."""
        for entry in entries:
            fields = {k: v for k, v in entry.items() if k not in ("id", "kind")}
            self.record(entry["kind"], entry_id=entry["id"], **fields)

    def record_answer(self, resolved: PermissionResolved) -> None:
        """How a permission request was answered (a ``permission`` entry): a reloaded client shows
        it on the card of the tool call it was about, as the live one did."""
        fields = {k: v for k, v in resolved.to_wire().items() if k not in ("type", "agent_id")}
        self.record("permission", **fields)

    def grant(self, rule: dict[str, Any]) -> None:
        """Store a permission grant: in the session (so it survives restarts and forks), then in use."""
        self.record("grant", rule=rule)
        self.grants.append(rule)

    def checkpoint(self) -> None:
        """At a turn's end: the session on disk (fsync) and its listing summary up to date."""
        self.store.sync()
        self.save_meta()

    # --- views --------------------------------------------------------------------------------

    def live_window(self) -> LiveWindow:
        window = LiveWindow(messages=list(self.view.messages))
        if self.view.compaction_index is not None:
            window.compaction_index = self.view.compaction_index
        if self.view.turns:
            window.turns = list(self.view.turns)
        return window

    @property
    def model_view(self) -> list[Message]:
        """What the next provider request carries."""
        return self.view.model_messages

    def last_summary(self) -> str | None:
        last = self.store.last("compaction")
        return last.get("summary") if last else None

    def entries_of(self, session_id: str | None) -> list[dict[str, Any]]:
        """Entries of this session, or of another (a fork's source) for recall."""
        if session_id is None or session_id == self.store.session_id:
            return self.store.entries
        return load_entries(find_session(self._home, session_id))

    # --- context accounting (compaction triggers) -----------------------------------------------

    def context_tokens(self, fixed: int = 0) -> int:
        """The provider's last report of the context, plus an estimate of what was added since;
        before any report, ``fixed`` (what every request carries besides the messages) plus an
        estimate of the messages."""
        if self._context_reported is None:
            return fixed + sum(estimate_tokens(m) for m in self.view.model_messages)
        return self._context_reported + self._context_since

    def note_context(self, tokens: int) -> None:
        """The context is now ``tokens``: as a provider reported it, or as a compaction left it."""
        self._context_reported, self._context_since = tokens, 0

    # --- listing ------------------------------------------------------------------------------

    def save_meta(self) -> None:
        """Refresh meta.json (what session listing reads instead of the whole file)."""
        if not self.store.exists:
            return
        header = self.store.header
        meta: dict[str, Any] = {
            "session_id": self.store.session_id,
            "cwd": header.get("cwd"),
            "created": header.get("ts"),
            "updated": time.time(),
            "message_count": self._message_count,
        }
        if self._title and not self._untitled:
            meta["title"] = self._title
        if header.get("sourceSessionId"):
            meta["source_session_id"] = header["sourceSessionId"]
            meta["source_entry_id"] = header.get("sourceEntryId")
        with contextlib.suppress(OSError):  # a listing summary: the session itself is what counts
            write_meta(self.store.path, meta)


def _first_text(message: dict[str, Any]) -> str | None:
    for block in message.get("content", []):
        if block.get("type") == "text" and block.get("text"):
            return title_of(block["text"])
    return None

"""``session_op fork`` (PROTOCOL §9.2): the live window at an entry becomes a new session.

The new JSONL goes to ``<source session dir>/forks/<new session id>/session.jsonl``. Its first row is
the fork-marker checkpoint — ``artifactKind: "fork"`` with ``forkId``, ``sourceSessionId`` and
``sourceEntryId`` — which also carries what a header carries (session id, cwd, model, mode). Then come
copies of the window's rows under fresh ids: a compaction summary in force at that point (so the
fork's window starts the same way), the message and tool_result rows with what their turns showed
clients (the ``tool_start``/``permission`` entries of their calls, the ``turn_end`` entries), and
the grants, so the fork continues with the permissions the user gave. A fork at an assistant
message that called tools takes the results of those calls along (they follow it in the source), so
the fork never holds a call without its result. The source file is only read. The fork is written to
a temporary name and renamed into place, so it exists whole or not at all.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from pathlib import Path
from typing import Any

from shard._home import open_private, private_dirs
from shard.agent.session.listing import title_of, write_meta
from shard.agent.session.store import FORMAT_VERSION, SESSION_FILE, SessionStore
from shard.agent.session.window import CALL_NOTES, MESSAGE_KINDS, replay
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import new_id


def fork(store: SessionStore, from_entry_id: str, *, model: str | None, mode: str) -> tuple[str, str, str]:
    """Write the fork; returns (fork_id, session_id, head_entry_id)."""
    entries = store.entries
    position = next((i for i, e in enumerate(entries) if e["id"] == from_entry_id), None)
    if position is None:
        raise ShardError(
            ErrorCode.NOT_FOUND, f"no entry {shown(from_entry_id)} in session {store.session_id}"
        )
    end = _with_results(entries, position)
    if end + 1 < len(entries) and entries[end + 1]["kind"] == "turn_end":
        end += 1  # a fork at a turn's last message takes the turn's end (its usage) along
    upto = entries[: end + 1]
    window = replay(upto)
    in_window = {item.entry_id for item in window.items}
    fork_id, session_id = new_id("fork"), new_id("sess")
    now = time.time()
    rows: list[dict[str, Any]] = [
        {
            "id": new_id("ent"),
            "parent_id": None,
            "kind": "checkpoint",
            "ts": now,
            "artifactKind": "fork",
            "forkId": fork_id,
            "sourceSessionId": store.session_id,
            "sourceEntryId": from_entry_id,
            "version": FORMAT_VERSION,
            "session_id": session_id,
            "cwd": store.header.get("cwd"),
            "model": model,
            "mode": mode,
            **{k: store.header[k] for k in ("context", "context_files") if k in store.header},
        }
    ]
    fresh: dict[str, str] = {}

    def add(entry: dict[str, Any], **changes: Any) -> None:
        row = {**entry, **changes, "parent_id": rows[-1]["id"], "ts": entry.get("ts", now)}
        rows.append(row)

    last_compaction = next((e for e in reversed(upto) if e["kind"] == "compaction"), None)
    for entry in upto:
        if entry["kind"] == "grant":
            add(entry, id=new_id("ent"))
    kept = [e for e in upto if e["kind"] in MESSAGE_KINDS and e["id"] in in_window]
    calls = _calls(kept)
    for entry in upto:
        if entry["kind"] in MESSAGE_KINDS and entry["id"] in in_window:
            new = new_id("msg")
            fresh[entry["id"]] = new
            changes: dict[str, Any] = {"id": new}
            if entry["kind"] == "message":
                changes["message"] = {**entry["message"], "id": new}
            add(entry, **changes)
        elif fresh and _shown_with(entry, calls):  # what the kept messages' turns showed clients
            add(entry, id=new_id("ent"))
    if last_compaction is not None and window.compaction_index is not None and kept:
        # The summary in force goes right before the rows it precedes; its message_range still names
        # the source's ids, where recall finds the originals.
        summary = {
            **last_compaction,
            "id": new_id("ent"),
            "first_kept_entry_id": fresh[kept[0]["id"]],
            "sourceSessionId": store.session_id,
        }
        first_kept_row = next(i for i, r in enumerate(rows) if r["id"] == fresh[kept[0]["id"]])
        rows.insert(first_kept_row + 1, summary)
        _rechain(rows)
    target = store.path.parent / "forks" / session_id / SESSION_FILE
    try:
        _write_new(target, rows)
    except OSError as exc:
        raise ShardError(ErrorCode.INTERNAL_ERROR, f"cannot write the fork: {exc.strerror}") from None
    messages = [r for r in rows if r["kind"] in MESSAGE_KINDS]
    title = next(
        (
            b["text"]
            for r in messages
            if r["kind"] == "message" and r["message"].get("role") == "user"
            for b in r["message"].get("content", [])
            if b.get("type") == "text"
        ),
        None,
    )
    meta = {
        "session_id": session_id,
        "cwd": store.header.get("cwd"),
        "created": now,
        "updated": now,
        "message_count": len(messages),
        "source_session_id": store.session_id,
        "source_entry_id": from_entry_id,
    }
    if title:
        meta["title"] = title_of(title)
    with contextlib.suppress(OSError):
        write_meta(target, meta)
    return fork_id, session_id, rows[-1]["id"]


def _calls(messages: list[dict[str, Any]]) -> set[str]:
    return {
        b.get("id")
        for e in messages
        if e["kind"] == "message"
        for b in e["message"].get("content", [])
        if isinstance(b, dict) and b.get("type") == "tool_call"
    }


def _shown_with(entry: dict[str, Any], calls: set[str]) -> bool:
    """A ``tool_start`` or ``permission`` entry of a kept call, or a ``turn_end``: the fork's window
    shows them as the source's did (``window.py``)."""
    return entry["kind"] == "turn_end" or (entry["kind"] in CALL_NOTES and entry.get("tool_call_id") in calls)


def _with_results(entries: list[dict[str, Any]], position: int) -> int:
    """Where the fork ends: at ``position``, or, when tool calls are still waiting for their results
    there (a fork at an assistant message that called tools, or between the results of its calls),
    after the last of those results — a fork never holds a call without the result the source has.

    A call whose result the source never got (its runtime died mid-tool) stays open here; the
    restore of the fork closes it (``session/unfinished.py``)."""
    last = next((i for i in range(position, -1, -1) if entries[i]["kind"] == "message"), None)
    if last is None or entries[last]["message"].get("role") != "assistant":
        return position  # no reply before it, or a prompt after the last one: nothing waits
    content = entries[last]["message"].get("content", [])
    waiting = {b.get("id") for b in content if b.get("type") == "tool_call"}
    waiting -= {e.get("tool_call_id") for e in entries[last + 1 : position + 1] if e["kind"] == "tool_result"}
    end = position
    for i in range(position + 1, len(entries)):  # the results that follow the fork point
        if not waiting:
            break
        entry = entries[i]
        if entry["kind"] in ("message", "compaction"):
            break
        if entry["kind"] == "tool_result" and entry.get("tool_call_id") in waiting:
            waiting.discard(entry["tool_call_id"])
            end = i
    return end


def _rechain(rows: list[dict[str, Any]]) -> None:
    for previous, row in itertools.pairwise(rows):
        row["parent_id"] = previous["id"]


def _write_new(target: Path, rows: list[dict[str, Any]]) -> None:
    import orjson

    private_dirs(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)

"""Sessions a runtime stopped writing mid-turn, and sessions from before messages said why they
ended: what a restore closes (``session/unfinished.py``) and how old entries read
(``window.stop_reason_of``). Pure functions over entry dicts."""

from __future__ import annotations

import itertools
from typing import Any

from shard.agent.session.history import LiveView
from shard.agent.session.unfinished import INTERRUPTED_CALL, unfinished

HEADER = {"id": "ent-0", "kind": "header", "version": 1, "session_id": "sess-x", "cwd": "/", "mode": "build"}


def _chain(*rows: dict[str, Any]) -> list[dict[str, Any]]:
    entries = [dict(HEADER), *rows]
    for previous, row in itertools.pairwise(entries):
        row.setdefault("ts", 1.0)
        row["parent_id"] = previous["id"]
    entries[0].update(parent_id=None, ts=1.0)
    return entries


def _message(mid: str, role: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "kind": "message",
        "message": {"id": mid, "role": role, "content": list(blocks)},
        **extra,
    }


def _call(cid: str) -> dict[str, Any]:
    return {"type": "tool_call", "id": cid, "name": "bash", "args": {"command": "sleep 60"}}


def _result(cid: str, eid: str) -> dict[str, Any]:
    return {"id": eid, "kind": "tool_result", "tool_call_id": cid, "content": {"kind": "text", "text": "ok"}}


TEXT = {"type": "text", "text": "hi"}


def test_a_finished_session_has_nothing_open():
    entries = _chain(
        _message("msg-1", "user", TEXT),
        {"id": "ent-s", "kind": "message_start", "message_id": "msg-2"},
        _message("msg-2", "assistant", TEXT, _call("c1")),
        _result("c1", "msg-3"),
        {"id": "ent-s2", "kind": "message_start", "message_id": "msg-4"},
        _message("msg-4", "assistant", TEXT),
    )
    assert unfinished(entries) == []


def test_a_reply_killed_mid_stream_is_closed_as_interrupted():
    """A ``message_start`` with no message of its id after it (a mode change may follow it)."""
    entries = _chain(
        _message("msg-1", "user", TEXT),
        {"id": "ent-s", "kind": "message_start", "message_id": "msg-2"},
        {"id": "ent-m", "kind": "mode_change", "mode": "plan", "previous": "build"},
    )
    [closing] = unfinished(entries)
    assert closing["id"] == "msg-2"
    assert closing["message"] == {
        "id": "msg-2",
        "role": "assistant",
        "content": [],
        "stop_reason": "interrupted",
    }
    messages = LiveView([*entries, {**closing, "parent_id": "ent-m", "ts": 2.0}]).messages
    assert (messages[-1].id, messages[-1].stop_reason) == ("msg-2", "interrupted")


def test_calls_killed_mid_tool_get_an_error_result_each():
    """The last reply's calls without a result (one ran, two did not) get one, in call order."""
    entries = _chain(
        _message("msg-1", "user", TEXT),
        _message("msg-2", "assistant", _call("c1"), _call("c2"), _call("c3")),
        _result("c1", "msg-3"),
    )
    closing = unfinished(entries)
    assert [(c["kind"], c["tool_call_id"]) for c in closing] == [("tool_result", "c2"), ("tool_result", "c3")]
    assert all(c["content"] == {"kind": "error", "message": INTERRUPTED_CALL} for c in closing)
    assert all(c["is_error"] is True for c in closing)


def test_a_session_corrupt_at_its_tail_is_not_taken_for_an_interrupted_one():
    """A message whose role is broken still answers its ``message_start``: nothing is planned (the
    restore then reports the session corrupt, and writes nothing)."""
    entries = _chain(
        _message("msg-1", "user", TEXT),
        {"id": "ent-s", "kind": "message_start", "message_id": "msg-2"},
        _message("msg-2", "robot", TEXT),
    )
    assert unfinished(entries) == []


def test_old_entries_read_their_stop_reason_from_incomplete_or_the_providers_word():
    """Before messages carried ``stop_reason``: ``incomplete: "aborted"`` reads as aborted,
    ``"error"`` as failed, the provider's ``max_tokens`` as max_tokens; anything else as completed
    (no field)."""
    entries = _chain(
        _message("msg-1", "assistant", TEXT, incomplete="aborted"),
        _message("msg-2", "assistant", TEXT, incomplete="error"),
        _message("msg-3", "assistant", TEXT, stop_reason="max_tokens"),
        _message("msg-4", "assistant", TEXT, stop_reason="end_turn"),
    )
    reasons = [m.stop_reason for m in LiveView(entries).messages]
    assert reasons == ["aborted", "failed", "max_tokens", None]

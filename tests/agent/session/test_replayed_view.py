"""What a window replays beside the messages (issue 26 item 5): the entries a turn writes for its
clients — ``tool_start``, ``permission``, ``tool_result``'s exit code, duration and render, ``turn_end``
— become fields of the window's tool blocks and its ``turns``, the same in phase A's dict window and
the runtime's models, never in the model's view; a session written before them loads as it did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.agent.session.fork import fork
from shard.agent.session.history import LiveView
from shard.agent.session.store import SESSION_FILE, SessionStore, load_entries
from shard.agent.session.window import replay
from shard.agent.tools.recall import span_lines
from shard.agent.transcript import Transcript
from shard.protocol.content import Message, TextBlock, ToolCallBlock, ToolResultBlock
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.events import PermissionResolved

DIFF = {"kind": "diff", "path": "notes.txt", "hunks": [
    {"old_start": 0, "old_lines": 0, "new_start": 1, "new_lines": 1, "lines": ["+hello"]}]}  # fmt: skip
USAGE = {"input": 120, "output": 30, "model": "test/m"}
USER = Message(id="msg-u", role="user", content=[TextBlock(text="write it")])
CALLS = Message(
    id="msg-a",
    role="assistant",
    content=[ToolCallBlock(id="tc-1", name="write", args={"path": "notes.txt", "content": "hello\n"})],
)
DONE = Message(id="msg-d", role="assistant", content=[TextBlock(text="Done.")])


def write_turn(transcript: Transcript) -> None:
    """One turn as the runtime records it: prompt, a call, its answer, its start, its result, the
    reply, the turn's end."""
    transcript.record_message(USER)
    transcript.record_message(CALLS)
    transcript.record_answer(
        PermissionResolved(request_id="req-1", choice_id="allow", source="web-7", tool_call_id="tc-1")
    )
    transcript.record("tool_start", tool_call_id="tc-1", render=DIFF, read_only=False)
    transcript.record("tool_result", entry_id="msg-r", tool_call_id="tc-1", is_error=False,
                      content={"kind": "text", "text": "Created notes.txt (1 line)"},
                      exit_code=0, duration_ms=12.5, render=DIFF)  # fmt: skip
    transcript.record_message(DONE)
    transcript.record("turn_end", turn_id="turn-1", usage=USAGE)


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    store = SessionStore.new(tmp_path, cwd=str(tmp_path), model="test/m", mode="build")
    return Transcript(store, tmp_path)


def test_the_window_shows_what_the_turns_events_showed_and_the_model_sees_none_of_it(transcript):
    """Covers: R9.1.4, R9.4.10, R9.4.14, R9.5.13, R9.5.14"""
    write_turn(transcript)
    window = transcript.live_window().to_wire()
    _, calls, result, _ = window["messages"]
    assert calls["content"][0] == {**CALLS.content[0].to_wire(), "render": DIFF, "read_only": False,
                                   "permission": {"request_id": "req-1", "choice_id": "allow",
                                                  "source": "web-7"}}  # fmt: skip
    assert result["content"][0] == {"type": "tool_result", "tool_call_id": "tc-1", "is_error": False,
                                    "content": {"kind": "text", "text": "Created notes.txt (1 line)"},
                                    "exit_code": 0, "duration_ms": 12.5, "render": DIFF}  # fmt: skip
    assert window["turns"] == [{"turn_id": "turn-1", "last_message_id": "msg-d", "usage": USAGE}]

    model = [m.to_wire() for m in transcript.model_view]
    assert model[1] == CALLS.to_wire()
    seen = {"kind": "text", "text": "Created notes.txt (1 line)\n\n[exit code: 0]"}
    result = {"type": "tool_result", "tool_call_id": "tc-1", "content": seen, "is_error": False}
    assert model[2]["content"] == [result]


def test_a_restore_and_phase_a_replay_the_same_window_as_the_live_one(transcript, tmp_path: Path):
    """The runtime that recorded the turn, a restored runtime (models) and phase A (dicts, before
    pydantic loads) show one window.

    Covers: R9.1.4, R6.4.21
    """
    write_turn(transcript)
    live = transcript.live_window().to_wire()
    transcript.store.close()
    entries = load_entries(transcript.store.path)
    restored = LiveView(entries)
    phase_a = replay(entries)
    assert [m.to_wire() for m in restored.messages] == phase_a.messages() == live["messages"]
    assert [t.to_wire() for t in restored.turns] == phase_a.turns == live["turns"]


def test_a_session_written_before_these_entries_loads_as_before(tmp_path: Path):
    """Old sessions have no tool_start, permission or turn_end entries and no duration or render
    on their results: they load, and their blocks carry only what they had.

    Covers: R9.1.4
    """
    store = SessionStore.new(tmp_path, cwd=str(tmp_path), model=None, mode="build")
    store.append("message", entry_id=USER.id, message=USER.to_wire())
    store.append("message", entry_id=CALLS.id, message=CALLS.to_wire())
    store.append("tool_result", entry_id="msg-r", tool_call_id="tc-1", content={"kind": "text", "text": "x"})
    store.close()
    view = LiveView(load_entries(store.path))
    assert view.messages[1] == CALLS
    result = ToolResultBlock(tool_call_id="tc-1", content={"kind": "text", "text": "x"}, is_error=False)
    assert view.messages[2].content == [result]
    assert view.turns == []


def _entry(kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": f"ent-{kind}-{len(fields)}", "parent_id": None, "kind": kind, "ts": 1.0, **fields}


def test_notes_on_a_call_or_turn_no_longer_in_the_window_are_left_out(transcript):
    """A compaction that summarized a turn takes its usage line with it; an answer or start naming
    a call the window does not hold changes nothing.

    Covers: R6.4.21
    """
    write_turn(transcript)
    transcript.record_message(Message(id="msg-u2", role="user", content=[TextBlock(text="again")]))
    transcript.record("compaction", index=1, summary="s", first_kept_entry_id="msg-u2",
                      message_range=["msg-u", "msg-d"], tokens_before=900, tokens_after=100)  # fmt: skip
    transcript.record("tool_start", tool_call_id="tc-1", render=DIFF)
    transcript.record("permission", request_id="req-9", tool_call_id="tc-unknown", decision="deny")
    window = transcript.live_window()
    assert [m.id for m in window.messages][1:] == ["msg-u2"]
    assert window.turns is None
    assert LiveView(transcript.store.entries).messages == window.messages


def test_a_malformed_render_in_a_tool_start_is_session_corrupt():
    """Covers: R8.15"""
    entries = [
        {"id": CALLS.id, "parent_id": None, "kind": "message", "ts": 1.0, "message": CALLS.to_wire()},
        _entry("tool_start", tool_call_id="tc-1", render={"kind": "diff"}),
    ]
    with pytest.raises(ShardError) as info:
        LiveView(entries)
    assert info.value.code is ErrorCode.SESSION_CORRUPT


def test_a_fork_shows_what_its_source_showed(transcript):
    """A fork copies, with the window's rows, the entries that annotate them: its window shows the
    same cards and usage (under the fork's fresh message ids).

    Covers: R9.1.4
    """
    write_turn(transcript)
    source = transcript.live_window()
    _, session_id, _ = fork(transcript.store, DONE.id, model="test/m", mode="build")
    forked = LiveView(load_entries(transcript.store.path.parent / "forks" / session_id / SESSION_FILE))
    renamed = dict(zip([m.id for m in forked.messages], [m.id for m in source.messages], strict=True))
    assert [m.model_copy(update={"id": renamed[m.id]}) for m in forked.messages] == source.messages
    assert [(t.turn_id, renamed[t.last_message_id], t.usage) for t in forked.turns] == [
        (t.turn_id, t.last_message_id, t.usage) for t in source.turns or []
    ]


def test_recall_shows_the_model_its_messages_without_what_only_clients_render(transcript):
    """Covers: R9.4.15"""
    write_turn(transcript)
    transcript.record_message(Message(id="msg-u2", role="user", content=[TextBlock(text="again")]))
    transcript.record("compaction", index=1, summary="s", first_kept_entry_id="msg-u2",
                      message_range=["msg-u", "msg-d"], tokens_before=900, tokens_after=100)  # fmt: skip
    lines = [orjson.loads(line) for line in span_lines(transcript.entries_of, 1)]
    assert [m["id"] for m in lines] == ["msg-u", "msg-a", "msg-r", "msg-d"]
    assert lines[1] == CALLS.to_wire()
    [result] = lines[2]["content"]
    assert set(result) == {"type", "tool_call_id", "content", "is_error"}

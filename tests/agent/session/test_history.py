"""Replaying session entries into the live window (clients) and the model view (provider)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.session.history import LiveView
from shard.agent.session.history import model_message as _model_message
from shard.agent.session.store import SessionStore, load_entries
from shard.agent.session.window import entry_item
from shard.protocol.content import (
    ErrorContent,
    JsonContent,
    Message,
    TextBlock,
    TextContent,
    ToolCallBlock,
    ToolResultBlock,
)
from shard.protocol.errors import ErrorCode, ShardError


def entry_message(entry):
    """The Message one entry stands for (via the live view, so malformed ones are SESSION_CORRUPT)."""
    return LiveView([entry]).messages[-1]


def model_message(entry, message):
    return _model_message(entry_item(entry), message)


def replay(entries):
    view = LiveView(entries)
    return view.messages, view.model_messages


USER = Message(id="msg-u1", role="user", content=[TextBlock(text="run the tests")])
CALL = Message(
    id="msg-a1",
    role="assistant",
    content=[TextBlock(text="Running."), ToolCallBlock(id="tc-1", name="bash", args={"command": "pytest"})],
)


def tool_result(content: dict[str, Any], exit_code: int | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "msg-r1",
        "parent_id": "msg-a1",
        "kind": "tool_result",
        "ts": 1.0,
        "tool_call_id": "tc-1",
        "content": content,
        **extra,
    }
    if exit_code is not None:
        entry["exit_code"] = exit_code
    return entry


def message_entry(message: Message) -> dict[str, Any]:
    return {"id": message.id, "parent_id": None, "kind": "message", "ts": 1.0, "message": message.to_wire()}


def only_result(message: Message) -> ToolResultBlock:
    [block] = message.content
    assert isinstance(block, ToolResultBlock)
    return block


def test_exit_code_is_injected_for_the_model_only() -> None:
    """Covers: R9.4.15, R9.4.17. A tool_result with an exit code: the live window keeps the pure
    output, the model view sees it followed by "[exit code: N]"."""
    entry = tool_result({"kind": "text", "text": "3 passed, 1 failed"}, exit_code=1, is_error=False)

    window, model_view = replay([entry])

    assert only_result(window[0]).content == TextContent(text="3 passed, 1 failed")
    model_block = only_result(model_view[0])
    assert model_block.content == TextContent(text="3 passed, 1 failed\n\n[exit code: 1]")
    assert model_block.tool_call_id == "tc-1"
    assert model_block.is_error is False
    assert model_view[0].id == window[0].id == "msg-r1"
    assert model_view[0].role == "user"


def test_exit_code_zero_is_injected_too() -> None:
    """Covers: R9.4.17. Exit code 0 is a real exit code, not "no exit code"."""
    _, model_view = replay([tool_result({"kind": "text", "text": "ok"}, exit_code=0)])
    assert only_result(model_view[0]).content == TextContent(text="ok\n\n[exit code: 0]")


def test_empty_output_with_an_exit_code_is_just_the_marker() -> None:
    """Covers: R9.4.17. A command with no output shows the model only "[exit code: N]"."""
    window, model_view = replay([tool_result({"kind": "text", "text": ""}, exit_code=127)])
    assert only_result(model_view[0]).content == TextContent(text="[exit code: 127]")
    assert only_result(window[0]).content == TextContent(text="")


def test_error_output_gets_the_exit_code_and_keeps_is_error() -> None:
    """Covers: R9.4.15, R9.4.17. An error result keeps is_error and its pure message in
    the window; the model sees the message with the exit code appended."""
    entry = tool_result({"kind": "error", "message": "command not found"}, exit_code=127, is_error=True)
    window, model_view = replay([entry])
    assert only_result(window[0]).content == ErrorContent(message="command not found")
    assert only_result(window[0]).is_error is True
    block = only_result(model_view[0])
    assert block.content == ErrorContent(message="command not found\n\n[exit code: 127]")
    assert block.is_error is True


def test_results_without_an_exit_code_are_the_same_for_both() -> None:
    """Covers: R9.4.15. A result without an exit code (read, ls) reaches the model unchanged."""
    entry = tool_result({"kind": "text", "text": "a.py\nb.py"})
    window, model_view = replay([entry])
    assert model_view == window
    assert model_message(entry, window[0]) is window[0]


def test_replay_keeps_message_entries_in_order_and_skips_the_rest() -> None:
    """Checks replay: only message and tool_result entries become messages, in entry order; header,
    mode/model changes and other kinds are skipped."""
    header = {
        "id": "ent-h",
        "parent_id": None,
        "kind": "header",
        "ts": 0.0,
        "session_id": "sess-1",
        "version": 1,
    }
    mode = {"id": "ent-m", "parent_id": "msg-r1", "kind": "mode_change", "ts": 2.0, "mode": "plan"}
    entries = [
        header,
        message_entry(USER),
        message_entry(CALL),
        tool_result({"kind": "text", "text": "ok"}),
        mode,
    ]

    window, model_view = replay(entries)

    assert [m.id for m in window] == ["msg-u1", "msg-a1", "msg-r1"]
    assert window[0] == USER
    assert window[1] == CALL
    assert [m.id for m in model_view] == ["msg-u1", "msg-a1", "msg-r1"]


def test_json_content_round_trips() -> None:
    """Checks that a structured (json) tool result survives replay unchanged."""
    entry = tool_result({"kind": "json", "value": {"files": ["a", "b"], "count": 2}})
    window, _ = replay([entry])
    assert only_result(window[0]).content == JsonContent(value={"files": ["a", "b"], "count": 2})


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "e1", "parent_id": None, "kind": "message", "ts": 1.0},
        {
            "id": "e1",
            "parent_id": None,
            "kind": "message",
            "ts": 1.0,
            "message": {"id": "m", "role": "system", "content": []},
        },
        {"id": "e1", "parent_id": None, "kind": "message", "ts": 1.0, "message": {"id": "m", "role": "user"}},
        {
            "id": "e1",
            "parent_id": None,
            "kind": "tool_result",
            "ts": 1.0,
            "content": {"kind": "text", "text": "x"},
        },
        {"id": "e1", "parent_id": None, "kind": "tool_result", "ts": 1.0, "tool_call_id": "tc-1"},
        {
            "id": "e1",
            "parent_id": None,
            "kind": "tool_result",
            "ts": 1.0,
            "tool_call_id": "tc-1",
            "content": {"kind": "video"},
        },
    ],
)
def test_malformed_message_entries_are_session_corrupt(entry: dict[str, Any]) -> None:
    """Covers: R8.15. A message or tool_result entry that does not hold a valid message makes the
    transcript unrestorable: SESSION_CORRUPT naming the entry."""
    with pytest.raises(ShardError) as info:
        replay([entry])
    assert info.value.code is ErrorCode.SESSION_CORRUPT
    assert "'e1'" in info.value.message
    with pytest.raises(ShardError):
        entry_message(entry)


def test_a_stored_session_replays_after_a_restart(tmp_path: Path) -> None:
    """Covers: R9.4.15, R9.4.17. Entries written through the store, reloaded from disk, replay to
    the same messages, with the exit code still injected for the model only."""
    store = SessionStore.new(tmp_path, cwd=str(tmp_path), model=None, mode="build")
    store.append("message", entry_id=USER.id, message=USER.to_wire())
    store.append("message", entry_id=CALL.id, message=CALL.to_wire())
    store.append(
        "tool_result",
        entry_id="msg-r1",
        tool_call_id="tc-1",
        content={"kind": "text", "text": "boom"},
        is_error=True,
        exit_code=2,
    )
    store.append("mode_change", mode="plan", previous="build")
    store.close()

    window, model_view = replay(load_entries(store.path))

    assert window[:2] == [USER, CALL]
    assert only_result(window[2]).content == TextContent(text="boom")
    assert only_result(model_view[2]).content == TextContent(text="boom\n\n[exit code: 2]")
    assert model_view[:2] == window[:2]


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=40), code=st.integers(-(2**31), 2**31 - 1))
def test_any_output_and_exit_code(text: str, code: int) -> None:
    """Covers: R9.4.15, R9.4.17. For any output and exit code: the window holds exactly the output;
    the model sees the output, then the marker "[exit code: N]" as the text's end."""
    with tempfile.TemporaryDirectory() as d:
        store = SessionStore.new(Path(d), cwd=d, model=None, mode="build")
        store.append(
            "tool_result", tool_call_id="tc-9", content={"kind": "text", "text": text}, exit_code=code
        )
        store.close()
        window, model_view = replay(load_entries(store.path))

    assert only_result(window[0]).content == TextContent(text=text)
    seen = only_result(model_view[0]).content
    assert isinstance(seen, TextContent)
    marker = f"[exit code: {code}]"
    assert seen.text == (f"{text}\n\n{marker}" if text else marker)


def test_json_output_with_an_exit_code_is_shown_to_the_model_as_text() -> None:
    """A JSON result that carries an exit code reaches the model as its JSON text plus the marker;
    the live window keeps the JSON value.

    Covers: R9.4.17, R9.4.15
    """
    entry = tool_result({"kind": "json", "value": {"ok": False, "n": 2}}, exit_code=1)
    window, model_view = replay([entry])
    assert only_result(window[0]).content.value == {"ok": False, "n": 2}
    shown = only_result(model_view[0]).content
    assert shown.kind == "text"
    assert shown.text == '{"ok":false,"n":2}\n\n[exit code: 1]'

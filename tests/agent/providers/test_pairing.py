"""No request ever holds a tool call without its result, or a result without its call: both
adapters repair the provider-neutral messages (``providers/pairing.py``) before converting them,
whatever left the conversation inconsistent — a fork, an abort, a crash mid-tool, an old session
file. A dangling call gets an error result telling the model it did not run; an orphan result is
left out. Each case is checked in the shape each API demands (``_pairs.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from shard.agent.providers.anthropic import convert_messages as anthropic_messages
from shard.agent.providers.openai import convert_messages as openai_messages
from shard.agent.session.store import SessionStore
from shard.agent.transcript import Transcript
from shard.protocol.content import (
    ErrorContent,
    Message,
    TextBlock,
    TextContent,
    ToolCallBlock,
    ToolResultBlock,
)

from ._pairs import assert_anthropic_pairs, assert_openai_pairs, tool_result_texts, tool_texts

SYSTEM = "system"


def _user(text: str, mid: str) -> Message:
    return Message(id=mid, role="user", content=[TextBlock(text=text)])


def _reply(mid: str, *calls: str, text: str = "", **extra: Any) -> Message:
    content: list[Any] = [TextBlock(text=text)] if text else []
    content += [ToolCallBlock(id=c, name="read", args={"path": f"{c}.txt"}) for c in calls]
    return Message(id=mid, role="assistant", content=content, **extra)


def _result(call: str, text: str, mid: str) -> Message:
    block = ToolResultBlock(tool_call_id=call, content=TextContent(text=text), is_error=False)
    return Message(id=mid, role="user", content=[block])


def _both(messages: list[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages as each API gets them, checked against what each API requires."""
    openai = openai_messages(SYSTEM, messages)
    anthropic = anthropic_messages(messages)
    assert_openai_pairs(openai)
    assert_anthropic_pairs(anthropic)
    return openai, anthropic


def test_a_fork_at_a_reply_that_called_tools_answers_the_calls_before_the_next_prompt():
    """Source: fork (before fork took results along). The reply's calls, then the next prompt: each
    call gets an error result saying it did not run, right after the reply, before the prompt."""
    reply = _reply("m2", "call_a", "call_b", text="Reading.")
    messages = [_user("read both", "m1"), reply, _user("on", "m3")]
    openai, anthropic = _both(messages)
    assert [m["role"] for m in openai] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert openai[-1]["content"] == "on"
    for text in (*tool_texts(openai).values(), *tool_result_texts(anthropic).values()):
        assert "did not run" in text
    assert [t["role"] for t in anthropic] == ["user", "assistant", "user"]
    assert [b["type"] for b in anthropic[-1]["content"]] == ["tool_result", "tool_result", "text"]
    assert all(b.get("is_error") for b in anthropic[-1]["content"][:2])


def test_an_aborted_reply_whose_second_call_never_ran():
    """Source: abort (a session written without the aborted call's result). The call that ran keeps
    its real result; the one that did not gets the "did not run" result; the next prompt follows."""
    messages = [
        _user("look", "m1"),
        _reply("m2", "call_a", "call_b", stop_reason="aborted"),
        _result("call_a", "contents of a", "m3"),
        _user("never mind", "m4"),
    ]
    openai, anthropic = _both(messages)
    assert tool_texts(openai)["call_a"] == "contents of a"
    assert "did not run" in tool_texts(openai)["call_b"]
    assert tool_result_texts(anthropic)["call_a"] == "contents of a"
    assert "did not run" in tool_result_texts(anthropic)["call_b"]


def test_a_crash_mid_tool_leaves_the_last_call_unanswered():
    """Source: a crash mid-tool (the session ends with the call). The request still answers it."""
    messages = [_user("run it", "m1"), _reply("m2", "call_a")]
    openai, anthropic = _both(messages)
    assert openai[-1]["role"] == "tool"
    assert "did not run" in openai[-1]["content"]
    assert anthropic[-1]["role"] == "user"
    assert anthropic[-1]["content"][0]["type"] == "tool_result"


def test_an_old_session_file_with_a_dangling_call_and_an_orphan_result(tmp_path: Path):
    """Source: an old session file — written by hand here, in the format of the time (no
    stop_reason on messages): a call never answered before the next prompt, and a result whose call
    is in no message. Restored through the real store and transcript, the model view converts to
    requests both APIs accept: the call answered, the orphan left out."""
    home = tmp_path / "home"
    path = home / "sessions" / "sess-old" / "session.jsonl"
    path.parent.mkdir(parents=True)
    header = {"version": 1, "session_id": "sess-old", "cwd": str(tmp_path), "model": None, "mode": "build"}
    call = {"type": "tool_call", "id": "call_x", "name": "bash", "args": {"command": "ls"}}
    stray = {"kind": "text", "text": "a result of a call in no message"}
    rows: list[dict[str, Any]] = [
        {"id": "ent-0", "kind": "header", **header},
        {"id": "msg-1", "kind": "message", "message": _user("hi", "msg-1").to_wire()},
        {
            "id": "msg-2",
            "kind": "message",
            "message": {"id": "msg-2", "role": "assistant", "content": [call]},
            "stop_reason": "tool_use",
        },
        {"id": "msg-3", "kind": "message", "message": _user("again", "msg-3").to_wire()},
        {"id": "msg-4", "kind": "tool_result", "tool_call_id": "call_gone", "content": stray},
        {"id": "msg-5", "kind": "message", "message": _reply("msg-5", text="ok").to_wire()},
    ]
    for previous, row in zip([None, *rows], rows, strict=False):
        row.update(parent_id=previous["id"] if previous else None, ts=1.0)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    store = SessionStore.open(path)
    try:
        messages = Transcript(store, home).model_view
    finally:
        store.close()
    openai, anthropic = _both(messages)
    assert "did not run" in tool_texts(openai)["call_x"]
    assert "call_gone" not in tool_texts(openai)
    assert "call_gone" not in tool_result_texts(anthropic)
    assert [m["role"] for m in openai] == ["system", "user", "assistant", "tool", "user", "assistant"]


def test_a_result_recorded_after_a_steer_moves_up_to_its_call():
    """A result that comes after other user content (a steer delivered between) is moved to its call."""
    messages = [
        _user("go", "m1"),
        _reply("m2", "call_a"),
        _user("also this", "m3"),
        _result("call_a", "done", "m4"),
    ]
    openai, _ = _both(messages)
    assert [m["role"] for m in openai] == ["system", "user", "assistant", "tool", "user"]
    assert tool_texts(openai) == {"call_a": "done"}


def test_a_consistent_conversation_is_sent_as_it_is():
    """Nothing to repair: the same messages, in the same order (the common case costs nothing)."""
    from shard.agent.providers.pairing import paired

    error = ToolResultBlock(tool_call_id="call_b", content=ErrorContent(message="denied"), is_error=True)
    messages = [
        _user("go", "m1"),
        _reply("m2", "call_a", "call_b"),
        _result("call_a", "done", "m3"),
        Message(id="m4", role="user", content=[error]),
        _reply("m5", text="finished"),
    ]
    assert paired(messages) == messages
    assert all(a is b for a, b in zip(paired(messages), messages, strict=True))
    _both(messages)

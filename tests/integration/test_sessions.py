"""Session persistence and restore across processes (DESIGN §6, PROTOCOL §8 SESSION_CORRUPT)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from shard.testing import AgentProcess, recorded_requests, text_step, tool_step, types


def _session_file(home: Path, session_id: str) -> Path:
    return home / "sessions" / session_id / "session.jsonl"


async def _one_turn(start, steps, *args):
    agent = await start(steps, *args)
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "read the config"})
    read = await agent.idle()
    return agent, sync["session_id"], read


async def test_session_restored_in_a_second_process(start, home):
    """A session written by one process is restored by another: sync shows the live window (the
    same messages, ids and content), the mode and the model; the next prompt continues the
    conversation with the whole history.

    Covers: R9.1.4, R9.1.5, R9.4.8
    """
    steps = [
        tool_step("read", {"path": "config.json"}, text="Reading."),
        text_step("Port 8080."),
        text_step("Still 8080."),
    ]
    agent, session_id, read = await _one_turn(start, steps)
    await agent.request({"type": "set_mode", "id": "m", "mode": "plan"})
    assert await agent.finish() == 0
    completed = [m["message"] for m in read if m["type"] == "message_complete"]
    result = next(m for m in read if m["type"] == "tool_result")

    again = await start(None, "--session", session_id)
    _, sync = await again.handshake()
    window = sync["live_window"]["messages"]
    assert [m["role"] for m in window] == ["user", "assistant", "user", "assistant"]
    assert window[0] == completed[0]
    call = next(m for m in read if m["type"] == "tool_call")
    text, called = completed[1]["content"]  # the call's block also keeps what its tool_call showed
    called = {**called, **{k: call[k] for k in ("render", "read_only") if k in call}}
    assert window[1] == {**completed[1], "content": [text, called]}
    assert window[3] == completed[2]
    assert window[2]["content"] == [
        {
            "type": "tool_result",
            "tool_call_id": result["tool_call_id"],
            "content": result["content"],
            "is_error": False,
            **{k: result[k] for k in ("duration_ms", "render") if k in result},
        }
    ]
    assert window[2]["id"] == result["message_id"]
    assert sync["mode"] == "plan"
    assert sync["session_id"] == session_id
    await again.send({"type": "prompt", "message": "and now?"})
    read2 = await again.idle()
    assert [m for m in read2 if m["type"] == "message_complete"][-1]["message"]["content"][0][
        "text"
    ] == "Still 8080."
    last = recorded_requests(home)[-1]["messages"]
    assert [m["id"] for m in last[:4]] == [m["id"] for m in window]


async def test_model_choice_survives_restore_and_flag_overrides(start, home):
    """The session's model is restored; --model on restore switches it and is recorded.

    Covers: R9.2.28
    """
    models = [{"id": "m"}, {"id": "other"}]
    agent = await start([text_step("a"), text_step("b"), text_step("c")], models=models)
    _, sync = await agent.handshake()
    await agent.request({"type": "set_model", "id": "s", "model": "test/other"})
    await agent.send({"type": "prompt", "message": "x"})
    await agent.idle()
    await agent.finish()
    again = await start(None, "--session", sync["session_id"])
    await again.handshake()
    resp, _ = await again.request({"type": "list_models", "id": "l"})
    assert resp["data"]["active"]["id"] == "test/other"
    await again.finish()
    third = await start(None, "--session", sync["session_id"], "--model", "test/m")
    await third.handshake()
    resp, _ = await third.request({"type": "list_models", "id": "l"})
    assert resp["data"]["active"]["id"] == "test/m"
    await third.finish()
    fourth = await start(None, "--session", sync["session_id"])
    await fourth.handshake()
    resp, _ = await fourth.request({"type": "list_models", "id": "l"})
    assert resp["data"]["active"]["id"] == "test/m"


async def test_torn_last_line_is_ignored(start, home):
    """A crash mid-write leaves a line without LF: restore ignores it, and later appends start on a
    clean line so the file stays loadable.

    Covers: R8.15
    """
    agent, session_id, _ = await _one_turn(start, [text_step("one"), text_step("two")])
    await agent.finish()
    path = _session_file(home, session_id)
    good = path.read_bytes()
    path.write_bytes(good + b'{"id":"msg-torn","parent_id":"x","kind":"mess')
    again = await start(None, "--session", session_id)
    _, sync = await again.handshake()
    assert len(sync["live_window"]["messages"]) == 2
    assert path.read_bytes() == good, "the torn tail is cut off before anything is appended"
    assert b"msg-torn" in path.with_name("session.jsonl.torn").read_bytes()
    await again.send({"type": "prompt", "message": "more"})
    await again.idle()
    await again.finish()
    third = await start(None, "--session", session_id)
    _, sync3 = await third.handshake()
    assert [m["role"] for m in sync3["live_window"]["messages"]] == ["user", "assistant", "user", "assistant"]


async def _expect_fatal(home: Path, project: Path, session_id: str, code: str) -> tuple[list[dict], int]:
    agent = await AgentProcess.start(home, project, "--session", session_id)
    hello = await agent.next()
    assert hello["type"] == "hello"
    error = await agent.next()
    exit_code = await agent.finish()
    return [hello, error], exit_code


async def test_damaged_session_is_session_corrupt_and_untouched(start, home, project):
    """Damage other than a torn tail gives a fatal SESSION_CORRUPT error and the file keeps every
    byte.

    Covers: R8.15, R9.4.24, R8.2
    """
    agent, session_id, _ = await _one_turn(start, [text_step("one")])
    await agent.finish()
    path = _session_file(home, session_id)
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1][:-5] + b"XXXXX"  # a complete line in the middle that is no longer JSON
    path.write_bytes(b"\n".join(lines))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (_hello, error), code = await _expect_fatal(home, project, session_id, "SESSION_CORRUPT")
    assert error == {"type": "error", "code": "SESSION_CORRUPT", "message": error["message"], "fatal": True}
    assert "line 2" in error["message"]
    assert code == 3
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert not path.with_name("session.jsonl.torn").exists()


async def test_malformed_message_entry_is_session_corrupt(start, home, project):
    """A well-formed line whose message does not match the Message shape is SESSION_CORRUPT too.

    Covers: R8.15
    """
    agent, session_id, _ = await _one_turn(start, [text_step("one")])
    await agent.finish()
    path = _session_file(home, session_id)
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    last = max(i for i, line in enumerate(lines) if orjson.loads(line)["kind"] == "message")
    entry = orjson.loads(lines[last])
    entry["message"]["role"] = "robot"
    lines[last] = orjson.dumps(entry)
    path.write_bytes(b"\n".join(lines) + b"\n")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    agent2 = await AgentProcess.start(home, project, "--session", session_id)
    hello, _sync_or_error = await agent2.next(), await agent2.next()
    assert hello["type"] == "hello"
    assert _sync_or_error["type"] == "error"
    assert _sync_or_error["code"] == "SESSION_CORRUPT"
    assert _sync_or_error["fatal"] is True
    assert await agent2.finish() == 3
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


async def test_unknown_session_is_not_found(home, project):
    """Restoring a session id that does not exist is a fatal NOT_FOUND.

    Covers: R8.8
    """
    home.mkdir(parents=True, exist_ok=True)
    (_hello, error), code = await _expect_fatal(home, project, "sess-doesnotexist", "NOT_FOUND")
    assert error["code"] == "NOT_FOUND"
    assert error["fatal"] is True
    assert code == 3


async def test_every_entry_is_on_disk_before_its_event(start, home):
    """When message_complete or tool_result reaches the client, its entry is already in the file
    (checked while the agent is paused, so it cannot catch up in between).

    Covers: R9.4.8
    """
    import os
    import signal

    steps = [tool_step("ls", {}, text="listing"), text_step("done")]
    agent = await start(steps)
    _, sync = await agent.handshake()
    path = _session_file(home, sync["session_id"])
    await agent.send({"type": "prompt", "message": "go"})
    checked = 0
    while True:
        msg = await agent.next()
        if msg["type"] in ("message_complete", "tool_result"):
            os.kill(agent.proc.pid, signal.SIGSTOP)
            try:
                key = msg.get("message_id") or msg["tool_call_id"]
                assert key.encode() in path.read_bytes(), msg["type"]
                checked += 1
            finally:
                os.kill(agent.proc.pid, signal.SIGCONT)
        if msg["type"] == "status" and msg["status"] == "idle":
            break
    assert checked == 4  # user message, assistant, tool result, assistant


async def test_cwd_of_restored_session_is_kept(start, home, project, tmp_path):
    """A restored session works in its own cwd; asking for another one is refused at start."""
    agent, session_id, _ = await _one_turn(start, [text_step("one")])
    await agent.finish()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = await AgentProcess.start(home, project, "--session", session_id, "--cwd", str(elsewhere))
    code = await other.finish()
    assert code == 2
    assert "belongs to" in await other.stderr_text()
    assert types(other.seen) == []


async def test_a_session_has_one_writer_at_a_time(start, home):
    """A second process asked to open a session another process has open refuses it (CONFLICT,
    fatal, exit 3) without touching the file; the first keeps working, and once it has exited the
    session opens normally.

    Covers: R8.20, R9.4.24, R9.4.23
    """
    first = await start([text_step("one"), text_step("two"), text_step("three")])
    _, sync = await first.handshake()
    session_id = sync["session_id"]
    await first.send({"type": "prompt", "message": "hi"})
    await first.idle()
    before = _session_file(home, session_id).read_bytes()

    second = await start(None, "--session", session_id)
    hello = await second.next()
    assert hello["type"] == "hello"
    refused = await second.next()
    assert refused["type"] == "error"
    assert refused["code"] == "CONFLICT"
    assert refused["fatal"] is True
    assert "open in another shard process" in refused["message"]
    assert await second.proc.wait() == 3
    assert _session_file(home, session_id).read_bytes() == before

    await first.send({"type": "prompt", "message": "still mine"})
    await first.idle()
    assert await first.finish() == 0
    third = await start(None, "--session", session_id)
    _, sync3 = await third.handshake()
    assert [m["content"][0]["text"] for m in sync3["live_window"]["messages"]][-1] == "two"

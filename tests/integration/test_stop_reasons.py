"""Why each assistant message ended, recorded and reported (issue 26 item 4): ``stop_reason`` on the
message in ``message_complete``, in the session entry, and in the ``sync`` window after a restore —
completed, aborted (a client's abort), interrupted (the runtime told to stop, or killed and its
session restored), failed (the provider failed mid-reply); max_tokens is in
``tests/agent/providers/test_stop_reasons.py``, through the real provider folds.

Real ``shard agent --stdio`` processes on the scripted provider.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import orjson

from shard.testing import text_step, tool_step

STALLED = {"blocks": [{"type": "text", "text": "I was about to say"}], "stall": True}


def _entries(home: Path, session_id: str) -> list[dict[str, Any]]:
    path = home / "sessions" / session_id / "session.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _entry(home: Path, session_id: str, entry_id: str) -> dict[str, Any]:
    return next(e for e in _entries(home, session_id) if e["id"] == entry_id)


def _replies(read: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        m["message"] for m in read if m["type"] == "message_complete" and m["message"]["role"] == "assistant"
    ]


async def _restored(start, session_id: str) -> list[dict[str, Any]]:
    """The window a restore of the session shows (its sync), after a fresh process opened it."""
    agent = await start(None, "--session", session_id)
    _, sync = await agent.handshake()
    await agent.finish()
    return sync["live_window"]["messages"]


async def test_a_completed_reply_says_so_live_in_the_session_and_after_a_restore(start, home):
    """Covers: R9.4.8, R9.1.4"""
    agent = await start([text_step("All done.")])
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "hi"})
    (reply,) = _replies(await agent.idle())
    assert reply["stop_reason"] == "completed"
    assert _entry(home, sync["session_id"], reply["id"])["message"]["stop_reason"] == "completed"
    await agent.finish()
    assert (await _restored(start, sync["session_id"]))[-1]["stop_reason"] == "completed"


async def test_an_aborted_reply_says_aborted_live_in_the_session_and_after_a_restore(start, home):
    """Abort mid-stream: the partial reply's ``message_complete`` carries ``stop_reason: "aborted"``,
    so does its session entry, and a restore shows it the same way.

    Covers: R9.2.7, R9.4.8, R9.1.4
    """
    agent = await start([STALLED])
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "tell me"})
    await agent.until_type("message_delta")
    resp, read = await agent.request({"type": "abort", "id": "a"})
    assert resp["success"]
    (reply,) = _replies(read)
    assert (reply["stop_reason"], reply["content"]) == (
        "aborted",
        [{"type": "text", "text": "I was about to say"}],
    )
    assert _entry(home, sync["session_id"], reply["id"])["message"]["stop_reason"] == "aborted"
    await agent.finish()
    restored = (await _restored(start, sync["session_id"]))[-1]
    assert (restored["id"], restored["stop_reason"]) == (reply["id"], "aborted")


async def test_a_runtime_told_to_stop_mid_reply_records_it_interrupted(start, home):
    """SIGTERM mid-stream (a daemon stopping its runtimes, a service manager): the reply is kept as
    ``interrupted`` — not "aborted", which is a person's abort — and a restore shows it so.

    Covers: R9.4.8, R9.1.4
    """
    agent = await start([STALLED])
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "tell me"})
    (delta,) = (await agent.until_type("message_delta"))[-1:]
    agent.proc.send_signal(signal.SIGTERM)
    read = await agent.until_type("message_complete")
    assert read[-1]["message"]["stop_reason"] == "interrupted"
    assert await agent.finish() == 0
    entry = _entry(home, sync["session_id"], delta["message_id"])
    assert entry["message"]["stop_reason"] == "interrupted"
    restored = (await _restored(start, sync["session_id"]))[-1]
    assert (restored["id"], restored["stop_reason"]) == (delta["message_id"], "interrupted")
    assert restored["content"] == [{"type": "text", "text": "I was about to say"}]


async def test_a_runtime_killed_mid_reply_shows_the_reply_interrupted_after_a_restore(start, home):
    """kill -9 mid-stream: nothing of the reply but its ``message_start`` reached the session. The
    restore records the reply (same id the deltas carried) as an empty assistant message with
    ``stop_reason: "interrupted"``, shows it in its ``sync``, and the session goes on.

    Covers: R9.1.4
    """
    agent = await start([STALLED, text_step("Back again.")])
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "tell me"})
    delta = (await agent.until_type("message_delta"))[-1]
    await agent.kill()
    kinds = [e["kind"] for e in _entries(home, sync["session_id"])]
    assert kinds[-1] == "message_start"

    again = await start(None, "--session", sync["session_id"])
    _, restored = await again.handshake()
    interrupted = {
        "id": delta["message_id"],
        "role": "assistant",
        "content": [],
        "stop_reason": "interrupted",
    }
    assert restored["live_window"]["messages"][-1] == interrupted
    await again.send({"type": "prompt", "message": "go on"})
    assert _replies(await again.idle())[-1]["content"] == [{"type": "text", "text": "Back again."}]
    await again.finish()
    assert _entry(home, sync["session_id"], delta["message_id"])["message"] == interrupted


async def test_a_runtime_killed_mid_tool_has_the_call_closed_after_a_restore(start, home):
    """kill -9 while a tool runs: the restore records an error result for the call (so no client
    shows it running forever, and no request holds the call without its result).

    Covers: R9.4.14, R9.1.4
    """
    agent = await start([tool_step("sleep", {"seconds": 60}), text_step("ok")])
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "wait"})
    call = (await agent.until_type("tool_call"))[-1]
    await agent.kill()
    messages = await _restored(start, sync["session_id"])
    block = messages[-1]["content"][0]
    assert block["type"] == "tool_result"
    assert block["tool_call_id"] == call["tool_call_id"]
    assert block["is_error"] is True
    assert block["content"]["kind"] == "error"
    assert block["content"]["message"].startswith("Interrupted: the agent stopped")


async def test_a_reply_the_provider_failed_mid_stream_says_failed_and_how(start, home):
    """Covers: R9.4.8, R9.4.25"""
    agent = await start([{"blocks": [{"type": "text", "text": "half an ans"}], "error": "upstream reset"}])
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "hi"})
    (reply,) = _replies(await agent.idle())
    assert reply["stop_reason"] == "failed"
    assert "upstream reset" in reply["stop_detail"]
    entry = _entry(home, sync["session_id"], reply["id"])
    assert (entry["message"]["stop_reason"], entry["message"]["stop_detail"]) == (
        "failed",
        reply["stop_detail"],
    )
    await agent.finish()
    assert (await _restored(start, sync["session_id"]))[-1]["stop_reason"] == "failed"

"""Long sessions: compaction (both tiers and session_op compact), recall, and restore after
compactions (PROTOCOL §9.2 session_op compact, §9.4 compaction; DESIGN §6)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from shard.testing import AgentProcess, text_step, tool_step, types

BIG = "".join(f"line {i:05d} of a long file that fills the context window quickly\n" for i in range(200))
ANSWER = "".join(f"Line {i:05d} is there. " for i in range(200))  # ~1,000 tokens


def _session(home: Path, session_id: str) -> Path:
    return home / "sessions" / session_id / "session.jsonl"


def _entries(home: Path, session_id: str) -> list[dict]:
    return [orjson.loads(line) for line in _session(home, session_id).read_bytes().splitlines()]


def _compaction_toml(
    window: int | None = None, keep: int = 200, enabled: bool = True, threshold: float = 0.8
) -> dict:
    extra = f"\n[compaction]\nenabled = {'true' if enabled else 'false'}\nthreshold = {threshold}\n"
    extra += f"keep_recent_tokens = {keep}\n"
    models = [{"id": "m", "context_window": window}] if window else [{"id": "m"}]
    return {"models": models, "extra_toml": extra}


async def _turn(agent, message: str) -> list[dict]:
    await agent.send({"type": "prompt", "message": message})
    return await agent.idle()


async def test_idle_tier_compacts_once_above_the_threshold(start, home, project):
    """A tool-using session that crosses 80 % of the window compacts when the agent goes idle: after
    turn_end come status compacting, the compaction event, and status idle.

    Covers: R9.4.20, R9.4.19, R9.4.22, R9.2.54
    """
    (project / "big.txt").write_text(BIG)
    steps = [tool_step("read", {"path": "big.txt"}), text_step(ANSWER)]
    # 9,000 tokens: ~2,600 of system prompt and 12 tool schemas, 2,250 kept for the reply, so the
    # idle trigger is near 5,900 (compaction/budget.py) and the ceiling 6,750; the read brings the
    # context to ~5,600 (no emergency), the answer to ~6,600
    agent = await start(steps, **_compaction_toml(window=9000))
    _, sync = await agent.handshake()
    read = await _turn(agent, "read big.txt")
    seq = [t for t in types(read) if t in ("turn_end", "status", "compaction")]
    statuses = [m["status"] for m in read if m["type"] == "status"]
    assert seq[-4:] == ["turn_end", "status", "compaction", "status"]
    assert statuses[-2:] == ["compacting", "idle"]
    event = next(m for m in read if m["type"] == "compaction")
    entries = _entries(home, sync["session_id"])
    stored = next(e for e in entries if e["kind"] == "compaction")
    assert event["index"] == stored["index"] == 1
    assert event["message_range"] == stored["message_range"]
    assert event["first_kept_entry_id"] == stored["first_kept_entry_id"]
    assert event["tokens_before"] > 0.6 * 9000
    assert event["tokens_after"] < event["tokens_before"] - 2000, "the read went into the summary"
    user = next(e for e in entries if e["kind"] == "message" and e["message"]["role"] == "user")
    assert event["message_range"][0] == user["id"], "the span starts at the first message"


async def test_emergency_tier_compacts_mid_turn_and_continues(start, home, project):
    """A tool result that pushes the next call past the window's ceiling (the window less the
    reply's share) triggers a compaction at that iteration boundary; the turn then goes on with its
    next model call.

    Covers: R9.4.21, R9.4.19
    """
    (project / "big.txt").write_text(BIG)
    steps = [tool_step("read", {"path": "big.txt"}), text_step("Summarized and continuing.")]
    # 5,000 tokens: the ceiling is 3,750 (1,250 kept for the reply); the read brings ~5,600
    agent = await start(steps, **_compaction_toml(window=5000, threshold=1.0))
    await agent.handshake()
    read = await _turn(agent, "read big.txt")
    seq = [t for t in types(read) if t in ("tool_result", "compaction", "message_delta", "turn_end")]
    first_compaction = seq.index("compaction")
    assert seq.index("tool_result") < first_compaction < seq.index("turn_end")
    assert "message_delta" in seq[first_compaction:], "the model was called again after compacting"
    statuses = [m["status"] for m in read if m["type"] == "status"]
    assert statuses[:3] == ["streaming", "compacting", "streaming"]
    final = [m for m in read if m["type"] == "message_complete"][-1]["message"]
    assert final["content"][0]["text"] == "Summarized and continuing."


async def test_manual_compact_order_and_response(start, home):
    """session_op compact: status compacting, the compaction event, the correlated response with the
    same figures, then status idle; the config's threshold and enabled flag do not matter.

    Covers: R9.2.45, R9.2.46, R9.2.47, R9.2.54, R9.2.55, R9.2.57, R9.2.58, R9.2.50
    """
    steps = [text_step(f"answer number {i} " + "x" * 400) for i in range(4)]
    agent = await start(steps, **_compaction_toml(window=1_000_000, enabled=False))
    _, sync = await agent.handshake()
    for i in range(4):
        await _turn(agent, f"question {i} " + "y" * 400)
    resp, before = await agent.request(
        {"type": "session_op", "id": "c", "op": "compact", "args": {"keep_recent_tokens": 150}}
    )
    after = await agent.next()
    assert [m["type"] for m in before] == ["status", "compaction"]
    assert before[0]["status"] == "compacting"
    assert after == {"type": "status", "status": "idle"}
    data = resp["data"]
    assert data["compacted"] is True
    event = before[1]
    for key in ("index", "tokens_before", "tokens_after", "first_kept_entry_id", "message_range"):
        assert data[key] == event[key]
    entries = _entries(home, sync["session_id"])
    messages = [e["id"] for e in entries if e["kind"] == "message"]
    assert data["message_range"][0] == messages[0]
    kept_at = messages.index(data["first_kept_entry_id"])
    assert data["message_range"][1] == messages[kept_at - 1]
    assert kept_at < len(messages) - 1, "keep_recent_tokens=150 kept only the latest messages"


async def test_compact_with_nothing_to_cut_is_a_noop(start):
    """An empty or too-small window is a successful no-op (no_safe_cut) with the same status bracket.

    Covers: R9.2.56, R9.2.59
    """
    agent = await start([text_step("ok")], **_compaction_toml())
    await agent.handshake()
    resp, before = await agent.request({"type": "session_op", "id": "c", "op": "compact"})
    assert resp["data"] == {"compacted": False, "reason": "no_safe_cut"}
    assert before == [{"type": "status", "status": "compacting"}]
    assert await agent.next() == {"type": "status", "status": "idle"}


async def test_compact_during_a_turn_is_conflict_and_appends_nothing(start, home):
    """compact while a turn runs is CONFLICT, never queued: no compaction entry, no event later.

    Covers: R9.2.48, R9.2.49, R8.20
    """
    steps = [{"blocks": [{"type": "text", "text": "thinking long"}, {"type": "pause", "ms": 400}]}]
    agent = await start(steps, **_compaction_toml())
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.until_type("message_delta")
    resp, _ = await agent.request({"type": "session_op", "id": "c", "op": "compact"})
    assert resp["success"] is False
    assert resp["error"]["code"] == "CONFLICT"
    read = await agent.idle()
    assert "compaction" not in types(read)
    assert all(e["kind"] != "compaction" for e in _entries(home, sync["session_id"]))


async def test_failed_or_empty_summary_is_internal_error(start, home):
    """A summarizer that fails, or returns nothing, is INTERNAL_ERROR: nothing appended, no event,
    and status goes back to idle.

    Covers: R9.2.53, R9.2.59
    """
    for extra in ({"summary": "   "}, {"summary_error": "model unavailable"}):
        steps = [text_step("a " * 300), text_step("b " * 300), text_step("c")]
        agent = await start(steps, **_compaction_toml(), script_extra=extra)
        _, sync = await agent.handshake()
        for i in range(3):
            await _turn(agent, f"q{i} " + "z" * 300)
        resp, before = await agent.request({"type": "session_op", "id": "c", "op": "compact"})
        assert resp["error"]["code"] == "INTERNAL_ERROR"
        assert [m["type"] for m in before] == ["status"]
        assert await agent.next() == {"type": "status", "status": "idle"}
        assert all(e["kind"] != "compaction" for e in _entries(home, sync["session_id"]))
        await agent.kill()


async def test_compact_without_a_model_is_not_found(home, project):
    """With no model configured there is nothing to summarize with: NOT_FOUND, and no status change.

    Covers: R9.2.52
    """
    home.mkdir(parents=True)
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        resp, before = await agent.request({"type": "session_op", "id": "c", "op": "compact"})
        assert resp["error"]["code"] == "NOT_FOUND"
        assert before == []
    finally:
        await agent.kill()


async def test_disabled_compaction_never_triggers_automatically(start, home, project):
    """compaction.enabled = false: a session far past the window does not compact on its own.

    Covers: R9.2.47
    """
    (project / "big.txt").write_text(BIG)
    steps = [tool_step("read", {"path": "big.txt"}), text_step("done")]
    agent = await start(steps, **_compaction_toml(window=5000, enabled=False))
    await agent.handshake()
    read = await _turn(agent, "read")
    assert "compaction" not in types(read)
    assert "compacting" not in [m.get("status") for m in read]


async def test_recall_returns_the_original_messages_exactly(start, home, project):
    """After a compaction, recall gives back the summarized messages byte for byte as they were
    recorded, and the summary the model sees names the recall tool and the index.

    Covers: R9.4.22
    """
    (project / "notes.txt").write_text("alpha\nbeta\n")
    steps = [
        tool_step("read", {"path": "notes.txt"}, text="Reading the notes."),
        text_step("They list alpha and beta. " + "z" * 300),
        text_step("More context " + "w" * 300),
        tool_step("recall", {"index": 1}),
        text_step("Recalled."),
    ]
    agent = await start(steps, **_compaction_toml())
    _, sync = await agent.handshake()
    first = await _turn(agent, "read the notes " + "q" * 300)
    await _turn(agent, "and more " + "r" * 300)
    resp, _ = await agent.request(
        {"type": "session_op", "id": "c", "op": "compact", "args": {"keep_recent_tokens": 100}}
    )
    assert resp["data"]["compacted"] is True
    await agent.next()
    read = await _turn(agent, "what did we do first?")
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is False
    header, *lines = result["content"]["text"].split("\n")
    assert header.startswith("[compaction 1:")
    entries = _entries(home, sync["session_id"])
    first_id, last_id = resp["data"]["message_range"]
    ids = [e["id"] for e in entries]
    span = [
        e
        for e in entries[ids.index(first_id) : ids.index(last_id) + 1]
        if e["kind"] in ("message", "tool_result")
    ]
    assert len(lines) == len(span)
    raw_file = _session(home, sync["session_id"]).read_bytes()
    for line, entry in zip(lines, span, strict=True):
        if entry["kind"] == "message":
            assert orjson.dumps(entry["message"]).decode() == line
            assert orjson.dumps(entry["message"]) in raw_file, "byte-identical to what was recorded"
    originals = [m["message"] for m in first if m["type"] == "message_complete"]
    assert [orjson.loads(x) for x in lines][: len(originals)][0] == originals[0]
    requests = [orjson.loads(x) for x in (home / "requests.jsonl").read_bytes().splitlines()]
    turn_requests = [r for r in requests if r["purpose"] == "turn"]
    summary_seen = turn_requests[-1]["messages"][0]["content"][0]["text"]
    assert "recall tool" in summary_seen
    assert "index 1" in summary_seen


async def test_three_compactions_restore_correctly(start, home):
    """A session compacted three times restores in a new process with the latest summary first,
    compaction_index 3, and exactly the kept messages after it; the next turn continues.

    Covers: R6.4.21, R9.1.4
    """
    steps = [text_step(f"reply {i} " + "k" * 300) for i in range(7)]
    agent = await start(steps, **_compaction_toml())
    _, sync = await agent.handshake()
    for round_ in range(3):
        for i in range(2):
            await _turn(agent, f"round {round_} question {i} " + "p" * 300)
        resp, _ = await agent.request(
            {"type": "session_op", "id": f"c{round_}", "op": "compact", "args": {"keep_recent_tokens": 100}}
        )
        assert resp["data"]["compacted"] is True
        assert resp["data"]["index"] == round_ + 1
        await agent.next()
    live_before = (await agent.request({"type": "session_op", "id": "l", "op": "list"}))[0]
    assert live_before["success"] is True
    assert await agent.finish() == 0
    again = await start(None, "--session", sync["session_id"])
    _, restored = await again.handshake()
    window = restored["live_window"]
    assert window["compaction_index"] == 3
    summary = window["messages"][0]
    assert summary["role"] == "user"
    assert "compaction 3" in summary["content"][0]["text"]
    assert "index 1..3" in summary["content"][0]["text"]
    entries = _entries(home, sync["session_id"])
    last = [e for e in entries if e["kind"] == "compaction"][-1]
    kept_ids = [m["id"] for m in window["messages"][1:]]
    assert kept_ids[0] == last["first_kept_entry_id"]
    message_ids = [e["id"] for e in entries if e["kind"] in ("message", "tool_result")]
    assert kept_ids == message_ids[message_ids.index(kept_ids[0]) :]
    read = await _turn(again, "continue")
    assert [m for m in read if m["type"] == "message_complete"][-1]["message"]["content"][0][
        "text"
    ].startswith("reply 6")


async def test_restore_reads_but_never_rewrites(start, home):
    """Restoring a compacted session does not change its file."""
    steps = [text_step("one " + "a" * 300), text_step("two " + "b" * 300)]
    agent = await start(steps, **_compaction_toml())
    _, sync = await agent.handshake()
    await _turn(agent, "first " + "c" * 300)
    await _turn(agent, "second " + "d" * 300)
    await agent.request(
        {"type": "session_op", "id": "c", "op": "compact", "args": {"keep_recent_tokens": 50}}
    )
    await agent.next()
    await agent.finish()
    digest = hashlib.sha256(_session(home, sync["session_id"]).read_bytes()).hexdigest()
    again = await start(None, "--session", sync["session_id"])
    await again.handshake()
    assert await again.finish() == 0
    assert hashlib.sha256(_session(home, sync["session_id"]).read_bytes()).hexdigest() == digest

"""session_op fork and session_op list (PROTOCOL §9.2)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from shard.agent.boot import AgentOptions, prepare, sync_line
from shard.agent.runtime import Runtime
from shard.testing import text_step, tool_step, types, write_scripted_home


def _file(home: Path, session_id: str) -> Path:
    return home / "sessions" / session_id / "session.jsonl"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def _turn(agent, message: str) -> list[dict]:
    await agent.send({"type": "prompt", "message": message})
    return await agent.idle()


async def test_fork_copies_the_window_and_leaves_the_source_alone(start, home, project):
    """fork at an entry writes a new session under forks/ whose first row is the fork marker, with
    copies of the window's rows under fresh ids and the grants; the source file keeps every byte;
    the fork restores in a new process with the same conversation and continues with its grants.

    Covers: R9.2.60, R9.2.61, R9.2.62, R9.2.63, R9.2.64, R9.2.66
    """
    steps = [
        tool_step("write", {"path": "a.txt", "content": "A"}),
        text_step("wrote it"),
        text_step("second answer"),
        text_step("after fork: continuing"),
        tool_step("write", {"path": "a.txt", "content": "A"}),
        text_step("granted write ran"),
    ]
    agent = await start(steps)
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "write a"})
    request = (await agent.until_type("permission_request"))[-1]
    await agent.send(
        {"type": "permission_response", "request_id": request["request_id"], "decision": "allow_always"}
    )
    first = await agent.idle()
    await _turn(agent, "second question")
    source = _file(home, sync["session_id"])
    before = _digest(source)
    fork_point = [m for m in first if m["type"] == "message_complete"][-1]["message_id"]
    resp, events = await agent.request(
        {"type": "session_op", "id": "f", "op": "fork", "args": {"from_entry_id": fork_point}}
    )
    assert events == []
    data = resp["data"]
    assert data["fork_id"].startswith("fork-")
    assert data["session_id"].startswith("sess-")
    assert data["session_id"] != sync["session_id"]
    assert _digest(source) == before, "the source is not modified by a single byte"
    fork_file = source.parent / "forks" / data["session_id"] / "session.jsonl"
    rows = [orjson.loads(line) for line in fork_file.read_bytes().splitlines()]
    marker = rows[0]
    assert marker["kind"] == "checkpoint"
    assert marker["artifactKind"] == "fork"
    assert marker["forkId"] == data["fork_id"]
    assert marker["sourceSessionId"] == sync["session_id"]
    assert marker["sourceEntryId"] == fork_point
    assert marker["parent_id"] is None
    assert data["head_entry_id"] == rows[-1]["id"]
    source_ids = {orjson.loads(line)["id"] for line in source.read_bytes().splitlines()}
    assert not source_ids & {r["id"] for r in rows[1:]}, "fresh ids"
    assert any(r["kind"] == "grant" for r in rows)
    await agent.finish()

    forked = await start(None, "--session", data["session_id"])
    _, fsync = await forked.handshake()
    texts = [m["content"][0].get("text") for m in fsync["live_window"]["messages"]]
    assert texts[0] == "write a"
    assert "second question" not in texts, "the window stops at the fork point"
    read = await _turn(forked, "go on")
    assert "permission_request" not in types(read[:3])
    await _turn(forked, "write again")
    assert not any(m["type"] == "permission_request" for m in forked.seen), "the grant came along"
    assert _digest(source) == before


async def test_fork_error_mapping(start, home):
    """A missing or empty from_entry_id is INVALID_REQUEST, an unknown one NOT_FOUND, a fork during
    a turn CONFLICT, and a fork file that cannot be written INTERNAL_ERROR.

    Covers: R9.2.67, R9.2.68, R9.2.69, R9.2.70
    """
    steps = [text_step("one"), {"blocks": [{"type": "text", "text": "slow"}, {"type": "pause", "ms": 500}]}]
    agent = await start(steps)
    _, sync = await agent.handshake()
    first = await _turn(agent, "hi")
    entry = [m for m in first if m["type"] == "message_complete"][-1]["message_id"]
    for args, code in (
        ({}, "INVALID_REQUEST"),
        ({"from_entry_id": ""}, "INVALID_REQUEST"),
        ({"from_entry_id": "msg-nope"}, "NOT_FOUND"),
    ):
        resp, _ = await agent.request({"type": "session_op", "id": "f", "op": "fork", "args": args})
        assert resp["error"]["code"] == code, args
    await agent.send({"type": "prompt", "message": "again"})
    await agent.until_type("message_delta")
    resp, _ = await agent.request(
        {"type": "session_op", "id": "busy", "op": "fork", "args": {"from_entry_id": entry}}
    )
    assert resp["error"]["code"] == "CONFLICT"
    await agent.idle()
    (_file(home, sync["session_id"]).parent / "forks").write_text("not a folder")
    resp, _ = await agent.request(
        {"type": "session_op", "id": "io", "op": "fork", "args": {"from_entry_id": entry}}
    )
    assert resp["error"]["code"] == "INTERNAL_ERROR"


async def test_session_list_shows_this_cwds_sessions_newest_first(start, home, project, tmp_path):
    """list: the sessions of this cwd with id, title from the first prompt, created, updated,
    message count and forks with their source, newest first; other folders' sessions are not there.

    Covers: R9.2.43
    """
    steps = [text_step("a"), text_step("b"), text_step("c")]
    one = await start(steps)
    _, s1 = await one.handshake()
    first = await _turn(one, "First session: fix the login bug")
    await one.finish()
    two = await start(None)
    _, s2 = await two.handshake()
    await _turn(two, "Second session about docs")
    entry = [m for m in first if m["type"] == "message_complete"][-1]["message_id"]
    await two.finish()
    other = tmp_path / "elsewhere"
    other.mkdir()
    from shard.testing import AgentProcess

    stranger = await AgentProcess.start(home, other)
    await stranger.handshake()
    await _turn(stranger, "someone else's")
    await stranger.finish()

    three = await start(None, "--session", s1["session_id"])
    await three.handshake()
    fork, _ = await three.request(
        {"type": "session_op", "id": "f", "op": "fork", "args": {"from_entry_id": entry}}
    )
    resp, _ = await three.request({"type": "session_op", "id": "l", "op": "list"})
    sessions = resp["data"]["sessions"]
    ids = [s["session_id"] for s in sessions]
    assert set(ids) == {s1["session_id"], s2["session_id"], fork["data"]["session_id"]}
    assert sessions == sorted(sessions, key=lambda s: s["updated"], reverse=True)
    by_id = {s["session_id"]: s for s in sessions}
    assert by_id[s1["session_id"]]["title"] == "First session: fix the login bug"
    assert by_id[s2["session_id"]]["message_count"] == 2
    assert by_id[s1["session_id"]]["forks"] == [
        {
            "session_id": fork["data"]["session_id"],
            "source_session_id": s1["session_id"],
            "source_entry_id": entry,
            "created": by_id[fork["data"]["session_id"]]["created"],
        }
    ]
    assert by_id[fork["data"]["session_id"]]["source_session_id"] == s1["session_id"]
    assert all(isinstance(s["created"], int | float) and s["updated"] >= s["created"] for s in sessions)


async def test_phase_a_sync_matches_the_runtime_sync(tmp_path: Path):
    """The sync written before the runtime loads is exactly what the runtime itself would send, for a
    session with tool results, a compaction and a mode change.

    Covers: R9.1.4, R9.1.12
    """
    home = write_scripted_home(
        tmp_path / "home",
        [tool_step("ls", {}), text_step("x" * 400), text_step("y" * 400)],
        extra_toml="\n[compaction]\nkeep_recent_tokens = 50\n",
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    prepared = prepare(AgentOptions(home=str(home), cwd=str(cwd)))

    def runtime_for(p):
        return Runtime.from_prepared(p, sink=lambda e: None, has_responder=False)

    rt = runtime_for(prepared)
    await rt.handle(b'{"type":"prompt","message":"list it"}')
    await rt.wait_idle()
    await rt.handle(b'{"type":"prompt","message":"and more"}')
    await rt.wait_idle()
    await rt.handle(b'{"type":"session_op","op":"compact","args":{"keep_recent_tokens":50}}')
    await rt.wait_idle()
    await rt.handle(b'{"type":"set_mode","mode":"plan"}')
    assert rt.transcript.view.compaction_index == 1
    session_id = prepared.store.session_id
    prepared.store.close()
    restored = prepare(AgentOptions(home=str(home), session=session_id))
    phase_a = orjson.loads(sync_line(restored))
    runtime_sync = runtime_for(restored).sync().to_wire()
    assert phase_a == runtime_sync
    assert phase_a["live_window"]["compaction_index"] == 1
    assert phase_a["mode"] == "plan"


async def test_a_runtime_alone_refuses_session_activate_and_serves_on(start):
    """``session.activate`` makes an agent of the daemon's: a runtime without one answers
    INVALID_REQUEST, naming ``shard agent --session``, and goes on answering.

    Covers: R9.2.65
    """
    agent = await start([text_step("still here")])
    await agent.handshake()
    resp, _ = await agent.request({"type": "session.activate", "id": "a", "session_id": "sess-x"})
    assert resp["success"] is False
    assert resp["error"]["code"] == "INVALID_REQUEST"
    assert "shard agent --session" in resp["error"]["message"]
    listed, _ = await agent.request({"type": "session_op", "id": "l", "op": "list"})
    assert listed["success"] is True
    await agent.finish()

"""Failures mid-turn: provider errors, tool errors, refusals, and fatal runtime errors (PROTOCOL §8,
§9.4)."""

from __future__ import annotations

from pathlib import Path

from shard.testing import AgentProcess, recorded_requests, text_step, tool_step, types


async def test_provider_error_is_not_fatal_and_keeps_partial(start, home):
    """A provider failure mid-stream: the partial message is kept (marked incomplete), an error event
    PROVIDER_ERROR with fatal false, turn_end, idle — and the next prompt works.

    Covers: R8.2, R8.17, R9.4.23, R9.4.25
    """
    steps = [
        {"blocks": [{"type": "text", "text": "half an ans"}], "error": "upstream reset the connection"},
        text_step("recovered"),
    ]
    agent = await start(steps)
    _, _sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    seq = [t for t in types(read) if t not in ("message_delta", "status")]
    assert seq == ["response", "turn_start", "message_complete", "message_complete", "error", "turn_end"]
    error = next(m for m in read if m["type"] == "error")
    assert error == {
        "type": "error",
        "code": "PROVIDER_ERROR",
        "message": "scripted provider: upstream reset the connection",
        "fatal": False,
    }
    partial = [m for m in read if m["type"] == "message_complete"][-1]["message"]
    assert partial["content"] == [{"type": "text", "text": "half an ans"}]
    session = next((home / "sessions").glob("*/session.jsonl")).read_text()
    assert '"incomplete":"error"' in session
    await agent.send({"type": "prompt", "message": "again"})
    read2 = await agent.idle()
    assert [m for m in read2 if m["type"] == "message_complete"][-1]["message"]["content"][0][
        "text"
    ] == "recovered"
    assert "error" not in types(read2)


async def test_tool_crash_reports_tool_error_and_continues(start, home):
    """A tool that crashes: an error event TOOL_ERROR (not fatal) and a tool_result with is_error;
    the model gets the error and the turn goes on.

    Covers: R8.18, R8.19, R9.4.25
    """
    agent = await start([tool_step("crash", {}), text_step("I saw the crash.")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    error = next(m for m in read if m["type"] == "error")
    assert error["code"] == "TOOL_ERROR"
    assert error["fatal"] is False
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert result["content"]["kind"] == "error"
    assert "RuntimeError" in result["content"]["message"]
    assert types(read).index("tool_call") < types(read).index("error") < types(read).index("tool_result")
    second = recorded_requests(home)[1]["messages"][-1]["content"][0]
    assert second["type"] == "tool_result"
    assert second["is_error"] is True


async def test_expected_tool_failure_is_a_tool_result_only(start):
    """A tool's explained failure (missing file) is a tool_result with is_error, no error event.

    Covers: R8.18
    """
    agent = await start([tool_step("read", {"path": "missing.txt"}), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert "no such file" in result["content"]["message"]
    assert "error" not in types(read)


async def test_unknown_tool_and_bad_arguments_are_refused_before_running(start):
    """A call to a tool that does not exist, or with arguments that do not fit, never starts (no
    tool_call event) and returns an error naming the problem.

    Covers: R9.4.9
    """
    steps = [
        {
            "blocks": [
                {"type": "tool_call", "name": "teleport", "args": {}},
                {"type": "tool_call", "name": "read", "args": {"path": 7}},
                {"type": "tool_call", "name": "read", "args": {"path": "config.json", "colour": "red"}},
            ]
        },
        text_step("ok"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    assert "tool_call" not in types(read)
    results = [m for m in read if m["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True, True, True]
    assert "no tool named 'teleport'" in results[0]["content"]["message"]
    assert "path" in results[1]["content"]["message"]
    assert "colour" in results[2]["content"]["message"]


async def test_read_outside_cwd_asks_and_a_denial_never_runs_it(start, tmp_path):
    """A read-only tool runs freely inside the cwd; a path outside it goes through the gate, which
    asks; denied, the tool never starts and nothing of the file reaches anyone.

    Covers: R4.3.4, R9.4.9
    """
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    steps = [tool_step("read", {"path": str(secret)}), text_step("ok")]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.until_type("permission_request")
    request = read[-1]
    assert request["tool_name"] == "read"
    assert "outside the working directory" in request["prompt"]
    await agent.send({"type": "permission_response", "request_id": request["request_id"], "decision": "deny"})
    read = await agent.idle()
    assert "tool_call" not in types(read)
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert "denied" in result["content"]["message"]
    assert "top secret" not in str(agent.seen)


async def test_mutating_tool_is_denied_when_nobody_can_answer(start, project):
    """With no client left to answer (stdin closed) the default headless policy denies a mutating
    tool: permission_resolved {deny, source: headless}, and nothing changes on disk.

    Covers: R4.3.4, R6.3.14
    """
    step = tool_step("touch", {"path": "made.txt"})
    step["blocks"].insert(0, {"type": "pause", "ms": 300})  # stdin closes before the gate runs
    agent = await start([step, text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.close_stdin()
    read = await agent.idle()
    resolved = next(m for m in read if m["type"] == "permission_resolved")
    assert resolved["decision"] == "deny"
    assert resolved["source"] == "headless"
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert "headless" in result["content"]["message"]
    assert not (project / "made.txt").exists()
    assert await agent.finish() == 0


async def test_no_model_configured_says_how_to_configure(home: Path, project: Path):
    """With no model configured the prompt is refused with instructions; nothing is recorded.

    Covers: R8.1, R8.17
    """
    home.mkdir(parents=True)
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        resp, _ = await agent.request({"type": "prompt", "id": "p", "message": "hello"})
        assert resp["success"] is False
        assert resp["error"]["code"] == "PROVIDER_ERROR"
        msg = resp["error"]["message"]
        assert "config.toml" in msg
        assert "[[providers]]" in msg
        assert "--model" in msg
        assert await agent.finish() == 0
        assert not (home / "sessions").exists()
    finally:
        await agent.kill()


async def test_session_write_failure_is_fatal(start, home):
    """If the session cannot be written, the agent reports a fatal INTERNAL_ERROR, goes to status
    error and refuses further prompts rather than run on unrecorded.

    Covers: R8.16, R9.4.24, R9.1.20
    """
    agent = await start([text_step("ok")])
    _, sync = await agent.handshake()
    (home / "sessions").mkdir(parents=True, exist_ok=True)
    (home / "sessions" / sync["session_id"]).write_text("a file where the session folder must go")
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.until(lambda m: m["type"] == "status" and m["status"] == "error")
    error = next(m for m in read if m["type"] == "error")
    assert error["code"] == "INTERNAL_ERROR"
    assert error["fatal"] is True
    resp, _ = await agent.request({"type": "prompt", "id": "p2", "message": "again"})
    assert resp["success"] is False
    assert resp["error"]["code"] == "INTERNAL_ERROR"
    assert await agent.finish() == 3

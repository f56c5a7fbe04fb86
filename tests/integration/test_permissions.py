"""The PermissionGate on a direct connection (PROTOCOL §4.3, §9.5; DESIGN §6)."""

from __future__ import annotations

import os
import subprocess

import pytest

from shard.testing import AgentProcess, recorded_requests, text_step, tool_step, types

BOM = b"\xef\xbb\xbf"


def write_step(path: str, content: str, pause_ms: int = 0) -> dict:
    step = tool_step("write", {"path": path, "content": content})
    if pause_ms:  # let the test close stdin before the call reaches the gate
        step["blocks"].insert(0, {"type": "pause", "ms": pause_ms})
    return step


async def _request(agent) -> dict:
    read = await agent.until_type("permission_request")
    return read[-1]


async def _answer(agent, request: dict, **form) -> None:
    await agent.send({"type": "permission_response", "request_id": request["request_id"], **form})


async def test_write_asks_and_a_denial_leaves_the_file_untouched(start, project):
    """A write asks first: the request carries tool_name, input, prompt, options, server-built details
    (path, diff) and choices, status goes to waiting_for_permission; denied, the tool never runs, the
    file keeps every byte, permission_resolved comes once.

    Covers: R9.5.1, R9.5.2, R9.5.3, R9.5.4, R9.5.13, R9.4.9, R9.1.20, R4.3.4
    """
    before = (project / "config.json").read_bytes()
    agent = await start([write_step("config.json", "{}\n"), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "overwrite it"})
    read = await agent.until_type("permission_request")
    request = read[-1]
    assert {"type": "status", "status": "waiting_for_permission"} in agent.seen
    assert request["tool_name"] == "write"
    assert request["input"] == {"path": "config.json", "content": "{}\n"}
    assert "config.json" in request["prompt"]
    assert request["options"] == ["allow", "allow_always", "deny"]
    details = {d["label"]: d for d in request["details"]}
    assert details["path"] == {"label": "path", "value": "config.json", "format": "path"}
    assert details["diff"]["format"] == "code"
    assert '-{"name": "demo", "port": 8080}' in details["diff"]["value"]
    assert "+{}" in details["diff"]["value"]
    intents = {c["id"]: c["intent"] for c in request["choices"]}
    assert intents == {"allow": "allow", "always": "persist", "deny": "deny"}
    assert all(c["id"] and c["label"] for c in request["choices"])
    await _answer(agent, request, decision="deny")
    read = await agent.idle()
    resolved = [m for m in read if m["type"] == "permission_resolved"]
    assert resolved == [
        {
            "type": "permission_resolved",
            "request_id": request["request_id"],
            "decision": "deny",
            "source": "client",
            "tool_call_id": request["tool_call_id"],  # additive: the call the answer goes with
            "intent": "deny",  # additive: what the answer meant, for clients to word it
        }
    ]
    assert "tool_call" not in types(read)
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert (project / "config.json").read_bytes() == before


async def test_allow_always_is_exact(start, project):
    """allow_always stores an exact grant: the identical call then runs without asking, a call with
    different input still asks.

    Covers: R9.5.9, R9.5.7
    """
    steps = [
        write_step("notes.txt", "one\n"),
        write_step("notes.txt", "one\n"),
        write_step("notes.txt", "two\n"),
        text_step("done"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "write"})
    first = await _request(agent)
    await _answer(agent, first, decision="allow_always")
    read = await agent.until_type("permission_request")
    second_call = [m for m in read if m["type"] == "tool_call"]
    assert len(second_call) == 2, "the identical call ran without a request"
    third = read[-1]
    assert third["input"]["content"] == "two\n"
    await _answer(agent, third, decision="allow")
    await agent.idle()
    assert (project / "notes.txt").read_text() == "two\n"
    assert len([m for m in agent.seen if m["type"] == "permission_request"]) == 2


@pytest.fixture
def git_project(project):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "x").mkdir()
    (project / "x" / "keep.txt").write_text("keep me")
    return project


async def test_bash_signature_grant(start, home, git_project, project):
    """A bash_signature grant for `git status` lets later `git status` runs through, but not
    `git status; rm -rf x` — every executable must satisfy it — and it survives a restart.

    Covers: R9.5.8, R9.5.16, R9.5.17, R9.5.18, R9.5.13
    """
    steps = [
        tool_step("bash", {"command": "git status"}),
        tool_step("bash", {"command": "git status"}),
        tool_step("bash", {"command": "git status; rm -rf x"}),
        text_step("done"),
        tool_step("bash", {"command": "git status"}),
        text_step("again"),
    ]
    agent = await start(steps)
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "status"})
    request = await _request(agent)
    like = next(c for c in request["choices"] if c["id"] == "always-like")
    assert like["intent"] == "persist"
    assert "`git status`" in like["label"]
    assert {"label": "command", "value": "git status", "format": "command"} in request["details"]
    await _answer(agent, request, choice_id="always-like")
    read = await agent.until_type("permission_request")
    resolved = next(m for m in read if m["type"] == "permission_resolved")
    assert resolved["choice_id"] == "always-like"
    assert "decision" not in resolved
    assert [m["args"]["command"] for m in read if m["type"] == "tool_call"] == ["git status", "git status"]
    dangerous = read[-1]
    assert dangerous["input"]["command"] == "git status; rm -rf x"
    await _answer(agent, dangerous, choice_id="deny")
    await agent.idle()
    assert (project / "x" / "keep.txt").exists()
    assert await agent.finish() == 0
    again = await start(None, "--session", sync["session_id"])
    await again.handshake()
    await again.send({"type": "prompt", "message": "status again"})
    read = await again.idle()
    assert "permission_request" not in types(read), "the grant was restored with the session"
    assert [m["args"]["command"] for m in read if m["type"] == "tool_call"] == ["git status"]


async def test_first_response_wins_and_the_second_is_dropped(start, project):
    """Two answers: the first valid one wins; the second is acknowledged but changes nothing and no
    second permission_resolved is sent.

    Covers: R6.3.3, R6.3.5, R9.5.13, R5.1.4
    """
    agent = await start([write_step("a.txt", "A"), text_step("ok")])
    await agent.handshake()
    before = len(agent.seen)
    await agent.send({"type": "prompt", "message": "go"})
    request = await _request(agent)
    await _answer(agent, request, decision="allow")
    # its response may come before or after the turn ends (the turn does not wait for stdin)
    late, _ = await agent.request(
        {"type": "permission_response", "id": "late", "request_id": request["request_id"], "decision": "deny"}
    )
    assert late["success"] is True
    if not any(m.get("type") == "status" and m.get("status") == "idle" for m in agent.seen[before:]):
        await agent.idle()
    assert len([m for m in agent.seen if m["type"] == "permission_resolved"]) == 1
    assert next(m for m in agent.seen if m["type"] == "permission_resolved")["decision"] == "allow"
    assert (project / "a.txt").read_text() == "A"


async def test_unknown_choice_is_refused_and_the_request_stays_open(start, project):
    """An unknown choice_id is invalid and ignored: the request stays open and a valid answer can
    still win. Both forms at once, or neither, is INVALID_REQUEST.

    Covers: R9.5.6, R9.5.10, R9.5.11, R9.5.12
    """
    agent = await start([write_step("a.txt", "A"), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    request = await _request(agent)
    rid = request["request_id"]
    resp, _ = await agent.request(
        {"type": "permission_response", "id": "r1", "request_id": rid, "choice_id": "yolo"}
    )
    assert resp["success"] is False
    assert resp["error"]["code"] == "INVALID_REQUEST"
    resp, _ = await agent.request(
        {
            "type": "permission_response",
            "id": "r2",
            "request_id": rid,
            "choice_id": "allow",
            "decision": "allow",
        }
    )
    assert resp["error"]["code"] == "INVALID_REQUEST"
    resp, _ = await agent.request({"type": "permission_response", "id": "r3", "request_id": rid})
    assert resp["error"]["code"] == "INVALID_REQUEST"
    assert not any(m["type"] == "permission_resolved" for m in agent.seen)
    resp, _ = await agent.request(
        {"type": "permission_response", "id": "r4", "request_id": rid, "choice_id": "allow"}
    )
    assert resp["success"] is True
    await agent.idle()
    resolved = [m for m in agent.seen if m["type"] == "permission_resolved"]
    assert [r["choice_id"] for r in resolved] == ["allow"]
    assert (project / "a.txt").read_text() == "A"


async def test_plan_mode_refuses_edit_without_asking(start, project):
    """plan mode refuses a mutating tool before execution: no permission request, a tool error the
    model sees, the file untouched.

    Covers: R9.2.5, R9.4.12
    """
    before = (project / "config.json").read_bytes()
    steps = [
        tool_step("edit", {"path": "config.json", "edits": [{"old_text": "8080", "new_text": "9090"}]}),
        text_step("ok"),
    ]
    agent = await start(steps, "--mode", "plan")
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "change the port"})
    read = await agent.idle()
    assert "permission_request" not in types(read)
    assert "tool_call" not in types(read)
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert "plan mode" in result["content"]["message"]
    assert (project / "config.json").read_bytes() == before


def _running(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return out.stdout.split()


async def test_abort_kills_backgrounded_children(start):
    """Aborting a running bash call kills its whole process group, including a backgrounded child
    that keeps stdout open.

    Covers: R9.2.7, R9.4.12
    """
    marker = "1234.5678"
    steps = [tool_step("bash", {"command": f"sleep {marker} & sleep {marker}1"}), text_step("ok")]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    request = await _request(agent)
    await _answer(agent, request, decision="allow")
    call = (await agent.until_type("tool_call"))[-1]
    assert call["read_only"] is False
    try:
        resp, before = await agent.request({"type": "abort", "id": "a"})
        assert resp["success"] is True
        result = next(m for m in before if m["type"] == "tool_result")
        assert result["is_error"] is True
        assert _running(marker) == []
    finally:
        for pid in _running(marker):
            os.kill(int(pid), 9)


async def test_edit_keeps_crlf_and_bom(start, project):
    """An approved edit through the agent changes only its span; the BOM and CRLF endings stay.

    Covers: R9.4.14
    """
    path = project / "win.txt"
    path.write_bytes(BOM + b"first line\r\nport = 8080\r\nlast line\r\n")
    steps = [
        tool_step(
            "edit", {"path": "win.txt", "edits": [{"old_text": "port = 8080\n", "new_text": "port = 9090\n"}]}
        ),
        text_step("ok"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "edit"})
    request = await _request(agent)
    assert "-port = 8080" in next(d["value"] for d in request["details"] if d["label"] == "diff")
    await _answer(agent, request, decision="allow")
    read = await agent.idle()
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is False
    assert result["render"]["kind"] == "diff"
    assert path.read_bytes() == BOM + b"first line\r\nport = 9090\r\nlast line\r\n"


async def test_edit_that_cannot_apply_is_not_asked(start, project):
    """An edit whose old_text is not in the file fails before anyone is asked to approve it."""
    steps = [
        tool_step("edit", {"path": "config.json", "edits": [{"old_text": "nowhere", "new_text": "x"}]}),
        text_step("ok"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "edit"})
    read = await agent.idle()
    assert "permission_request" not in types(read)
    result = next(m for m in read if m["type"] == "tool_result")
    assert "not found" in result["content"]["message"]


async def test_abort_while_waiting_for_permission(start, project):
    """Aborting while a request waits resolves it (deny, source abort) so clients close the dialog,
    and the turn ends idle.

    Covers: R9.2.7, R6.3.6
    """
    agent = await start([write_step("a.txt", "A"), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    request = await _request(agent)
    resp, before = await agent.request({"type": "abort", "id": "a"})
    assert resp["success"] is True
    resolved = next(m for m in before if m["type"] == "permission_resolved")
    assert resolved == {
        "type": "permission_resolved",
        "request_id": request["request_id"],
        "decision": "deny",
        "source": "abort",
        "tool_call_id": request["tool_call_id"],
        "intent": "deny",
    }
    assert before[-1] == {"type": "status", "status": "idle"}
    assert not (project / "a.txt").exists()


async def test_headless_allow_if_rule_matches(start, home, project):
    """allow_if_rule_matches: with nobody to ask, a call covered by a stored grant runs and any other
    is denied. Under the default policy (deny) even the granted call is denied.

    Covers: R6.3.14, R4.3.4
    """
    steps = [
        write_step("a.txt", "A"),
        text_step("granted"),
        write_step("a.txt", "A"),
        write_step("b.txt", "B"),
        text_step("end"),
    ]
    agent = await start(steps)
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "first"})
    await _answer(agent, await _request(agent), decision="allow_always")
    await agent.idle()
    await agent.finish()
    (project / "a.txt").unlink()
    strict = await start(None, "--session", sync["session_id"], "--headless-policy", "allow_if_rule_matches")
    await strict.handshake()
    await strict.send({"type": "prompt", "message": "second"})
    await strict.close_stdin()
    read = await strict.idle()
    calls = [m["args"]["path"] for m in read if m["type"] == "tool_call"]
    assert calls == ["a.txt"]
    resolved = [m for m in read if m["type"] == "permission_resolved"]
    assert [(r["decision"], r["source"]) for r in resolved] == [("deny", "headless")]
    assert (project / "a.txt").exists()
    assert not (project / "b.txt").exists()


async def test_headless_deny_ignores_grants(start, home, project):
    """Under the default headless policy nothing that needs approval runs unattended, grants or not.

    Covers: R6.3.14
    """
    steps = [
        write_step("a.txt", "A"),
        text_step("granted"),
        write_step("a.txt", "A", pause_ms=300),
        text_step("end"),
    ]
    agent = await start(steps)
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "first"})
    await _answer(agent, await _request(agent), decision="allow_always")
    await agent.idle()
    await agent.finish()
    (project / "a.txt").unlink()
    again = await start(None, "--session", sync["session_id"])
    await again.handshake()
    await again.send({"type": "prompt", "message": "second"})
    await again.close_stdin()
    read = await again.idle()
    assert "tool_call" not in types(read)
    assert not (project / "a.txt").exists()


async def test_headless_queue_times_out_into_deny(start, project):
    """queue: with nobody to answer, the request stays open until the headless timeout, then
    error TIMEOUT and deny.

    Covers: R6.4.24, R8.13
    """
    agent = await start(
        [write_step("a.txt", "A", pause_ms=300), text_step("ok")],
        "--headless-policy",
        "queue",
        extra_toml="\n[permissions]\nheadless_timeout = 0.5\n",
    )
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.close_stdin()
    read = await agent.idle()
    seq = [t for t in types(read) if t in ("permission_request", "error", "permission_resolved")]
    assert seq == ["permission_request", "error", "permission_resolved"]
    error = next(m for m in read if m["type"] == "error")
    assert error["code"] == "TIMEOUT"
    assert error["fatal"] is False
    resolved = next(m for m in read if m["type"] == "permission_resolved")
    assert (resolved["decision"], resolved["source"]) == ("deny", "timeout")
    assert not (project / "a.txt").exists()


async def test_tools_do_not_see_provider_keys(start, home, project):
    """Commands the agent runs never see the provider keys (a model could print them).

    Covers: R4.1.0.5
    """
    extra = (
        '\n[[providers]]\nname = "remote"\nkind = "openai"\n'
        'api_key_env = "SHARD_TEST_SECRET"\nmodels = [{ id = "x" }]\n'
    )
    steps = [
        tool_step("bash", {"command": 'echo "key=[$SHARD_TEST_SECRET] other=[$OTHER_VAR]"'}),
        text_step("ok"),
    ]
    from shard.testing import write_scripted_home

    write_scripted_home(home, steps, extra_toml=extra, extensions=[])
    agent = await AgentProcess.start(
        home, project, env={"SHARD_TEST_SECRET": "s3cr3t-value", "OTHER_VAR": "visible"}
    )
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        await _answer(agent, await _request(agent), decision="allow")
        read = await agent.idle()
        result = next(m for m in read if m["type"] == "tool_result")
        assert result["content"]["text"] == "key=[] other=[visible]\n"
        assert result["exit_code"] == 0
        assert "s3cr3t-value" not in str(agent.seen)
        history = recorded_requests(home)[-1]["messages"][-1]["content"][0]["content"]["text"]
        assert history.endswith("[exit code: 0]"), "the model sees the exit code as text"
    finally:
        await agent.kill()


async def test_bash_reports_exit_code_and_duration_not_a_command_render(start):
    """bash carries no `command` RenderDescriptor: the call line shows the command and the result
    reports exit_code and duration_ms as data, with the pure output as content.

    Covers: R11.0.14, R9.4.16, R9.4.15
    """
    agent = await start([tool_step("bash", {"command": "echo out; exit 3"}), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "run"})
    await _answer(agent, await _request(agent), decision="allow")
    read = await agent.idle()
    call = next(m for m in read if m["type"] == "tool_call")
    result = next(m for m in read if m["type"] == "tool_result")
    assert "render" not in call
    assert "render" not in result
    assert result["exit_code"] == 3
    assert isinstance(result["duration_ms"], int | float)
    assert result["content"] == {"kind": "text", "text": "out\n"}

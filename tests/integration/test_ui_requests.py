"""UI requests from tools (PROTOCOL §9.5): ui_request, ui_response, ui_resolved."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shard.agent.boot import AgentOptions, prepare
from shard.agent.runtime import Runtime
from shard.testing import text_step, tool_step, types, write_scripted_home


def ask_step(**args) -> dict:
    return tool_step("ask", args)


async def test_select_round_trip(start):
    """A tool's select question reaches the client as ui_request; the first valid answer resolves it
    (ui_resolved once) and the tool gets the value; status waits on the UI meanwhile.

    Covers: R9.5.19, R9.5.20, R9.5.21, R9.5.22, R6.3.4, R6.3.5, R6.3.7, R5.1.8
    """
    steps = [ask_step(kind="select", title="Pick", options=["red", "green"]), text_step("ok")]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "ask me"})
    request = (await agent.until_type("ui_request"))[-1]
    assert request["kind"] == "select"
    assert request["options"] == ["red", "green"]
    assert request["title"] == "Pick"
    assert {"type": "status", "status": "waiting_for_ui"} in agent.seen
    resp, _ = await agent.request(
        {"type": "ui_response", "id": "bad", "request_id": request["request_id"], "value": "blue"}
    )
    assert resp["success"] is False
    assert resp["error"]["code"] == "INVALID_REQUEST"
    await agent.send({"type": "ui_response", "request_id": request["request_id"], "value": "green"})
    await agent.send(
        {"type": "ui_response", "id": "late", "request_id": request["request_id"], "value": "red"}
    )
    read = await agent.idle()
    resolved = [m for m in agent.seen if m["type"] == "ui_resolved"]
    assert len(resolved) == 1
    assert resolved[0]["request_id"] == request["request_id"]
    assert resolved[0]["value"] == "green"
    result = next(m for m in read if m["type"] == "tool_result")
    # the late answer's response may come after the turn's idle status (the runtime reads it then)
    late = next((m for m in agent.seen if m.get("id") == "late"), None)
    if late is None:
        late = (await agent.until(lambda m: m.get("id") == "late"))[-1]
    assert late["success"] is True
    assert result["content"] == {"kind": "json", "value": {"answer": "green"}}


async def test_confirm_and_input(start):
    """confirm answers yes/no (the tool gets a boolean); input takes any text; null dismisses.

    Covers: R9.5.20, R9.5.21
    """
    steps = [
        {
            "blocks": [
                {"type": "tool_call", "name": "ask", "args": {"kind": "confirm", "message": "Sure?"}},
                {"type": "tool_call", "name": "ask", "args": {"kind": "input", "prefill": "abc"}},
                {"type": "tool_call", "name": "ask", "args": {"kind": "editor"}},
            ]
        },
        text_step("ok"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    answers = ["yes", "typed text", None]
    for answer in answers:
        request = (await agent.until_type("ui_request"))[-1]
        await agent.send({"type": "ui_response", "request_id": request["request_id"], "value": answer})
    read = await agent.idle()
    results = [m["content"]["value"]["answer"] for m in agent.seen if m["type"] == "tool_result"]
    assert results == [True, "typed text", None]
    assert "error" not in types(read)


async def test_headless_ui_request_resolves_null(start):
    """With nobody to answer, a UI request resolves with null at once.

    Covers: R6.3.15
    """
    step = ask_step(kind="select", options=["a", "b"])
    step["blocks"].insert(0, {"type": "pause", "ms": 300})  # stdin closes before the question
    agent = await start([step, text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.close_stdin()
    read = await agent.idle()
    resolved = next(m for m in read if m["type"] == "ui_resolved")
    assert resolved["value"] is None
    assert resolved["source"] == "headless"
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["content"]["value"] == {"answer": None}


async def test_notify_opens_nothing(start):
    """notify informs only: a ui_request with no pending state and no resolution."""
    agent = await start([ask_step(kind="notify", message="FYI", notify_type="info"), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    notify = next(m for m in read if m["type"] == "ui_request")
    assert notify["kind"] == "notify"
    assert "ui_resolved" not in types(read)
    assert "waiting_for_ui" not in [m.get("status") for m in read]


async def test_pending_requests_appear_in_sync(tmp_path: Path):
    """While a permission request and then a UI request are open, sync carries them in
    pending_requests (what a reconnecting client re-shows); once resolved they are gone.

    Covers: R6.4.22, R9.1.4
    """
    steps = [
        tool_step("write", {"path": "a.txt", "content": "A"}),
        tool_step("ask", {"kind": "input"}),
        text_step("ok"),
    ]
    home = write_scripted_home(tmp_path / "home", steps, extensions=["shard.testing.tools:AskTool"])
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    prepared = prepare(AgentOptions(home=str(home), cwd=str(cwd)))
    runtime, _, until = _recording(prepared)

    await runtime.handle(b'{"type":"prompt","message":"go"}')
    request = await until("permission_request")
    sync = runtime.sync()
    assert sync.status == "waiting_for_permission"
    assert [r.request_id for r in sync.pending_requests] == [request.request_id]
    assert sync.pending_requests[0].type == "permission_request"
    await runtime.handle(
        f'{{"type":"permission_response","request_id":"{request.request_id}","decision":"allow"}}'.encode()
    )
    ui_request = await until("ui_request")
    sync = runtime.sync()
    assert sync.status == "waiting_for_ui"
    assert [r.request_id for r in sync.pending_requests] == [ui_request.request_id]
    await runtime.handle(
        f'{{"type":"ui_response","request_id":"{ui_request.request_id}","value":"x"}}'.encode()
    )
    await runtime.wait_idle()
    assert runtime.sync().pending_requests == []
    assert (cwd / "a.txt").read_text() == "A"


async def test_headless_queue_ui_request_times_out_into_null(start):
    """queue applies to UI requests too: with nobody to answer, the request stays open until the
    headless timeout, then error TIMEOUT and it is dismissed (null, source timeout); the tool gets
    None and the turn goes on.

    Covers: R6.4.24, R8.13, R6.3.7
    """
    step = ask_step(kind="confirm", message="Go on?")
    step["blocks"].insert(0, {"type": "pause", "ms": 300})  # stdin closes before the question
    agent = await start(
        [step, text_step("ok")],
        "--headless-policy",
        "queue",
        extra_toml="\n[permissions]\nheadless_timeout = 0.5\n",
    )
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.close_stdin()
    read = await agent.idle()
    seq = [t for t in types(read) if t in ("ui_request", "error", "ui_resolved")]
    assert seq == ["ui_request", "error", "ui_resolved"]
    error = next(m for m in read if m["type"] == "error")
    assert error["code"] == "TIMEOUT"
    assert error["fatal"] is False
    resolved = next(m for m in read if m["type"] == "ui_resolved")
    assert (resolved["value"], resolved["source"]) == (None, "timeout")
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["content"]["value"] == {"answer": None}
    assert [m["status"] for m in read if m["type"] == "status"][-1] == "idle"


async def test_a_queued_ui_request_waits_for_a_responder_and_takes_its_answer(tmp_path: Path):
    """Under queue, a UI request asked while nobody can answer stays pending (in sync), and a
    client that arrives later (runtime.responders present, as the daemon says) answers it.

    Covers: R6.4.22, R6.4.25, R6.3.4
    """
    home = write_scripted_home(
        tmp_path / "home",
        [tool_step("ask", {"kind": "input", "title": "Name?"}), text_step("ok")],
        extensions=["shard.testing.tools:AskTool"],
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    prepared = prepare(AgentOptions(home=str(home), cwd=str(cwd), headless_policy="queue"))
    runtime, events, until = _recording(prepared, has_responder=False)

    await runtime.handle(b'{"type":"prompt","message":"go"}')
    request = await until("ui_request")
    sync = runtime.sync()
    assert sync.status == "waiting_for_ui"
    assert [r.request_id for r in sync.pending_requests] == [request.request_id]
    assert not any(e.type == "ui_resolved" for e in events)
    await runtime.handle(b'{"type":"runtime.responders","present":true}')
    await runtime.handle(
        f'{{"type":"ui_response","request_id":"{request.request_id}","value":"Ada"}}'.encode()
    )
    await runtime.wait_idle()
    resolved = [e for e in events if e.type == "ui_resolved"]
    assert [(r.value, r.source) for r in resolved] == [("Ada", "client")]
    result = next(e for e in events if e.type == "tool_result")
    assert result.content.value == {"answer": "Ada"}
    assert not any(e.type == "error" for e in events)


def _recording(prepared, **options):
    """A runtime in process whose events are kept in order, and ``until(kind)``: the first event of
    that kind, once it has arrived."""
    events: list = []
    arrived = asyncio.Event()

    def sink(event) -> None:
        events.append(event)
        arrived.set()

    runtime = Runtime.from_prepared(prepared, sink=sink, **options)

    async def until(kind: str):
        while not any(e.type == kind for e in events):
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 10)
        return next(e for e in events if e.type == kind)

    return runtime, events, until

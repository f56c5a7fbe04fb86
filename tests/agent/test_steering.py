"""The daemon's strict steer, ``runtime.steer`` (PROTOCOL §10.3; DESIGN §2): in process against a
real runtime with the scripted model, and once through a real ``shard agent --stdio``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from shard.agent.boot import AgentOptions, prepare
from shard.agent.runtime import Runtime
from shard.protocol.events import EventBase
from shard.testing import AgentProcess, recorded_requests, text_step, tool_step, write_scripted_home

ASK = tool_step("ask", {"kind": "confirm", "title": "go on?"})
NOTE = "PARENT-NOTE: check the port too"


class _Seen:
    """A runtime's events as wire dicts, with a way to wait for the first of a type."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.hooks: dict[str, list[Any]] = {}
        self.arrived: dict[str, asyncio.Event] = {}

    def sink(self, event: EventBase) -> None:
        wire = event.to_wire()
        self.events.append(wire)
        self.arrived.setdefault(wire["type"], asyncio.Event()).set()
        for hook in self.hooks.pop(wire["type"], []):
            hook(wire)

    async def first(self, type_: str) -> dict[str, Any]:
        await self.arrived.setdefault(type_, asyncio.Event()).wait()
        return next(e for e in self.events if e["type"] == type_)

    def response(self, id_: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e["type"] == "response" and e.get("id") == id_), None)

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]


def _runtime(tmp_path: Path, steps: list[dict[str, Any]]) -> tuple[Runtime, _Seen, Path]:
    home = write_scripted_home(tmp_path / "home", steps, extensions=["shard.testing.tools:AskTool"])
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    seen = _Seen()
    runtime = Runtime.from_prepared(prepare(AgentOptions(home=str(home), cwd=str(cwd))), sink=seen.sink)
    return runtime, seen, home


def _steer(id_: str, message: str = NOTE) -> bytes:
    return f'{{"type":"runtime.steer","id":"{id_}","message":"{message}"}}'.encode()


def _steer_mid_stream(runtime: Runtime, seen: _Seen, id_: str) -> None:
    """Send the strict steer as soon as the model's first delta arrives (the stream then pauses)."""
    tasks: list[asyncio.Task[None]] = []
    seen.hooks["message_delta"] = [lambda _: tasks.append(asyncio.create_task(runtime.handle(_steer(id_))))]


async def test_a_strict_steer_with_no_turn_running_is_a_conflict_at_once(tmp_path: Path):
    """Idle: answered conflict right away, and nothing is queued for a later prompt.

    Covers: R10.3.34, R10.3.38, R10.3.39
    """
    runtime, seen, home = _runtime(tmp_path, [text_step("hi")])
    await runtime.handle(_steer("s1"))
    assert seen.response("s1") == {
        "type": "response",
        "id": "s1",
        "command": "runtime.steer",
        "success": True,
        "data": {"status": "conflict"},
    }
    await runtime.handle(b'{"type":"prompt","message":"hello"}')
    await runtime.wait_idle()
    assert NOTE not in str(recorded_requests(home))


async def test_a_strict_steer_drains_into_the_running_turn_and_reports_it(tmp_path: Path):
    """Accepted while a tool waits on the user, answered only once the turn delivered it at the next
    provider boundary: injected, with that turn's id; the model's next request ends with it.

    Covers: R10.3.34, R10.3.36, R10.3.39
    """
    runtime, seen, home = _runtime(tmp_path, [ASK, text_step("noted")])
    await runtime.handle(b'{"type":"prompt","message":"start"}')
    request = await seen.first("ui_request")
    await runtime.handle(_steer("s1"))
    assert seen.response("s1") is None, "the answer waits for the turn to deliver it"
    answer = {"type": "ui_response", "request_id": request["request_id"], "value": "yes"}
    await runtime.handle(orjson.dumps(answer))
    await runtime.wait_idle()
    turn_id = seen.of("turn_start")[0]["turn_id"]
    assert seen.response("s1") == {
        "type": "response",
        "id": "s1",
        "command": "runtime.steer",
        "success": True,
        "data": {"status": "injected", "turn_id": turn_id},
    }
    assert len(seen.of("turn_start")) == 1, "delivered into the same turn"
    requests = recorded_requests(home)
    assert len(requests) == 2
    last = requests[1]["messages"][-1]
    assert (last["role"], last["content"]) == ("user", [{"type": "text", "text": NOTE}])
    user = [e for e in seen.of("message_complete") if e["message"]["role"] == "user"]
    assert [m["message"]["content"][0]["text"] for m in user] == ["start", NOTE]


async def test_a_strict_steer_whose_turn_fails_first_is_a_conflict_and_is_dropped(tmp_path: Path):
    """The model call fails before the next boundary: conflict, and the steer never reaches the next
    turn (an ordinary steer left over would).

    Covers: R10.3.37, R10.3.38
    """
    failing = {"blocks": [{"type": "text", "text": "thinking"}, {"type": "pause", "ms": 50}], "error": "boom"}
    runtime, seen, home = _runtime(tmp_path, [failing, text_step("second turn")])
    _steer_mid_stream(runtime, seen, "s1")
    await runtime.handle(b'{"type":"prompt","message":"start"}')
    await runtime.wait_idle()
    assert seen.response("s1")["data"] == {"status": "conflict"}
    assert seen.of("error"), "the turn failed"
    await runtime.handle(b'{"type":"prompt","message":"again"}')
    await runtime.wait_idle()
    assert len(recorded_requests(home)) == 2
    assert NOTE not in str(recorded_requests(home))


async def test_an_abort_answers_a_held_strict_steer_conflict(tmp_path: Path):
    """Abort clears it: conflict, and a follow-up prompt never sees it.

    Covers: R10.3.37, R10.3.38
    """
    runtime, seen, home = _runtime(tmp_path, [ASK, text_step("after")])
    await runtime.handle(b'{"type":"prompt","message":"start"}')
    await seen.first("ui_request")
    await runtime.handle(_steer("s1"))
    await runtime.handle(b'{"type":"abort"}')
    assert seen.response("s1")["data"] == {"status": "conflict"}
    await runtime.handle(b'{"type":"prompt","message":"again"}')
    await runtime.wait_idle()
    assert NOTE not in str(recorded_requests(home))


async def test_a_strict_steer_during_a_compaction_is_a_conflict(tmp_path: Path):
    """Only a compaction runs: no turn to steer.

    Covers: R10.3.34
    """
    runtime, seen, _ = _runtime(tmp_path, [text_step("a"), text_step("b")])
    await runtime.handle(b'{"type":"prompt","message":"one"}')
    await runtime.wait_idle()
    await runtime.handle(b'{"type":"prompt","message":"two"}')
    await runtime.wait_idle()
    seen.hooks["status"] = [
        lambda e: e["status"] == "compacting" and asyncio.ensure_future(runtime.handle(_steer("s1")))
    ]
    await runtime.handle(b'{"type":"session_op","id":"c","op":"compact","args":{"keep_recent_tokens":1}}')
    await runtime.wait_idle()
    assert seen.response("s1")["data"] == {"status": "conflict"}


async def test_a_strict_steer_through_a_real_runtime_process(tmp_path: Path):
    """``shard agent --stdio`` answers runtime.steer on its stdin: injected into the running turn.

    Covers: R10.3.36, R10.3.39
    """
    home = write_scripted_home(
        tmp_path / "home", [ASK, text_step("noted")], extensions=["shard.testing.tools:AskTool"]
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    agent = await AgentProcess.start(home, cwd)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "start"})
        request = (await agent.until_type("ui_request"))[-1]
        await agent.send({"type": "runtime.steer", "id": "s1", "message": NOTE})
        await agent.send({"type": "ui_response", "request_id": request["request_id"], "value": "yes"})
        read = await agent.idle()
        turn_id = next(m for m in read if m["type"] == "turn_end")["turn_id"]
        answer = next(m for m in read if m["type"] == "response" and m.get("id") == "s1")
        assert answer["data"] == {"status": "injected", "turn_id": turn_id}
        assert recorded_requests(home)[1]["messages"][-1]["content"][0]["text"] == NOTE
    finally:
        await agent.kill()


async def test_a_strict_steer_during_a_final_answer_keeps_the_turn_going(tmp_path: Path):
    """Accepted while the model streams an answer without tool calls: like an ordinary steer it keeps
    that turn going — delivered before one more model call, in the same turn — and is injected.

    Covers: R10.3.36
    """
    answer = {"blocks": [{"type": "text", "text": "almost"}, {"type": "pause", "ms": 50}]}
    runtime, seen, home = _runtime(tmp_path, [answer, text_step("with your note")])
    _steer_mid_stream(runtime, seen, "s1")
    await runtime.handle(b'{"type":"prompt","message":"start"}')
    await runtime.wait_idle()
    assert seen.response("s1")["data"] == {
        "status": "injected",
        "turn_id": seen.of("turn_start")[0]["turn_id"],
    }
    assert len(seen.of("turn_start")) == 1
    requests = recorded_requests(home)
    assert len(requests) == 2
    assert requests[1]["messages"][-1]["content"][0]["text"] == NOTE

"""The SDK's conversation fold of a turn's live events equals its fold of a later ``sync`` (issue 26
item 5): the tool blocks carry the same RenderDescriptors, permission answers, exit codes and
durations, the tool results sit in the same messages, each turn's usage comes after the same message
— so a client that reloads shows what it showed live. A ``sync`` whose blocks carry a descriptor of
a kind this client does not know still arrives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.client import Transcript
from shard.client.decode import decode_event
from shard.protocol.events import Sync
from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home
from shard.testing.tools import TEST_TOOLS

STEPS = [
    tool_step("write", {"path": "todo.txt", "content": "milk\neggs\n"}),
    tool_step("bash", {"command": "echo two; exit 1"}),
    text_step("Noted."),
]


def fold(messages: list[dict[str, Any]]) -> Transcript:
    transcript = Transcript()
    for message in messages:
        event = decode_event(orjson.dumps(message))
        assert event is not None, message
        transcript.apply(event)
    return transcript


def view(transcript: Transcript) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [m.to_wire() for m in transcript.messages], [t.to_wire() for t in transcript.turns]


@pytest.fixture
async def agents(home: Path, project: Path):
    started: list[AgentProcess] = []

    async def start(*args: str) -> AgentProcess:
        agent = await AgentProcess.start(home, project, *args)
        started.append(agent)
        return agent

    write_scripted_home(home, STEPS, extensions=TEST_TOOLS)
    yield start
    for agent in started:
        await agent.kill()


async def test_the_fold_of_a_turns_live_events_equals_the_fold_of_a_later_sync(agents):
    """Covers: R9.1.4, R6.4.21, R9.4.8, R9.4.10, R9.4.14, R9.4.16, R9.5.13"""
    agent = await agents()
    _, first = await agent.handshake()
    await agent.send({"type": "prompt", "message": "note it, then count"})
    for _ in range(2):  # the write's request, then the bash call's
        request = (await agent.until_type("permission_request"))[-1]
        await agent.send(
            {"type": "permission_response", "request_id": request["request_id"], "choice_id": "allow"}
        )
    await agent.idle()
    assert await agent.finish() == 0
    live = fold(agent.seen)
    assert live.mismatches == []

    again = await agents("--session", first["session_id"])
    _, sync = await again.handshake()
    await again.finish()
    reloaded = fold([sync])
    assert view(live) == view(reloaded)

    messages, turns = view(reloaded)
    calls = [b for m in messages for b in m["content"] if b["type"] == "tool_call"]
    results = [b for m in messages for b in m["content"] if b["type"] == "tool_result"]
    assert [c["render"]["kind"] for c in calls if "render" in c] == ["diff"]
    assert [c["permission"]["choice_id"] for c in calls] == ["allow", "allow"]
    assert [r.get("exit_code") for r in results] == [None, 1]
    assert all(isinstance(r["duration_ms"], int | float) for r in results)
    assert [t["last_message_id"] for t in turns] == [messages[-1]["id"]]


def test_a_sync_whose_block_has_a_render_of_an_unknown_kind_still_arrives():
    """Covers: R11.0.13"""
    hologram = {"kind": "hologram", "frames": 3}
    call = {"type": "tool_call", "id": "tc-1", "name": "paint", "args": {}, "render": hologram}
    result = {"type": "tool_result", "tool_call_id": "tc-1", "content": {"kind": "text", "text": "ok"},
              "render": hologram}  # fmt: skip
    window = {"messages": [{"id": "m1", "role": "assistant", "content": [call]},
                           {"id": "m2", "role": "user", "content": [result]}]}  # fmt: skip
    raw = {"type": "sync", "status": "idle", "mode": "build", "live_window": window, "pending_requests": []}
    sync = decode_event(orjson.dumps(raw))
    assert isinstance(sync, Sync)
    blocks = [m.content[0] for m in sync.live_window.messages]
    assert [(b.model_extra or {}).get("unknown_render") for b in blocks] == [hologram, hologram]
    assert all(getattr(b, "render", None) is None for b in blocks)

"""A reloaded conversation shows what the live one showed (issue 26 item 5): what the live
``tool_call``, ``tool_result``, ``permission_resolved`` and ``turn_end`` events carried — a write's
diff, a bash call's exit code and duration, who answered each permission and how, the turn's usage —
is kept in the session and replayed in the ``sync`` window of a restored runtime, identically; the
model never sees any of it. A tool's duration is the time it ran, not the time it waited for an
answer.

Real ``shard agent --stdio`` processes on the scripted provider.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from shard.testing import recorded_requests, text_step, tool_step

WAIT_S = 1.5  # how long the test takes to answer the bash call's permission request
STEPS = [
    tool_step("write", {"path": "notes.txt", "content": "first line\nsecond line\n"}),
    tool_step("bash", {"command": "echo checked; exit 3"}),
    text_step("Wrote the notes."),
]


async def live_turn(agent: Any) -> list[dict[str, Any]]:
    """Prompt, answer the write at once and the bash call after WAIT_S; every event of the turn."""
    await agent.send({"type": "prompt", "message": "write the notes, then check"})
    read = await agent.until_type("permission_request")
    await answer(agent, read[-1], choice_id="allow")
    read += await agent.until_type("permission_request")
    await asyncio.sleep(WAIT_S)  # the person thinks it over: this is what the duration must leave out
    await answer(agent, read[-1], decision="allow")
    return read + await agent.idle()


async def answer(agent: Any, request: dict[str, Any], **form: str) -> None:
    await agent.send({"type": "permission_response", "request_id": request["request_id"], **form})


def of_type(read: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in read if m["type"] == kind]


def blocks(messages: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    """The window's blocks of ``kind`` by tool call id."""
    key = "id" if kind == "tool_call" else "tool_call_id"
    return {b[key]: b for m in messages for b in m["content"] if b["type"] == kind}


async def test_a_restored_sync_carries_what_the_live_events_showed(start, home: Path, project: Path):
    """The restored ``sync`` window holds, for the same turn, each call's start-time descriptor and
    ``read_only`` (from ``tool_call``), the permission answer — choice or decision, and who answered —
    (from ``permission_resolved``), each result's exit code, duration and descriptor (from
    ``tool_result``, in the message its ``message_id`` names) and the turn's usage after its last
    message (from ``turn_end``). The provider requests carry none of it.

    Covers: R9.1.4, R6.4.21, R9.4.2, R9.4.9, R9.4.10, R9.4.14, R9.4.16, R9.5.13, R9.5.14
    """
    agent = await start(STEPS)
    _, first = await agent.handshake()
    read = await live_turn(agent)
    assert await agent.finish() == 0
    calls = {e["tool_call_id"]: e for e in of_type(read, "tool_call")}
    results = {e["tool_call_id"]: e for e in of_type(read, "tool_result")}
    answers = {e["tool_call_id"]: e for e in of_type(read, "permission_resolved")}
    (turn_end,) = of_type(read, "turn_end")
    replies = [e["message"] for e in of_type(read, "message_complete") if e["message"]["role"] == "assistant"]
    assert (project / "notes.txt").read_text() == "first line\nsecond line\n"
    write_id, bash_id = list(calls)
    assert calls[write_id]["render"]["kind"] == results[write_id]["render"]["kind"] == "diff"
    assert results[bash_id]["exit_code"] == 3
    assert set(answers) == {write_id, bash_id}
    assert "usage" in turn_end

    restored = await start(None, "--session", first["session_id"])
    _, sync = await restored.handshake()
    await restored.finish()
    window = sync["live_window"]
    called, resulted = blocks(window["messages"], "tool_call"), blocks(window["messages"], "tool_result")
    for call_id, call in calls.items():
        shown = {k: called[call_id][k] for k in ("render", "read_only", "permission") if k in called[call_id]}
        answer = {k: v for k, v in answers[call_id].items() if k not in ("type", "tool_call_id")}
        live = {k: call[k] for k in ("render", "read_only") if k in call}
        assert shown == {**live, "permission": answer}
    assert called[write_id]["permission"] == {"request_id": answers[write_id]["request_id"],
                                             "choice_id": "allow", "source": "client",
                                             "intent": "allow"}  # fmt: skip
    assert called[bash_id]["permission"]["decision"] == "allow"
    for call_id, result in results.items():
        live = {k: result[k] for k in ("exit_code", "duration_ms", "render") if k in result}
        assert {k: resulted[call_id][k] for k in live} == live
        assert set(resulted[call_id]) - set(live) == {"type", "tool_call_id", "content", "is_error"}
        holder = next(m for m in window["messages"] if m["id"] == result["message_id"])
        assert holder["content"] == [resulted[call_id]]
    assert window["turns"] == [
        {"turn_id": turn_end["turn_id"], "last_message_id": replies[-1]["id"], "usage": turn_end["usage"]}
    ]

    for request in recorded_requests(home):  # what only clients render never reaches the model
        for message in request["messages"]:
            for block in message["content"]:
                assert not {"render", "read_only", "permission", "duration_ms"} & set(block), block


async def test_a_tools_duration_leaves_out_the_wait_for_a_permission_answer(start):
    """The bash call waited WAIT_S for its answer and then ran a command that takes no time: its
    ``duration_ms`` is the run, well under the wait.

    Covers: R9.4.16
    """
    agent = await start(STEPS)
    await agent.handshake()
    read = await live_turn(agent)
    bash = next(e for e in of_type(read, "tool_result") if "exit_code" in e)
    assert bash["duration_ms"] < WAIT_S * 1000, bash
    await agent.finish()

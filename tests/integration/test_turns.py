"""Driving a turn on a direct connection: prompt, steer, follow_up, abort (PROTOCOL §9.2, §9.4,
§12.1)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from shard.testing import AgentProcess, recorded_requests, text_step, tool_step, types

# The tests marked SHARED prompt a model that answers every call with the same text, or abort with
# nothing running: they share a runtime of the module (``agent``, handed over idle with nothing left
# to read), on a looping one-step script, so what they see does not depend on the turns before. A
# test whose subject needs a script of its own, a steer or an abort mid-turn starts its own.
SHARED = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_runtime(start_shared) -> AgentProcess:
    return await start_shared([text_step("ok")], loop=True, record=False)


@pytest_asyncio.fixture(loop_scope="module")
async def agent(shared_runtime: AgentProcess) -> AsyncIterator[AgentProcess]:
    yield await shared_runtime.hand_over()


ABORTED = "Aborted by the user before this tool call ran."
ABORTED_RUNNING = "Aborted by the user while this tool call ran: it may have done part of its work."


def _collapse(seq: list[str]) -> list[str]:
    out: list[str] = []
    for t in seq:
        if t == "message_delta" and out and out[-1] == "message_delta":
            continue
        out.append(t)
    return out


async def test_first_prompt_happy_path_order(start):
    """PROTOCOL §12.1: the accepted response, then turn_start, deltas, tool_call, tool_result, more
    deltas, message_complete and turn_end with usage — in exactly this order.

    Covers: R12.1.1, R12.1.2, R9.4.1, R9.4.2, R9.4.9, R9.4.10, R9.4.14, R5.1.4, R5.1.5, R9.2.1
    """
    steps = [
        tool_step("read", {"path": "config.json"}, text="Reading config..."),
        text_step("The config says the port is 8080."),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "id": "p1", "message": "read the config"})
    read = await agent.idle()
    seq = _collapse([t for t in types(read) if t != "status"])
    assert seq == [
        "response",
        "turn_start",
        "message_complete",  # the user's message
        "message_delta",
        "message_complete",  # the assistant's message with the tool call
        "usage",
        "tool_call",
        "tool_result",
        "message_delta",
        "message_complete",
        "usage",
        "turn_end",
    ]
    response = read[0]
    assert response == {"type": "response", "id": "p1", "command": "prompt", "success": True}
    turn_start = next(m for m in read if m["type"] == "turn_start")
    turn_end = next(m for m in read if m["type"] == "turn_end")
    assert turn_end["turn_id"] == turn_start["turn_id"]
    assert set(turn_end["usage"]) >= {"input", "output"}
    usages = [m for m in read if m["type"] == "usage"]
    assert turn_end["usage"]["input"] == sum(u["input"] for u in usages)
    assert turn_end["usage"]["output"] == sum(u["output"] for u in usages)
    call = next(m for m in read if m["type"] == "tool_call")
    result = next(m for m in read if m["type"] == "tool_result")
    assert call["name"] == "read"
    # the start-time descriptor: what the call is about to do, before any result exists
    assert call["render"] == {"kind": "kv", "pairs": [{"k": "path", "v": "config.json"}]}
    assert call["args"] == {"path": "config.json"}
    assert call["read_only"] is True
    assert result["tool_call_id"] == call["tool_call_id"]
    assert result["is_error"] is False
    assert result["content"] == {"kind": "text", "text": '{"name": "demo", "port": 8080}\n'}
    assert result["render"]["kind"] == "code"
    final = [m for m in read if m["type"] == "message_complete"][-1]
    assert final["message"]["content"] == [{"type": "text", "text": "The config says the port is 8080."}]


async def test_deltas_reassemble_to_message_complete(start):
    """text/thinking deltas append to their block; a tool_call block's first delta carries id and
    name, later ones args fragments that concatenate to the final args.

    Covers: R9.4.3, R9.4.4, R9.4.5, R9.4.6, R9.4.8
    """
    steps = [
        {
            "chunk": 5,
            "blocks": [
                {"type": "thinking", "text": "Let me think about this carefully."},
                {"type": "text", "text": "Listing the source folder now."},
                {"type": "tool_call", "name": "ls", "args": {"path": "src", "limit": 10}},
            ],
        },
        text_step("done"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.until_type("tool_call")
    complete = [m for m in read if m["type"] == "message_complete"][-1]
    mid = complete["message_id"]
    deltas = [m for m in read if m["type"] == "message_delta"]
    assert all(d["message_id"] == mid for d in deltas)
    blocks: dict[int, dict] = {}
    for d in deltas:
        b = blocks.setdefault(d["block_index"], {"kind": d["kind"], "text": "", "args": ""})
        assert b["kind"] == d["kind"]
        if d["kind"] in ("text", "thinking"):
            assert set(d) >= {"text_delta"}
            assert "args_delta" not in d
            b["text"] += d["text_delta"]
        elif "name" in d:
            assert b["args"] == "", "id and name come on the first delta"
            assert "tool_call_id" in d
            b["id"], b["name"] = d["tool_call_id"], d["name"]
        else:
            assert "args_delta" in d
            assert "name" not in d
            b["args"] += d["args_delta"]
    content = complete["message"]["content"]
    assert [c["type"] for c in content] == ["thinking", "text", "tool_call"]
    assert blocks[0]["text"] == content[0]["text"] == "Let me think about this carefully."
    assert blocks[1]["text"] == content[1]["text"]
    import orjson

    assert orjson.loads(blocks[2]["args"]) == content[2]["args"] == {"path": "src", "limit": 10}
    assert blocks[2]["id"] == content[2]["id"]
    assert blocks[2]["name"] == "ls"
    assert len([d for d in deltas if d["block_index"] == 2]) > 2, "args arrive in several fragments"


async def test_events_never_carry_an_id(start):
    """Only responses carry a correlation id; events never do.

    Covers: R5.1.7, R5.1.2, R5.1.1
    """
    agent = await start([tool_step("ls", {}), text_step("ok")])
    await agent.handshake()
    await agent.send({"type": "prompt", "id": "x1", "message": "go"})
    read = await agent.idle()
    for m in read:
        if m["type"] == "response":
            assert m["id"] == "x1"
        else:
            assert "id" not in m, m


@SHARED
async def test_fire_and_forget_without_id_is_accepted(agent):
    """A prompt with no id is accepted; its response has no id.

    Covers: R5.1.6, R5.1.4
    """
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    assert read[0] == {"type": "response", "command": "prompt", "success": True}
    assert "turn_end" in types(read)


async def test_steer_lands_after_tool_calls_before_next_model_call(start, home):
    """A steer sent while the model streams a tool call is delivered after that tool ran and before
    the next model call: the model's next request ends with tool_result, then the steer.

    Covers: R9.2.4, R9.2.6, R5.1.4
    """
    steps = [
        {
            "blocks": [
                {"type": "text", "text": "Reading."},
                {"type": "pause", "ms": 500},
                {"type": "tool_call", "name": "read", "args": {"path": "config.json"}},
            ]
        },
        text_step("Adjusted after your note."),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "read it"})
    await agent.until_type("message_delta")
    await agent.send({"type": "steer", "id": "s1", "message": "also check the port"})
    read = await agent.idle()
    seq = [t for t in types(read) if t not in ("status", "message_delta")]
    steer_resp = next(m for m in read if m["type"] == "response" and m.get("id") == "s1")
    assert steer_resp["success"] is True
    i_result = seq.index("tool_result")
    user_msgs = [
        i
        for i, m in enumerate(m for m in read if m["type"] not in ("status", "message_delta"))
        if m["type"] == "message_complete" and m["message"]["role"] == "user"
    ]
    assert user_msgs, "the steer was delivered"
    assert user_msgs[0] > i_result, "the steer is delivered after the tool result"
    assert seq.count("turn_start") == 0, "same turn"
    assert seq.count("turn_end") == 1
    requests = recorded_requests(home)
    assert len(requests) == 2
    second = requests[1]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "user", "user"]
    assert second[-2]["content"][0]["type"] == "tool_result"
    assert second[-1]["content"][0] == {"type": "text", "text": "also check the port"}
    first = requests[0]["messages"]
    assert all("also check the port" not in str(m) for m in first)


async def test_prompt_with_steer_behavior_is_a_steer(start, home):
    """prompt{streaming_behavior:"steer"} mid-turn lands exactly like steer.

    Covers: R9.2.4, R9.2.2
    """
    steps = [
        {"blocks": [{"type": "text", "text": "a"}, {"type": "pause", "ms": 400}]},
        text_step("b"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "one"})
    await agent.until_type("message_delta")
    await agent.send({"type": "prompt", "message": "two", "streaming_behavior": "steer"})
    read = await agent.idle()
    assert types(read).count("turn_end") == 1
    requests = recorded_requests(home)
    assert len(requests) == 2, "the steer made the turn call the model again"
    assert requests[1]["messages"][-1]["content"][0]["text"] == "two"


async def test_follow_up_waits_until_the_agent_stops(start, home):
    """A follow_up is delivered only once the running turn has fully ended, as a new turn.

    Covers: R9.2.5, R9.2.2
    """
    steps = [
        {"blocks": [{"type": "text", "text": "first answer"}, {"type": "pause", "ms": 400}]},
        text_step("second answer"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "one"})
    await agent.until_type("message_delta")
    await agent.send({"type": "prompt", "id": "f", "message": "two", "streaming_behavior": "follow_up"})
    read = await agent.idle()
    seq = [t for t in types(read) if t not in ("status", "message_delta", "usage", "response")]
    assert seq == [
        "queue_changed",  # the follow-up waits, for every client to see
        "message_complete",  # first answer
        "turn_end",
        "queue_changed",  # ... and leaves the queue as it is delivered
        "turn_start",
        "message_complete",  # the follow-up as the new turn's user message
        "message_complete",  # second answer
        "turn_end",
    ]
    starts = [m for m in agent.seen if m["type"] == "turn_start"]
    ends = [m for m in agent.seen if m["type"] == "turn_end"]
    assert [s["turn_id"] for s in starts] == [e["turn_id"] for e in ends]
    assert starts[0]["turn_id"] != starts[1]["turn_id"]
    requests = recorded_requests(home)
    assert [m["role"] for m in requests[1]["messages"]] == ["user", "assistant", "user"]


async def test_prompt_mid_turn_without_behavior_is_rejected_and_changes_nothing(start, home):
    """A plain prompt while a turn runs is INVALID_REQUEST and is neither queued nor recorded.

    Covers: R9.2.2, R8.7
    """
    steps = [{"blocks": [{"type": "text", "text": "busy"}, {"type": "pause", "ms": 400}]}]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "one"})
    await agent.until_type("message_delta")
    resp, _ = await agent.request({"type": "prompt", "id": "p2", "message": "intruder"})
    assert resp["success"] is False
    assert resp["error"]["code"] == "INVALID_REQUEST"
    assert "streaming_behavior" in resp["error"]["message"]
    read = await agent.idle()
    assert types(read).count("turn_end") == 1
    assert len(recorded_requests(home)) == 1
    session = next((home / "sessions").glob("*/session.jsonl")).read_text()
    assert "intruder" not in session


async def test_abort_while_streaming_keeps_the_partial_message(start, home):
    """abort mid-stream cancels the provider call, keeps what arrived, and ends with turn_end and
    status idle; the agent then takes the next prompt normally.

    Covers: R9.2.7, R5.1.3
    """
    steps = [
        {"blocks": [{"type": "text", "text": "I was saying something long"}], "chunk": 4, "stall": True},
        text_step("fresh start"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.until(lambda m: m["type"] == "message_delta")
    resp, before = await agent.request({"type": "abort", "id": "a1"})
    assert resp == {"type": "response", "id": "a1", "command": "abort", "success": True}
    # the response comes once the turn has wound down
    assert [t for t in types(before) if t != "message_delta"] == ["message_complete", "turn_end", "status"]
    assert before[-1]["status"] == "idle"
    read = before
    partial = [m for m in read if m["type"] == "message_complete"][-1]["message"]
    assert partial["role"] == "assistant"
    assert partial["content"][0]["text"] == "I was saying something long"
    # the next prompt works and the model sees the partial answer in its history
    await agent.send({"type": "prompt", "message": "again"})
    read2 = await agent.idle()
    assert "turn_end" in types(read2)
    last = recorded_requests(home)[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert last[1]["content"][0]["text"] == "I was saying something long"
    entries = [line for line in next((home / "sessions").glob("*/session.jsonl")).read_text().splitlines()]
    assert any('"incomplete":"aborted"' in line for line in entries)


async def test_abort_with_a_half_streamed_tool_call_closes_it(start, home):
    """Aborting while a tool call streams: the call never runs and gets an aborted tool_result, so
    the history stays valid for the next request.

    Covers: R9.2.7
    """
    steps = [
        {
            "blocks": [
                {"type": "text", "text": "about to list"},
                {"type": "tool_call", "name": "ls", "args": {"path": "."}},
            ],
            "stall": True,
        },
        text_step("ok"),
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.until(lambda m: m["type"] == "message_delta" and "args_delta" in m)
    call_id = next(m["tool_call_id"] for m in read if m.get("name") == "ls")
    resp, before = await agent.request({"type": "abort", "id": "a"})
    assert resp["success"] is True
    assert not any(m["type"] == "tool_call" for m in before), "an aborted call never starts"
    result = next(m for m in before if m["type"] == "tool_result")
    assert result["tool_call_id"] == call_id
    assert result["is_error"] is True
    assert result["content"] == {"kind": "error", "message": ABORTED}
    await agent.send({"type": "prompt", "message": "next"})
    await agent.idle()
    history = recorded_requests(home)[-1]["messages"]
    assert history[2]["content"][0]["tool_call_id"] == call_id


async def test_abort_while_a_tool_runs(start, home):
    """abort during a running tool cancels it: an aborted tool_result that says the call was cut
    short (not that it never ran), turn_end, status idle.

    Covers: R9.2.7
    """
    steps = [tool_step("sleep", {"seconds": 120}), text_step("after")]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "wait"})
    read = await agent.until_type("tool_call")
    call = read[-1]
    assert call["name"] == "sleep"
    resp, before = await agent.request({"type": "abort", "id": "a"}, timeout=10)
    assert resp["success"] is True
    seq = types(before)
    assert seq == ["tool_result", "turn_end", "status"]
    assert before[0]["tool_call_id"] == call["tool_call_id"]
    assert before[0]["is_error"] is True
    assert before[0]["content"] == {"kind": "error", "message": ABORTED_RUNNING}
    assert before[2]["status"] == "idle"
    await agent.send({"type": "prompt", "message": "next"})
    read2 = await agent.idle()
    assert [m for m in read2 if m["type"] == "message_complete"][-1]["message"]["content"][0][
        "text"
    ] == "after"


@SHARED
async def test_abort_when_idle_succeeds_and_does_nothing(agent):
    """abort with no turn running answers success and emits nothing else.

    Covers: R9.2.7, R5.1.3
    """
    resp, before = await agent.request({"type": "abort", "id": "idle-abort"})
    assert before == []
    assert resp == {"type": "response", "id": "idle-abort", "command": "abort", "success": True}
    resp2, before2 = await agent.request({"type": "list_modes", "id": "after"})
    assert before2 == []
    assert resp2["success"] is True


@SHARED
async def test_status_tracks_every_transition(agent):
    """status events report idle→streaming→idle around a turn, each transition once.

    Covers: R9.1.19, R9.1.20
    """
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    statuses = [m for m in read if m["type"] == "status"]
    assert [s["status"] for s in statuses] == ["streaming", "idle"]
    assert all(set(s) <= {"type", "status", "detail"} for s in statuses)
    assert types(read).index("status") < types(read).index("turn_start")


async def test_usage_after_each_provider_call(start):
    """One usage event per provider call, each after that call's message_complete.

    Covers: R9.4.18, R11.0.18
    """
    steps = [
        {**tool_step("ls", {}), "usage": {"input": 100, "output": 7, "cache_read": 40}},
        {**text_step("done"), "usage": {"input": 150, "output": 3}},
    ]
    agent = await start(steps)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    usages = [m for m in read if m["type"] == "usage"]
    assert [(u["input"], u["output"]) for u in usages] == [(100, 7), (150, 3)]
    assert usages[0]["cache_read"] == 40
    assert usages[0]["model"] == "test/m"
    end = next(m for m in read if m["type"] == "turn_end")
    assert end["usage"]["input"] == 250
    assert end["usage"]["output"] == 10
    assert end["usage"]["cache_read"] == 40

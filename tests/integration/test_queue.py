"""What is queued for an agent is visible, can be withdrawn, and is never silently dropped (issue 26
item 3): ``queue_changed``, ``sync.queue``, ``unqueue`` and the hand-back on abort, on a real
``shard agent --stdio`` whose scripted model streams slowly.

The queue is additive to PROTOCOL §9.2: a steer or follow-up sent mid-turn waits in it (R9.2.4,
R9.2.5) and every client sees it wait; abort (R9.2.7) delivers nothing more and hands every queued
message back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shard.testing import recorded_requests, text_step, types

SLOW = {"blocks": [{"type": "text", "text": "working on it"}, {"type": "pause", "ms": 700}]}
STALLED = {"blocks": [{"type": "text", "text": "working on it"}], "stall": True}


def _session(home: Path) -> list[dict[str, Any]]:
    path = next((home / "sessions").glob("*/session.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def _texts(queue: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(q["message"], q["behavior"]) for q in queue]


def _sent_to_model(home: Path) -> str:
    return json.dumps(recorded_requests(home))


async def _queue_two(agent: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Prompt, then (while the answer streams) a steer and a follow-up; their responses."""
    await agent.send({"type": "prompt", "message": "start"})
    await agent.until_type("message_delta")
    steer, _ = await agent.request({"type": "steer", "id": "s", "message": "also the port"})
    follow, _ = await agent.request(
        {"type": "prompt", "id": "f", "message": "then the tests", "streaming_behavior": "follow_up"}
    )
    return steer, follow


async def test_queued_messages_show_at_once_and_leave_the_queue_as_they_are_delivered(start, home):
    """A steer and a follow-up sent mid-turn each produce a ``queue_changed`` with the whole queue
    (before their responses, which carry the queued message); ``sync`` has the queue too; each
    message leaves the queue (``delivered``) right before it is recorded as a user message.

    Covers: R9.2.1, R9.2.4, R9.2.5, R9.2.6, R9.1.4
    """
    agent = await start([SLOW, text_step("port is 8080"), text_step("tests pass")])
    await agent.handshake()
    steer, follow = await _queue_two(agent)
    assert steer["success"]
    assert follow["success"]
    queued_steer, queued_follow = steer["data"]["queued"], follow["data"]["queued"]
    assert (queued_steer["message"], queued_steer["behavior"]) == ("also the port", "steer")
    assert (queued_follow["message"], queued_follow["behavior"]) == ("then the tests", "follow_up")
    changes = [m for m in agent.seen if m["type"] == "queue_changed"]
    assert [c["reason"] for c in changes] == ["queued", "queued"]
    assert _texts(changes[-1]["queue"]) == [("also the port", "steer"), ("then the tests", "follow_up")]
    assert changes[-1]["queue"] == [queued_steer, queued_follow]

    sync, _ = await agent.request({"type": "runtime.sync", "id": "sync"})  # what an attach is given
    assert sync["data"]["queue"] == [queued_steer, queued_follow]

    read = await agent.idle()  # after both turns: the status stays streaming in between
    flow = [
        (m["type"], m.get("reason") or m.get("message", {}).get("role"))
        for m in read
        if m["type"] in ("queue_changed", "message_complete", "turn_start")
    ]
    assert flow == [
        ("message_complete", "assistant"),  # "working on it"
        ("queue_changed", "delivered"),  # the steer leaves the queue ...
        ("message_complete", "user"),  # ... as it is delivered, before the next model call
        ("message_complete", "assistant"),
        ("queue_changed", "delivered"),  # the follow-up leaves it as its turn starts
        ("turn_start", None),
        ("message_complete", "user"),
        ("message_complete", "assistant"),
    ]
    delivered = [m for m in read if m["type"] == "queue_changed"]
    assert _texts(delivered[0]["queue"]) == [("then the tests", "follow_up")]
    assert delivered[1]["queue"] == []
    assert [m["messages"][-1]["content"][0]["text"] for m in recorded_requests(home)[1:]] == [
        "also the port",
        "then the tests",
    ]
    sync, _ = await agent.request({"type": "runtime.sync", "id": "sync2"})
    assert sync["data"]["queue"] == []


async def test_a_withdrawn_message_is_never_delivered_and_delivery_wins_the_race(start, home):
    """``unqueue`` takes a queued message back (the response carries it, every client gets
    ``queue_changed`` ``withdrawn``); the model never sees it. Withdrawing a message that was
    already delivered is NOT_FOUND: delivery wins.

    Covers: R9.2.4, R9.2.5
    """
    agent = await start([SLOW, text_step("port is 8080")])
    await agent.handshake()
    steer, follow = await _queue_two(agent)
    follow_id = follow["data"]["queued"]["queue_id"]
    withdrawn, before = await agent.request({"type": "unqueue", "id": "u", "queue_id": follow_id})
    assert withdrawn["success"], withdrawn
    assert withdrawn["data"]["withdrawn"]["message"] == "then the tests"
    change = before[-1]
    assert change["type"] == "queue_changed"
    assert change["reason"] == "withdrawn"
    assert _texts(change["queue"]) == [("also the port", "steer")]
    again, _ = await agent.request({"type": "unqueue", "id": "u2", "queue_id": follow_id})
    assert again["success"] is False
    assert again["error"]["code"] == "NOT_FOUND"

    read = await agent.idle()
    assert types(read).count("turn_start") == 0, "no follow-up turn: it was withdrawn"
    late, _ = await agent.request(
        {"type": "unqueue", "id": "u3", "queue_id": steer["data"]["queued"]["queue_id"]}
    )
    assert late["success"] is False
    assert late["error"]["code"] == "NOT_FOUND"
    assert "delivered" in late["error"]["message"]
    sent = _sent_to_model(home)
    assert "also the port" in sent
    assert "then the tests" not in sent
    assert "then the tests" not in json.dumps(_session(home))


async def test_abort_hands_every_queued_message_back_and_the_session_records_it(start, home):
    """Abort delivers nothing more: the steer and the follow-up are handed back in one
    ``queue_changed`` (``reason: "aborted"``, ``returned``, an empty queue), the session gets a
    ``queue_returned`` entry after the aborted answer, the model never sees them, and the agent
    takes the next prompt as usual.

    Covers: R9.2.7, R9.2.4, R9.2.5
    """
    agent = await start([STALLED, text_step("fresh start")])
    await agent.handshake()
    steer, follow = await _queue_two(agent)
    response, before = await agent.request({"type": "abort", "id": "a"})
    assert response["success"]
    handed = [m for m in before if m["type"] == "queue_changed"]
    assert len(handed) == 1
    assert handed[0]["reason"] == "aborted"
    assert handed[0]["queue"] == []
    assert handed[0]["returned"] == [steer["data"]["queued"], follow["data"]["queued"]]
    assert types(before).index("queue_changed") > types(before).index("turn_end")

    entries = _session(home)
    kinds = [e["kind"] for e in entries]
    assert kinds[-1] == "queue_returned"
    trace = entries[-1]
    assert trace["reason"] == "aborted"
    assert _texts(trace["messages"]) == [("also the port", "steer"), ("then the tests", "follow_up")]
    answer = [e for e in entries[:-1] if e["kind"] == "message"][-1]  # the turn's end may lie between
    assert answer.get("incomplete") == "aborted"

    await agent.send({"type": "prompt", "message": "again"})
    await agent.idle()
    sent = _sent_to_model(home)
    assert "also the port" not in sent
    assert "then the tests" not in sent
    sync, _ = await agent.request({"type": "runtime.sync", "id": "sync"})
    assert sync["data"]["queue"] == []
    # a restored session skips the trace entry: it is no message
    assert all(
        m["content"][0].get("text") != "also the port" for m in sync["data"]["live_window"]["messages"]
    )


async def test_a_steer_the_failed_turn_never_reached_is_handed_back_the_follow_up_still_runs(start, home):
    """A turn whose model call fails ends before the steer's model call: the steer is handed back
    (``turn_failed``, recorded in the session); the follow-up still runs as the next turn, as any
    follow-up does after a failed turn.

    Covers: R9.2.4, R9.2.5
    """
    failing = {**SLOW, "error": "upstream went away"}
    agent = await start([failing, text_step("tests pass")])
    await agent.handshake()
    await _queue_two(agent)
    read = await agent.idle()
    changes = [m for m in read if m["type"] == "queue_changed"]
    assert [c["reason"] for c in changes] == ["turn_failed", "delivered"]
    assert _texts(changes[0]["returned"]) == [("also the port", "steer")]
    assert _texts(changes[0]["queue"]) == [("then the tests", "follow_up")]
    assert [e["reason"] for e in _session(home) if e["kind"] == "queue_returned"] == ["turn_failed"]
    sent = _sent_to_model(home)
    assert "also the port" not in sent
    assert "then the tests" in sent


async def test_sync_and_capabilities_announce_the_queue(start):
    """A current runtime always puts ``queue`` in ``sync`` (empty when nothing waits) and advertises
    ``message-queue``, the capability that gates ``unqueue`` in clients.

    Covers: R9.1.4, R9.1.8, R7.2
    """
    agent = await start([text_step("hi")])
    hello, sync = await agent.handshake()
    assert sync["queue"] == []
    assert "message-queue" in hello["capabilities"]
    missing, _ = await agent.request({"type": "unqueue", "id": "u", "queue_id": "queue-0"})
    assert missing["error"]["code"] == "NOT_FOUND"

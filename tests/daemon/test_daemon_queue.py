"""The queue through the daemon (issue 26 item 3): what one client queues, every attached client
sees — live as ``queue_changed``, and in the ``sync`` of a client that attaches later; a withdraw
reaches the runtime like any per-agent command; a runtime that dies with messages queued has them
handed back to its viewers by the daemon. Against a real ``shard daemon``, unix and WebSocket.
"""

from __future__ import annotations

import os
import signal

from daemon_helpers import attach, connect, create_agent, runtime_pids

from shard.testing import text_step

STALLED = {"blocks": [{"type": "text", "text": "working on it"}], "stall": True}


async def _queued(client, agent: str, reason: str = "queued") -> dict:
    """The ``queue_changed`` of ``agent`` for ``reason``: already read (a response's request reads
    past it) or still to come."""

    def wanted(m: dict) -> bool:
        return m.get("type") == "queue_changed" and m.get("agent_id") == agent and m["reason"] == reason

    seen = [m for m in client.seen if wanted(m)]
    return seen[-1] if seen else (await client.until(wanted))[-1]


async def test_what_one_client_queues_every_client_sees_and_a_late_attacher_gets_in_sync(
    daemon_factory, project
):
    """A unix client and a WebSocket client attached to one agent: the follow-up the unix client
    queues reaches both as ``queue_changed`` (naming its sender), a third client attaching later
    finds it in ``sync.queue``; the WebSocket client withdraws it and everyone sees it go.

    Covers: R6.2.1, R6.2.2, R6.4.20, R9.2.5, R5.2.2
    """
    daemon = await daemon_factory([STALLED, text_step("unused")])
    unix = await connect(daemon, "unix")
    ws = await connect(daemon, "websocket")
    agent = await create_agent(unix, project)
    await attach(unix, agent)
    await attach(ws, agent)
    await unix.send({"type": "prompt", "agent_id": agent, "message": "start"})
    await ws.until(lambda m: m.get("type") == "message_delta")
    queued, _ = await unix.request(
        {
            "type": "prompt",
            "id": "f",
            "agent_id": agent,
            "message": "then the tests",
            "streaming_behavior": "follow_up",
        }
    )
    assert queued["success"], queued
    item = queued["data"]["queued"]
    assert item["source"].startswith("unix-client-")
    for client in (unix, ws):
        change = await _queued(client, agent)
        assert change["queue"] == [item]

    late = await connect(daemon, "websocket")
    _, sync = await attach(late, agent, role="observer")
    assert sync["queue"] == [item]

    withdrawn, _ = await ws.request(
        {"type": "unqueue", "id": "u", "agent_id": agent, "queue_id": item["queue_id"]}
    )
    assert withdrawn["data"]["withdrawn"] == item
    for client in (unix, ws, late):
        change = await _queued(client, agent, "withdrawn")
        assert change["queue"] == []
    aborted, _ = await unix.request({"type": "abort", "id": "a", "agent_id": agent})
    assert aborted["success"]


async def test_a_runtime_killed_with_messages_queued_hands_them_back(daemon_factory, project, transport):
    """SIGKILL leaves the runtime no chance to say anything: the daemon, which saw the queue, hands
    its messages back to the viewers (``reason: "runtime_exited"``) as it closes open requests.

    Covers: R6.4.10, R9.2.4
    """
    daemon = await daemon_factory([STALLED, text_step("unused")])
    client = await connect(daemon, transport)
    agent = await create_agent(client, project)
    await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "start"})
    await client.until(lambda m: m.get("type") == "message_delta")
    await client.request({"type": "steer", "id": "s", "agent_id": agent, "message": "also the port"})
    await _queued(client, agent)
    for pid in runtime_pids(daemon.home):
        os.kill(pid, signal.SIGKILL)
    change = await _queued(client, agent, "runtime_exited")
    assert change["queue"] == []
    assert [q["message"] for q in change["returned"]] == ["also the port"]
    gone, _ = await client.request({"type": "unqueue", "id": "u", "agent_id": agent, "queue_id": "queue-x"})
    assert gone["error"]["code"] == "NOT_FOUND"
